/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/loops.h - vyred's event loops (--loops N).
 *
 * Each loop is a whole vyred (struct vyre_daemon): its own io_uring,
 * clients, domains, buffer handles, batch slots and backend instance, run
 * by a thread of its own. A domain lives in one loop, so loops never share
 * a buffer, a hazard or a batch, and the acceptance order of a domain is
 * its loop's. They wait for each other only where a shared GPU makes them:
 * a heap (un)registration stops every loop's grid (gpu/cuda_group.c). What they share is here: the
 * routing of new clients (a named domain to the loop that holds it, a
 * new one to a loop of its GPU by placement, gpus.h), the stop flag, the
 * GPUs (gpus.h), and the exit figures.
 *
 * Loop 0 owns the listening socket and the signals and reads every HELLO.
 * A client routed to another loop is handed over, its socket and the
 * descriptors of its HELLO with it, through that loop's inbox (an eventfd
 * read through its io_uring); that loop then answers the HELLO. With one
 * loop nothing here is used but the exit figures.
 */
#ifndef VYRED_LOOPS_H
#define VYRED_LOOPS_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../ring/proto.h"
#include "priority.h"

#define VYRED_MAX_LOOPS	   64u /* in all; --loops N is per GPU, at most 16 */
#define VYRED_MAX_GROUPS   64u
#define VYRED_MAX_GPUS	   16u
#define VYRED_GPU_NAME_MAX 48u

struct vyre_backend_ops;
struct vyre_daemon;
struct vyre_daemon_config;
struct vyre_conn;
struct vyre_handoff; /* daemon.h: it holds a struct vyre_conn */

/* A named domain and the loop that holds it, while clients routed to it remain. */
struct vyre_route {
	char name[VYRE_DOMAIN_NAME_MAX + 1];
	uint32_t loop;
	uint32_t refs;
};

/*
 * A GPU vyred drives (docs/design.md 8.8): an entry of --gpus, served by
 * loops [first_loop, first_loop + n_loops).
 */
struct vyre_gpu {
	uint32_t ordinal; /* the driver's device number */
	uint32_t first_loop, n_loops;
	uint32_t domains; /* placed here and live (under the shared lock) */
	int lost;	  /* atomic: out of service after a device fault */
	uint64_t device_bytes_max;
	uint64_t device_bytes_used; /* atomic: its loops' device buffers */
	char name[VYRED_GPU_NAME_MAX];
};

struct vyre_shared {
	pthread_mutex_t lock; /* routes, load, clients and every loop's inbox */
	uint32_t n_loops;
	uint32_t n_made; /* loops set up; --loops auto may run fewer (vyre_loops_plan) */
	struct vyre_daemon *loops;
	struct vyre_gpu gpus[VYRED_MAX_GPUS];
	uint32_t n_gpus;
	uint32_t loops_per_gpu;
	uint32_t place_next; /* where placement's tie-break starts (gpus.c), under the lock */
	const struct vyre_backend_ops *backend_ops; /* what every loop runs (backend_select.c) */
	uint32_t load[VYRED_MAX_LOOPS];		    /* clients routed to each loop, not yet gone */
	uint32_t load_class[VYRED_MAX_LOOPS][VYRED_CLASSES]; /* of them, per priority class */
	uint32_t clients;				     /* all of them */
	struct vyre_route *routes;			     /* --max-domains * loops entries */
	uint32_t n_routes;
	int stopping; /* atomic: every loop drains and exits */
};

/*
 * The loop @c (in its HELLO, naming @domain) goes to. Counts it against
 * --max-clients over all loops. Returns 0 or VYRE_E_NOMEM.
 */
int vyre_route_client(struct vyre_daemon *d, struct vyre_conn *c, const char *domain,
		      uint32_t *loop);
/* @c is going away: it no longer counts where it was routed. */
void vyre_route_release(struct vyre_daemon *d, struct vyre_conn *c);

/*
 * Hand @c and its HELLO (@m, @fds) to loop @loop. On success @c's slot is
 * free again and owns nothing; the descriptors travel. Returns 0, or
 * VYRE_E_NOMEM when that loop's inbox is full (nothing moved).
 */
int vyre_handoff(struct vyre_daemon *d, struct vyre_conn *c, uint32_t loop,
		 const struct vyre_msg *m, const int *fds, unsigned nfds);
/* The loop's inbox was signalled: adopt every client waiting in it. */
void vyre_inbox_take(struct vyre_daemon *d);

/* Every loop drains and exits (a signal, or a device that is gone). */
void vyre_loops_stop(struct vyre_daemon *d);

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
