/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/shared.h - what the event loops share (loops.h): the GPUs,
 * the routes of named domains, the load per loop, the stop flag. Types
 * only; route.c, gpus.c and inbox.c own the code that changes them, under
 * sh->lock or with atomics as each field says.
 */
#ifndef VYRED_SHARED_H
#define VYRED_SHARED_H

#include <pthread.h>
#include <stdint.h>

#include "daemon_config.h"
#include "priority.h"
#include "vyre/vyre.h"

struct vyre_backend_ops;
struct vyre_daemon;

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

#endif /* VYRED_SHARED_H */
