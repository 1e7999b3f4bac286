/* SPDX-License-Identifier: MIT */
/*
 * The planner's one pass over a batch (plan.c runs it, then shapes the
 * plan): per item its arm, dedupe against the items before it, the
 * dependency edges of what it does not share, its wave's layer and the
 * bytes it counts against the group budget.
 *
 * Dependencies come from per-buffer state: a read depends on the buffer's
 * last writer (RAW); a write depends on every reader since that write (WAR)
 * and on the writer itself (WAW). Every conflicting pair is then ordered by
 * a path of edges, with at most six edges per item. A VYRE_SQE_FENCE item
 * also depends on every earlier item of its client (or the executed source
 * of a deduplicated one) so its completion can vouch for theirs; its stage
 * starts a new launch (the host materialization boundary of fusion) so a
 * daemon posting completions per launch posts theirs first.
 *
 * A chained item (VYRE_PLAN_F_AFTER_PREV) depends on the item before it, and
 * is never deduplicated nor a source, so a chain runs in order.
 */
#include "../gpu/ops.h"
#include "batch.h"
#include "plan_analyse.h"

/*
 * The dependency pass's state, a local copy of the scratch's arrays and
 * counts so that they stay in registers across the stores to the arrays.
 */
struct edge_pass {
	struct plan_node *nodes;
	uint32_t *dep_before;
	const uint32_t *layer;
	const uint32_t *wave_of;
	struct slot_state *slot;
	uint32_t n_nodes;
	uint32_t n_deps;
	uint32_t cur_layer; /* of the wave being analysed */
	uint32_t cur_top;   /* its top (barrier_layering) */
};

/*
 * Edge before -> the wave being analysed, whose layer it raises.
 * EDGES_PER_ITEM bounds the edges of a batch.
 */
static inline void add_edge(struct edge_pass *e, uint32_t before)
{
	const uint32_t up = e->layer[before] + 1, top = e->cur_top & ~TOP_SEVERAL;

	e->dep_before[e->n_deps++] = before;
	if (up > e->cur_layer) {
		e->cur_layer = up;
		e->cur_top = before;
	} else if (up == e->cur_layer && before != top) {
		e->cur_top = (before > top ? before : top) | TOP_SEVERAL;
	}
}

static inline void push_node(struct edge_pass *e, uint32_t *head, uint32_t wave)
{
	e->nodes[e->n_nodes] = (struct plan_node){wave, *head};
	*head = e->n_nodes++;
}

/*
 * Edges into wave @w of item @k from the hazards on its buffers; updates their state.
 *
 * A read of the buffer the item also writes (in place) or streams takes no
 * reader node: the write empties that list right after, and the walks
 * would only skip the node. So no walk meets wave @w, and the read is
 * pushed without a branch (a quarter of the high mix is in place, at
 * random).
 */
static inline void buffer_edges(struct edge_pass *e, const struct item_slots *sl, uint32_t k,
				uint32_t w)
{
	for (uint32_t i = 0; i < sl->n_reads; i++) {
		struct slot_state *r = &e->slot[sl->read[i]];
		const uint32_t keep = (sl->read[i] != sl->write) & (sl->read[i] != sl->aux);

		if (r->last_write != VYRE_PLAN_NONE)
			add_edge(e, e->wave_of[r->last_write]);
		e->nodes[e->n_nodes] = (struct plan_node){w, r->readers};
		r->readers = keep ? e->n_nodes : r->readers;
		e->n_nodes += keep;
	}
	if (sl->aux != VYRE_PLAN_NONE) {
		/* a stream is read and written: a write after every access before it */
		struct slot_state *a = &e->slot[sl->aux];

		for (uint32_t node = a->readers; node != VYRE_PLAN_NONE; node = e->nodes[node].next)
			add_edge(e, e->nodes[node].wave);
		a->readers = VYRE_PLAN_NONE;
		if (a->last_write != VYRE_PLAN_NONE)
			add_edge(e, e->wave_of[a->last_write]);
		a->last_write = k;
	}
	if (sl->write == VYRE_PLAN_NONE)
		return;
	struct slot_state *o = &e->slot[sl->write];

	for (uint32_t node = o->readers; node != VYRE_PLAN_NONE; node = e->nodes[node].next)
		add_edge(e, e->nodes[node].wave);
	o->readers = VYRE_PLAN_NONE;
	/* An in-place item already depends on the last writer through its read. */
	if (o->last_write != VYRE_PLAN_NONE && sl->read[0] != sl->write && sl->read[1] != sl->write)
		add_edge(e, e->wave_of[o->last_write]);
	o->last_write = k;
}

static void fence_edges(struct edge_pass *e, uint32_t *pending)
{
	for (uint32_t node = *pending; node != VYRE_PLAN_NONE; node = e->nodes[node].next)
		add_edge(e, e->nodes[node].wave);
	*pending = VYRE_PLAN_NONE;
}

/*
 * A chained item runs after its predecessor (or that one's source, were it
 * deduplicated against the rules); after an invalid one it is the daemon's
 * to cancel, so no edge.
 */
static void chain_edge(struct edge_pass *e, const uint32_t *dedup_from, uint32_t k)
{
	uint32_t prev = dedup_from[k - 1] != VYRE_PLAN_NONE ? dedup_from[k - 1] : k - 1;

	if (e->wave_of[prev] != VYRE_PLAN_NONE)
		add_edge(e, e->wave_of[prev]);
}

/*
 * The bytes of one read operand: a shared range when the wave does not
 * write its buffer, else the wave's own. An input that is also the table
 * counts once.
 */
static inline void read_cost(struct buffer_map *m, uint32_t slot, uint32_t write, uint64_t off,
			     uint32_t bytes, struct wave_cost *c, uint32_t i)
{
	uint32_t r;

	if (bytes == 0)
		return;
	if (slot == VYRE_PLAN_NONE || slot == write) {
		r = VYRE_PLAN_NONE;
	} else {
		/* the buffer's latest range, most often the one it is read through */
		r = m->slot[slot].share_head;
		if (r == VYRE_PLAN_NONE || m->ranges[r].off != off || m->ranges[r].bytes != bytes)
			r = buffer_share_range(m, slot, off, bytes);
	}
	if (r == VYRE_PLAN_NONE)
		c->reads += bytes;
	else if (i == 0 || c->shared[0] != r)
		c->shared[i] = r;
}

/* What wave @c of an item resolved as @x (NULL: no bytes) counts against the budget. */
static inline void wave_cost(struct buffer_map *m, const struct vyre_exec_item *x,
			     const struct item_slots *sl, uint32_t fence, struct wave_cost *c)
{
	*c = (struct wave_cost){.shared = {VYRE_PLAN_NONE, VYRE_PLAN_NONE}, .fence = fence};
	if (!x)
		return;
	c->out = x->out_bytes;
	/* a stream is the wave's own, like its output */
	if (sl->aux != VYRE_PLAN_NONE)
		c->reads += x->aux_bytes;
	read_cost(m, sl->in, sl->write, x->in_off, x->in_bytes, c, 0);
	read_cost(m, sl->table, sl->write, x->table_off, x->table_bytes, c, 1);
}

/* The arm of item @k; NONE when the plan has room for no more arms. */
static inline uint32_t arm_of_item(struct batch_scratch *s, const struct vyre_plan_batch *b,
				   uint32_t k)
{
	const uint32_t dom = b->domain[k], cl = b->client ? b->client[k] : 0;
	const uint64_t key = (uint64_t)dom << 32 | cl;
	uint32_t arm;
	int added;

	if (key == s->last_arm_key && s->last_arm != VYRE_PLAN_NONE)
		return s->last_arm;
	arm = id_map_find(&s->t->arms, key, &added);
	if (arm == VYRE_PLAN_NONE)
		return arm;
	if (added) {
		s->t->arm_domain[arm] = dom;
		s->t->arm_client[arm] = cl;
		s->t->arm_pending[arm] = VYRE_PLAN_NONE;
		s->t->arm_count[arm] = 0;
	}
	s->last_arm_key = key;
	s->last_arm = arm;
	return arm;
}

/*
 * Which items the cross-arm report must look at. Two items of one triple
 * (op, input, output) write one output buffer, or none (items of no output
 * slot), so only items whose output slot - or the class of no slot - items
 * of two arms or more use can be in a pair: out_arm (no_output_arm) turns
 * ARMS_MANY for them, and s->cross_arms says the report may have a pair.
 */
static inline void note_arm_output(struct batch_scratch *s, uint32_t k, uint32_t arm,
				   uint32_t out_slot)
{
	uint32_t *first =
	    out_slot != VYRE_PLAN_NONE ? &s->t->buffers.slot[out_slot].out_arm : &s->no_output_arm;

	s->arm_of[k] = arm;
	s->out_of[k] = out_slot;
	if (*first == VYRE_PLAN_NONE) {
		*first = arm;
	} else if (*first != arm) {
		*first = ARMS_MANY;
		s->cross_arms = 1;
	}
}

/* The slots of item @k of a ranged batch: its operands' runs (ranges.c), read as item_slots_of. */
static inline void item_runs(const uint32_t *run_of, uint32_t k, struct item_slots *sl)
{
	const uint32_t *r = &run_of[OPERANDS_PER_ITEM * (size_t)k];

	sl->in = r[0];
	sl->table = r[1];
	sl->write = r[2];
	sl->aux = r[3];
	sl->n_reads = 0;
	sl->read[0] = sl->read[1] = VYRE_PLAN_NONE;
	if (sl->in != VYRE_PLAN_NONE)
		sl->read[sl->n_reads++] = sl->in;
	if (sl->table != VYRE_PLAN_NONE && sl->table != sl->in)
		sl->read[sl->n_reads++] = sl->table;
}

/* The stream of item @k (docs/design.md 6.8), 0 when it has none. */
static inline uint32_t aux_of(const struct vyre_plan_batch *b, const uint8_t *op_mask, uint32_t k)
{
	if (!b->aux || !b->aux[k])
		return 0;
	return (plan_op_mask(op_mask, b->items[k].op_handle) & VYRE_OPERAND_AUX) ? b->aux[k] : 0;
}

int vyre_plan_analyse(struct vyre_planner *p, struct batch_scratch *s,
		      const struct vyre_plan_batch *b, uint32_t n, const int ranged,
		      struct pass_counts *c, uint32_t *shrink, struct vyre_plan_error *err)
{
	struct buffer_map *m = &s->t->buffers;
	const uint8_t *op_mask = s->t->op_mask;
	const int report = p->cfg.cross_arm_report;
	struct edge_pass e = {s->nodes, s->dep_before, s->layer, s->wave_of, m->slot, 0, 0, 0, 0};
	uint32_t n_waves = 0, n_layers = 0;
	/* by runs: each operand's run, and the ranges dedupe compares */
	const uint32_t *run_of = ranged ? s->run_of : NULL;
	const struct vyre_exec_item *xr = ranged ? b->exec : NULL;

	*c = (struct pass_counts){0};
	for (uint32_t k = 0; k < n; k++) {
		const uint32_t f = b->flags ? b->flags[k] : 0, op = b->items[k].op_handle;
		const uint32_t arm = arm_of_item(s, b, k);
		struct item_slots sl;
		uint32_t src, w;

		if (arm == VYRE_PLAN_NONE) {
			*shrink = k;
			return plan_err_capacity(err, "clients (domain, client pairs) per plan",
						 (uint64_t)s->t->arms.max_ids + 1,
						 p->cfg.max_clients);
		}
		s->dedup_from[k] = VYRE_PLAN_NONE;
		s->wave_of[k] = VYRE_PLAN_NONE;
		if (f & (VYRE_PLAN_F_INVALID | VYRE_SQE_RANGE)) {
			if (f & VYRE_PLAN_F_INVALID) {
				c->invalid++;
				continue;
			}
			/* the first item with byte ranges: the batch is analysed again by runs */
			if (!ranged && b->exec)
				return ANALYSE_RANGED;
		}
		s->t->arm_count[arm]++;
		s->transient |= (f & VYRE_PLAN_F_OUT_TRANSIENT) != 0;
		if (run_of)
			item_runs(run_of, k, &sl);
		else
			item_slots_of(m, b->domain[k], &b->items[k], plan_op_mask(op_mask, op),
				      &sl);
		if (!run_of && aux_of(b, op_mask, k))
			sl.aux = buffer_slot(m, b->domain[k], b->aux[k]);
		if (report)
			note_arm_output(s, k, arm, sl.write);
		/* an item with a stream moves it on: never deduplicated, never a source */
		src = sl.aux != VYRE_PLAN_NONE ? VYRE_PLAN_NONE
					       : dedupe_step(&s->t->dedupe, m, b->items, b->domain,
							     k, b->flags, xr, &sl);
		if (src != VYRE_PLAN_NONE && aux_of(b, op_mask, src))
			src = VYRE_PLAN_NONE;
		if (src != VYRE_PLAN_NONE) {
			s->dedup_from[k] = src;
			c->deduped++;
			push_node(&e, &s->t->arm_pending[arm], s->wave_of[src]);
			continue;
		}
		w = n_waves++;
		s->wave_item[w] = k;
		s->wave_of[k] = w;
		s->in_start[w] = e.n_deps;
		e.cur_layer = e.cur_top = 0;
		wave_cost(m, b->exec ? &b->exec[k] : NULL, &sl, (f & VYRE_SQE_FENCE) != 0,
			  &s->cost[w]);
		buffer_edges(&e, &sl, k, w);
		if (f & VYRE_SQE_FENCE)
			fence_edges(&e, &s->t->arm_pending[arm]);
		if ((f & VYRE_PLAN_F_AFTER_PREV) && k > 0)
			chain_edge(&e, s->dedup_from, k);
		push_node(&e, &s->t->arm_pending[arm], w);
		s->layer[w] = e.cur_layer;
		s->top[w] = e.cur_top;
		n_layers = e.cur_layer >= n_layers ? e.cur_layer + 1 : n_layers;
	}
	c->n_waves = n_waves;
	s->in_start[n_waves] = e.n_deps;
	s->n_deps = e.n_deps;
	s->n_nodes = e.n_nodes;
	s->n_layers = n_layers;
	if (m->full)
		return plan_err_overflow(err, VYRE_PLAN_IN_BATCH, "buffer slots");
	return 0;
}
