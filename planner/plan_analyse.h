/* SPDX-License-Identifier: MIT */
/* planner/plan_analyse.h - the planner's one pass over a batch (planner-internal). */
#ifndef VYRE_PLANNER_PLAN_ANALYSE_H
#define VYRE_PLANNER_PLAN_ANALYSE_H

#include <stdint.h>

#include "batch.h"

struct pass_counts {
	uint32_t n_waves;
	uint32_t invalid;
	uint32_t deduped;
};

/* vyre_plan_analyse met an item with byte ranges while @ranged was 0. */
#define ANALYSE_RANGED 1

/*
 * Dedupe, dependency edges and bytes for items [0, n), in one pass. With
 * @ranged, buffer slots are the runs of overlapping byte ranges (ranges.c)
 * and dedupe compares the ranges too; without, a valid item with
 * VYRE_SQE_RANGE stops the pass with ANALYSE_RANGED, so a batch without
 * one costs nothing more.
 */
int vyre_plan_analyse(struct vyre_planner *p, struct batch_scratch *s,
		      const struct vyre_plan_batch *b, uint32_t n, int ranged,
		      struct pass_counts *c, uint32_t *shrink, struct vyre_plan_error *err);

#endif /* VYRE_PLANNER_PLAN_ANALYSE_H */
