/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/disjoint.h - the plan of a batch whose items share no written
 * buffer, found without the planner.
 *
 * When no item of a batch writes a buffer that another item of it reads or
 * writes, and none is chained or names a byte range, the planner has
 * nothing to do: no item can be deduplicated (identical items would share
 * their output), no edge orders two of them, so the plan is one group and
 * one launch of every valid item in batch order, as long as their bytes fit
 * the group budget. Large batches of independent small items (one client
 * filling its own buffers, many clients each writing their own) are the
 * common case under load, and the planner spent most of vyred's CPU on
 * them (docs/fastpath.md).
 *
 * The check is two linear passes with one stamp a handle slot: the writes
 * first, then every read against them. Writes are recorded per handle slot
 * (the low bits of a handle), so two live buffers whose handles share a
 * slot, which only adopted domains' aliases can, look like one buffer: the
 * batch then goes to the planner, never the other way round. One array of
 * --max-buffers + 1 entries, allocated at start-up.
 */
#ifndef VYRED_DISJOINT_H
#define VYRED_DISJOINT_H

#include <stdint.h>

#include "../../gpu/ops.h"

/* Batches of at most this many items are checked pair by pair instead (plan_wrap.c). */
#define VYRE_SMALL_PLAN_ITEMS 8u

struct vyre_disjoint_mark {
	uint32_t stamp;	  /* the batch that wrote the slot, 0: none */
	uint32_t writer;  /* which of its items */
	uint32_t counted; /* the batch that counted the slot's table bytes, 0: none */
};

struct vyre_disjoint {
	struct vyre_disjoint_mark *mark; /* handle slot -> its writer in the current batch */
	uint32_t n_slots;
	uint32_t stamp;
};

int vyre_disjoint_init(struct vyre_disjoint *t, uint32_t max_buffers);
void vyre_disjoint_fini(struct vyre_disjoint *t);

/*
 * The items i < @n with status[i] == 0, in order, into @order when they
 * share no written buffer, carry neither VYRE_SQE_CHAIN nor VYRE_SQE_RANGE
 * in flags[i] and touch at most @budget bytes together (a table read by
 * several items counts once, as the planner counts it): returns how many.
 * -1 when the batch needs the planner.
 */
int64_t vyre_disjoint_order(struct vyre_disjoint *t, uint32_t n, const struct vyre_work_item *items,
			    const struct vyre_exec_item *exec, const int32_t *status,
			    const uint32_t *flags, uint64_t budget, uint32_t *order);

#endif /* VYRED_DISJOINT_H */
