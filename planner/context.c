/* SPDX-License-Identifier: MIT */
/*
 * The planner context: validated limits, one arena sized for the largest
 * batch, and the carving of a batch's scratch from it. Sizes depend only on
 * the item count, so the arena that fits max_items fits every batch.
 */
#include <stdlib.h>

#include "batch.h"

void vyre_planner_config_default(struct vyre_planner_config *cfg)
{
	*cfg = (struct vyre_planner_config){
	    .max_items = 4096,
	    .max_clients = 1024,
	    .max_groups = 4096,
	    .max_stages = 4096,
	    .budget_bytes = 1ull << 30,
	    .resident_bytes = 0,
	    .arena_bytes = 0,
	    .cross_arm_report = 1,
	};
}

int plan_tables_reserve(struct vyre_arena *a, const struct vyre_planner_config *cfg,
			struct plan_tables *t, struct vyre_plan_error *err)
{
	const enum vyre_plan_component in = VYRE_PLAN_IN_BATCH;
	uint32_t n = cfg->max_items, arms = batch_arms_cap(cfg, n);
	int rc;

	*t = (struct plan_tables){0};
	if ((rc = buffer_map_reserve(a, 3 * n, &t->buffers, in, err)) ||
	    (rc = buffer_map_reserve_share(a, &t->buffers, 2 * n, in, err)) ||
	    (rc = dedupe_table_reserve(a, n, &t->dedupe, in, err)) ||
	    (rc = id_map_reserve(a, arms, &t->arms, in, "client table", err)))
		return rc;
	if (arena_u32(a, arms, &t->arm_domain) || arena_u32(a, arms, &t->arm_client) ||
	    arena_u32(a, arms, &t->arm_pending) || arena_u32(a, arms, &t->arm_count))
		return plan_err_reserve(err, in, "client state", arms);
	if (cfg->cross_arm_report && (rc = cross_arm_table_reserve(a, n, &t->cross_arm, err)))
		return rc;
	return 0;
}

static int reserve_array(struct vyre_arena *a, size_t n, size_t size, void **out, const char *field,
			 struct vyre_plan_error *err)
{
	if (vyre_arena_reserve(a, n, size, out))
		return plan_err_reserve(err, VYRE_PLAN_IN_BATCH, field, n);
	return 0;
}

static int handoff_reserve(struct vyre_arena *a, const struct vyre_planner_config *cfg, uint32_t n,
			   struct batch_scratch *s, struct vyre_plan_error *err)
{
	if (!cfg->handoff_bytes)
		return 0;
	if (arena_u32(a, n, &s->handoff) || arena_u32(a, n, &s->wave_group) ||
	    arena_u32(a, n, &s->wave_maxdep) || arena_u32(a, n, &s->group_launch) ||
	    arena_u32(a, 3 * (size_t)n, &s->slot_read))
		return plan_err_reserve(err, VYRE_PLAN_IN_BATCH, "handoff", n);
	return 0;
}

int batch_scratch_reserve(struct vyre_arena *a, const struct vyre_planner_config *cfg, uint32_t n,
			  struct batch_scratch *s, struct vyre_plan_error *err)
{
	const enum vyre_plan_component in = VYRE_PLAN_IN_BATCH;
	void *p;
	int rc;

	*s = (struct batch_scratch){0};
	s->nodes_cap = 3 * n; /* two reads and one pending entry per item */
	s->deps_cap = EDGES_PER_ITEM * n;
	if (arena_u32(a, s->nodes_cap, &s->node_wave) || arena_u32(a, s->nodes_cap, &s->node_next))
		return plan_err_reserve(err, in, "list node", s->nodes_cap);
	if (arena_u32(a, n, &s->arm_of) || arena_u32(a, n, &s->dedup_from) ||
	    arena_u32(a, n, &s->wave_of) || arena_u32(a, n, &s->wave_item) ||
	    arena_u32(a, n, &s->order))
		return plan_err_reserve(err, in, "per-item", n);
	if ((rc = reserve_array(a, n, sizeof(*s->cost), &p, "frontier wave", err)))
		return rc;
	s->cost = p;
	if ((rc = reserve_array(a, s->deps_cap, sizeof(*s->deps), &p, "dependency", err)))
		return rc;
	s->deps = p;
	if ((rc = reserve_array(a, n, sizeof(*s->stages), &p, "fusion stage", err)))
		return rc;
	s->stages = p;
	if ((rc = handoff_reserve(a, cfg, n, s, err)))
		return rc;
	if (!cfg->cross_arm_report)
		return 0;
	if (arena_u32(a, n, &s->arm_items) || arena_u32(a, batch_arms_cap(cfg, n), &s->arm_end))
		return plan_err_reserve(err, in, "cross-arm arm", n);
	if ((rc = reserve_array(a, n, sizeof(*s->pairs), &p, "cross-arm report", err)))
		return rc;
	s->pairs = p;
	if ((rc = reserve_array(a, n, sizeof(*s->xpairs), &p, "cross-arm pair", err)))
		return rc;
	s->xpairs = p;
	return 0;
}

static size_t add_bytes(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

size_t vyre_planner_arena_bytes(const struct vyre_planner_config *cfg)
{
	uint32_t n = cfg->max_items;
	struct vyre_arena m;
	struct plan_tables t;
	struct batch_scratch s;
	size_t bytes;

	if (n == 0 || n > VYRE_PLANNER_MAX_ITEMS)
		return SIZE_MAX;
	vyre_arena_init_measure(&m);
	plan_tables_reserve(&m, cfg, &t, NULL);
	batch_scratch_reserve(&m, cfg, n, &s, NULL);
	bytes = add_bytes(m.used, vyre_barrier_arena_bytes(n, EDGES_PER_ITEM * n));
	bytes = add_bytes(bytes, vyre_frontier_split_arena_bytes(n));
	return add_bytes(bytes, vyre_fusion_arena_bytes(n));
}

/* The tables for the largest batch, and a batch of one item. */
static size_t min_arena_bytes(const struct vyre_planner_config *cfg)
{
	struct vyre_arena m;
	struct plan_tables t;
	struct batch_scratch s;
	size_t bytes;

	vyre_arena_init_measure(&m);
	plan_tables_reserve(&m, cfg, &t, NULL);
	batch_scratch_reserve(&m, cfg, 1, &s, NULL);
	bytes = add_bytes(m.used, vyre_barrier_arena_bytes(1, EDGES_PER_ITEM));
	bytes = add_bytes(bytes, vyre_frontier_split_arena_bytes(1));
	return add_bytes(bytes, vyre_fusion_arena_bytes(1));
}

static int config_error(struct vyre_plan_error *err, const char *field, uint64_t value,
			uint64_t min, uint64_t max)
{
	plan_err_set(err, VYRE_PLAN_ERR_CONFIG, VYRE_PLAN_IN_BATCH, field);
	if (err) {
		err->required = value;
		err->count = min;
		err->budget = max;
	}
	return VYRE_E_INVAL;
}

static int check_config(const struct vyre_planner_config *cfg, size_t *arena_bytes,
			struct vyre_plan_error *err)
{
	size_t least;

	if (cfg->max_items < 1 || cfg->max_items > VYRE_PLANNER_MAX_ITEMS)
		return config_error(err, "max_items", cfg->max_items, 1, VYRE_PLANNER_MAX_ITEMS);
	if (cfg->max_clients < 1)
		return config_error(err, "max_clients", cfg->max_clients, 1, UINT32_MAX);
	if (cfg->max_groups < 1)
		return config_error(err, "max_groups", cfg->max_groups, 1, UINT32_MAX);
	if (cfg->max_stages < 1)
		return config_error(err, "max_stages", cfg->max_stages, 1, UINT32_MAX);
	if (cfg->budget_bytes < 1)
		return config_error(err, "budget_bytes", cfg->budget_bytes, 1, UINT64_MAX);
	if (cfg->resident_bytes >= cfg->budget_bytes)
		return config_error(err, "resident_bytes", cfg->resident_bytes, 0,
				    cfg->budget_bytes - 1);
	*arena_bytes = vyre_planner_arena_bytes(cfg);
	if (*arena_bytes == SIZE_MAX)
		return config_error(err, "max_items", cfg->max_items, 1, VYRE_PLANNER_MAX_ITEMS);
	if (cfg->arena_bytes == 0)
		return 0;
	least = min_arena_bytes(cfg);
	if (cfg->arena_bytes < least || cfg->arena_bytes > SIZE_MAX / 2)
		return config_error(err, "arena_bytes", cfg->arena_bytes, least, SIZE_MAX / 2);
	*arena_bytes = cfg->arena_bytes;
	return 0;
}

int vyre_planner_create(const struct vyre_planner_config *cfg, struct vyre_planner **out,
			struct vyre_plan_error *err)
{
	struct vyre_planner *p;
	size_t arena_bytes;
	int rc;

	*out = NULL;
	rc = check_config(cfg, &arena_bytes, err);
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p)
		return plan_err_reserve(err, VYRE_PLAN_IN_ARENA, "planner", sizeof(*p));
	p->cfg = *cfg;
	p->group_budget = cfg->budget_bytes - cfg->resident_bytes;
	if (vyre_arena_init(&p->arena, arena_bytes)) {
		free(p);
		return plan_err_reserve(err, VYRE_PLAN_IN_ARENA, "arena", arena_bytes);
	}
	rc = plan_tables_reserve(&p->arena, cfg, &p->tables, err);
	if (rc) {
		vyre_planner_destroy(p);
		return rc;
	}
	vyre_arena_keep(&p->arena);
	*out = p;
	return 0;
}

void vyre_planner_destroy(struct vyre_planner *p)
{
	if (!p)
		return;
	vyre_arena_fini(&p->arena);
	free(p);
}

void vyre_planner_fail_reservation(struct vyre_planner *p, uint64_t nth, int sticky)
{
	vyre_arena_fail_nth(&p->arena, nth, sticky);
}

const struct vyre_arena *vyre_planner_arena(const struct vyre_planner *p)
{
	return &p->arena;
}
