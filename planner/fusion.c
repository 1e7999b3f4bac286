/* SPDX-License-Identifier: MIT */
/*
 * Adjacent-stage launch fusion (launch_fusion.rs). Stages keep their order;
 * a stage joins the launch before it when it shares the layout hash, needs
 * no host-visible boundary, and the fused envelope still fits the budget.
 * Each fused boundary saves one launch and the previous stage's output
 * round-trip.
 */
#include <string.h>

#include "internal.h"

static const enum vyre_plan_component IN_FUSION = VYRE_PLAN_IN_FUSION;

/* Stages up to this count are checked for duplicate ids pairwise, as in the seed. */
#define FUSION_LINEAR_DUPLICATE_CHECK 8u

static int stage_required_bytes(const struct vyre_fusion_stage *s, uint64_t *out,
				struct vyre_plan_error *err)
{
	uint64_t io;

	if (checked_add_u64(s->input_bytes, s->output_bytes, &io))
		return plan_err_overflow(err, IN_FUSION, "stage io bytes");
	if (checked_add_u64(io, s->scratch_bytes, out))
		return plan_err_overflow(err, IN_FUSION, "stage required bytes");
	return 0;
}

static int fused_required_bytes(uint64_t group_bytes, const struct vyre_fusion_stage *s,
				uint64_t *out, struct vyre_plan_error *err)
{
	uint64_t bytes;

	if (checked_add_u64(group_bytes, s->scratch_bytes, &bytes))
		return plan_err_overflow(err, IN_FUSION, "fused scratch bytes");
	if (checked_add_u64(bytes, s->output_bytes, out))
		return plan_err_overflow(err, IN_FUSION, "fused output bytes");
	return 0;
}

static int stage_over_budget(struct vyre_plan_error *err, uint32_t id, uint64_t required,
			     uint64_t budget)
{
	plan_err_set(err, VYRE_PLAN_ERR_STAGE_OVER_BUDGET, IN_FUSION, NULL);
	if (err) {
		err->index = id;
		err->required = required;
		err->budget = budget;
	}
	return VYRE_E_INVAL;
}

static int reserve_groups(struct vyre_arena *a, uint32_t capacity, struct vyre_fusion_plan *p,
			  struct vyre_plan_error *err)
{
	if (arena_u32(a, capacity, &p->launch_end) || arena_u64(a, capacity, &p->required_bytes) ||
	    arena_u64(a, capacity, &p->avoided_bytes))
		return plan_err_reserve(err, IN_FUSION, "fusion groups", capacity);
	return 0;
}

static int reserve_ids(struct vyre_arena *a, uint32_t n, uint64_t **slots, uint32_t *cap,
		       struct vyre_plan_error *err)
{
	*cap = table_capacity(n);
	if (arena_u64(a, *cap, slots))
		return plan_err_reserve(err, IN_FUSION, "duplicate stage ids", n);
	return 0;
}

size_t vyre_fusion_arena_bytes(uint32_t n_stages)
{
	struct vyre_arena m;
	struct vyre_fusion_plan p;
	uint64_t *slots;
	uint32_t cap;

	vyre_arena_init_measure(&m);
	if (n_stages > FUSION_LINEAR_DUPLICATE_CHECK)
		reserve_ids(&m, n_stages, &slots, &cap, NULL);
	reserve_groups(&m, n_stages, &p, NULL);
	return m.used;
}

/* Stage ids are unique; reports the first repeat in stage order. */
static int check_unique_ids(struct vyre_arena *a, const struct vyre_fusion_stage *stages,
			    uint32_t n, struct vyre_plan_error *err)
{
	uint32_t repeat = VYRE_PLAN_NONE;

	if (n <= FUSION_LINEAR_DUPLICATE_CHECK) {
		for (uint32_t i = 0; i < n && repeat == VYRE_PLAN_NONE; i++)
			for (uint32_t j = 0; j < i; j++)
				if (stages[j].id == stages[i].id) {
					repeat = i;
					break;
				}
	} else {
		uint64_t *slots;
		uint32_t cap;
		int rc = reserve_ids(a, n, &slots, &cap, err);

		if (rc)
			return rc;
		memset(slots, 0, (size_t)cap * sizeof(*slots));
		for (uint32_t i = 0; i < n && repeat == VYRE_PLAN_NONE; i++) {
			uint64_t key = (uint64_t)stages[i].id + 1;

			for (uint32_t h = (uint32_t)mix64(key) & (cap - 1);;
			     h = (h + 1) & (cap - 1)) {
				if (slots[h] == 0) {
					slots[h] = key;
					break;
				}
				if (slots[h] == key) {
					repeat = i;
					break;
				}
			}
		}
	}
	if (repeat == VYRE_PLAN_NONE)
		return 0;
	plan_err_set(err, VYRE_PLAN_ERR_DUPLICATE_STAGE, IN_FUSION, NULL);
	if (err)
		err->index = stages[repeat].id;
	return VYRE_E_INVAL;
}

int vyre_fusion_plan(struct vyre_arena *a, const struct vyre_fusion_stage *stages,
		     uint32_t n_stages, uint64_t max_group_bytes, struct vyre_fusion_plan *out,
		     struct vyre_plan_error *err)
{
	struct vyre_fusion_plan p = {0};
	uint64_t total_avoided = 0;
	int rc;

	if (max_group_bytes == 0) {
		plan_err_set(err, VYRE_PLAN_ERR_ZERO_BUDGET, IN_FUSION, NULL);
		return VYRE_E_INVAL;
	}
	if (n_stages && !stages) {
		plan_err_set(err, VYRE_PLAN_ERR_ARGUMENT, VYRE_PLAN_IN_BATCH, "fusion stages");
		return VYRE_E_INVAL;
	}
	if (n_stages == 0) {
		*out = p;
		return 0;
	}
	if (n_stages > 1) {
		rc = check_unique_ids(a, stages, n_stages, err);
		if (rc)
			return rc;
	}
	rc = reserve_groups(a, n_stages, &p, err);
	if (rc)
		return rc;

	for (uint32_t index = 0; index < n_stages;) {
		uint64_t required, avoided = 0;
		uint32_t cursor = index + 1;

		rc = stage_required_bytes(&stages[index], &required, err);
		if (rc)
			return rc;
		if (required > max_group_bytes)
			return stage_over_budget(err, stages[index].id, required, max_group_bytes);
		for (; cursor < n_stages; cursor++) {
			const struct vyre_fusion_stage *s = &stages[cursor];
			uint64_t fused;

			if (s->requires_host_materialization ||
			    s->layout_hash != stages[index].layout_hash)
				break;
			rc = fused_required_bytes(required, s, &fused, err);
			if (rc)
				return rc;
			if (fused > max_group_bytes)
				break;
			if (checked_add_u64(avoided, stages[cursor - 1].output_bytes, &avoided))
				return plan_err_overflow(err, IN_FUSION,
							 "avoided intermediate bytes");
			required = fused;
		}
		p.launch_end[p.launch_count] = cursor;
		p.required_bytes[p.launch_count] = required;
		p.avoided_bytes[p.launch_count] = avoided;
		p.launch_count++;
		index = cursor;
	}
	for (uint32_t l = 0; l < p.launch_count; l++)
		if (checked_add_u64(total_avoided, p.avoided_bytes[l], &total_avoided))
			return plan_err_overflow(err, IN_FUSION,
						 "total avoided intermediate bytes");
	p.avoided_launches = n_stages - p.launch_count;
	p.avoided_intermediate_bytes = total_avoided;
	*out = p;
	return 0;
}

uint32_t fusion_launches(const struct vyre_fusion_stage *stages, uint32_t n_stages,
			 uint64_t max_group_bytes, uint32_t *launch_end)
{
	uint32_t launches = 0;

	for (uint32_t index = 0; index < n_stages;) {
		uint64_t required = stages[index].input_bytes + stages[index].output_bytes +
				    stages[index].scratch_bytes;
		uint32_t cursor = index + 1;

		for (; cursor < n_stages; cursor++) {
			const struct vyre_fusion_stage *st = &stages[cursor];
			const uint64_t fused = required + st->scratch_bytes + st->output_bytes;

			if (st->requires_host_materialization ||
			    st->layout_hash != stages[index].layout_hash || fused > max_group_bytes)
				break;
			required = fused;
		}
		launch_end[launches++] = cursor;
		index = cursor;
	}
	return launches;
}
