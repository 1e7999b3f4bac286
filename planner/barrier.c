/* SPDX-License-Identifier: MIT */
/*
 * Barrier planning (docs/design.md 7.3): Kahn layering of a wave dependency
 * graph. Each layer is one barrier-free group; a wave lands in the layer
 * after its latest predecessor, so the number of global barriers is the
 * longest dependency chain and no smaller grouping exists.
 */
#include <string.h>

#include "internal.h"

struct barrier_scratch {
	uint32_t *out_start; /* CSR offsets of outgoing edges, n_waves + 1 */
	uint32_t *adj;	     /* edge targets, grouped by source in input order */
	uint32_t *indeg;
	uint32_t *order;
	uint32_t *group_end;
};

static int barrier_reserve(struct vyre_arena *a, uint32_t n_waves, uint32_t n_deps,
			   struct barrier_scratch *s, struct vyre_plan_error *err)
{
	const enum vyre_plan_component in = VYRE_PLAN_IN_BARRIER;

	if (arena_u32(a, (size_t)n_waves + 1, &s->out_start))
		return plan_err_reserve(err, in, "edge offset", (uint64_t)n_waves + 1);
	if (arena_u32(a, n_deps, &s->adj))
		return plan_err_reserve(err, in, "adjacency", n_deps);
	if (arena_u32(a, n_waves, &s->indeg))
		return plan_err_reserve(err, in, "in-degree", n_waves);
	if (arena_u32(a, n_waves, &s->order))
		return plan_err_reserve(err, in, "wave order", n_waves);
	if (arena_u32(a, n_waves, &s->group_end))
		return plan_err_reserve(err, in, "barrier group", n_waves);
	return 0;
}

size_t vyre_barrier_arena_bytes(uint32_t n_waves, uint32_t n_deps)
{
	struct vyre_arena m;
	struct barrier_scratch s;

	vyre_arena_init_measure(&m);
	barrier_reserve(&m, n_waves, n_deps, &s, NULL);
	return m.used;
}

static int check_deps(uint32_t n_waves, const struct vyre_wave_dep *deps, uint32_t n_deps,
		      struct vyre_plan_error *err)
{
	for (uint32_t i = 0; i < n_deps; i++) {
		uint32_t bad = deps[i].before >= n_waves ? deps[i].before : deps[i].after;

		if (deps[i].before >= n_waves || deps[i].after >= n_waves) {
			plan_err_set(err, VYRE_PLAN_ERR_INVALID_WAVE, VYRE_PLAN_IN_BARRIER, NULL);
			if (err) {
				err->index = bad;
				err->count = n_waves;
			}
			return VYRE_E_INVAL;
		}
		if (deps[i].before == deps[i].after) {
			plan_err_set(err, VYRE_PLAN_ERR_SELF_DEPENDENCY, VYRE_PLAN_IN_BARRIER,
				     NULL);
			if (err)
				err->index = deps[i].before;
			return VYRE_E_INVAL;
		}
	}
	return 0;
}

/* Outgoing edges per wave in CSR form, keeping each wave's edges in input order. */
static void build_adjacency(const struct barrier_scratch *s, uint32_t n_waves,
			    const struct vyre_wave_dep *deps, uint32_t n_deps)
{
	uint32_t *cursor = s->group_end; /* free until layering starts */

	memset(s->out_start, 0, ((size_t)n_waves + 1) * sizeof(uint32_t));
	memset(s->indeg, 0, (size_t)n_waves * sizeof(uint32_t));
	for (uint32_t i = 0; i < n_deps; i++) {
		s->out_start[deps[i].before + 1]++;
		s->indeg[deps[i].after]++;
	}
	for (uint32_t w = 0; w < n_waves; w++) {
		s->out_start[w + 1] += s->out_start[w];
		cursor[w] = s->out_start[w];
	}
	for (uint32_t i = 0; i < n_deps; i++)
		s->adj[cursor[deps[i].before]++] = deps[i].after;
}

int vyre_barrier_plan(struct vyre_arena *a, uint32_t n_waves, const struct vyre_wave_dep *deps,
		      uint32_t n_deps, struct vyre_barrier_plan *out, struct vyre_plan_error *err)
{
	struct barrier_scratch s;
	uint32_t scheduled = 0, n_groups = 0, width = 0;
	int rc;

	if (n_deps && !deps) {
		plan_err_set(err, VYRE_PLAN_ERR_ARGUMENT, VYRE_PLAN_IN_BATCH, "dependencies");
		return VYRE_E_INVAL;
	}
	rc = check_deps(n_waves, deps, n_deps, err);
	if (rc)
		return rc;
	if (n_waves == UINT32_MAX)
		return plan_err_overflow(err, VYRE_PLAN_IN_BARRIER, "wave count + 1");
	rc = barrier_reserve(a, n_waves, n_deps, &s, err);
	if (rc)
		return rc;
	build_adjacency(&s, n_waves, deps, n_deps);

	for (uint32_t w = 0; w < n_waves; w++)
		if (s.indeg[w] == 0)
			s.order[scheduled++] = w;
	for (uint32_t start = 0; start < scheduled;) {
		uint32_t end = scheduled;

		s.group_end[n_groups++] = end;
		if (end - start > width)
			width = end - start;
		for (uint32_t p = start; p < end; p++) {
			uint32_t w = s.order[p];

			for (uint32_t e = s.out_start[w]; e < s.out_start[w + 1]; e++)
				if (--s.indeg[s.adj[e]] == 0)
					s.order[scheduled++] = s.adj[e];
		}
		start = end;
	}
	if (scheduled < n_waves) {
		plan_err_set(err, VYRE_PLAN_ERR_CYCLE, VYRE_PLAN_IN_BARRIER, NULL);
		if (err)
			err->count = n_waves - scheduled;
		return VYRE_E_INVAL;
	}
	*out = (struct vyre_barrier_plan){
	    .order = s.order,
	    .group_end = s.group_end,
	    .n_waves = n_waves,
	    .n_groups = n_groups,
	    .global_barriers = n_groups ? n_groups - 1 : 0,
	    .max_group_width = width,
	};
	return 0;
}

/*
 * Groups up to this size are sorted in place by insertion, larger ones by
 * counting; so are small ones whose previous group (the range of keys) is
 * small: insertion's comparisons are a branch the predictor cannot learn
 * when batches differ, counting's loops are not.
 */
#define SMALL_GROUP    32u
#define COUNT_PREV_MAX 64u

/* A stable sort of the @n waves of @order by @key (parallel to them); their positions to @pos. */
static void insertion_sort(uint32_t *order, uint32_t *key, uint32_t n, uint32_t *pos)
{
	for (uint32_t i = 1; i < n; i++) {
		const uint32_t w = order[i], k = key[i];
		uint32_t j = i;

		for (; j > 0 && key[j - 1] > k; j--) {
			order[j] = order[j - 1];
			key[j] = key[j - 1];
		}
		order[j] = w;
		key[j] = k;
	}
	for (uint32_t i = 0; i < n; i++)
		pos[order[i]] = i;
}

uint32_t barrier_layers(const struct barrier_layering *l, uint32_t *order, uint32_t *group_end)
{
	const uint32_t n_waves = l->n_waves, n_layers = l->n_layers;
	uint32_t *pos = l->pos, *key = l->key, *cursor = l->count, *tmp = l->tmp;

	if (n_layers <= 1) {
		for (uint32_t w = 0; w < n_waves; w++)
			order[w] = w;
		if (n_waves)
			group_end[0] = n_waves;
		return n_waves ? 1 : 0;
	}
	/* the waves by layer, ascending in each: layer 0 is Kahn's first group as it is */
	for (uint32_t g = 0; g < n_layers; g++)
		cursor[g] = 0;
	for (uint32_t w = 0; w < n_waves; w++)
		cursor[l->layer[w]]++;
	for (uint32_t g = 0, start = 0; g < n_layers; g++) {
		const uint32_t size = cursor[g];

		cursor[g] = start;
		start += size;
		group_end[g] = start;
	}
	for (uint32_t w = 0; w < n_waves; w++)
		order[cursor[l->layer[w]]++] = w;
	for (uint32_t i = 0; i < group_end[0]; i++)
		pos[order[i]] = i;
	/*
	 * Kahn appends a wave to group g + 1 at the last of its edges it walks:
	 * the one from the latest wave of group g in that group's order, walked
	 * in input order. A stable sort of the group by that wave's position;
	 * when group g is in ascending order (most are), or the wave has one
	 * predecessor in it, that one is its top.
	 */
	for (uint32_t g = 0, ascending = 1; g + 1 < n_layers; g++) {
		const uint32_t start = group_end[g], end = group_end[g + 1];
		const uint32_t prev = group_end[g] - (g ? group_end[g - 1] : 0);
		uint32_t sorted = 1;

		for (uint32_t i = start; i < end; i++) {
			const uint32_t v = order[i];
			const int scan = !ascending && (l->top[v] & TOP_SEVERAL);
			uint32_t k = scan ? 0 : pos[l->top[v] & ~TOP_SEVERAL];

			for (uint32_t e = l->in_start[v]; scan && e < l->in_start[v + 1]; e++) {
				const uint32_t u = l->dep_before[e];
				const uint32_t at = l->layer[u] == g ? pos[u] : 0;

				k = at > k ? at : k;
			}
			key[i - start] = k;
			sorted &= i == start || k >= key[i - start - 1];
			pos[v] = i - start;
		}
		ascending = sorted;
		if (sorted)
			continue;
		if (end - start <= SMALL_GROUP && prev > COUNT_PREV_MAX) {
			insertion_sort(order + start, key, end - start, pos);
			continue;
		}
		for (uint32_t i = 0; i < prev; i++)
			cursor[i] = 0;
		for (uint32_t i = start; i < end; i++)
			cursor[key[i - start]]++;
		for (uint32_t i = 0, sum = 0; i < prev; i++) {
			const uint32_t c = cursor[i];

			cursor[i] = sum;
			sum += c;
		}
		for (uint32_t i = start; i < end; i++)
			tmp[cursor[key[i - start]]++] = order[i];
		for (uint32_t i = start; i < end; i++) {
			order[i] = tmp[i - start];
			pos[order[i]] = i - start;
		}
	}
	return n_layers;
}
