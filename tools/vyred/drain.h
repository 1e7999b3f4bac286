/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/drain.h - the drain stage (pipeline.h): SQEs from the ready clients into a batch.
 */
#ifndef VYRED_DRAIN_H
#define VYRED_DRAIN_H

#include <stdint.h>

struct vyre_daemon;
struct vyre_batch;
struct vyre_conn;

void vyre_stage_drain(struct vyre_daemon *d, struct vyre_batch *b);
/*
 * 1 when the drain would take something from @c's published SQEs with
 * @credit free CQ slots: not while its first chain's last item is
 * unpublished, or while that chain waits for more CQ room, nor while its
 * first item waits for a batch in flight (a hazard, or a FENCE behind its
 * client's batch).
 */
int vyre_drain_ready(const struct vyre_daemon *d, struct vyre_conn *c, uint32_t credit);

#endif /* VYRED_DRAIN_H */
