/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/resolve_stage.h - the resolve stage (pipeline.h): handles to heap ranges.
 */
#ifndef VYRED_RESOLVE_STAGE_H
#define VYRED_RESOLVE_STAGE_H

#include <stdint.h>

struct vyre_daemon;
struct vyre_batch;
struct vyre_conn;

void vyre_stage_resolve(struct vyre_daemon *d, struct vyre_batch *b);

#endif /* VYRED_RESOLVE_STAGE_H */
