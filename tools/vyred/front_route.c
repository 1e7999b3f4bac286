/* SPDX-License-Identifier: MIT */
/* The supervisor's placement (front_route.h). */
#include <stdlib.h>
#include <string.h>

#include "front_route.h"
#include "vyre/vyre.h"

int vyre_front_routes_init(struct vyre_front_routes *fr, uint32_t n_routes)
{
	fr->routes = calloc(n_routes, sizeof(*fr->routes));
	fr->regions = calloc(n_routes, sizeof(*fr->regions));
	if (!fr->routes || !fr->regions) {
		vyre_front_routes_fini(fr);
		return VYRE_E_NOMEM;
	}
	fr->n_routes = fr->n_regions = n_routes;
	return 0;
}

void vyre_front_routes_fini(struct vyre_front_routes *fr)
{
	free(fr->routes);
	free(fr->regions);
	fr->routes = NULL;
	fr->regions = NULL;
	fr->n_routes = fr->n_regions = 0;
}

void vyre_front_region(struct vyre_front_routes *fr, uint32_t w, uint32_t client_id, uint64_t dev,
		       uint64_t ino)
{
	struct vyre_front_region *free_rg = NULL;

	for (uint32_t r = 0; r < fr->n_regions; r++) {
		struct vyre_front_region *rg = &fr->regions[r];

		/* this client's own entry (updated) wins over the first free one */
		if ((rg->client_id == client_id && rg->worker == w) || (!rg->client_id && !free_rg))
			free_rg = rg;
	}
	/* a table of one entry a connection the workers can hold: never full */
	if (!free_rg)
		return;
	*free_rg = (struct vyre_front_region){client_id, w, dev, ino};
}

uint32_t vyre_front_region_worker(const struct vyre_front_routes *fr, uint64_t dev, uint64_t ino)
{
	for (uint32_t r = 0; r < fr->n_regions; r++)
		if (fr->regions[r].client_id && fr->regions[r].dev == dev &&
		    fr->regions[r].ino == ino)
			return fr->regions[r].worker;
	return VYRE_FRONT_NO_WORKER;
}

uint32_t vyre_front_serving(const struct vyre_front_routes *fr)
{
	uint32_t n = 0;

	for (uint32_t w = 0; w < fr->n_workers; w++)
		n += fr->workers[w].state == VYRE_WORKER_READY;
	return n;
}

/* 1 when worker @w does not serve now but will: starting, or to be started again. */
static int coming(const struct vyre_worker *w)
{
	return w->state != VYRE_WORKER_READY && !w->left_out;
}

static int starting(const struct vyre_front_routes *fr)
{
	for (uint32_t w = 0; w < fr->n_workers; w++)
		if (coming(&fr->workers[w]))
			return 1;
	return 0;
}

/* The worker whose GPUs include index @gpu of --gpus. */
static uint32_t worker_of_gpu(const struct vyre_front_routes *fr, uint32_t gpu,
			      const struct vyre_daemon_config *cfg)
{
	for (uint32_t w = 0; w < fr->n_workers; w++)
		if (fr->workers[w].ordinal == cfg->gpus[gpu])
			return w;
	return VYRE_FRONT_NO_WORKER;
}

/* The serving worker of least load: domains per GPU; ties go in turn. */
static uint32_t least_loaded(struct vyre_front_routes *fr)
{
	uint32_t best = VYRE_FRONT_NO_WORKER;
	double best_load = 0;

	for (uint32_t k = 0; k < fr->n_workers; k++) {
		const uint32_t w = (fr->place_next + k) % fr->n_workers;
		const struct vyre_worker *wk = &fr->workers[w];

		if (wk->state != VYRE_WORKER_READY)
			continue;
		const double load = (double)(wk->privates + wk->named) / (double)wk->n_gpus;

		if (best == VYRE_FRONT_NO_WORKER || load < best_load) {
			best = w;
			best_load = load;
		}
	}
	if (best != VYRE_FRONT_NO_WORKER)
		fr->place_next = (best + 1) % fr->n_workers;
	return best;
}

static int none_serves(const struct vyre_front_routes *fr)
{
	return starting(fr) ? VYRE_E_AGAIN : VYRE_E_DEVICE;
}

/* The live route of @domain, or NULL with the first free one in *@free_rt (NULL: none). */
static struct vyre_front_route *find_route(struct vyre_front_routes *fr, const char *domain,
					   struct vyre_front_route **free_rt)
{
	*free_rt = NULL;
	for (uint32_t r = 0; r < fr->n_routes; r++) {
		struct vyre_front_route *rt = &fr->routes[r];

		if (rt->refs && !strcmp(rt->name, domain))
			return rt;
		if (!rt->refs && !*free_rt)
			*free_rt = rt;
	}
	return NULL;
}

/* Route @rt, free, for @domain on worker @w with its first connection: its number. */
static uint32_t take_route(struct vyre_front_routes *fr, struct vyre_front_route *rt,
			   const char *domain, uint32_t w)
{
	memset(rt->name, 0, sizeof(rt->name));
	memcpy(rt->name, domain, strnlen(domain, VYRE_DOMAIN_NAME_MAX));
	rt->worker = w;
	rt->refs = 1;
	fr->workers[w].named++;
	return (uint32_t)(rt - fr->routes) + 1;
}

static int place_named(struct vyre_front_routes *fr, const struct vyre_daemon_config *cfg,
		       const char *domain, uint32_t *worker, uint32_t *route)
{
	struct vyre_front_route *free_rt;
	struct vyre_front_route *rt = find_route(fr, domain, &free_rt);
	uint32_t w = VYRE_FRONT_NO_WORKER;

	if (rt) {
		/* a route lives only on a serving worker (vyre_front_drop) */
		rt->refs++;
		*worker = rt->worker;
		*route = (uint32_t)(rt - fr->routes) + 1;
		return 0;
	}
	if (!free_rt)
		return VYRE_E_NOMEM;
	for (uint32_t p = 0; p < cfg->n_pins; p++) {
		if (strcmp(cfg->pins[p].name, domain) != 0)
			continue;
		w = worker_of_gpu(fr, cfg->pins[p].gpu, cfg);
		if (w == VYRE_FRONT_NO_WORKER)
			return VYRE_E_DEVICE;
		if (fr->workers[w].state != VYRE_WORKER_READY)
			return coming(&fr->workers[w]) ? VYRE_E_AGAIN : VYRE_E_DEVICE;
		break;
	}
	if (w == VYRE_FRONT_NO_WORKER)
		w = least_loaded(fr);
	if (w == VYRE_FRONT_NO_WORKER)
		return none_serves(fr);
	*worker = w;
	*route = take_route(fr, free_rt, domain, w);
	return 0;
}

int vyre_front_place(struct vyre_front_routes *fr, const struct vyre_daemon_config *cfg,
		     const char *domain, uint32_t *worker, uint32_t *route)
{
	if (domain[0])
		return place_named(fr, cfg, domain, worker, route);
	const uint32_t w = least_loaded(fr);

	if (w == VYRE_FRONT_NO_WORKER)
		return none_serves(fr);
	fr->workers[w].privates++;
	*worker = w;
	*route = 0;
	return 0;
}

void vyre_front_gone(struct vyre_front_routes *fr, uint32_t w, uint32_t route, uint32_t client_id)
{
	struct vyre_worker *wk = &fr->workers[w];

	for (uint32_t r = 0; client_id && r < fr->n_regions; r++)
		if (fr->regions[r].client_id == client_id && fr->regions[r].worker == w)
			fr->regions[r].client_id = 0;
	if (route == 0) {
		if (wk->privates)
			wk->privates--;
		return;
	}
	if (route > fr->n_routes)
		return;
	struct vyre_front_route *rt = &fr->routes[route - 1];

	/* a route of a worker since dropped may be taken again: not this one's to release */
	if (rt->worker != w || rt->refs == 0)
		return;
	if (--rt->refs == 0 && wk->named)
		wk->named--;
}

void vyre_front_drop(struct vyre_front_routes *fr, uint32_t w)
{
	for (uint32_t r = 0; r < fr->n_routes; r++)
		if (fr->routes[r].refs && fr->routes[r].worker == w)
			fr->routes[r].refs = 0;
	for (uint32_t r = 0; r < fr->n_regions; r++)
		if (fr->regions[r].worker == w)
			fr->regions[r].client_id = 0;
	fr->workers[w].named = 0;
	fr->workers[w].privates = 0;
}

int vyre_front_place_on(struct vyre_front_routes *fr, const char *domain, uint32_t w,
			uint32_t *route)
{
	struct vyre_front_route *free_rt;
	struct vyre_front_route *rt;

	if (!domain[0]) {
		fr->workers[w].privates++;
		*route = 0;
		return 0;
	}
	rt = find_route(fr, domain, &free_rt);
	if (rt && rt->worker != w)
		return VYRE_E_AGAIN;
	if (rt) {
		rt->refs++;
		*route = (uint32_t)(rt - fr->routes) + 1;
		return 0;
	}
	if (!free_rt)
		return VYRE_E_NOMEM;
	*route = take_route(fr, free_rt, domain, w);
	return 0;
}
