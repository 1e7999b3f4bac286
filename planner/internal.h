/* SPDX-License-Identifier: MIT */
/* planner/internal.h - helpers shared by the planner's own files only. */
#ifndef VYRE_PLANNER_INTERNAL_H
#define VYRE_PLANNER_INTERNAL_H

#include <stdint.h>

#include "planner.h"

static inline void plan_err_set(struct vyre_plan_error *err, enum vyre_plan_err kind,
				enum vyre_plan_component where, const char *field)
{
	if (err)
		*err = (struct vyre_plan_error){.kind = kind, .where = where, .field = field};
}

/* A failed reservation of @count entries of @field. */
static inline int plan_err_reserve(struct vyre_plan_error *err, enum vyre_plan_component where,
				   const char *field, uint64_t count)
{
	plan_err_set(err, VYRE_PLAN_ERR_RESERVE, where, field);
	if (err)
		err->count = count;
	return VYRE_E_NOMEM;
}

static inline int plan_err_overflow(struct vyre_plan_error *err, enum vyre_plan_component where,
				    const char *field)
{
	plan_err_set(err, VYRE_PLAN_ERR_OVERFLOW, where, field);
	return VYRE_E_INVAL;
}

/* The batch needs @required of @field, beyond @limit: plan a shorter prefix. */
static inline int plan_err_capacity(struct vyre_plan_error *err, const char *field,
				    uint64_t required, uint64_t limit)
{
	plan_err_set(err, VYRE_PLAN_ERR_CAPACITY, VYRE_PLAN_IN_BATCH, field);
	if (err) {
		err->required = required;
		err->budget = limit;
	}
	return VYRE_E_AGAIN;
}

static inline int arena_u32(struct vyre_arena *a, size_t n, uint32_t **out)
{
	void *p;
	int rc = vyre_arena_reserve(a, n, sizeof(uint32_t), &p);

	*out = p;
	return rc;
}

static inline int arena_u64(struct vyre_arena *a, size_t n, uint64_t **out)
{
	void *p;
	int rc = vyre_arena_reserve(a, n, sizeof(uint64_t), &p);

	*out = p;
	return rc;
}

/* Smallest power of two >= 2 * @n and >= 16: open-addressing tables stay half empty. */
static inline uint32_t table_capacity(uint32_t n)
{
	uint64_t want = 2 * (uint64_t)n, cap = 16;

	while (cap < want)
		cap <<= 1;
	return cap > (1u << 31) ? (1u << 31) : (uint32_t)cap;
}

/* A 64-bit mixer (the murmur3 finalizer): every key bit reaches every hash bit. */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline int checked_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_add_overflow(a, b, out);
}

/* The split plan of @in with @n_groups groups ending at @group_end (its widths, barriers). */
void frontier_split_result(const struct vyre_barrier_plan *in, uint32_t *group_end,
			   uint32_t n_groups, struct vyre_barrier_plan *out);

/*
 * A graph whose edges all run from a lower wave to a higher one, in order
 * of their later wave (dep_before[in_start[w] .. in_start[w + 1]) are the
 * earlier waves of the edges that end at w), with each wave's layer (0
 * without a predecessor, else 1 + its predecessors' highest) and top (its
 * highest predecessor in the layer below its own, | TOP_SEVERAL when it has
 * several there), and scratch of n_waves entries each.
 */
#define TOP_SEVERAL (1u << 31)

struct barrier_layering {
	uint32_t n_waves;
	uint32_t n_layers;
	const uint32_t *layer;
	const uint32_t *top;
	const uint32_t *in_start; /* [n_waves + 1] */
	const uint32_t *dep_before;
	uint32_t *pos, *key, *count, *tmp;
};

/*
 * vyre_barrier_plan's groups in its order (Kahn's), from the layers: no
 * check, no reservation, no walk of outgoing edges. Returns the groups.
 */
uint32_t barrier_layers(const struct barrier_layering *l, uint32_t *order, uint32_t *group_end);

/*
 * vyre_fusion_plan's launches over stages known to be valid (unique ids,
 * each within the budget, sums that cannot overflow): launch_end[] and
 * their count.
 */
uint32_t fusion_launches(const struct vyre_fusion_stage *stages, uint32_t n_stages,
			 uint64_t max_group_bytes, uint32_t *launch_end);

#endif /* VYRE_PLANNER_INTERNAL_H */
