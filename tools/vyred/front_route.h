/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/front_route.h - the supervisor's placement (front.h): which
 * worker a new connection goes to, and the count of connections each
 * domain route and worker holds, kept exact by the workers' GONE events
 * (worker_link.h).
 */
#ifndef VYRED_FRONT_ROUTE_H
#define VYRED_FRONT_ROUTE_H

#include <stdint.h>

#include "config.h"

#define VYRE_FRONT_NO_WORKER UINT32_MAX

enum vyre_worker_state {
	VYRE_WORKER_DOWN,     /* no process: waiting to be started (restart_at) or left out */
	VYRE_WORKER_STARTING, /* started, not READY yet */
	VYRE_WORKER_READY,    /* serving */
	VYRE_WORKER_LOST,     /* its device faulted: it finishes what it holds and exits */
};

struct vyre_worker {
	uint32_t ordinal;
	uint32_t first;	 /* index in --gpus of its first GPU */
	uint32_t n_gpus; /* GPUs of --gpus on this device */
	enum vyre_worker_state state;
	int pid;
	int chan;	   /* the supervisor's end of the channel, or -1 */
	uint32_t privates; /* connections of private domains it holds */
	uint32_t named;	   /* routes (named domains) placed on it */
	uint32_t failed_starts;
	int left_out;	     /* too many failed starts: not started again */
	uint64_t restart_at; /* CLOCK_MONOTONIC ns, while DOWN */
	uint64_t lost_at;    /* when it last reported LOST or exited, for the pause */
};

struct vyre_front_route {
	char name[VYRE_DOMAIN_NAME_MAX + 1];
	uint32_t worker;
	uint32_t refs; /* connections handed over and not GONE; 0: free */
};

/* A live connection's region memfd, from the worker holding it (REGION, until GONE). */
struct vyre_front_region {
	uint32_t client_id; /* 0: free */
	uint32_t worker;
	uint64_t dev, ino;
};

struct vyre_front_routes {
	struct vyre_worker *workers;
	uint32_t n_workers;
	struct vyre_front_route *routes;
	uint32_t n_routes;
	uint32_t place_next; /* where ties start, so idle workers take turns */
	struct vyre_front_region *regions;
	uint32_t n_regions;
};

int vyre_front_routes_init(struct vyre_front_routes *fr, uint32_t n_routes);
void vyre_front_routes_fini(struct vyre_front_routes *fr);

/*
 * The worker for a connection to @domain ("" private) and its route (0 for
 * a private domain): the worker holding the named domain, its --domain-gpu
 * pin, else the serving worker of least load (domains placed per GPU).
 * Counts the connection. Returns 0, VYRE_E_DEVICE (no worker may take it,
 * nor will), VYRE_E_AGAIN (none may now, one starts or is to be started) or
 * VYRE_E_NOMEM (every route is taken).
 */
int vyre_front_place(struct vyre_front_routes *fr, const struct vyre_daemon_config *cfg,
		     const char *domain, uint32_t *worker, uint32_t *route);
/*
 * As vyre_front_place, on worker @w, which holds the region a RESUME names:
 * there the worker itself refuses it while its old connection's batch runs.
 * VYRE_E_AGAIN when @domain is named and lives on another worker.
 */
int vyre_front_place_on(struct vyre_front_routes *fr, const char *domain, uint32_t w,
			uint32_t *route);
/* Worker @w closed a connection counted in @route, of client @client_id (GONE). */
void vyre_front_gone(struct vyre_front_routes *fr, uint32_t w, uint32_t route, uint32_t client_id);
/* Worker @w's client @client_id has the region memfd (@dev, @ino) (REGION). */
void vyre_front_region(struct vyre_front_routes *fr, uint32_t w, uint32_t client_id, uint64_t dev,
		       uint64_t ino);
/* The worker holding a connection of region memfd (@dev, @ino), or VYRE_FRONT_NO_WORKER. */
uint32_t vyre_front_region_worker(const struct vyre_front_routes *fr, uint64_t dev, uint64_t ino);
/* Worker @w serves no more: its routes and counts are dropped. */
void vyre_front_drop(struct vyre_front_routes *fr, uint32_t w);
/* Workers serving now. */
uint32_t vyre_front_serving(const struct vyre_front_routes *fr);

#endif /* VYRED_FRONT_ROUTE_H */
