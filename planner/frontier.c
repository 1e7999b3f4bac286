/* SPDX-License-Identifier: MIT */
/*
 * Frontier memory planning (megakernel_frontier.rs): barrier groups are
 * split, in order, into chunks whose fused envelope (frontier + 4 x scratch
 * + output; scratch is scaled for the topology) fits the budget left after
 * the resident bytes; then the peak group bytes are accounted.
 */
#include "internal.h"

static const enum vyre_plan_component IN_FRONTIER = VYRE_PLAN_IN_FRONTIER;

static int over_budget(struct vyre_plan_error *err, const char *field, uint64_t required,
		       uint64_t budget)
{
	plan_err_set(err, VYRE_PLAN_ERR_GROUP_OVER_BUDGET, IN_FRONTIER, field);
	if (err) {
		err->required = required;
		err->budget = budget;
	}
	return VYRE_E_INVAL;
}

static int fused_wave_budget_bytes(const struct vyre_frontier_wave *w, uint64_t *out,
				   struct vyre_plan_error *err)
{
	uint64_t scratch, bytes;

	if (__builtin_mul_overflow(w->scratch_bytes, 4, &scratch))
		return plan_err_overflow(err, IN_FRONTIER, "fused wave scratch bytes");
	if (checked_add_u64(w->frontier_bytes, scratch, &bytes) ||
	    checked_add_u64(bytes, w->output_bytes, out))
		return plan_err_overflow(err, IN_FRONTIER, "fused wave bytes");
	return 0;
}

size_t vyre_frontier_split_arena_bytes(uint32_t n_waves)
{
	return vyre_arena_round(n_waves, sizeof(uint32_t));
}

void frontier_split_result(const struct vyre_barrier_plan *in, uint32_t *group_end,
			   uint32_t n_groups, struct vyre_barrier_plan *out)
{
	uint32_t width = 0, start = 0;

	for (uint32_t g = 0; g < n_groups; g++) {
		if (group_end[g] - start > width)
			width = group_end[g] - start;
		start = group_end[g];
	}
	*out = (struct vyre_barrier_plan){
	    .order = in->order,
	    .group_end = group_end,
	    .n_waves = in->n_waves,
	    .n_groups = n_groups,
	    .global_barriers = n_groups ? n_groups - 1 : 0,
	    .max_group_width = width,
	};
}

int vyre_frontier_split(struct vyre_arena *a, const struct vyre_frontier_wave *waves,
			const struct vyre_barrier_plan *in, uint64_t group_budget_bytes, int clamp,
			struct vyre_barrier_plan *out, struct vyre_plan_error *err)
{
	uint32_t *group_end, n_groups = 0;

	if (arena_u32(a, in->n_waves, &group_end))
		return plan_err_reserve(err, IN_FRONTIER, "split barrier groups", in->n_waves);
	for (uint32_t g = 0; g < in->n_groups; g++) {
		uint32_t first = g ? in->group_end[g - 1] : 0;
		uint64_t current_bytes = 0;
		uint32_t current_start = first;

		for (uint32_t p = first; p < in->group_end[g]; p++) {
			uint64_t wave_bytes, combined;
			int rc = fused_wave_budget_bytes(&waves[in->order[p]], &wave_bytes, err);

			if (rc)
				return rc;
			if (clamp && wave_bytes > group_budget_bytes)
				wave_bytes = group_budget_bytes;
			if (checked_add_u64(current_bytes, wave_bytes, &combined))
				return plan_err_overflow(err, IN_FRONTIER,
							 "barrier group fused wave budget bytes");
			if (p == current_start && wave_bytes > group_budget_bytes)
				return over_budget(err, "single fused frontier wave bytes",
						   wave_bytes, group_budget_bytes);
			if (p != current_start && combined > group_budget_bytes) {
				group_end[n_groups++] = p;
				current_start = p;
				combined = wave_bytes;
			}
			current_bytes = combined;
		}
		if (in->group_end[g] > first)
			group_end[n_groups++] = in->group_end[g];
	}
	frontier_split_result(in, group_end, n_groups, out);
	return 0;
}

int vyre_frontier_peaks(const struct vyre_frontier_wave *waves,
			const struct vyre_barrier_plan *groups, uint64_t readback_bytes,
			struct vyre_frontier_plan *out, struct vyre_plan_error *err)
{
	uint64_t peak_frontier = 0, peak_scratch = 0, peak_output = 0;
	uint32_t start = 0, width = 0;

	for (uint32_t g = 0; g < groups->n_groups; g++) {
		uint64_t frontier = 0, scratch = 0, output = 0;

		if (groups->group_end[g] - start > width)
			width = groups->group_end[g] - start;
		for (uint32_t p = start; p < groups->group_end[g]; p++) {
			const struct vyre_frontier_wave *w = &waves[groups->order[p]];

			if (checked_add_u64(frontier, w->frontier_bytes, &frontier))
				return plan_err_overflow(err, IN_FRONTIER, "frontier wave bytes");
			if (checked_add_u64(scratch, w->scratch_bytes, &scratch))
				return plan_err_overflow(err, IN_FRONTIER, "scratch wave bytes");
			if (checked_add_u64(output, w->output_bytes, &output))
				return plan_err_overflow(err, IN_FRONTIER, "output wave bytes");
		}
		peak_frontier = frontier > peak_frontier ? frontier : peak_frontier;
		peak_scratch = scratch > peak_scratch ? scratch : peak_scratch;
		peak_output = output > peak_output ? output : peak_output;
		start = groups->group_end[g];
	}
	out->barriers = *groups;
	out->peak_frontier_bytes = peak_frontier;
	out->peak_scratch_bytes = peak_scratch;
	out->peak_output_bytes = peak_output;
	out->amortized_readback_bytes = readback_bytes > peak_output ? readback_bytes : peak_output;
	out->max_group_width = width;
	return 0;
}

int vyre_frontier_plan(struct vyre_arena *a, const struct vyre_frontier_wave *waves,
		       uint32_t n_waves, const struct vyre_wave_dep *deps, uint32_t n_deps,
		       uint64_t resident_bytes, uint64_t budget_bytes, uint64_t readback_bytes,
		       struct vyre_frontier_plan *out, struct vyre_plan_error *err)
{
	struct vyre_barrier_plan layers, split;
	int rc;

	if (n_waves && !waves) {
		plan_err_set(err, VYRE_PLAN_ERR_ARGUMENT, VYRE_PLAN_IN_BATCH, "frontier waves");
		return VYRE_E_INVAL;
	}
	rc = vyre_barrier_plan(a, n_waves, deps, n_deps, &layers, err);
	if (rc)
		return rc;
	if (resident_bytes > budget_bytes)
		return over_budget(err, "resident graph bytes", resident_bytes, budget_bytes);
	rc = vyre_frontier_split(a, waves, &layers, budget_bytes - resident_bytes, 0, &split, err);
	if (rc)
		return rc;
	return vyre_frontier_peaks(waves, &split, readback_bytes, out, err);
}
