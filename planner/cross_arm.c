/* SPDX-License-Identifier: MIT */
/*
 * The cross-arm redundancy report (whole_megakernel_opt.rs). An arm is one
 * producer's item sequence; the report names every item whose (op, input,
 * output) triple an earlier arm of the same domain already emitted, param
 * ignored. It names opportunities; the hazard-correct rewrite is dedupe's.
 */
#include <string.h>

#include "track.h"

/* Two multiplies; the top bits, well mixed, land in the low ones the mask keeps. */
static uint64_t triple_hash(const struct vyre_work_item *it, uint32_t domain)
{
	uint64_t a = (uint64_t)it->op_handle << 32 | it->input_handle;
	uint64_t b = (uint64_t)it->output_handle << 32 | domain;
	uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;

	return h ^ (h >> 32);
}

static int same_triple(const struct vyre_work_item *x, const struct vyre_work_item *y)
{
	return x->op_handle == y->op_handle && x->input_handle == y->input_handle &&
	       x->output_handle == y->output_handle;
}

int cross_arm_table_reserve(struct vyre_arena *a, uint32_t n_items, struct cross_arm_table *t,
			    struct vyre_plan_error *err)
{
	uint32_t cap = table_capacity(n_items);
	void *p;

	if (vyre_arena_reserve(a, cap, sizeof(struct cross_arm_slot), &p))
		return plan_err_reserve(err, VYRE_PLAN_IN_CROSS_ARM, "cross-arm first-seen",
					n_items);
	*t = (struct cross_arm_table){.slots = p, .cap = cap, .mask = cap - 1};
	if (p)
		memset(p, 0, (size_t)cap * sizeof(struct cross_arm_slot));
	return 0;
}

void cross_arm_table_begin(struct cross_arm_table *t, uint32_t n_items)
{
	t->gen = (t->gen + 1) & 0xffu;
	if (t->gen == 0) {
		memset(t->slots, 0, (size_t)t->cap * sizeof(*t->slots));
		t->gen = 1;
	}
	t->mask = table_mask_for(t->cap, n_items);
}

void cross_arm_walk(struct cross_arm_table *t, const struct vyre_work_item *items,
		    const uint32_t *arm_items, const uint32_t *arm_end, uint32_t n_arms,
		    const uint32_t *arm_domain, int skip_marked, struct vyre_redundancy *report)
{
	const uint32_t mark = skip_marked ? CROSS_ARM_SKIP : 0;
	uint32_t start = 0, total = n_arms ? arm_end[n_arms - 1] : 0;

	report->n_pairs = 0;
	for (uint32_t arm = 0; arm < n_arms; arm++) {
		uint32_t domain = arm_domain ? arm_domain[arm] : 0;

		for (uint32_t pos = start; pos < arm_end[arm]; pos++) {
			uint32_t idx = arm_items ? arm_items[pos] : pos;
			const struct vyre_work_item *it = &items[idx & ~mark];

			if (idx & mark)
				continue;
			if (pos + PREFETCH_DISTANCE < total) {
				uint32_t ahead = arm_items ? arm_items[pos + PREFETCH_DISTANCE]
							   : pos + PREFETCH_DISTANCE;

				__builtin_prefetch(&items[ahead & ~mark]);
			}

			for (uint32_t h = (uint32_t)triple_hash(it, domain) & t->mask;;
			     h = (h + 1) & t->mask) {
				struct cross_arm_slot *s = &t->slots[h];
				uint32_t first = s->arm_gen >> 8;

				if ((s->arm_gen & 0xffu) != t->gen) {
					*s = (struct cross_arm_slot){.rep = idx,
								     .arm_gen = arm << 8 | t->gen};
					break;
				}
				if (!same_triple(&items[s->rep], it) ||
				    (arm_domain && arm_domain[first] != domain))
					continue;
				if (first < arm)
					report->pairs[report->n_pairs++] =
					    (struct vyre_redundant_pair){
						.early = first,
						.late = arm,
						.op_index = pos - start,
					    };
				break;
			}
		}
		start = arm_end[arm];
	}
	report->total_redundant_ops = report->n_pairs;
}

static int cross_arm_reserve(struct vyre_arena *a, uint32_t n_items, struct cross_arm_table *t,
			     void **pairs, struct vyre_plan_error *err)
{
	int rc = cross_arm_table_reserve(a, n_items, t, err);

	if (rc)
		return rc;
	if (vyre_arena_reserve(a, n_items, sizeof(struct vyre_redundant_pair), pairs))
		return plan_err_reserve(err, VYRE_PLAN_IN_CROSS_ARM, "cross-arm report", n_items);
	return 0;
}

size_t vyre_cross_arm_arena_bytes(uint32_t n_items)
{
	struct vyre_arena m;
	struct cross_arm_table t;
	void *pairs;

	vyre_arena_init_measure(&m);
	cross_arm_reserve(&m, n_items, &t, &pairs, NULL);
	return m.used;
}

int vyre_cross_arm_detect(struct vyre_arena *a, const struct vyre_work_item *items,
			  const uint32_t *arm_items, const uint32_t *arm_end, uint32_t n_arms,
			  const uint32_t *arm_domain, struct vyre_redundancy *report,
			  struct vyre_plan_error *err)
{
	uint32_t total = n_arms ? arm_end[n_arms - 1] : 0;
	struct cross_arm_table t;
	void *pairs;
	int rc;

	*report = (struct vyre_redundancy){0};
	rc = cross_arm_reserve(a, total, &t, &pairs, err);
	if (rc)
		return rc;
	report->pairs = pairs;
	cross_arm_table_begin(&t, total);
	cross_arm_walk(&t, items, arm_items, arm_end, n_arms, arm_domain, 0, report);
	return 0;
}
