/* SPDX-License-Identifier: MIT */
/*
 * The batch planner: one pass over the batch decides dedupe and builds the
 * dependency edges (plan_analyse.c), then barrier layering, memory
 * splitting and launch fusion shape the plan the backend runs (here).
 *
 * When a plan does not fit (the arena, the client, group or stage limits),
 * a shorter prefix is planned, ending where a chain ends: items stay in the
 * rings for the next batch.
 * Limits found by the analysis pick the exact prefix that fits them, since
 * the decisions about an item depend only on the items before it.
 *
 * Cost (docs/planner.md, "What an item costs"): the one pass touches each
 * item's buffers through an inline hash lookup and keeps each buffer's
 * state in one 16-byte entry; it also gives every wave its layer (edges
 * only run from earlier waves), so barrier_layers finds Kahn's groups and
 * order without walking edges; every per-batch array comes from one
 * reservation laid out once per batch size; the cross-arm report looks
 * only at items whose output buffer more than one arm writes.
 */
#include <time.h>

#include "../gpu/ops.h"
#include "batch.h"
#include "plan_analyse.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The first item of the waves in layers [limit, ...): a prefix before it fits. */
static uint32_t first_item_in_layer(const struct batch_scratch *s, uint32_t limit)
{
	uint32_t w = 0;

	while (s->layer[w] < limit)
		w++;
	return s->wave_item[w];
}

/* The first item of the waves in groups [limit, n_groups): a prefix before it fits. */
static uint32_t first_item_beyond(const struct batch_scratch *s, const struct vyre_barrier_plan *g,
				  uint32_t limit)
{
	uint32_t min_wave = UINT32_MAX;

	for (uint32_t pos = g->group_end[limit - 1]; pos < g->n_waves; pos++)
		min_wave = g->order[pos] < min_wave ? g->order[pos] : min_wave;
	return s->wave_item[min_wave];
}

/* Bytes of shared range @r (0 for NONE). */
static inline uint64_t shared_bytes(const struct share_range *ranges, uint32_t r)
{
	return r == VYRE_PLAN_NONE ? 0 : ranges[r].bytes;
}

/*
 * vyre_frontier_split with the clamp, over a group's working set: each
 * layer is split in order so that the bytes of a group fit the budget, a
 * wave adding its own bytes and the shared operands the group does not
 * count yet. A wave larger than the whole budget is clamped to it and
 * shares nothing (it runs alone but for waves of no bytes, as before). The
 * group's read and output bytes and whether it holds a fence go to
 * s->stages.
 */
static void split_groups(struct vyre_planner *p, struct batch_scratch *s,
			 const struct vyre_barrier_plan *in, struct vyre_barrier_plan *out)
{
	const uint64_t budget = p->group_budget;
	struct share_range *share = s->t->buffers.ranges;
	uint32_t *group_end = s->group_end, n_groups = 0;

	for (uint32_t g = 0, first = 0; g < in->n_groups; first = in->group_end[g++]) {
		uint64_t current = 0, reads = 0, outs = 0;
		uint32_t current_start = first, fence = 0;

		for (uint32_t pos = first; pos < in->group_end[g]; pos++) {
			const struct wave_cost *c = &s->cost[in->order[pos]];
			const uint32_t s0 = c->shared[0], s1 = c->shared[1], token = n_groups + 1;
			uint64_t own = c->reads + shared_bytes(share, s0) + shared_bytes(share, s1);
			uint64_t add = own + c->out;

			if (add > budget) {
				add = budget;
			} else {
				if (s0 != VYRE_PLAN_NONE && share[s0].group == token)
					add -= share[s0].bytes;
				if (s1 != VYRE_PLAN_NONE && share[s1].group == token)
					add -= share[s1].bytes;
			}
			if (pos != current_start && current + add > budget) {
				s->stages[n_groups] = (struct vyre_fusion_stage){
				    .input_bytes = reads,
				    .output_bytes = outs,
				    .requires_host_materialization = fence};
				group_end[n_groups++] = pos;
				current_start = pos;
				current = reads = outs = 0;
				fence = 0;
				add = own + c->out > budget ? budget : own + c->out;
			}
			current += add;
			outs += c->out;
			fence |= c->fence;
			if (own + c->out > budget) {
				reads += own;
				continue;
			}
			reads += add - c->out;
			if (s0 != VYRE_PLAN_NONE)
				share[s0].group = n_groups + 1;
			if (s1 != VYRE_PLAN_NONE)
				share[s1].group = n_groups + 1;
		}
		if (in->group_end[g] > first) {
			s->stages[n_groups] =
			    (struct vyre_fusion_stage){.input_bytes = reads,
						       .output_bytes = outs,
						       .requires_host_materialization = fence};
			group_end[n_groups++] = in->group_end[g];
		}
	}
	frontier_split_result(in, group_end, n_groups, out);
}

/* One fusion stage per group (its bytes and fence from split_groups). */
static void build_stages(struct vyre_planner *p, struct batch_scratch *s, uint32_t n_groups,
			 struct vyre_plan_stats *st)
{
	for (uint32_t i = 0; i < n_groups; i++) {
		struct vyre_fusion_stage *stage = &s->stages[i];
		const uint64_t required = stage->input_bytes + stage->output_bytes;

		stage->id = i;
		stage->layout_hash = VYRE_PLAN_LAYOUT_MEGAKERNEL;
		st->peak_group_bytes =
		    required > st->peak_group_bytes ? required : st->peak_group_bytes;
		/* Only a lone oversized item exceeds the budget; it runs alone, clamped. */
		if (required > p->group_budget) {
			st->oversized++;
			stage->output_bytes = stage->output_bytes < p->group_budget
						  ? stage->output_bytes
						  : p->group_budget;
			stage->input_bytes = p->group_budget - stage->output_bytes;
		}
	}
}

/*
 * The cross-arm report: vyre_cross_arm_detect over the arms in order, when
 * the analysis found that it may have a pair, looking up only the items
 * that may be in one (note_arm_output).
 */
static void cross_arm_report(struct batch_scratch *s, const struct vyre_plan_batch *b, uint32_t n,
			     struct vyre_plan *out)
{
	struct vyre_redundancy rep = {.pairs = s->pairs};
	const struct slot_state *slots = s->t->buffers.slot;
	uint32_t n_arms = s->t->arms.n_ids, *cursor = s->t->arm_pending, start = 0;

	out->cross_arm = s->xpairs;
	if (!s->cross_arms)
		return;
	for (uint32_t arm = 0; arm < n_arms; arm++) {
		cursor[arm] = start;
		start += s->t->arm_count[arm];
		s->arm_end[arm] = start;
	}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t o = s->out_of[k];

		if (b->flags && (b->flags[k] & VYRE_PLAN_F_INVALID))
			continue;
		o = o != VYRE_PLAN_NONE ? slots[o].out_arm : s->no_output_arm;
		/* an item that continues a stream is never redundant: its stream moved on */
		const int streamed = b->aux && b->aux[k] != 0;

		s->arm_items[cursor[s->arm_of[k]]++] =
		    k | (o == ARMS_MANY && !streamed ? 0 : CROSS_ARM_SKIP);
	}
	cross_arm_table_begin(&s->t->cross_arm, n);
	cross_arm_walk(&s->t->cross_arm, b->items, s->arm_items, s->arm_end, n_arms,
		       s->t->arm_domain, 1, &rep);
	for (uint32_t i = 0; i < rep.n_pairs; i++)
		s->xpairs[i] = (struct vyre_cross_arm_pair){
		    .domain = s->t->arm_domain[rep.pairs[i].early],
		    .early_client = s->t->arm_client[rep.pairs[i].early],
		    .late_client = s->t->arm_client[rep.pairs[i].late],
		    .late_op_index = rep.pairs[i].op_index,
		};
	out->n_cross_arm = rep.n_pairs;
	out->stats.cross_arm_redundant = rep.total_redundant_ops;
}

/* The tables and per-batch state emptied for a batch of @n items. */
static inline void begin_tables(struct vyre_planner *p, struct batch_scratch *s, uint32_t n)
{
	s->last_arm = VYRE_PLAN_NONE;
	buffer_map_begin(&s->t->buffers, OPERANDS_PER_ITEM * n);
	dedupe_table_begin(&s->t->dedupe, n);
	id_map_begin(&s->t->arms, batch_arms_cap(&p->cfg, n));
	s->no_output_arm = VYRE_PLAN_NONE;
	s->cross_arms = 0;
	s->transient = 0;
}

static int plan_prefix(struct vyre_planner *p, const struct vyre_plan_batch *b, uint32_t n,
		       struct vyre_plan *out, uint32_t *shrink, struct vyre_plan_error *err)
{
	struct batch_scratch s;
	struct pass_counts c;
	struct vyre_barrier_plan layers, groups;
	struct vyre_fusion_plan fusion = {0};
	struct vyre_plan_stats *st = &out->stats;
	int rc;

	*out = (struct vyre_plan){0};
	if ((rc = batch_scratch_reserve(&p->arena, &p->cfg, n, &p->layout, &s, err)))
		return rc;
	s.t = &p->tables;
	/* a valid item with byte ranges starts the pass again by runs (docs/design.md 7.2) */
	for (int ranged = 0;; ranged = 1) {
		begin_tables(p, &s, n);
		if (ranged) {
			if ((rc = batch_range_reserve(&p->arena, n, &s, err)))
				return rc;
			batch_range_runs(&s, &s.t->buffers, b, n);
		}
		rc = vyre_plan_analyse(p, &s, b, n, ranged, &c, shrink, err);
		if (rc != ANALYSE_RANGED)
			break;
	}
	if (rc)
		return rc;
	/* Kahn's groups are the layers: check the limit before ordering them */
	if (s.n_layers > p->cfg.max_groups) {
		*shrink = first_item_in_layer(&s, p->cfg.max_groups);
		return plan_err_capacity(err, "barrier groups per plan", s.n_layers,
					 p->cfg.max_groups);
	}
	layers = (struct vyre_barrier_plan){
	    .order = s.layer_order,
	    .group_end = s.layer_end,
	    .n_waves = c.n_waves,
	    .n_groups = barrier_layers(&(struct barrier_layering){c.n_waves, s.n_layers, s.layer,
								  s.top, s.in_start, s.dep_before,
								  s.pos, s.key, s.count, s.tmp},
				       s.layer_order, s.layer_end),
	};
	split_groups(p, &s, &layers, &groups);
	if (groups.n_groups > p->cfg.max_stages) {
		*shrink = first_item_beyond(&s, &groups, p->cfg.max_stages);
		return plan_err_capacity(err, "stages per plan", groups.n_groups,
					 p->cfg.max_stages);
	}
	build_stages(p, &s, groups.n_groups, st);
	fusion.launch_end = s.launch_end;
	fusion.launch_count =
	    fusion_launches(s.stages, groups.n_groups, p->group_budget, s.launch_end);
	for (uint32_t pos = 0; pos < c.n_waves; pos++)
		s.order[pos] = s.wave_item[groups.order[pos]];
	if (p->cfg.cross_arm_report)
		cross_arm_report(&s, b, n, out);

	out->exec = (struct vyre_exec_plan){
	    .order = s.order,
	    .n_order = c.n_waves,
	    .group_end = groups.group_end,
	    .n_groups = groups.n_groups,
	    .launch_end = fusion.launch_end,
	    .n_launches = fusion.launch_count,
	};
	out->accepted = n;
	out->dedup_from = s.dedup_from;
	st->invalid = c.invalid;
	st->deduped = c.deduped;
	st->executed = c.n_waves;
	st->dependencies = s.n_deps;
	st->layers = layers.n_groups;
	st->groups = groups.n_groups;
	st->barriers = groups.global_barriers;
	st->launches = fusion.launch_count;
	st->launches_avoided = groups.n_groups - fusion.launch_count;
	st->bytes_avoided =
	    s.transient ? plan_handoff(p, &s, b, n, &groups, &fusion, &out->exec_flags) : 0;
	return 0;
}

/* The bytes item 0 counts against the budget alone (wave_cost without the map). */
static uint64_t solo_bytes(const struct vyre_plan_batch *b)
{
	const struct vyre_work_item *it = &b->items[0];
	const struct vyre_exec_item *x = b->exec;
	const int mask = vyre_op_operands(it->op_handle);
	uint64_t bytes;

	if (!x)
		return 0;
	bytes = (uint64_t)x->in_bytes + x->table_bytes + x->out_bytes +
		(mask > 0 && (mask & VYRE_OPERAND_AUX) ? x->aux_bytes : 0);
	/* an input that is also the table, and not the output, is one operand */
	if (mask > 0 && (mask & VYRE_OPERAND_IN) && (mask & VYRE_OPERAND_TABLE) &&
	    it->input_handle && it->param == it->input_handle &&
	    !((mask & VYRE_OPERAND_OUT) && it->output_handle == it->input_handle) &&
	    x->table_off == x->in_off && x->table_bytes == x->in_bytes)
		bytes -= x->table_bytes;
	return bytes;
}

/* A lone item, planned without the arena: the progress guarantee. */
static void plan_solo(struct vyre_planner *p, const struct vyre_plan_batch *b,
		      struct vyre_plan *out)
{
	int invalid = b->flags && (b->flags[0] & VYRE_PLAN_F_INVALID);

	*out = (struct vyre_plan){0};
	p->solo_order[0] = 0;
	p->solo_group_end[0] = 1;
	p->solo_launch_end[0] = 1;
	p->solo_dedup_from[0] = VYRE_PLAN_NONE;
	out->exec = (struct vyre_exec_plan){
	    .order = p->solo_order,
	    .n_order = invalid ? 0 : 1,
	    .group_end = p->solo_group_end,
	    .n_groups = invalid ? 0 : 1,
	    .launch_end = p->solo_launch_end,
	    .n_launches = invalid ? 0 : 1,
	};
	out->accepted = 1;
	out->dedup_from = p->solo_dedup_from;
	out->stats.invalid = invalid;
	out->stats.executed = invalid ? 0 : 1;
	out->stats.layers = out->stats.groups = out->stats.launches = invalid ? 0 : 1;
	out->stats.peak_group_bytes = invalid ? 0 : solo_bytes(b);
	out->stats.oversized = out->stats.peak_group_bytes > p->group_budget;
}

static int check_batch(const struct vyre_plan_batch *b, struct vyre_plan_error *err)
{
	const char *missing = NULL;

	if (!b)
		missing = "a batch";
	else if (b->n && !b->items)
		missing = "the batch's work items";
	else if (b->n && !b->domain)
		missing = "the batch's domain ids";
	if (!missing)
		return 0;
	plan_err_set(err, VYRE_PLAN_ERR_ARGUMENT, VYRE_PLAN_IN_BATCH, missing);
	return VYRE_E_INVAL;
}

/*
 * @n, or the start of the chain that item @n continues, so that the prefix
 * [0, n) holds whole chains; @n itself when no such prefix is left.
 */
static uint32_t chain_aligned(const struct vyre_plan_batch *b, uint32_t n)
{
	uint32_t k = n;

	if (!b->flags)
		return n;
	while (k > 0 && k < b->n && (b->flags[k] & VYRE_PLAN_F_AFTER_PREV))
		k--;
	return k > 0 ? k : n;
}

int vyre_planner_plan(struct vyre_planner *p, const struct vyre_plan_batch *batch,
		      struct vyre_plan *out, struct vyre_plan_error *err)
{
	const uint64_t start = p->cfg.time_plans ? now_ns() : 0;
	uint32_t n, retries = 0;
	int rc;

	if ((rc = check_batch(batch, err)))
		return rc;
	n = chain_aligned(batch, batch->n < p->cfg.max_items ? batch->n : p->cfg.max_items);
	p->last_error = (struct vyre_plan_error){0};
	*out = (struct vyre_plan){0};
	while (n > 0) {
		uint32_t shrink = 0;

		vyre_arena_reset(&p->arena);
		rc = plan_prefix(p, batch, n, out, &shrink, &p->last_error);
		if (rc == 0)
			break;
		if (n == 1) {
			plan_solo(p, batch, out);
			break;
		}
		n = chain_aligned(batch, shrink > 0 && shrink < n ? shrink : n / 2);
		retries++;
	}
	if (err)
		*err = p->last_error;
	out->stats.items_in = batch->n;
	out->stats.accepted = out->accepted;
	out->stats.retries = retries;
	out->stats.arena_used = p->arena.used;
	out->stats.arena_bytes = p->arena.bytes;
	out->stats.arena_high_water = p->arena.high_water;
	out->stats.plan_ns = p->cfg.time_plans ? now_ns() - start : 0;
	return 0;
}

void vyre_plan_complete(const struct vyre_plan *plan, const struct vyre_plan_batch *batch,
			struct vyre_exec_result *results)
{
	for (uint32_t k = 0; k < plan->accepted; k++) {
		uint32_t src = plan->dedup_from[k];

		if (batch->flags && (batch->flags[k] & VYRE_PLAN_F_INVALID)) {
			results[k] = (struct vyre_exec_result){.status = VYRE_E_INVAL};
		} else if (src != VYRE_PLAN_NONE && src < k) {
			results[k] = results[src];
		}
	}
}
