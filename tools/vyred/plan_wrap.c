/* SPDX-License-Identifier: MIT */
/*
 * The pipeline's plan step: calls the plan stage (plan_stage.h), checks what
 * it returned, and gives back the in-flight credit of items it left in the
 * rings. A plan stage that fails or returns an impossible plan is logged and
 * replaced by the sequential plan of the whole batch, which is always right.
 * The planner's arrays are reused by the next batch's plan, while this one
 * may still run: the plan is copied into the batch.
 */
#include <string.h>

#include "../../planner/planner.h"
#include "chains.h"
#include "daemon.h"
#include "devbufs.h"
#include "disjoint.h"
#include "log.h"
#include "plan_stage.h"
#include "plan_wrap.h"
#include "trace.h"

static int chained(const struct vyre_batch *b, uint32_t i)
{
	return (b->flags[i] & VYRE_SQE_CHAIN) || vyre_chain_continues(b, i);
}

/* Each planned item once, in a group (b->group_of); groups end in order. */
static int groups_ok(struct vyre_batch *b, const struct vyre_plan_output *o)
{
	const struct vyre_exec_plan *p = &o->plan;
	uint32_t start = 0;

	for (uint32_t i = 0; i < o->n_accepted; i++)
		b->group_of[i] = UINT32_MAX;
	for (uint32_t g = 0; g < p->n_groups; g++) {
		if (p->group_end[g] < start || p->group_end[g] > p->n_order)
			return 0;
		for (uint32_t k = start; k < p->group_end[g]; k++) {
			uint32_t i = p->order[k];

			if (i >= o->n_accepted || b->status[i] != 0 || b->group_of[i] != UINT32_MAX)
				return 0;
			b->group_of[i] = g;
		}
		start = p->group_end[g];
	}
	return start == p->n_order;
}

/*
 * On-chip handoff marks (docs/design.md 7.6) come in links W -> W + 1 of one
 * chain, both run, the reader after its writer, the handed-off bytes within
 * the backend's budget, the ops ones it keeps: a backend runs the reader
 * with its writer, so a lone mark would leave an item unrun.
 */
static int handoffs_ok(const struct vyre_daemon *d, const struct vyre_batch *b,
		       const struct vyre_plan_output *o)
{
	const uint32_t known = VYRE_EXEC_HANDOFF_OUT | VYRE_EXEC_HANDOFF_IN;

	for (uint32_t i = 0; o->exec_flags && i < o->n_accepted; i++) {
		const uint32_t m = o->exec_flags[i];

		if (m & ~known)
			return 0;
		if ((m & VYRE_EXEC_HANDOFF_OUT) &&
		    (i + 1 >= o->n_accepted || !(o->exec_flags[i + 1] & VYRE_EXEC_HANDOFF_IN)))
			return 0;
		if (!(m & VYRE_EXEC_HANDOFF_IN))
			continue;
		/* groups_ok and the chain check put both in the plan, in order */
		if (i == 0 || !(o->exec_flags[i - 1] & VYRE_EXEC_HANDOFF_OUT) ||
		    b->status[i] != 0 || !(b->exec[i].flags & VYRE_EXEC_AFTER_PREV) ||
		    b->exec[i].prev != i - 1 || b->exec[i - 1].out_bytes > d->handoff_bytes ||
		    !vyre_handoff_kept(d->handoff_writers, b->exec[i - 1].op) ||
		    !vyre_handoff_kept(d->handoff_readers, b->exec[i].op))
			return 0;
	}
	return 1;
}

/*
 * Every valid item runs or takes an earlier executed item's outcome, never
 * a chained one's, and a chained item runs in a later group than the item
 * it follows (docs/design.md section 6.3).
 */
static int plan_ok(const struct vyre_daemon *d, struct vyre_batch *b,
		   const struct vyre_plan_output *o)
{
	const struct vyre_exec_plan *p = &o->plan;

	if (o->n_accepted == 0 || o->n_accepted > b->n || p->n_order > o->n_accepted ||
	    p->n_groups > b->cap || p->n_launches > b->cap || !groups_ok(b, o))
		return 0;
	for (uint32_t i = 0; i < o->n_accepted; i++) {
		const struct vyre_exec_item *x = &b->exec[i];
		uint32_t j = o->dedup_of[i];

		if (b->status[i] != 0)
			continue;
		if (j != VYRE_PLAN_NO_DEDUPE) {
			if (j >= i || b->group_of[j] == UINT32_MAX || chained(b, i) ||
			    chained(b, j))
				return 0;
		} else if (b->group_of[i] == UINT32_MAX ||
			   ((x->flags & VYRE_EXEC_AFTER_PREV) &&
			    (x->prev >= i || b->group_of[x->prev] >= b->group_of[i]))) {
			return 0;
		}
	}
	if (p->n_launches && p->launch_end[p->n_launches - 1] != p->n_groups)
		return 0;
	return handoffs_ok(d, b, o);
}

static void keep_plan(struct vyre_batch *b, const struct vyre_exec_plan *p)
{
	/* an empty plan may come with NULL arrays */
	if (p->n_order)
		memcpy(b->plan_order, p->order, (size_t)p->n_order * sizeof(*p->order));
	if (p->n_groups)
		memcpy(b->plan_group_end, p->group_end,
		       (size_t)p->n_groups * sizeof(*p->group_end));
	if (p->n_launches)
		memcpy(b->plan_launch_end, p->launch_end,
		       (size_t)p->n_launches * sizeof(*p->launch_end));
	b->plan = (struct vyre_exec_plan){b->plan_order, p->n_order,	     b->plan_group_end,
					  p->n_groups,	 b->plan_launch_end, p->n_launches};
}

/* Items [0, @n) one at a time, in order: always right. */
static void sequential_plan(struct vyre_batch *b, struct vyre_plan_output *o, uint32_t n)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		b->dedup_of[i] = VYRE_PLAN_NO_DEDUPE;
		if (b->status[i] == 0)
			b->seq_order[k++] = i;
	}
	for (uint32_t g = 0; g < k; g++)
		b->seq_ends[g] = g + 1;
	o->plan = (struct vyre_exec_plan){b->seq_order, k, b->seq_ends, k, b->seq_ends, k};
	o->n_accepted = n;
	o->n_deduped = 0;
	o->exec_flags = NULL;
}

/* Batches this small whose items share no buffer skip the planner (small_plan). */
#define SMALL_PLAN_ITEMS VYRE_SMALL_PLAN_ITEMS
#define SMALL_PLAN_BYTES (1u << 20)

/* @h is one of @b's buffers. */
static int names(const struct vyre_op_access *b, uint32_t h)
{
	return h && (h == b->write || h == b->aux || h == b->reads[0] || h == b->reads[1]);
}

static int conflict(const struct vyre_op_access *a, const struct vyre_op_access *b)
{
	/* a stream is read and written */
	if (names(b, a->aux) || names(a, b->aux))
		return 1;
	if (a->write && a->write == b->write)
		return 1;
	for (uint32_t r = 0; r < b->n_reads; r++)
		if (a->write && b->reads[r] == a->write)
			return 1;
	for (uint32_t r = 0; r < a->n_reads; r++)
		if (b->write && a->reads[r] == b->write)
			return 1;
	return 0;
}

/*
 * A few valid items that share no written buffer (typically one item each
 * from several clients) need no dedupe (identical items would share their
 * output), no order and no memory split: one group, one launch. Planning
 * them costs more than running them on the fast path, so vyred plans them
 * itself. Returns 0 when the batch needs the planner.
 */
static int small_plan(struct vyre_batch *b, struct vyre_plan_output *o)
{
	struct vyre_op_access acc[SMALL_PLAN_ITEMS];
	uint64_t bytes = 0;
	uint32_t k = 0;

	if (b->n > SMALL_PLAN_ITEMS)
		return 0;
	for (uint32_t i = 0; i < b->n; i++) {
		b->dedup_of[i] = VYRE_PLAN_NO_DEDUPE;
		if (b->status[i] != 0)
			continue;
		/* a chain runs in order, one item after the other */
		if (vyre_chain_continues(b, i))
			return 0;
		const struct vyre_exec_item *x = &b->exec[i];

		bytes += (uint64_t)x->in_bytes + x->out_bytes + x->table_bytes + x->aux_bytes;
		vyre_op_access_aux(&b->items[i], b->aux[i], &acc[k]);
		for (uint32_t j = 0; j < k; j++)
			if (conflict(&acc[j], &acc[k]))
				return 0;
		b->seq_order[k++] = i;
	}
	if (bytes > SMALL_PLAN_BYTES)
		return 0;
	b->seq_ends[0] = k;
	b->plan_launch_end[0] = 1;
	o->plan = (struct vyre_exec_plan){b->seq_order,	      k,	  b->seq_ends, k ? 1u : 0u,
					  b->plan_launch_end, k ? 1u : 0u};
	o->n_accepted = b->n;
	o->n_deduped = 0;
	o->exec_flags = NULL;
	return 1;
}

/* The bytes one group may touch: --budget-bytes (0: the planner's default) less the resident. */
static uint64_t group_budget(const struct vyre_daemon *d)
{
	struct vyre_planner_config def;
	uint64_t budget = d->cfg.budget_bytes;

	if (budget == 0) {
		vyre_planner_config_default(&def);
		budget = def.budget_bytes;
	}
	return budget > d->cfg.resident_bytes ? budget - d->cfg.resident_bytes : 0;
}

/*
 * A larger batch whose items share no written buffer (disjoint.h): one
 * group of every valid item, one launch, no dedupe, without the planner,
 * when its bytes fit the group budget. Returns 0 when it needs the planner.
 */
static int disjoint_plan(struct vyre_daemon *d, struct vyre_batch *b, struct vyre_plan_output *o)
{
	/* the resolve stage added every valid item to the check, their order in b->seq_order */
	const int64_t k = vyre_disjoint_finish(&d->disjoint, group_budget(d));

	if (k < 0)
		return 0;
	d->disjoint_plans++;
	for (uint32_t i = 0; i < b->n; i++)
		b->dedup_of[i] = VYRE_PLAN_NO_DEDUPE;
	b->seq_ends[0] = (uint32_t)k;
	b->plan_launch_end[0] = 1;
	o->plan = (struct vyre_exec_plan){b->seq_order, (uint32_t)k,	    b->seq_ends,
					  k ? 1u : 0u,	b->plan_launch_end, k ? 1u : 0u};
	o->n_accepted = b->n;
	o->n_deduped = 0;
	o->exec_flags = NULL;
	return 1;
}

/* 1 when the accepted prefix of @o ends inside a chain. */
static int cuts_chain(const struct vyre_batch *b, const struct vyre_plan_output *o)
{
	return o->n_accepted < b->n && vyre_chain_continues(b, o->n_accepted);
}

/*
 * A chain runs whole in one batch (docs/design.md section 6.3): when the
 * planner accepted a prefix that ends inside one, the prefix before that
 * chain is planned again; when that chain is the batch's first, it runs
 * alone and sequentially, so the batch still makes progress. A few tries
 * at most: each plans a shorter prefix.
 */
static int whole_chains(struct vyre_daemon *d, struct vyre_batch *b, struct vyre_plan_input *in,
			struct vyre_plan_output *out)
{
	for (int tries = 0; tries < 3 && cuts_chain(b, out) && plan_ok(d, b, out); tries++) {
		uint32_t start = vyre_chain_start(b, out->n_accepted);

		if (start == 0)
			break;
		in->n = start;
		const int rc = vyre_plan_stage_run(d->plan_stage, in, out);

		if (rc != 0)
			return rc;
	}
	if (cuts_chain(b, out) && plan_ok(d, b, out)) {
		sequential_plan(b, out, vyre_chain_end(b, 0));
		out->stats = NULL;
	}
	return 0;
}

void vyre_stage_plan(struct vyre_daemon *d, struct vyre_batch *b, uint64_t start)
{
	struct vyre_plan_input in = {
	    .n = b->n,
	    .items = b->items,
	    .exec = b->exec,
	    .status = b->status,
	    .domain = b->domain,
	    .flags = b->flags,
	    .client = b->conn,
	    .aux = b->aux,
	};
	struct vyre_plan_output out = {.dedup_of = b->dedup_of};
	const struct vyre_plan_stats *ps = NULL;
	int rc = 0, planned = 0;

	/*
	 * One item has nothing to deduplicate, order or fuse: its plan is the
	 * sequential one, without the planner's call (the latency path); a few
	 * independent items form one group (small_plan), and so do many that
	 * share no written buffer (disjoint_plan). Those plans are right as
	 * made: plan_ok checks the planner's (a walk of every item, 2 % of
	 * vyred on the trivial rows).
	 */
	if (b->n == 1) {
		sequential_plan(b, &out, b->n);
	} else if (!small_plan(b, &out) &&
		   !(b->n > SMALL_PLAN_ITEMS && disjoint_plan(d, b, &out))) {
		planned = 1;
		rc = vyre_plan_stage_run(d->plan_stage, &in, &out);
		if (rc == 0)
			rc = whole_chains(d, b, &in, &out);
		ps = out.stats;
	}
	if (rc != 0 || (planned && !plan_ok(d, b, &out))) {
		ps = NULL;
		vyre_log("plan stage %s (%s): running batch %llu sequentially",
			 rc ? "failed" : "returned an invalid plan", vyre_strerror(rc),
			 (unsigned long long)b->stats.seq);
		vyre_trace_error(0, 0, rc ? rc : VYRE_E_INVAL);
		sequential_plan(b, &out, b->n);
	}
	if (out.plan.order == b->seq_order)
		b->plan = out.plan;
	else
		keep_plan(b, &out.plan);
	for (uint32_t i = 0; out.exec_flags && i < out.n_accepted; i++)
		b->exec[i].flags |= out.exec_flags[i];
	b->n_accepted = out.n_accepted;
	b->stats.accepted = out.n_accepted;
	b->stats.deduped = out.n_deduped;
	b->stats.executed = out.plan.n_order;
	b->stats.groups = out.plan.n_groups;
	b->stats.launches = out.plan.n_launches;
	b->stats.frontier_splits = ps && ps->groups > ps->layers ? ps->groups - ps->layers : 0;
	b->stats.bytes_avoided = ps ? ps->bytes_avoided : 0;
	d->bytes_avoided += b->stats.bytes_avoided;
	/* Items past the accepted prefix stay in their rings: release their CQ credit. */
	for (uint32_t t = 0; t < b->n_touched; t++) {
		struct vyre_conn *c = &d->conns[b->touched[t]];
		uint32_t end = b->first[t] + b->count[t];
		uint32_t acc_end = end < b->n_accepted ? end : b->n_accepted;
		uint32_t acc = acc_end > b->first[t] ? acc_end - b->first[t] : 0;
		uint32_t left = b->count[t] - acc;

		c->inflight -= left;
		b->count[t] -= left;
		/* whole chains are accepted or not: a piece of one left behind is all of it */
		if (acc == 0)
			c->chain_cancel = c->chain_cancel_was;
	}
	vyre_devbufs_stamp(d, b);
	vyre_trace_plan(d, b, start);
	if (ps)
		vyre_trace_arena(b, ps->arena_used, ps->arena_bytes, ps->arena_high_water,
				 ps->retries > 0);
}
