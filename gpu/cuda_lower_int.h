/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_lower_int.h - what the lowering's files share (cuda_lower.c: items
 * to units; cuda_lower_chain.c: chains and on-chip handoff runs). Not an
 * interface: cuda_lower.h is.
 */
#ifndef VYRE_GPU_CUDA_LOWER_INT_H
#define VYRE_GPU_CUDA_LOWER_INT_H

#include "cuda_lower.h"

/*
 * The class of an order position, packed in 32 bits so a batch is checked
 * once and filled from a compact array: how many units it becomes and how
 * they run. An item that is not DEVICE completes on the host (0, INVAL or
 * CANCELED, or as its chain predecessor's record says).
 */
#define CLS_UNITS      0x000fffffu /* an item is at most 2^30 words: 2^19 chunks */
#define CLS_AFTER      (1u << 20)  /* its units check the chain predecessor's record first */
#define CLS_FUSED      (1u << 21)  /* heads an on-chip handoff run of CLS_UNITS members */
#define CLS_MEMBER     (1u << 22)  /* a later member of a run: its head's units run it */
#define CLS_CANCELED   (1u << 23)  /* its chain predecessor failed, as the host knows */
#define CLS_DEVICE     (1u << 24)
#define CLS_INVAL      (1u << 25)
#define CLS_BLOCK      (1u << 26) /* its unit runs on a whole block */
#define CLS_SEQUENTIAL (1u << 27) /* its unit runs on one thread with byte loads */
#define CLS_RESULT     (1u << 28) /* it produces a result record */
#define CLS_DEVMEM     (1u << 29) /* an operand is a device buffer, not in host memory */
#define CLS_SPLIT      (1u << 30) /* a DFA item in parts (block units) and a join */
#define CLS_BAD	       (1u << 31) /* not a class: the plan breaks the chain rules */

/*
 * struct vyre_cuda_item_state.src: what says whether an item failed, for
 * the items after it in its chain. Below VYRE_CUDA_SRC_FIRST: a result
 * record whose status is non-zero exactly when the item failed.
 */
#define VYRE_CUDA_SRC_FIRST  0xfffffff0u
#define VYRE_CUDA_SRC_OK     0xfffffff0u /* status 0, known on the host */
#define VYRE_CUDA_SRC_FAIL   0xfffffff1u /* non-zero, known on the host */
#define VYRE_CUDA_SRC_OWN    0xfffffff2u /* its own record (slot given by fill) */
#define VYRE_CUDA_SRC_FOLLOW 0xfffffff3u /* fails when its predecessor fails: that one's */
/* struct vyre_cuda_item_state.group */
#define VYRE_CUDA_GROUP_NONE	0xffffffffu /* not lowered (yet) */
#define VYRE_CUDA_GROUP_PENDING (1u << 31)  /* a run member whose own place is yet to come */

struct fill_cursor {
	struct vyre_mk_unit *units;
	uint32_t unit, result;
	uint32_t chained; /* vyre_cuda_layout.chained */
};

/* The static checks of vyre_exec_one, then how @it runs (CLS_*). */
uint32_t vyre_cuda_classify(const struct vyre_exec_item *it, const struct vyre_cuda_heap *heaps,
			    uint32_t n_heaps, uint32_t split_blocks);

/* The unit of a result item of class @c (a split DFA item: its join). */
struct vyre_mk_unit vyre_cuda_result_unit(const struct vyre_exec_item *it, uint32_t c,
					  const struct vyre_cuda_heap *heaps, uint32_t slot);

/*
 * Chain rules and handoff runs for item @i (of class @c) in
 * plan group @g of a launch whose first group is @launch_first: the class
 * it runs with, or CLS_BAD. Records in @st what later items need.
 * *pending counts run members whose own place is yet to come.
 */
uint32_t vyre_cuda_chain_measure(const struct vyre_exec_batch *batch,
				 const struct vyre_cuda_heap *heaps, uint32_t n_heaps,
				 uint32_t split_blocks, struct vyre_cuda_item_state *st, uint32_t i,
				 uint32_t g, uint32_t launch_first, uint32_t c, uint32_t *pending);

/*
 * Fill: before plan group [begin, end) is emitted, the records its
 * followers (VYRE_CUDA_SRC_FOLLOW) take from their predecessors.
 */
void vyre_cuda_chain_resolve(const struct vyre_exec_batch *batch, const uint32_t *cls,
			     struct vyre_cuda_item_state *st, uint32_t begin, uint32_t end);

/*
 * VYRE_MK_AFTER_PREV and the record to check, on @u of item @i of class @c.
 * Inline, so that @u stays in registers on the path of every unit.
 */
static inline void vyre_cuda_chain_mark(const struct vyre_exec_batch *batch,
					const struct vyre_cuda_item_state *st, uint32_t i,
					uint32_t c, struct vyre_mk_unit *u)
{
	if (!(c & CLS_AFTER))
		return;
	u->op |= VYRE_MK_AFTER_PREV;
	u->reserved = st[batch->items[i].prev].src;
}

/* Emits the units of handoff run head @i (class @c); returns the head's record slot. */
uint32_t vyre_cuda_chain_emit_run(struct fill_cursor *cur, const struct vyre_exec_batch *batch,
				  const struct vyre_cuda_heap *heaps,
				  struct vyre_cuda_item_state *st, uint32_t i, uint32_t c);

/* The order slot of item @i of class @c that has no record of its own (not DEVICE, or FOLLOW). */
uint32_t vyre_cuda_chain_host_slot(const struct vyre_exec_batch *batch,
				   const struct vyre_cuda_item_state *st, uint32_t i, uint32_t c);

#endif /* VYRE_GPU_CUDA_LOWER_INT_H */
