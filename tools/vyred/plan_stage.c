/* SPDX-License-Identifier: MIT */
/*
 * The identity plan: every item of the batch is accepted, every valid item
 * runs in batch order, one item per group and one group per launch, nothing
 * is deduplicated. The planner (planner/) replaces this body.
 */
#include <stdlib.h>

#include "plan_stage.h"

struct vyre_plan_stage {
	uint32_t cap;
	uint32_t *order;
	uint32_t *group_end;
};

int vyre_plan_stage_create(const struct vyre_plan_stage_config *cfg, struct vyre_plan_stage **out)
{
	struct vyre_plan_stage *ps;

	if (cfg->max_items == 0)
		return VYRE_E_INVAL;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return VYRE_E_NOMEM;
	ps->cap = cfg->max_items;
	ps->order = calloc(cfg->max_items, sizeof(*ps->order));
	ps->group_end = calloc(cfg->max_items, sizeof(*ps->group_end));
	if (!ps->order || !ps->group_end) {
		vyre_plan_stage_destroy(ps);
		return VYRE_E_NOMEM;
	}
	for (uint32_t i = 0; i < cfg->max_items; i++)
		ps->group_end[i] = i + 1;
	*out = ps;
	return 0;
}

void vyre_plan_stage_destroy(struct vyre_plan_stage *ps)
{
	if (!ps)
		return;
	free(ps->order);
	free(ps->group_end);
	free(ps);
}

int vyre_plan_stage_run(struct vyre_plan_stage *ps, const struct vyre_plan_input *in,
			struct vyre_plan_output *out)
{
	uint32_t k = 0;

	if (in->n > ps->cap)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < in->n; i++) {
		out->dedup_of[i] = VYRE_PLAN_NO_DEDUPE;
		if (in->status[i] == 0)
			ps->order[k++] = i;
	}
	/* group_end[g] = g + 1 serves both as groups (one item each) and launches (one group each).
	 */
	out->plan.order = ps->order;
	out->plan.n_order = k;
	out->plan.group_end = ps->group_end;
	out->plan.n_groups = k;
	out->plan.launch_end = ps->group_end;
	out->plan.n_launches = k;
	out->n_accepted = in->n;
	out->n_deduped = 0;
	return 0;
}
