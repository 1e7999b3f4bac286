/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_lower_chain.h - chains and on-chip handoff runs in the CUDA
 * lowering (cuda_lower_chain.c), as the batch layout (cuda_lower.c) uses
 * them.
 */
#ifndef VYRE_GPU_CUDA_LOWER_CHAIN_H
#define VYRE_GPU_CUDA_LOWER_CHAIN_H

#include "cuda_lower_item.h"

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

#endif /* VYRE_GPU_CUDA_LOWER_CHAIN_H */
