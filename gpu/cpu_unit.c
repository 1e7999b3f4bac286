/* SPDX-License-Identifier: MIT */
/* The CPU backend's items, alone or as on-chip handoff units (cpu_unit.h). */
#include "cpu_unit.h"

/* Item @i as @run (itself, or a copy with operands in scratch); checks use the original. */
static void run_one(const struct vyre_cpu_exec *x, const struct vyre_exec_batch *batch, uint32_t i,
		    const struct vyre_exec_item *run)
{
	const struct vyre_exec_item *it = &batch->items[i];
	struct vyre_exec_result *r = &batch->results[i];

	r->reserved = 0;
	/* its predecessor ran in an earlier group, or just before on this thread */
	if (vyre_exec_canceled(it, batch->results, batch->n_items)) {
		r->status = VYRE_E_CANCELED;
		r->result = 0;
		return;
	}
	/* the batch names no scratch: only this file puts operands there */
	if (!vyre_exec_heaps_ok(x->heaps, x->max_heaps, it)) {
		r->status = VYRE_E_INVAL;
		r->result = 0;
		return;
	}
	r->status = vyre_exec_one(x->heaps, run, &r->result);
}

/* Item @k hands its output to item k + 1. */
static int hands_on(const struct vyre_exec_batch *batch, uint32_t k)
{
	return (batch->items[k].flags & VYRE_EXEC_HANDOFF_OUT) && k + 1 < batch->n_items &&
	       (batch->items[k + 1].flags & VYRE_EXEC_HANDOFF_IN);
}

/*
 * The unit from item @k on: each member writes its handed-off output to
 * scratch buffer @side and the next reads it from there, while the one
 * after writes the other buffer. An output too large for the scratch stays
 * in the heap (the marks came from a budget this backend does not have):
 * the unit still runs in order, only through the heap.
 */
static void run_unit(const struct vyre_cpu_exec *x, const struct vyre_exec_batch *batch, uint32_t k,
		     uint32_t t)
{
	uint32_t side = 0;
	int handed = 0; /* item k's input is in scratch buffer side ^ 1 */

	for (;;) {
		const int on = hands_on(batch, k);
		const int keep = on && batch->items[k].out_bytes <= x->scratch_bytes;
		struct vyre_exec_item run = batch->items[k];

		if (handed) {
			run.in_heap = vyre_cpu_scratch_heap(x, t, side ^ 1);
			run.in_off = 0;
		}
		if (keep) {
			run.out_heap = vyre_cpu_scratch_heap(x, t, side);
			run.out_off = 0;
		}
		run_one(x, batch, k, &run);
		if (!on)
			return;
		handed = keep;
		side ^= keep;
		k++;
	}
}

void vyre_cpu_run_item(const struct vyre_cpu_exec *x, const struct vyre_exec_batch *batch,
		       uint32_t i, uint32_t t)
{
	const struct vyre_exec_item *it = &batch->items[i];

	if ((it->flags & VYRE_EXEC_HANDOFF_IN) && i > 0 && hands_on(batch, i - 1))
		return;
	if (hands_on(batch, i))
		run_unit(x, batch, i, t);
	else
		run_one(x, batch, i, it);
}
