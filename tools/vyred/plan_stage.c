/* SPDX-License-Identifier: MIT */
/*
 * The plan stage: hands vyred's drained batch to the planner
 * (planner/planner.h) and returns its plan in the pipeline's terms. Items
 * that already failed resolution are marked invalid (never planned, never a
 * dedupe source), chained items as such (docs/design.md 6.3: in order, never
 * deduplicated); the planner accepts the longest prefix that fits its arena
 * and limits (at least one item) and the rest stays in the rings.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../../planner/planner.h"
#include "plan_stage.h"

struct vyre_plan_stage {
	struct vyre_planner *planner;
	uint32_t cap;
	uint32_t *flags; /* the planner's: SQE flags and VYRE_PLAN_F_* markers */
	struct vyre_plan_stats stats;
};

static void planner_config(const struct vyre_plan_stage_config *cfg, struct vyre_planner_config *pc)
{
	vyre_planner_config_default(pc);
	pc->max_items = cfg->max_items;
	/* By default only the arena and the budget shorten a batch. */
	pc->max_clients = cfg->max_items;
	pc->max_groups = cfg->max_items;
	pc->max_stages = cfg->max_items;
	if (cfg->max_clients)
		pc->max_clients = cfg->max_clients;
	if (cfg->max_groups)
		pc->max_groups = cfg->max_groups;
	if (cfg->max_stages)
		pc->max_stages = cfg->max_stages;
	if (cfg->budget_bytes)
		pc->budget_bytes = cfg->budget_bytes;
	pc->resident_bytes = cfg->resident_bytes;
	pc->arena_bytes = cfg->arena_bytes;
	pc->handoff_bytes = cfg->handoff_bytes;
	pc->handoff_writers = cfg->handoff_writers;
	pc->handoff_readers = cfg->handoff_readers;
	pc->direct_handles = cfg->direct_handles;
	/* vyred reads no cross-arm pairs: building them cost 6 ns an item of a mixed batch */
	pc->cross_arm_report = 0;
}

int vyre_plan_stage_create(const struct vyre_plan_stage_config *cfg, struct vyre_plan_stage **out)
{
	struct vyre_planner_config pc;
	struct vyre_plan_error err;
	struct vyre_plan_stage *ps;
	int rc;

	*out = NULL;
	if (cfg->max_items == 0)
		return VYRE_E_INVAL;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return VYRE_E_NOMEM;
	ps->cap = cfg->max_items;
	ps->flags = calloc(cfg->max_items, sizeof(*ps->flags));
	if (!ps->flags) {
		vyre_plan_stage_destroy(ps);
		return VYRE_E_NOMEM;
	}
	planner_config(cfg, &pc);
	rc = vyre_planner_create(&pc, &ps->planner, &err);
	if (rc) {
		char msg[256];

		vyre_plan_error_format(&err, msg, sizeof(msg));
		/* Linked without the daemon too (the fuzz replay): plain stderr, vyre_log style. */
		fprintf(stderr, "vyred: planner: %s\n", msg);
		vyre_plan_stage_destroy(ps);
		return rc;
	}
	*out = ps;
	return 0;
}

void vyre_plan_stage_destroy(struct vyre_plan_stage *ps)
{
	if (!ps)
		return;
	vyre_planner_destroy(ps->planner);
	free(ps->flags);
	free(ps);
}

/* The planner's flags of item @i: its SQE flags, whether it failed, its place in a chain. */
static uint32_t plan_flags(const struct vyre_plan_input *in, uint32_t i)
{
	const uint32_t f = in->flags[i];
	const int after = i > 0 && (in->flags[i - 1] & VYRE_SQE_CHAIN) &&
			  in->client[i - 1] == in->client[i] && in->domain[i - 1] == in->domain[i];
	uint32_t out =
	    f & (VYRE_SQE_FENCE | VYRE_SQE_NODEDUPE | VYRE_SQE_RANGE | VYRE_PLAN_F_OUT_TRANSIENT);

	if (in->status[i])
		out |= VYRE_PLAN_F_INVALID;
	if (after)
		out |= VYRE_PLAN_F_AFTER_PREV;
	if (after || (f & VYRE_SQE_CHAIN))
		out |= VYRE_PLAN_F_CHAIN;
	return out;
}

int vyre_plan_stage_run(struct vyre_plan_stage *ps, const struct vyre_plan_input *in,
			struct vyre_plan_output *out)
{
	struct vyre_plan plan;
	int rc;

	if (in->n > ps->cap)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < in->n; i++)
		ps->flags[i] = plan_flags(in, i);
	struct vyre_plan_batch batch = {
	    .n = in->n,
	    .items = in->items,
	    .exec = in->exec,
	    .domain = in->domain,
	    .client = in->client,
	    .flags = ps->flags,
	    .aux = in->aux,
	};
	rc = vyre_planner_plan(ps->planner, &batch, &plan, NULL);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < plan.accepted; i++)
		out->dedup_of[i] =
		    plan.dedup_from[i] == VYRE_PLAN_NONE ? VYRE_PLAN_NO_DEDUPE : plan.dedup_from[i];
	ps->stats = plan.stats;
	out->plan = plan.exec;
	out->exec_flags = plan.exec_flags;
	out->n_accepted = plan.accepted;
	out->n_deduped = plan.stats.deduped;
	out->stats = &ps->stats;
	return 0;
}
