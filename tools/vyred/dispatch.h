/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/dispatch.h - the dispatch stage (pipeline.h): the backend starts a planned
 * batch; and a batch the backend reported is finished.
 */
#ifndef VYRED_DISPATCH_H
#define VYRED_DISPATCH_H

#include <stdint.h>

struct vyre_daemon;
struct vyre_batch;
struct vyre_conn;

/*
 * Start the plan in the batch's slot and count its items as in flight.
 * Returns 1 when the batch runs (the backend reports it later), 0 when it is
 * already finished (nothing to run, or the backend refused it: its items
 * failed with VYRE_E_DEVICE) and must be completed now.
 */
int vyre_stage_dispatch(struct vyre_daemon *d, struct vyre_batch *b);
/*
 * The backend reported the batch's slot with @status (0, or a failure of the
 * whole batch): results are final; the hazards it held are released.
 */
void vyre_stage_finish(struct vyre_daemon *d, struct vyre_batch *b, int status);

#endif /* VYRED_DISPATCH_H */
