/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_lower_item.h - one item of a batch in the CUDA lowering: the
 * heap and per-item types, the class of an order position (CLS_*), the
 * order slots, and the helpers that the chain rules (cuda_lower_chain.c)
 * and the batch layout (cuda_lower.c) share. Not an interface of its own:
 * cuda_lower.h is, and includes this.
 */
#ifndef VYRE_GPU_CUDA_LOWER_ITEM_H
#define VYRE_GPU_CUDA_LOWER_ITEM_H

#include <stdint.h>

#include "backend.h"
#include "cuda_abi.h"

/* A registered heap as the device sees it. */
struct vyre_cuda_heap {
	uint64_t dptr; /* device address of byte 0 */
	uint64_t bytes;
	int registered;
	int device; /* a device buffer (cuMemAlloc), not host memory */
};

/*
 * Per batch item, scratch of vyre_cuda_lower_measure and _fill (n_items
 * entries): the plan group it runs in, and what says whether it failed
 * (for the items after it in a chain: docs/design.md 6.3).
 */
struct vyre_cuda_item_state {
	uint32_t group;
	uint32_t src;
};

/* order_slot[k] for items that need no result record. */
#define VYRE_CUDA_SLOT_OK	0xffffffffu /* status 0, result 0 */
#define VYRE_CUDA_SLOT_INVAL	0xfffffffeu /* status VYRE_E_INVAL, result 0 */
#define VYRE_CUDA_SLOT_CANCELED 0xfffffffdu /* status VYRE_E_CANCELED, result 0 */
/*
 * order_slot[k] = FOLLOW | record r (r < 2^28, as the slab is at most 4 GiB):
 * an item that continues a chain whose predecessor's outcome record r holds
 * (non-zero status: it failed). VYRE_E_CANCELED, result 0 when it failed;
 * else status 0, or VYRE_E_INVAL with FOLLOW_INVAL (a statically invalid item).
 */
#define VYRE_CUDA_SLOT_FOLLOW	    0x80000000u
#define VYRE_CUDA_SLOT_FOLLOW_INVAL 0x40000000u
#define VYRE_CUDA_SLOT_RECORD	    0x0fffffffu

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

/*
 * How a DFA item that scans up to @bytes bytes is split for a launch on
 * @blocks blocks: *parts parts of *part_bytes bytes (a multiple of 16; the
 * last part gets the rest), at most VYRE_MK_DFA_MAX_PARTS, one a block or a
 * multiple of @blocks when a block's share exceeds VYRE_MK_DFA_PART_MAX, and
 * none below VYRE_MK_DFA_PART_MIN. *parts is 1 (no split) up to
 * VYRE_MK_DFA_BLOCK_BYTES or with fewer than 2 blocks.
 */
void vyre_cuda_dfa_split(uint32_t bytes, uint32_t blocks, uint32_t *parts, uint32_t *part_bytes);

/* The static checks of vyre_exec_one, then how @it runs (CLS_*). */
uint32_t vyre_cuda_classify(const struct vyre_exec_item *it, const struct vyre_cuda_heap *heaps,
			    uint32_t n_heaps, uint32_t split_blocks);

/* The unit of a result item of class @c (a split DFA item: its join). */
struct vyre_mk_unit vyre_cuda_result_unit(const struct vyre_exec_item *it, uint32_t c,
					  const struct vyre_cuda_heap *heaps, uint32_t slot);

/*
 * Small helpers on the per-unit path of measure and fill: inline, as the
 * build has no link-time optimization.
 */
static inline uint32_t vyre_cuda_min_words(const struct vyre_exec_item *it)
{
	return it->in_bytes < it->out_bytes ? it->in_bytes / 4 : it->out_bytes / 4;
}

/* Words an elementwise item writes. */
static inline uint32_t vyre_cuda_elementwise_words(const struct vyre_exec_item *it)
{
	return it->op == VYRE_OP_FILL ? it->out_bytes / 4 : vyre_cuda_min_words(it);
}

/* Bytes a DFA item of @parts parts gives each (the last one may get fewer). */
static inline uint32_t vyre_cuda_dfa_part_bytes(uint32_t bytes, uint32_t parts)
{
	const uint64_t per = ((uint64_t)bytes + parts - 1) / parts;

	return (uint32_t)((per + 15) & ~(uint64_t)15);
}

/* The bytes a DFA item scans at most: DFA_SCAN_COUNTED's length word is not scanned. */
static inline uint32_t vyre_cuda_dfa_scan_bytes(const struct vyre_exec_item *it)
{
	return it->in_bytes - (it->op == VYRE_OP_DFA_SCAN_COUNTED ? 4u : 0u);
}

/* The device address of an operand classify accepted; 0 when the op does not use it. */
static inline uint64_t vyre_cuda_operand_addr(const struct vyre_cuda_heap *heaps, int used,
					      uint32_t heap, uint64_t off)
{
	return used ? heaps[heap].dptr + off : 0;
}

#endif /* VYRE_GPU_CUDA_LOWER_ITEM_H */
