/* SPDX-License-Identifier: MIT */
/* Routing new clients to loops, and the counts per loop (route.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "gpus.h"
#include "log.h"
#include "route.h"
#include "shared.h"

/*
 * The route of @name; a new one, on the GPU and loop placement picks for a
 * first client of class @cls, when there is none. NULL when every route is taken (*rc VYRE_E_NOMEM)
 * or no GPU may take the domain (*rc VYRE_E_DEVICE).
 */
static struct vyre_route *route_of(struct vyre_daemon *d, const char *name, uint32_t cls, int *rc)
{
	struct vyre_shared *sh = d->sh;
	struct vyre_route *free_route = NULL;

	for (uint32_t r = 0; r < sh->n_routes; r++) {
		struct vyre_route *rt = &sh->routes[r];

		if (rt->refs && !strcmp(rt->name, name))
			return rt;
		if (!rt->refs && !free_route)
			free_route = rt;
	}
	*rc = VYRE_E_NOMEM;
	if (!free_route)
		return NULL;
	const uint32_t gpu = vyre_gpus_place(d, name);

	*rc = VYRE_E_DEVICE;
	if (gpu == VYRED_NO_GPU)
		return NULL;
	snprintf(free_route->name, sizeof(free_route->name), "%s", name);
	free_route->loop = vyre_gpus_loop_of(d, gpu, cls);
	sh->gpus[gpu].domains++;
	return free_route;
}

/* A new domain (named, or private with @domain ""), placed: its loop, or a VYRE_E_*. */
static int route_locked(struct vyre_daemon *d, struct vyre_conn *c, const char *domain,
			uint32_t *loop)
{
	struct vyre_shared *sh = d->sh;
	int rc = 0;

	if (sh->clients >= d->cfg.max_clients)
		return VYRE_E_NOMEM;
	if (domain[0]) {
		struct vyre_route *rt = route_of(d, domain, c->priority, &rc);

		if (!rt)
			return rc;
		if (__atomic_load_n(&sh->gpus[sh->loops[rt->loop].gpu].lost, __ATOMIC_ACQUIRE))
			return VYRE_E_DEVICE;
		rt->refs++;
		*loop = rt->loop;
		c->route = (uint32_t)(rt - sh->routes) + 1;
		return 0;
	}
	const uint32_t gpu = vyre_gpus_place(d, "");

	if (gpu == VYRED_NO_GPU)
		return VYRE_E_DEVICE;
	sh->gpus[gpu].domains++;
	*loop = vyre_gpus_loop_of(d, gpu, c->priority);
	return 0;
}

int vyre_route_client(struct vyre_daemon *d, struct vyre_conn *c, const char *domain,
		      uint32_t *loop)
{
	struct vyre_shared *sh = d->sh;
	int rc;

	*loop = d->loop_index;
	if (sh->n_loops == 1)
		return 0;
	pthread_mutex_lock(&sh->lock);
	rc = route_locked(d, c, domain, loop);
	if (rc == 0) {
		sh->load[*loop]++;
		sh->load_class[*loop][c->priority]++;
		sh->clients++;
		c->routed = *loop + 1;
	}
	pthread_mutex_unlock(&sh->lock);
	if (rc == VYRE_E_NOMEM)
		vyre_log("client %u: --max-clients %u reached (or every domain route is taken)",
			 c->id, d->cfg.max_clients);
	else if (rc != 0)
		vyre_log("client %u: domain '%s' has no GPU to run on: the GPU it is on or "
			 "pinned to is lost, or every GPU is",
			 c->id, domain[0] ? domain : "(private)");
	return rc;
}

void vyre_route_drop(struct vyre_shared *sh, uint32_t routed, uint32_t route, uint32_t cls)
{
	if (!routed)
		return;
	pthread_mutex_lock(&sh->lock);
	struct vyre_gpu *gpu = &sh->gpus[sh->loops[routed - 1].gpu];

	sh->load[routed - 1]--;
	sh->load_class[routed - 1][cls]--;
	sh->clients--;
	/* a private domain leaves with its client, a named one with its route's last */
	if (!route || --sh->routes[route - 1].refs == 0)
		gpu->domains--;
	pthread_mutex_unlock(&sh->lock);
}

void vyre_route_release(struct vyre_daemon *d, struct vyre_conn *c)
{
	vyre_route_drop(d->sh, c->routed, c->route, c->priority);
	c->routed = c->route = 0;
}
