/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/plan_wrap.h - the plan stage (pipeline.h): the planner, or the disjoint or
 * sequential plan, over a resolved batch.
 */
#ifndef VYRED_PLAN_WRAP_H
#define VYRED_PLAN_WRAP_H

#include <stdint.h>

struct vyre_daemon;
struct vyre_batch;
struct vyre_conn;

/* @start: when the stage began, for its probe */
void vyre_stage_plan(struct vyre_daemon *d, struct vyre_batch *b, uint64_t start);

#endif /* VYRED_PLAN_WRAP_H */
