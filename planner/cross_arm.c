/* SPDX-License-Identifier: MIT */
/*
 * The cross-arm redundancy report (whole_megakernel_opt.rs). An arm is one
 * producer's item sequence; the report names every item whose (op, input,
 * output) triple an earlier arm of the same domain already emitted, param
 * ignored. It names opportunities; the hazard-correct rewrite is dedupe's.
 */
#include "../gpu/ops.h"
#include "internal.h"

static uint64_t triple_hash(const struct vyre_work_item *it, uint32_t domain)
{
	uint64_t a = (uint64_t)it->op_handle << 32 | it->input_handle;
	uint64_t b = (uint64_t)it->output_handle << 32 | domain;

	return mix64(a ^ mix64(b));
}

static int same_triple(const struct vyre_work_item *x, const struct vyre_work_item *y)
{
	return x->op_handle == y->op_handle && x->input_handle == y->input_handle &&
	       x->output_handle == y->output_handle;
}

static int cross_arm_reserve(struct vyre_arena *a, uint32_t n_items, uint32_t **rep, uint32_t **arm,
			     uint32_t *cap, void **pairs, struct vyre_plan_error *err)
{
	const enum vyre_plan_component in = VYRE_PLAN_IN_CROSS_ARM;

	*cap = table_capacity(n_items);
	if (arena_u32(a, *cap, rep) || arena_u32(a, *cap, arm))
		return plan_err_reserve(err, in, "cross-arm first-seen", n_items);
	if (vyre_arena_reserve(a, n_items, sizeof(struct vyre_redundant_pair), pairs))
		return plan_err_reserve(err, in, "cross-arm report", n_items);
	return 0;
}

size_t vyre_cross_arm_arena_bytes(uint32_t n_items)
{
	struct vyre_arena m;
	uint32_t *rep, *arm, cap;
	void *pairs;

	vyre_arena_init_measure(&m);
	cross_arm_reserve(&m, n_items, &rep, &arm, &cap, &pairs, NULL);
	return m.used;
}

int vyre_cross_arm_detect(struct vyre_arena *a, const struct vyre_work_item *items,
			  const uint32_t *arm_items, const uint32_t *arm_end, uint32_t n_arms,
			  const uint32_t *arm_domain, struct vyre_redundancy *report,
			  struct vyre_plan_error *err)
{
	uint32_t total = n_arms ? arm_end[n_arms - 1] : 0;
	uint32_t *rep, *first_arm, cap, start = 0;
	void *pairs;
	int rc;

	*report = (struct vyre_redundancy){0};
	rc = cross_arm_reserve(a, total, &rep, &first_arm, &cap, &pairs, err);
	if (rc)
		return rc;
	report->pairs = pairs;
	for (uint32_t h = 0; h < cap; h++)
		rep[h] = VYRE_PLAN_NONE;
	for (uint32_t arm = 0; arm < n_arms; arm++) {
		uint32_t domain = arm_domain ? arm_domain[arm] : 0;

		for (uint32_t pos = start; pos < arm_end[arm]; pos++) {
			uint32_t idx = arm_items ? arm_items[pos] : pos;
			const struct vyre_work_item *it = &items[idx];
			uint32_t h = (uint32_t)triple_hash(it, domain) & (cap - 1);

			for (;; h = (h + 1) & (cap - 1)) {
				if (rep[h] == VYRE_PLAN_NONE) {
					rep[h] = idx;
					first_arm[h] = arm;
					break;
				}
				if (same_triple(&items[rep[h]], it) &&
				    (!arm_domain || arm_domain[first_arm[h]] == domain)) {
					if (first_arm[h] < arm)
						report->pairs[report->n_pairs++] =
						    (struct vyre_redundant_pair){
							.early = first_arm[h],
							.late = arm,
							.op_index = pos - start,
						    };
					break;
				}
			}
		}
		start = arm_end[arm];
	}
	report->total_redundant_ops = report->n_pairs;
	return 0;
}
