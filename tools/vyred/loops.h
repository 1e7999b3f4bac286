/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/loops.h - vyred's event loops (--loops N).
 *
 * Each loop is a whole vyred (struct vyre_daemon): its own io_uring,
 * clients, domains, buffer handles, batch slots and backend instance, run
 * by a thread of its own. A domain lives in one loop, so loops never share
 * a buffer, a hazard or a batch, and the acceptance order of a domain is
 * its loop's. They wait for each other only where a shared GPU makes them:
 * a heap (un)registration stops every loop's grid (gpu/cuda_group.c).
 * What they share (shared.h): the routing of new clients (route.h: a named
 * domain to the loop that holds it, a new one to a loop of its GPU by
 * placement, gpus.h), the inboxes and the stop flag (inbox.h), the GPUs
 * (gpus.h), and the exit figures (here).
 *
 * Loop 0 owns the listening socket and the signals and reads every HELLO.
 * A client routed to another loop is handed over, its socket and the
 * descriptors of its HELLO with it, through that loop's inbox (an eventfd
 * read through its io_uring); that loop then answers the HELLO. With one
 * loop nothing but the threads and the exit figures is used.
 */
#ifndef VYRED_LOOPS_H
#define VYRED_LOOPS_H

#include "../../gpu/backend.h"
#include "shared.h"

/*
 * Set up the shared state for the loops of @sh's GPUs (gpus.h chose them
 * and @ops; each loop's tables are set up by the caller afterwards), run
 * them (loop 0 on the calling thread) and log the exit figures of all.
 * Returns 0 or -1. Loop 0's backend choice may still cut the loops
 * (backend_select.c); sh->n_made keeps how many were set up.
 */
int vyre_loops_init(struct vyre_shared *sh, struct vyre_daemon *loops,
		    const struct vyre_backend_ops *ops);
int vyre_loops_run(struct vyre_shared *sh);
void vyre_loops_fini(struct vyre_shared *sh);

#endif /* VYRED_LOOPS_H */
