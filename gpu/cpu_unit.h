/* SPDX-License-Identifier: MIT */
/*
 * gpu/cpu_unit.h - how the CPU backend runs one item of a planned batch.
 *
 * Most items run alone, through the heaps. An item that hands its output
 * over (VYRE_EXEC_HANDOFF_OUT, docs/design.md 7.6) runs with the items it
 * hands to, one after the other on the same thread, as soon as its own
 * group runs (the planner checked that the groups allow it): each
 * handed-off buffer goes to the thread's scratch instead of the heap, whose
 * bytes for it are never touched. Two scratch buffers per thread, used in
 * turn, so a unit of any length needs no more. A reader marked
 * VYRE_EXEC_HANDOFF_IN is skipped where the plan lists it: its unit ran it.
 */
#ifndef VYRE_GPU_CPU_UNIT_H
#define VYRE_GPU_CPU_UNIT_H

#include <stdint.h>

#include "backend.h"

struct vyre_cpu_exec {
	/* max_heaps domain heaps and device buffers, then two scratch buffers per thread */
	const struct vyre_heap_view *heaps;
	uint32_t max_heaps;
	uint64_t scratch_bytes; /* of each scratch buffer */
};

/* Heap index of thread @t's scratch buffer @side (0 or 1). */
static inline uint32_t vyre_cpu_scratch_heap(const struct vyre_cpu_exec *x, uint32_t t,
					     uint32_t side)
{
	return x->max_heaps + 2 * t + side;
}

/* Run item @i of @batch (or its unit, or nothing: see above) on thread @t. */
void vyre_cpu_run_item(const struct vyre_cpu_exec *x, const struct vyre_exec_batch *batch,
		       uint32_t i, uint32_t t);

#endif /* VYRE_GPU_CPU_UNIT_H */
