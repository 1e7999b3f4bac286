/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_lower.h - turns a planned batch into the units, stages and result
 * records the megakernel runs (gpu/cuda_abi.h). Pure: no CUDA, no I/O, no
 * allocation, so it is tested without a GPU.
 *
 * The static checks of vyre_exec_one (unknown op, misaligned lengths, ranges
 * outside an operand's heap, short WORD0 output, an operand's heap not
 * registered) are decided here:
 * such items complete with VYRE_E_INVAL and never reach the device. NOP and
 * empty elementwise items complete with 0. Only DFA table validation and the
 * length word of a counted input depend on heap contents, which an earlier
 * item of the batch may write, so they are checked on the device.
 *
 * A DFA item too large for one block is split into parts (vyre_cuda_dfa_split):
 * block units of its plan group's stage, and a join in a stage of its own
 * right after it.
 *
 * Slab layout, each part 64-byte aligned, every offset checked:
 *	units   n_units   x struct vyre_mk_unit
 *	stages  n_stages  x struct vyre_mk_stage   (empty plan groups dropped)
 *	results n_results x struct vyre_mk_result  (one per SUM/MAX/DFA item,
 *	                                            and one per DFA part)
 */
#ifndef VYRE_GPU_CUDA_LOWER_H
#define VYRE_GPU_CUDA_LOWER_H

#include <stdint.h>

#include "backend.h"
#include "cuda_abi.h"
#include "cuda_lower_item.h"

struct vyre_cuda_layout {
	uint64_t units_off, stages_off, results_off, bytes;
	uint32_t n_units, n_stages, n_results, n_launches;
	uint32_t chained; /* an item is chained or handed off: fill keeps the chain state */
	uint32_t blocks;  /* items with block units: without them fill walks a group once */
};

/* One device launch: a run of non-empty stages of one plan launch. */
struct vyre_cuda_launch {
	uint32_t first_unit;
	uint32_t n_units;
	uint32_t first_stage;
	uint32_t n_stages;
	uint32_t n_blocks; /* blocks worth using, 1..grid_max */
	uint32_t flags;	   /* VYRE_MK_LAUNCH_* */
};

/*
 * Check the plan, classify every order position once into @cls (plan.n_order
 * entries, read back by vyre_cuda_lower_fill) and size the slab; @st
 * (batch->n_items entries) is scratch that vyre_cuda_lower_fill reads too.
 * Large DFA items are split for @split_blocks blocks (the lane or grid they
 * will most likely run on; any number of blocks still runs them correctly).
 * Chained items (VYRE_EXEC_AFTER_PREV) are cancelled on the host or checked
 * on the device, and marked on-chip handoff runs (VYRE_EXEC_HANDOFF_*)
 * become runs of block units where this backend can keep them on chip (see
 * cuda_lower_chain.c). VYRE_E_INVAL for a malformed plan (an order index out
 * of range, group or launch ends that decrease or do not end at n_order /
 * n_groups, a chained item whose predecessor is not listed in an earlier
 * group, a handoff run whose members are not listed in later groups of the
 * first one's launch), VYRE_E_NOMEM when the batch needs more than 2^32
 * units or a slab over 4 GiB.
 */
int vyre_cuda_lower_measure(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
			    uint32_t n_heaps, uint32_t split_blocks, uint32_t *cls,
			    struct vyre_cuda_item_state *st, struct vyre_cuda_layout *lay);

/*
 * Write the units, stages and launches measured by vyre_cuda_lower_measure
 * (with the same @heaps, @cls and @st) into @slab (lay->bytes) and
 * @launches (lay->n_launches), and the slot of each order position into
 * @order_slot (plan.n_order entries). @grid_max bounds each launch's
 * n_blocks.
 */
void vyre_cuda_lower_fill(const struct vyre_exec_batch *batch, const struct vyre_cuda_heap *heaps,
			  const uint32_t *cls, struct vyre_cuda_item_state *st,
			  const struct vyre_cuda_layout *lay, uint8_t *slab, uint32_t grid_max,
			  uint32_t *order_slot, struct vyre_cuda_launch *launches);

/*
 * One item of an IMMEDIATE batch: where its data goes and comes back. A
 * module batch's item (vyre_cuda_lower_module_imm) uses order_pos, op and
 * cpl_at alone: its operands stay in their heaps.
 */
struct vyre_cuda_imm_item {
	uint32_t order_pos; /* the item's position in plan.order */
	uint32_t heap;	    /* of its input and output alike */
	uint32_t op, param;
	uint32_t count;	   /* words written (FILL..MUL) or read (SUM, MAX) */
	uint32_t in_words; /* words carried to the device */
	uint32_t in_at;	   /* doorbell slot word of its first input word */
	uint32_t cpl_at;   /* completion slot word of its status */
	uint64_t in_off, out_off;
};

/*
 * A batch of small items: what an IMMEDIATE doorbell carries (see
 * cuda_abi.h). The host copies each item's in_words words from @in_off of
 * its heap into the doorbell and stores its outcome at @out_off afterwards.
 * With @modules, a module batch: its units ride in the doorbell
 * (VYRE_MK_LAUNCH_CPL), its outcomes come back in the completion slot, and
 * no heap byte passes through the host.
 */
struct vyre_cuda_immediate {
	uint32_t modules;
	uint32_t n_items;
	uint32_t data_words; /* doorbell words after the header: descriptors and inputs */
	uint32_t cpl_words;  /* completion words, every item's */
	struct vyre_cuda_imm_item item[VYRE_MK_IMM_MAX_ITEMS];
};

/*
 * 1 and @imm filled when the batch measured and filled (vyre_cuda_lower_fill)
 * with @cls and @lay is one launch of one stage whose every unit is an item
 * that may run IMMEDIATE (FILL, COPY, ADD, XOR, MUL, SUM or MAX, aligned,
 * input and output equal or disjoint, in one heap that is not a device
 * buffer: the host copies its bytes) and whose descriptors and input words
 * fit a doorbell slot and status, result and output words a completion
 * slot. Else 0.
 */
int vyre_cuda_lower_immediate(const struct vyre_exec_batch *batch, const uint32_t *cls,
			      const struct vyre_cuda_layout *lay, struct vyre_cuda_immediate *imm);

/*
 * 1 and @imm filled (modules set) when the batch measured and filled
 * (vyre_cuda_lower_fill, which gave @order_slot) with @cls and @lay is one
 * launch of one stage of 1..VYRE_MK_INLINE_UNITS units, each a module item
 * with no chain (a block unit and one result record an item: unit j is the
 * j-th device item of the order, its record j), so that the units fit a
 * doorbell (VYRE_MK_LAUNCH_CPL) and the outcomes a completion slot,
 * VYRE_MK_CPL_MODULE_WORDS an item. Operands may be in any heap or device
 * buffer: they never leave it. Else 0.
 */
int vyre_cuda_lower_module_imm(const struct vyre_exec_batch *batch, const uint32_t *cls,
			       const uint32_t *order_slot, const struct vyre_cuda_layout *lay,
			       struct vyre_cuda_immediate *imm);

/* Write batch->results for every order position from the slots and records. */
void vyre_cuda_lower_results(const struct vyre_exec_batch *batch, const uint32_t *order_slot,
			     const struct vyre_mk_result *records);

/* Every item of the plan completes with @status (a device fault). */
void vyre_cuda_fail_results(const struct vyre_exec_batch *batch, int32_t status);

#endif /* VYRE_GPU_CUDA_LOWER_H */
