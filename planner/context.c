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
	if ((rc = buffer_map_reserve(a, OPERANDS_PER_ITEM * n, &t->buffers, in, err)) ||
	    (rc = buffer_map_reserve_share(a, &t->buffers, 2 * n, in, err)) ||
	    (rc = buffer_map_reserve_direct(a, &t->buffers, cfg->direct_handles, in, err)) ||
	    (rc = dedupe_table_reserve(a, n, &t->dedupe, in, err)) ||
	    (rc = id_map_reserve(a, arms, &t->arms, in, "client table", err)))
		return rc;
	if (arena_u32(a, arms, &t->arm_domain) || arena_u32(a, arms, &t->arm_client) ||
	    arena_u32(a, arms, &t->arm_pending) || arena_u32(a, arms, &t->arm_count))
		return plan_err_reserve(err, in, "client state", arms);
	if (cfg->cross_arm_report) {
		if ((rc = cross_arm_table_reserve(a, n, &t->cross_arm, err)))
			return rc;
	}
	for (uint32_t op = 0; op < VYRE_OP_COUNT; op++)
		t->op_mask[op] = (uint8_t)(vyre_op_operands(op) > 0 ? vyre_op_operands(op) : 0);
	return 0;
}

/*
 * Bytes after an array of the block of at least a page: arrays of a
 * power-of-two size would otherwise start at one offset modulo the cache's
 * way size, and the elements of one index of each (a batch's item k
 * everywhere) would all fall into one cache set.
 */
#define SCRATCH_SKEW (5u * VYRE_ARENA_ALIGN)

/* The next array of @count x @size of the block at @base (NULL: only count), 64-byte aligned. */
static void *take(uint8_t *base, size_t *off, size_t count, size_t size)
{
	void *p = base ? base + *off : NULL;
	const size_t bytes = vyre_arena_round(count, size);

	*off += bytes + (bytes >= 4096 ? SCRATCH_SKEW : 0);
	return p;
}

/* Lay the arrays of a batch of @n items out from @base; returns the bytes they take. */
static size_t scratch_layout(const struct vyre_planner_config *cfg, uint32_t n, uint8_t *base,
			     struct batch_scratch *s)
{
	const size_t edges = (size_t)EDGES_PER_ITEM * n;
	size_t off = 0;

	*s = (struct batch_scratch){0};
	s->nodes = take(base, &off, 3 * (size_t)n, sizeof(*s->nodes));
	s->dedup_from = take(base, &off, n, sizeof(uint32_t));
	s->wave_of = take(base, &off, n, sizeof(uint32_t));
	s->wave_item = take(base, &off, n, sizeof(uint32_t));
	s->cost = take(base, &off, n, sizeof(*s->cost));
	s->dep_before = take(base, &off, edges, sizeof(uint32_t));
	s->in_start = take(base, &off, (size_t)n + 1, sizeof(uint32_t));
	s->layer = take(base, &off, n, sizeof(uint32_t));
	s->top = take(base, &off, n, sizeof(uint32_t));
	s->pos = take(base, &off, n, sizeof(uint32_t));
	s->key = take(base, &off, n, sizeof(uint32_t));
	s->count = take(base, &off, n, sizeof(uint32_t));
	s->tmp = take(base, &off, n, sizeof(uint32_t));
	s->layer_order = take(base, &off, n, sizeof(uint32_t));
	s->layer_end = take(base, &off, n, sizeof(uint32_t));
	s->group_end = take(base, &off, n, sizeof(uint32_t));
	s->stages = take(base, &off, n, sizeof(*s->stages));
	s->launch_end = take(base, &off, n, sizeof(uint32_t));
	s->order = take(base, &off, n, sizeof(uint32_t));
	if (cfg->handoff_bytes) {
		s->handoff = take(base, &off, n, sizeof(uint32_t));
		s->wave_group = take(base, &off, n, sizeof(uint32_t));
		s->wave_maxdep = take(base, &off, n, sizeof(uint32_t));
		s->group_launch = take(base, &off, n, sizeof(uint32_t));
		s->slot_read = take(base, &off, OPERANDS_PER_ITEM * (size_t)n, sizeof(uint32_t));
	}
	if (cfg->cross_arm_report) {
		s->arm_of = take(base, &off, n, sizeof(uint32_t));
		s->out_of = take(base, &off, n, sizeof(uint32_t));
		s->arm_items = take(base, &off, n, sizeof(uint32_t));
		s->pairs = take(base, &off, n, sizeof(*s->pairs));
		s->arm_end = take(base, &off, batch_arms_cap(cfg, n), sizeof(uint32_t));
		s->xpairs = take(base, &off, n, sizeof(*s->xpairs));
	}
	return off;
}

/* Batch sizes laid out alike: a daemon's batches vary by a few items, its layout need not. */
#define SCRATCH_GRAIN 64u

int batch_scratch_reserve(struct vyre_arena *a, const struct vyre_planner_config *cfg, uint32_t n,
			  struct scratch_cache *cache, struct batch_scratch *s,
			  struct vyre_plan_error *err)
{
	uint32_t laid = n;
	size_t bytes;
	void *base;

	if (n < cfg->max_items) {
		const uint64_t up =
		    ((uint64_t)n + SCRATCH_GRAIN - 1) / SCRATCH_GRAIN * SCRATCH_GRAIN;

		laid = up < cfg->max_items ? (uint32_t)up : cfg->max_items;
	}
	const int cached = cache && cache->n == laid;

	bytes = cached ? cache->bytes : scratch_layout(cfg, laid, NULL, s);
	if (vyre_arena_reserve(a, bytes, 1, &base))
		return plan_err_reserve(err, VYRE_PLAN_IN_BATCH, "batch arrays", n);
	if (cached && base == cache->base) {
		*s = cache->s;
		return 0;
	}
	scratch_layout(cfg, laid, base, s);
	if (cache && base)
		*cache = (struct scratch_cache){.n = laid, .bytes = bytes, .base = base, .s = *s};
	return 0;
}

size_t vyre_planner_arena_bytes(const struct vyre_planner_config *cfg)
{
	uint32_t n = cfg->max_items;
	struct vyre_arena m;
	struct plan_tables t;
	struct batch_scratch s;

	if (n == 0 || n > VYRE_PLANNER_MAX_ITEMS)
		return SIZE_MAX;
	vyre_arena_init_measure(&m);
	plan_tables_reserve(&m, cfg, &t, NULL);
	batch_scratch_reserve(&m, cfg, n, NULL, &s, NULL);
	batch_range_reserve(&m, n, &s, NULL);
	return m.used;
}

/* The tables for the largest batch, and a batch of one item. */
static size_t min_arena_bytes(const struct vyre_planner_config *cfg)
{
	struct vyre_arena m;
	struct plan_tables t;
	struct batch_scratch s;

	vyre_arena_init_measure(&m);
	plan_tables_reserve(&m, cfg, &t, NULL);
	batch_scratch_reserve(&m, cfg, 1, NULL, &s, NULL);
	return m.used;
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
