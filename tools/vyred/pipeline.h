/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/pipeline.h - vyred's batches and the stages they go through:
 *
 *	drain    copy SQEs from every ready client that has fewer than
 *		 --client-batches batches in flight (a client's items
 *		 contiguous and in submission order; never more than its free
 *		 CQ slots nor its fair share; only the prefix that has no hazard
 *		 with an in-flight item, hazards.h, and no FENCE while its client
 *		 has a batch in flight; whole chains only, chains.h)
 *	resolve  handles -> heap ranges; static errors get their status here
 *	plan     plan_stage.h: which prefix is accepted, in what order/groups
 *	dispatch the backend starts the plan in the batch's slot; SQ heads
 *		 advance by the accepted count only, so unaccepted items stay in
 *		 the rings
 *	complete when the backend reports the slot: CQEs in acceptance order
 *		 per client, published in that order across its batches
 *
 * Up to --inflight batches are in flight, one per backend slot; each slot's
 * arrays are allocated once at start-up for --max-batch items. The stages
 * never call into the event loop: what the loop must do afterwards (wake a
 * client, drop one) is left in the daemon's wake and drop lists.
 */
#ifndef VYRED_PIPELINE_H
#define VYRED_PIPELINE_H

#include <stdint.h>

struct vyre_daemon;

/* pipeline.c: the batch slots and one step of the pipeline. */
int vyre_pipeline_init(struct vyre_daemon *d);
void vyre_pipeline_fini(struct vyre_daemon *d);
/*
 * Completes the batches the backend reports (waiting up to @timeout_ns for
 * one when some run and none is done), then dispatches new batches while a
 * slot is free and clients have work. Returns items completed plus items
 * accepted (0: nothing happened).
 */
int vyre_pipeline_step(struct vyre_daemon *d, int64_t timeout_ns);

#endif /* VYRED_PIPELINE_H */
