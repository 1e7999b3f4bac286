/* SPDX-License-Identifier: MIT */
/*
 * On-chip handoff (docs/design.md 7.6): which consecutive items of a chain
 * may run as one unit that keeps the transient buffer between them on chip.
 *
 * A link W -> R (R = W + 1, R continues W's chain) qualifies when both
 * run, W writes a transient buffer T that R reads as its input and no later
 * executed item of the batch reads, neither W reads T nor R writes it, T
 * fits the on-chip budget, the backend keeps links from W's op to R's op
 * (cfg.handoff_writers, handoff_readers), and R reads no byte of T that W
 * does not write (vyre_exec_handoff_exact: the on-chip copy holds nothing
 * else). Links
 * that qualify in a row make a unit, run from the group G of its first item
 * on: every member's dependencies other than its predecessor must lie in
 * groups before G, and the whole unit in G's launch. Then no item outside
 * the unit that runs in group G or later is ordered with a member, so
 * running the members right after the first is what the groups allow.
 */
#include "batch.h"

static int reads_input(uint32_t op)
{
	int mask = vyre_op_operands(op);

	return mask > 0 && (mask & VYRE_OPERAND_IN);
}

/* Link k -> k + 1 passes every test that needs no group: see the top of the file. */
static int link_candidate(const struct vyre_planner *p, const struct batch_scratch *s,
			  const struct vyre_plan_batch *b, uint32_t k)
{
	const struct vyre_work_item *w = &b->items[k], *r = &b->items[k + 1];
	const uint32_t t = w->output_handle;

	if (!(b->flags[k] & VYRE_PLAN_F_OUT_TRANSIENT) ||
	    !(b->flags[k + 1] & VYRE_PLAN_F_AFTER_PREV) || s->wave_of[k] == VYRE_PLAN_NONE ||
	    s->wave_of[k + 1] == VYRE_PLAN_NONE || b->domain[k] != b->domain[k + 1])
		return 0;
	if (t == 0 || r->input_handle != t || !reads_input(r->op_handle) || r->output_handle == t ||
	    r->param == t || w->input_handle == t || w->param == t)
		return 0;
	if (!vyre_handoff_kept(p->cfg.handoff_writers, w->op_handle) ||
	    !vyre_handoff_kept(p->cfg.handoff_readers, r->op_handle))
		return 0;
	return b->exec[k].out_bytes > 0 && b->exec[k].out_bytes <= p->cfg.handoff_bytes &&
	       vyre_exec_handoff_exact(&b->exec[k], &b->exec[k + 1]);
}

/* The last executed reader of each buffer slot (s->slot_read), from the map analyse built. */
static void last_readers(struct batch_scratch *s, const struct vyre_plan_batch *b, uint32_t n)
{
	struct buffer_map *m = &s->t->buffers;

	for (uint32_t slot = 0; slot < m->ids.n_ids; slot++)
		s->slot_read[slot] = VYRE_PLAN_NONE;
	for (uint32_t k = 0; k < n; k++) {
		struct item_slots sl;

		if (s->wave_of[k] == VYRE_PLAN_NONE)
			continue;
		/* every key is in the map already: this only looks them up */
		item_slots_resolve(m, b->domain[k], &b->items[k], &sl);
		for (uint32_t i = 0; i < sl.n_reads; i++)
			s->slot_read[sl.read[i]] = k;
	}
}

/* Each wave's group and launch, and the latest group of its dependencies but its predecessor. */
static void wave_groups(struct batch_scratch *s, const struct vyre_plan_batch *b,
			const struct vyre_barrier_plan *g, const struct vyre_fusion_plan *f)
{
	uint32_t start = 0;

	for (uint32_t l = 0, grp = 0; l < f->launch_count; l++)
		for (; grp < f->launch_end[l]; grp++)
			s->group_launch[grp] = l;
	for (uint32_t grp = 0; grp < g->n_groups; grp++) {
		for (uint32_t pos = start; pos < g->group_end[grp]; pos++) {
			s->wave_group[g->order[pos]] = grp;
			s->wave_maxdep[g->order[pos]] = VYRE_PLAN_NONE;
		}
		start = g->group_end[grp];
	}
	for (uint32_t after = 0; after < g->n_waves; after++)
		for (uint32_t e = s->in_start[after]; e < s->in_start[after + 1]; e++) {
			const uint32_t before = s->dep_before[e];
			const uint32_t k = s->wave_item[after], dg = s->wave_group[before];

			if (k > 0 && (b->flags[k] & VYRE_PLAN_F_AFTER_PREV) &&
			    s->wave_of[k - 1] == before)
				continue;
			if (s->wave_maxdep[after] == VYRE_PLAN_NONE || dg > s->wave_maxdep[after])
				s->wave_maxdep[after] = dg;
		}
}

uint64_t plan_handoff(const struct vyre_planner *p, struct batch_scratch *s,
		      const struct vyre_plan_batch *b, uint32_t n,
		      const struct vyre_barrier_plan *g, const struct vyre_fusion_plan *f,
		      const uint32_t **marks)
{
	uint32_t unit_group = VYRE_PLAN_NONE, any = 0;
	uint64_t bytes = 0;

	*marks = NULL;
	if (!p->cfg.handoff_bytes || !b->exec || !b->flags || n < 2)
		return 0;
	for (uint32_t k = 0; k + 1 < n && !any; k++)
		any = link_candidate(p, s, b, k);
	if (!any)
		return 0;
	last_readers(s, b, n);
	wave_groups(s, b, g, f);
	for (uint32_t k = 0; k < n; k++)
		s->handoff[k] = 0;
	for (uint32_t k = 0; k + 1 < n; k++) {
		uint32_t slot, first, wr = s->wave_of[k + 1];
		struct item_slots sl;

		if (!link_candidate(p, s, b, k)) {
			unit_group = VYRE_PLAN_NONE;
			continue;
		}
		item_slots_resolve(&s->t->buffers, b->domain[k], &b->items[k], &sl);
		slot = sl.write;
		first = unit_group != VYRE_PLAN_NONE ? unit_group : s->wave_group[s->wave_of[k]];
		if (s->slot_read[slot] != k + 1 ||
		    (s->wave_maxdep[wr] != VYRE_PLAN_NONE && s->wave_maxdep[wr] >= first) ||
		    s->group_launch[s->wave_group[wr]] != s->group_launch[first]) {
			unit_group = VYRE_PLAN_NONE;
			continue;
		}
		s->handoff[k] |= VYRE_EXEC_HANDOFF_OUT;
		s->handoff[k + 1] |= VYRE_EXEC_HANDOFF_IN;
		bytes += b->exec[k].out_bytes;
		unit_group = first;
	}
	if (bytes)
		*marks = s->handoff;
	return bytes;
}
