/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/complete.h - the complete stage (pipeline.h): CQ positions at dispatch, SQ
 * heads released, CQEs published in acceptance order.
 */
#ifndef VYRED_COMPLETE_H
#define VYRED_COMPLETE_H

#include <stdint.h>

struct vyre_daemon;
struct vyre_batch;
struct vyre_conn;

/* Advance SQ heads and stage CQ slots (complete.c); once per batch. */
void vyre_stage_release(struct vyre_daemon *d, struct vyre_batch *b);
/*
 * Before the backend starts @b (complete.c): each client's CQ positions and
 * batch count, and resumable clients' sq_accepted.
 */
void vyre_stage_accept(struct vyre_daemon *d, struct vyre_batch *b);
/* @now: the completion time every CQE of the batch carries */
void vyre_stage_complete(struct vyre_daemon *d, struct vyre_batch *b, uint64_t now);

#endif /* VYRED_COMPLETE_H */
