/* SPDX-License-Identifier: MIT */
/* The planner tests' stand-in for vyred's data and loop (test_planner_world.h). */
#include "test_planner_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/ops.h"
#include "report_ac.h"
#include "test_counted.h"

const struct batch_mix mix_heavy = {
    .dup_pct = 30,
    .in_place_pct = 25,
    .fence_pct = 5,
    .nodedupe_pct = 5,
    .invalid_pct = 5,
    .rewrite_pct = 8,
    .bytes_pct = 15,
    .bytes_run_pct = 4,
    .clients = 3,
};

/* Chains of a client's items, often through the transient buffer, some failing as they run. */
const struct batch_mix mix_chains = {
    .dup_pct = 10,
    .in_place_pct = 15,
    .fence_pct = 3,
    .nodedupe_pct = 3,
    .invalid_pct = 3,
    .rewrite_pct = 5,
    .bytes_pct = 10,
    .clients = 3,
    .chain_pct = 60,
    .transient_pct = 35,
};

/* Many items read a few tables: groups share them against the budget (docs/design.md 7.4). */
const struct batch_mix mix_tables = {
    .dup_pct = 5,
    .in_place_pct = 5,
    .fence_pct = 2,
    .nodedupe_pct = 2,
    .invalid_pct = 2,
    .rewrite_pct = 3,
    .bytes_pct = 5,
    .clients = 4,
    .table_pct = 60,
};

const struct batch_mix mix_light = {
    .dup_pct = 5,
    .in_place_pct = 5,
    .fence_pct = 1,
    .nodedupe_pct = 1,
    .invalid_pct = 1,
    .rewrite_pct = 1,
    .bytes_pct = 5,
    .bytes_run_pct = 1,
    .clients = 8,
};

#define POISON_STATUS 0x7eadbeef

static uint32_t pick(uint64_t *rng, uint32_t n)
{
	return (uint32_t)(splitmix64(rng) % n);
}

static int chance(uint64_t *rng, uint32_t pct)
{
	return pick(rng, 100) < pct;
}

uint32_t test_scale(void)
{
	const char *s = getenv("VYRE_TEST_SCALE");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v >= 1 && v <= 100000 ? (uint32_t)v : 1;
}

/* A DFA with @states states over bytes 0..3 (payload bytes are small). */
static void write_dfa(uint8_t *t, uint32_t states, uint64_t *rng)
{
	uint32_t words[2 + 1 + 256 * 3];
	uint32_t accept_words = (states + 31) / 32;

	words[0] = states;
	words[1] = pick(rng, states);
	words[2] = (uint32_t)splitmix64(rng) & ((1u << states) - 1);
	for (uint32_t s = 0; s < states; s++)
		for (uint32_t c = 0; c < 256; c++)
			words[2 + accept_words + s * 256 + c] = pick(rng, states);
	memcpy(t, words, vyre_dfa_table_bytes(states));
}

void world_init(struct world *w, uint64_t seed)
{
	uint64_t rng = seed ^ 0x776f726c64ull;
	uint32_t states[3];
	uint64_t off = 0;

	memset(w, 0, sizeof(*w));
	w->domain_id[0] = 10;
	w->domain_id[1] = 20;
	w->n_plain = 3 + pick(&rng, 4);
	w->n_buffers = w->n_plain + 4;
	for (uint32_t t = 0; t < 3; t++)
		states[t] = 2 + pick(&rng, 2);
	/* Both domains share one layout: handles alias across domains, contents do not. */
	for (uint32_t h = 1; h <= w->n_buffers; h++) {
		uint32_t bytes = h <= w->n_plain ? 4 * (1 + pick(&rng, 12))
				 : h == w->n_buffers
				     ? 256
				     : (uint32_t)vyre_dfa_table_bytes(states[h - w->n_plain - 1]);

		for (uint32_t d = 0; d < WORLD_DOMAINS; d++)
			w->buf[d][h] = (struct world_buffer){.off = off, .bytes = bytes};
		off += (bytes + 63) & ~63u;
	}
	/* the transient buffer comes last, from a draw of its own: the rest is as it always was */
	uint64_t trng = seed ^ 0x7472616e73ull;
	uint32_t tbytes = 4 * (1 + pick(&trng, 3));

	w->transient = w->n_buffers + 1;
	for (uint32_t d = 0; d < WORLD_DOMAINS; d++)
		w->buf[d][w->transient] = (struct world_buffer){.off = off, .bytes = tbytes};
	off += 64;
	/*
	 * DFA_REPORT's buffers (docs/design.md 6.8) after it, from a draw of their
	 * own: a table with a report section over the payload bytes 0..3, two
	 * streams (zero: new) and a report of eight records.
	 */
	uint64_t rrng = seed ^ 0x7265706f7274ull;
	uint8_t pat[4][3];
	struct ac_pat pats[4];
	uint32_t rt_bytes = 0;

	for (uint32_t i = 0; i < 4; i++) {
		const uint32_t len = 1 + pick(&rrng, 3);

		for (uint32_t j = 0; j < len; j++)
			pat[i][j] = (uint8_t)pick(&rrng, 4);
		pats[i] = (struct ac_pat){pat[i], len, pick(&rrng, 3)};
	}
	uint8_t *rt = ac_build(pats, 4, &rt_bytes);

	if (!rt)
		abort();
	w->report_table = w->transient + 1;
	w->stream[0] = w->transient + 2;
	w->stream[1] = w->transient + 3;
	w->report_out = w->transient + 4;
	const uint32_t rbytes[4] = {rt_bytes, 16, 16, 16 + 24 * 8};

	for (uint32_t i = 0; i < 4; i++) {
		for (uint32_t d = 0; d < WORLD_DOMAINS; d++)
			w->buf[d][w->report_table + i] = (struct world_buffer){off, rbytes[i]};
		off += (rbytes[i] + 63) & ~63u;
	}
	w->heap_bytes = off;
	for (uint32_t d = 0; d < WORLD_DOMAINS; d++) {
		w->heap[d] = calloc(1, off);
		w->oracle[d] = calloc(1, off);
		w->run[d] = calloc(1, off);
		if (!w->heap[d] || !w->oracle[d] || !w->run[d])
			abort();
		for (uint32_t h = 1; h <= w->n_plain; h++) {
			uint8_t *p = w->heap[d] + w->buf[d][h].off;

			for (uint32_t i = 0; i < w->buf[d][h].bytes; i++)
				p[i] = (uint8_t)pick(&rng, 4);
			if (chance(&rng, 50))
				test_counted_fill(p, w->buf[d][h].bytes, splitmix64(&rng));
		}
		/* the byte map: case folding, or a random one */
		uint8_t *map = w->heap[d] + w->buf[d][w->n_buffers].off;
		const int fold = chance(&rng, 50);
		for (uint32_t c = 0; c < 256; c++)
			map[c] = fold ? (uint8_t)(c >= 'A' && c <= 'Z' ? c + 32 : c)
				      : (uint8_t)splitmix64(&rng);
		for (uint32_t t = 0; t < 3; t++)
			write_dfa(w->heap[d] + w->buf[d][w->n_plain + 1 + t].off, states[t], &rng);
		for (uint32_t i = 0; i < tbytes; i++)
			w->heap[d][w->buf[d][w->transient].off + i] = (uint8_t)pick(&trng, 4);
		memcpy(w->heap[d] + w->buf[d][w->report_table].off, rt, rt_bytes);
	}
	free(rt);
}

void world_fini(struct world *w)
{
	for (uint32_t d = 0; d < WORLD_DOMAINS; d++) {
		free(w->heap[d]);
		free(w->oracle[d]);
		free(w->run[d]);
	}
	memset(w, 0, sizeof(*w));
}

int batch_alloc(struct batch *b, uint32_t max_items)
{
	memset(b, 0, sizeof(*b));
	b->items = calloc(max_items, sizeof(*b->items));
	b->exec = calloc(max_items, sizeof(*b->exec));
	b->domain = calloc(max_items, sizeof(*b->domain));
	b->client = calloc(max_items, sizeof(*b->client));
	b->flags = calloc(max_items, sizeof(*b->flags));
	b->aux = calloc(max_items, sizeof(*b->aux));
	b->results = calloc(max_items, sizeof(*b->results));
	b->expect = calloc(max_items, sizeof(*b->expect));
	if (!b->items || !b->exec || !b->domain || !b->client || !b->flags || !b->aux ||
	    !b->results || !b->expect) {
		batch_free(b);
		return -1;
	}
	return 0;
}

void batch_free(struct batch *b)
{
	free(b->items);
	free(b->exec);
	free(b->domain);
	free(b->client);
	free(b->flags);
	free(b->aux);
	free(b->results);
	free(b->expect);
	memset(b, 0, sizeof(*b));
}

static uint32_t plain(const struct world *w, uint64_t *rng)
{
	return 1 + pick(rng, w->n_plain);
}

static uint32_t table(const struct world *w, uint64_t *rng)
{
	return w->n_plain + 1 + pick(rng, 2);
}

static uint32_t byte_map(const struct world *w)
{
	return w->n_buffers;
}

/* A byte op: mostly on plain buffers, with the map or a DFA table as table. */
static struct vyre_work_item byte_item(const struct world *w, uint64_t *rng,
				       const struct batch_mix *mix)
{
	static const uint32_t ops[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE, VYRE_OP_BYTEMAP,
				       VYRE_OP_DFA_SCAN_COUNTED};
	struct vyre_work_item it = {ops[pick(rng, 4)], plain(w, rng), 0, 0};

	if (chance(rng, 5))
		it.input_handle = chance(rng, 50) ? byte_map(w) : table(w, rng);
	it.output_handle = chance(rng, mix->in_place_pct) ? it.input_handle
			   : chance(rng, 4)		  ? byte_map(w)
							  : plain(w, rng);
	if (it.op_handle == VYRE_OP_BYTEMAP)
		it.param = chance(rng, 80)   ? byte_map(w)
			   : chance(rng, 50) ? table(w, rng)
					     : plain(w, rng);
	else if (it.op_handle == VYRE_OP_DFA_SCAN_COUNTED)
		it.param = chance(rng, 90) ? table(w, rng) : plain(w, rng);
	return it;
}

/* decode -> map -> counted scan over plain buffers (some of them the same one). */
static void byte_chain(const struct world *w, uint64_t *rng, struct vyre_work_item *chain)
{
	const uint32_t a = plain(w, rng), b = plain(w, rng), c = plain(w, rng);

	chain[0] = (struct vyre_work_item){
	    chance(rng, 70) ? VYRE_OP_BASE64_DECODE : VYRE_OP_HEX_DECODE, a, b, 0};
	chain[1] =
	    (struct vyre_work_item){VYRE_OP_BYTEMAP, b, chance(rng, 30) ? b : c, byte_map(w)};
	chain[2] = (struct vyre_work_item){VYRE_OP_DFA_SCAN_COUNTED, chain[1].output_handle,
					   plain(w, rng), table(w, rng)};
}

static struct vyre_work_item random_item(const struct world *w, uint64_t *rng,
					 const struct batch_mix *mix)
{
	struct vyre_work_item it = {0};
	uint32_t roll = pick(rng, 100);

	it.param = (uint32_t)splitmix64(rng) % 7;
	if (chance(rng, mix->rewrite_pct)) {
		/* Rewrite a DFA table: replace it, garble it, or rewrite it unchanged. */
		uint32_t t = table(w, rng), how = pick(rng, 3);

		if (how == 0)
			return (struct vyre_work_item){VYRE_OP_COPY, w->n_plain + 3, t, 0};
		if (how == 1)
			return (struct vyre_work_item){VYRE_OP_FILL, 0, t, it.param};
		return (struct vyre_work_item){VYRE_OP_XOR, t, t, 0};
	}
	if (chance(rng, mix->bytes_pct))
		return byte_item(w, rng, mix);
	if (roll < 4) {
		it.param = 0;
		return it; /* NOP */
	}
	if (roll < 18) {
		it.op_handle = VYRE_OP_FILL;
		it.output_handle = plain(w, rng);
		return it;
	}
	it.op_handle = roll < 32   ? VYRE_OP_COPY
		       : roll < 42 ? VYRE_OP_ADD
		       : roll < 48 ? VYRE_OP_XOR
		       : roll < 52 ? VYRE_OP_MUL
		       : roll < 62 ? VYRE_OP_SUM
		       : roll < 70 ? VYRE_OP_MAX
				   : VYRE_OP_DFA_SCAN;
	it.input_handle = chance(rng, 10) ? table(w, rng) : plain(w, rng);
	it.output_handle = chance(rng, mix->in_place_pct) ? it.input_handle : plain(w, rng);
	if (it.op_handle == VYRE_OP_DFA_SCAN)
		it.param = chance(rng, 5) ? plain(w, rng) : table(w, rng);
	return it;
}

/* A read of a DFA table or the byte map, between plain buffers (in place now and then). */
static struct vyre_work_item table_item(const struct world *w, uint64_t *rng,
					const struct batch_mix *mix)
{
	static const uint32_t ops[] = {VYRE_OP_DFA_SCAN, VYRE_OP_DFA_SCAN_COUNTED, VYRE_OP_BYTEMAP};
	const uint32_t op = ops[pick(rng, 3)], in = plain(w, rng);

	return (struct vyre_work_item){op, in, chance(rng, mix->in_place_pct) ? in : plain(w, rng),
				       op == VYRE_OP_BYTEMAP ? byte_map(w) : table(w, rng)};
}

static struct vyre_work_item invalid_item(const struct world *w, uint64_t *rng)
{
	switch (pick(rng, 6)) {
	case 0:
		return (struct vyre_work_item){42, 1, 2, 0};
	case 5:
		return (struct vyre_work_item){VYRE_OP_BYTEMAP, 1, 2, 0}; /* no table */
	case 1:
		return (struct vyre_work_item){VYRE_OP_NOP, 1, 0, 0};
	case 2:
		return (struct vyre_work_item){VYRE_OP_SUM, 1, w->n_buffers + 5, 0};
	case 3:
		return (struct vyre_work_item){VYRE_OP_FILL, 2, 1, 7};
	default:
		return (struct vyre_work_item){VYRE_OP_DFA_SCAN, 1, 2, 0};
	}
}

static int handle_ok(const struct world *w, uint32_t h)
{
	return (h >= 1 && h <= w->n_buffers) || (h >= w->transient && h <= w->report_out);
}

/*
 * A DFA_REPORT item (docs/design.md 6.8) or an item on a stream: mostly
 * reports through the report table into the report buffer, continuing one
 * of two streams; now and then a stream reset (FILL 0) or garbled (FILL
 * non-zero), a stream read, a report into a plain buffer (small: overflow,
 * or under 16 bytes: invalid) or over its own input, a table without a
 * report section, a stream that is the input.
 */
static struct vyre_work_item report_item(const struct world *w, uint64_t *rng, uint32_t *aux)
{
	const uint32_t roll = pick(rng, 100), s = w->stream[pick(rng, 2)];

	*aux = 0;
	if (roll < 6)
		return (struct vyre_work_item){VYRE_OP_FILL, 0, s, roll < 5 ? 0 : 1};
	if (roll < 10)
		return (struct vyre_work_item){VYRE_OP_COPY, s, plain(w, rng), 0};
	struct vyre_work_item it = {chance(rng, 50) ? VYRE_OP_DFA_REPORT
						    : VYRE_OP_DFA_REPORT_COUNTED,
				    plain(w, rng), w->report_out, w->report_table};

	if (chance(rng, 20))
		it.output_handle = chance(rng, 80) ? plain(w, rng) : it.input_handle;
	if (chance(rng, 5))
		it.param = table(w, rng);
	if (chance(rng, 75))
		*aux = chance(rng, 3) ? it.input_handle : s;
	return it;
}

/* A plain buffer at least @bytes long, or 0 when there is none. */
static uint32_t plain_of_at_least(const struct world *w, uint64_t *rng, uint32_t bytes)
{
	uint32_t start = pick(rng, w->n_plain);

	for (uint32_t i = 0; i < w->n_plain; i++) {
		uint32_t h = 1 + (start + i) % w->n_plain;

		if (w->buf[0][h].bytes >= bytes)
			return h;
	}
	return 0;
}

/*
 * An item on the transient buffer T: a write of all of it (before it is
 * read, a chain writes T whole, so no read ever sees bytes the contract
 * leaves undefined), a read of it, or T as a DFA table (refused).
 */
static struct vyre_work_item transient_item(const struct world *w, uint64_t *rng, int written)
{
	const uint32_t t = w->transient, tb = w->buf[0][t].bytes;
	const uint32_t roll = pick(rng, 100), param = (uint32_t)splitmix64(rng) % 7;

	if (roll < 3)
		return (struct vyre_work_item){VYRE_OP_DFA_SCAN, plain(w, rng), plain(w, rng), t};
	if (roll < 45 || (!written && roll < 85)) {
		uint32_t in = plain_of_at_least(w, rng, tb);
		uint32_t op = VYRE_OP_COPY + pick(rng, 4); /* COPY, ADD, XOR, MUL */

		if (tb == 4 && pick(rng, 3) == 0)
			return pick(rng, 2)
				   ? (struct vyre_work_item){VYRE_OP_SUM, plain(w, rng), t, 0}
				   : (struct vyre_work_item){VYRE_OP_DFA_SCAN, plain(w, rng), t,
							     table(w, rng)};
		if (!in || pick(rng, 4) == 0)
			return (struct vyre_work_item){VYRE_OP_FILL, 0, t, param};
		return (struct vyre_work_item){op, in, t, param};
	}
	const uint32_t ops[] = {VYRE_OP_COPY, VYRE_OP_ADD, VYRE_OP_XOR,	    VYRE_OP_MUL,
				VYRE_OP_SUM,  VYRE_OP_MAX, VYRE_OP_DFA_SCAN};
	struct vyre_work_item it = {ops[pick(rng, 7)], t, plain(w, rng), param};

	if (it.op_handle == VYRE_OP_DFA_SCAN)
		it.param = table(w, rng);
	return it;
}

/* The oracle runs an unknown op in place of an invalid item: VYRE_E_INVAL, no effect. */
static void make_invalid(struct vyre_exec_item *x, uint32_t d, uint32_t *flags)
{
	*x = (struct vyre_exec_item){.op = 42, .in_heap = d, .out_heap = d, .table_heap = d};
	*flags |= VYRE_PLAN_F_INVALID;
}

/* What vyred does: check statically, resolve handles, or mark invalid. */
static void resolve(const struct world *w, uint32_t d, const struct vyre_work_item *it,
		    uint32_t aux, struct vyre_exec_item *x, uint32_t *flags)
{
	int mask = vyre_op_operands(it->op_handle);
	uint32_t in_bytes = 0, out_bytes = 0;

	*x = (struct vyre_exec_item){
	    .op = it->op_handle, .param = it->param, .in_heap = d, .out_heap = d, .table_heap = d};
	if (mask < 0 || ((mask & VYRE_OPERAND_IN) && !handle_ok(w, it->input_handle)) ||
	    ((mask & VYRE_OPERAND_OUT) && !handle_ok(w, it->output_handle)) ||
	    ((mask & VYRE_OPERAND_TABLE) && !handle_ok(w, it->param)))
		goto invalid;
	if (mask & VYRE_OPERAND_IN)
		in_bytes = w->buf[d][it->input_handle].bytes;
	if (mask & VYRE_OPERAND_OUT)
		out_bytes = w->buf[d][it->output_handle].bytes;
	if (vyre_op_check_lengths(it->op_handle, it, in_bytes, out_bytes))
		goto invalid;
	if (mask & VYRE_OPERAND_IN) {
		x->in_off = w->buf[d][it->input_handle].off;
		x->in_bytes = in_bytes;
	}
	if (mask & VYRE_OPERAND_OUT) {
		x->out_off = w->buf[d][it->output_handle].off;
		x->out_bytes = out_bytes;
	}
	if (mask & VYRE_OPERAND_TABLE) {
		x->table_off = w->buf[d][it->param].off;
		x->table_bytes = w->buf[d][it->param].bytes;
		x->param = 0;
	}
	/* vyre_resolve_aux: a stream is none of the other operands */
	if ((mask & VYRE_OPERAND_AUX) && aux) {
		if (!handle_ok(w, aux) || aux == it->input_handle || aux == it->output_handle ||
		    aux == it->param || w->buf[d][aux].bytes < 16)
			goto invalid;
		x->aux_heap = d;
		x->aux_off = w->buf[d][aux].off;
		x->aux_bytes = w->buf[d][aux].bytes;
	}
	return;
invalid:
	make_invalid(x, d, flags);
}

/*
 * vyred's transient rules (tools/vyred/transient.c) for a resolved item:
 * T read as input only after a write of the chain (*written), never as a
 * table.
 */
static void transient_rules(const struct world *w, uint32_t d, const struct vyre_work_item *it,
			    struct vyre_exec_item *x, uint32_t *flags, int *written)
{
	const int mask = vyre_op_operands(it->op_handle);
	const uint32_t t = w->transient;

	if ((*flags & VYRE_PLAN_F_INVALID) || mask <= 0)
		return;
	if (((mask & VYRE_OPERAND_TABLE) && it->param == t) ||
	    ((mask & VYRE_OPERAND_IN) && it->input_handle == t && !*written)) {
		make_invalid(x, d, flags);
		return;
	}
	if ((mask & VYRE_OPERAND_OUT) && it->output_handle == t) {
		*written = 1;
		*flags |= VYRE_PLAN_F_OUT_TRANSIENT;
	}
}

/*
 * A byte range of a buffer of @bytes (docs/design.md 6.6), on a coarse grid
 * of quarters so that the ranges of a batch overlap, abut and miss each
 * other: now and then empty, the whole buffer, or off its end.
 */
static void pick_range(uint32_t bytes, uint64_t *rng, uint64_t *off, uint32_t *len)
{
	const uint32_t words = bytes / 4, roll = pick(rng, 100);
	uint32_t first = words * pick(rng, 4) / 4, n;

	if (roll < 10) {
		*off = 0;
		*len = bytes;
		return;
	}
	if (roll < 13) { /* past the end: invalid */
		*off = 4 * (uint64_t)first;
		*len = bytes - 4 * first + 4;
		return;
	}
	n = roll < 18 ? 0 : 1 + pick(rng, words - first > 0 ? words - first : 1);
	*off = 4 * (uint64_t)first;
	*len = first + n <= words ? 4 * n : 4 * (words - first);
}

/*
 * Narrow a resolved item to byte ranges as vyred does (ring/resolve.c),
 * or mark it invalid where vyred would refuse them. Items on the transient
 * buffer keep it whole (a chain writes it whole before it reads it).
 */
static void narrow(const struct world *w, uint32_t d, const struct vyre_work_item *it,
		   struct vyre_exec_item *x, uint32_t *flags, uint64_t *rng)
{
	const int mask = vyre_op_operands(it->op_handle);
	const int in = mask > 0 && (mask & VYRE_OPERAND_IN),
		  out = mask > 0 && (mask & VYRE_OPERAND_OUT);
	uint64_t io = 0, oo = 0;
	uint32_t il = 0, ol = 0;

	if ((*flags & VYRE_PLAN_F_INVALID) || mask <= 0 ||
	    (in && it->input_handle == w->transient) || (out && it->output_handle == w->transient))
		return;
	*flags |= VYRE_SQE_RANGE;
	if (in)
		pick_range(w->buf[d][it->input_handle].bytes, rng, &io, &il);
	if (out)
		pick_range(w->buf[d][it->output_handle].bytes, rng, &oo, &ol);
	const int same = in && out && it->input_handle == it->output_handle;

	if (same && chance(rng, 50)) {
		oo = io;
		ol = il;
	}
	const int apart = il == 0 || ol == 0 || io + il <= oo || oo + ol <= io;

	if ((in && (io + il > x->in_bytes)) || (out && (oo + ol > x->out_bytes)) ||
	    (same && !(io == oo && il == ol) && !apart) ||
	    vyre_op_check_lengths(it->op_handle, it, il, ol)) {
		make_invalid(x, d, flags);
		return;
	}
	if (in) {
		x->in_off += io;
		x->in_bytes = il;
	}
	if (out) {
		x->out_off += oo;
		x->out_bytes = ol;
	}
}

/*
 * Item @k continues the chain of item k - 1 (same client): it runs after it
 * and is cancelled when it fails; after a static failure of the chain vyred
 * cancels it without planning it (the oracle's VYRE_EXEC_AFTER_PREV gives
 * the same VYRE_E_CANCELED).
 */
static void link_chain(struct batch *b, uint32_t k, uint32_t d, int failed)
{
	b->flags[k - 1] |= VYRE_PLAN_F_CHAIN;
	b->flags[k] |= VYRE_PLAN_F_CHAIN | VYRE_PLAN_F_AFTER_PREV;
	if (failed)
		make_invalid(&b->exec[k], d, &b->flags[k]);
	b->exec[k].flags |= VYRE_EXEC_AFTER_PREV;
	b->exec[k].prev = k - 1;
}

void batch_generate(struct batch *b, const struct world *w, uint64_t seed, uint32_t n,
		    const struct batch_mix *mix)
{
	uint64_t rng = seed;
	struct vyre_work_item chain[3];
	uint32_t chain_left = 0, chain_d = 0;
	int written = 0,
	    failed = 0; /* the current chain wrote T; an item of it failed statically */

	b->n = n;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t d = pick(&rng, WORLD_DOMAINS), aux = 0;
		/* no draw without chains: the other mixes' batches stay as they were */
		const int link = k > 0 && mix->chain_pct && chance(&rng, mix->chain_pct);

		if (link)
			d = b->domain[k - 1] == w->domain_id[0] ? 0 : 1;
		else
			written = failed = 0;
		if (chain_left) {
			b->items[k] = chain[3 - chain_left--];
			d = chain_d;
		} else if (chance(&rng, mix->bytes_run_pct)) {
			byte_chain(w, &rng, chain);
			b->items[k] = chain[0];
			chain_left = 2;
			chain_d = d;
		} else if (mix->report_pct && chance(&rng, mix->report_pct)) {
			b->items[k] = report_item(w, &rng, &aux);
		} else if (mix->transient_pct && chance(&rng, mix->transient_pct)) {
			b->items[k] = transient_item(w, &rng, written);
		} else if (mix->table_pct && chance(&rng, mix->table_pct)) {
			b->items[k] = table_item(w, &rng, mix);
		} else if (k > 0 && !link && chance(&rng, mix->dup_pct)) {
			uint32_t j = pick(&rng, k);

			b->items[k] = b->items[j];
			aux = b->aux[j];
			d = b->domain[j] == w->domain_id[0] ? 0 : 1;
		} else if (chance(&rng, mix->invalid_pct)) {
			b->items[k] = invalid_item(w, &rng);
		} else {
			b->items[k] = random_item(w, &rng, mix);
		}
		b->domain[k] = w->domain_id[d];
		b->client[k] = link ? b->client[k - 1] : 100 * d + pick(&rng, mix->clients);
		b->flags[k] = 0;
		if (chance(&rng, mix->fence_pct))
			b->flags[k] |= VYRE_SQE_FENCE;
		if (chance(&rng, mix->nodedupe_pct))
			b->flags[k] |= VYRE_SQE_NODEDUPE;
		b->aux[k] = aux;
		resolve(w, d, &b->items[k], aux, &b->exec[k], &b->flags[k]);
		if (!failed)
			transient_rules(w, d, &b->items[k], &b->exec[k], &b->flags[k], &written);
		/* no draw without ranges: the other mixes' batches stay as they were */
		if (!failed && mix->range_pct && chance(&rng, mix->range_pct))
			narrow(w, d, &b->items[k], &b->exec[k], &b->flags[k], &rng);
		if (link)
			link_chain(b, k, d, failed);
		failed |= (b->flags[k] & VYRE_PLAN_F_INVALID) != 0;
	}
}

static void reset_heaps(struct world *w, uint8_t **dst)
{
	for (uint32_t d = 0; d < WORLD_DOMAINS; d++)
		memcpy(dst[d], w->heap[d], w->heap_bytes);
}

void world_run_oracle(struct world *w, struct batch *b)
{
	struct vyre_heap_view views[WORLD_DOMAINS];

	reset_heaps(w, w->oracle);
	for (uint32_t d = 0; d < WORLD_DOMAINS; d++)
		views[d] = (struct vyre_heap_view){w->oracle[d], w->heap_bytes};
	vyre_exec_sequential(views, b->exec, b->n, b->expect);
}

/* ------------------------------------------------------------ plan checks */

struct access {
	uint32_t read[2], n_reads;
	uint32_t write[2]; /* the output and a stream (read and written): keys, or 0 */
};

static uint32_t key_of(const struct vyre_plan_batch *pb, uint32_t k, uint32_t handle)
{
	return handle ? (pb->domain[k] == 10 ? 0 : 64) + (handle & 63) : 0;
}

static void access_of(const struct vyre_plan_batch *pb, uint32_t k, struct access *a)
{
	struct vyre_op_access acc;

	vyre_op_access_aux(&pb->items[k], pb->aux ? pb->aux[k] : 0, &acc);
	a->n_reads = 0;
	for (uint32_t i = 0; i < acc.n_reads; i++)
		if (acc.reads[i])
			a->read[a->n_reads++] = key_of(pb, k, acc.reads[i]);
	a->write[0] = key_of(pb, k, acc.write);
	a->write[1] = key_of(pb, k, acc.aux);
}

#define KEYS 128u

struct order_check {
	uint32_t last_writer_group[KEYS];
	int32_t max_reader_group[KEYS]; /* since the last write; -1 when none */
};

/* [off, off + bytes) of one buffer: what a ranged batch's hazard check compares. */
struct touch {
	uint32_t key;
	uint32_t group;
	uint64_t off;
	uint32_t bytes;
	int write;
};

/* The buffer keys and exec ranges item @k reads and writes (the table whole). */
static uint32_t touches_of(const struct vyre_plan_batch *pb, uint32_t k, uint32_t g,
			   struct touch *t)
{
	const struct vyre_work_item *it = &pb->items[k];
	const struct vyre_exec_item *x = &pb->exec[k];
	const int mask = vyre_op_operands(it->op_handle);
	uint32_t n = 0;

	if (mask <= 0)
		return 0;
	if ((mask & VYRE_OPERAND_IN) && it->input_handle)
		t[n++] =
		    (struct touch){key_of(pb, k, it->input_handle), g, x->in_off, x->in_bytes, 0};
	if ((mask & VYRE_OPERAND_TABLE) && it->param)
		t[n++] =
		    (struct touch){key_of(pb, k, it->param), g, x->table_off, x->table_bytes, 0};
	if ((mask & VYRE_OPERAND_OUT) && it->output_handle)
		t[n++] = (struct touch){key_of(pb, k, it->output_handle), g, x->out_off,
					x->out_bytes, 1};
	if ((mask & VYRE_OPERAND_AUX) && pb->aux && pb->aux[k])
		t[n++] = (struct touch){key_of(pb, k, pb->aux[k]), g, x->aux_off, x->aux_bytes, 1};
	return n;
}

/*
 * check_hazards for a batch with byte ranges (docs/design.md 7.2): only
 * ranges that share a byte conflict, so every earlier access is compared.
 */
static int check_range_hazards(const struct vyre_plan_batch *pb, const struct vyre_plan *plan,
			       const uint32_t *group_of, const char *what)
{
	static struct touch seen[4 * WORLD_MAX_ITEMS];
	uint32_t n_seen = 0;

	for (uint32_t k = 0; k < plan->accepted; k++) {
		struct touch t[4];
		const uint32_t g = group_of[k];

		if (g == UINT32_MAX)
			continue;
		const uint32_t n = touches_of(pb, k, g, t);

		for (uint32_t i = 0; i < n; i++)
			for (uint32_t j = 0; j < n_seen; j++) {
				const struct touch *e = &seen[j];

				if (e->key != t[i].key || !(e->write || t[i].write) ||
				    e->bytes == 0 || t[i].bytes == 0 ||
				    e->off + e->bytes <= t[i].off ||
				    t[i].off + t[i].bytes <= e->off)
					continue;
				if (e->group >= g) {
					printf(
					    "%s: item %u (group %u) %s bytes [%llu, +%u) that an "
					    "earlier item %s in group %u\n",
					    what, k, g, t[i].write ? "writes" : "reads",
					    (unsigned long long)t[i].off, t[i].bytes,
					    e->write ? "writes" : "reads", e->group);
					return -1;
				}
			}
		for (uint32_t i = 0; i < n; i++)
			seen[n_seen++] = t[i];
	}
	return 0;
}

static int check_hazards(const struct vyre_plan_batch *pb, const struct vyre_plan *plan,
			 const uint32_t *group_of, const char *what)
{
	static struct order_check c;

	for (uint32_t k = 0; k < plan->accepted; k++)
		if (pb->flags[k] & VYRE_SQE_RANGE)
			return check_range_hazards(pb, plan, group_of, what);

	for (uint32_t i = 0; i < KEYS; i++) {
		c.last_writer_group[i] = UINT32_MAX;
		c.max_reader_group[i] = -1;
	}
	for (uint32_t k = 0; k < plan->accepted; k++) {
		struct access a;
		uint32_t g = group_of[k];

		if (g == UINT32_MAX)
			continue;
		access_of(pb, k, &a);
		for (uint32_t i = 0; i < a.n_reads; i++) {
			uint32_t lw = c.last_writer_group[a.read[i]];

			if (lw != UINT32_MAX && lw >= g) {
				printf("%s: item %u reads a buffer written in group %u but runs in "
				       "group %u\n",
				       what, k, lw, g);
				return -1;
			}
		}
		for (uint32_t wi = 0; wi < 2; wi++) {
			if (!a.write[wi])
				continue;
			uint32_t lw = c.last_writer_group[a.write[wi]];
			int32_t mr = c.max_reader_group[a.write[wi]];

			if (lw != UINT32_MAX && lw >= g) {
				printf("%s: item %u (group %u) rewrites a buffer written in group "
				       "%u\n",
				       what, k, g, lw);
				return -1;
			}
			if (mr >= (int32_t)g) {
				printf("%s: item %u (group %u) overwrites a buffer read in group "
				       "%d\n",
				       what, k, g, mr);
				return -1;
			}
		}
		for (uint32_t i = 0; i < a.n_reads; i++)
			if ((int32_t)g > c.max_reader_group[a.read[i]])
				c.max_reader_group[a.read[i]] = (int32_t)g;
		for (uint32_t wi = 0; wi < 2; wi++)
			if (a.write[wi]) {
				c.last_writer_group[a.write[wi]] = g;
				c.max_reader_group[a.write[wi]] = -1;
			}
	}
	return 0;
}

static int is_launch_start(const struct vyre_plan *plan, uint32_t g)
{
	if (g == 0)
		return 1;
	for (uint32_t l = 0; l < plan->exec.n_launches; l++)
		if (plan->exec.launch_end[l] == g)
			return 1;
	return 0;
}

/* Clients of the world are below 256 and name their domain (100 * domain + n). */
#define CLIENTS 256u

static int check_fences(const struct vyre_plan_batch *pb, const struct vyre_plan *plan,
			const uint32_t *group_of, const char *what)
{
	/* Latest group (+1) holding an earlier item of each client, or its source. */
	uint32_t seen[CLIENTS] = {0};

	for (uint32_t k = 0; k < plan->accepted; k++) {
		uint32_t src = plan->dedup_from[k] != VYRE_PLAN_NONE ? plan->dedup_from[k] : k;
		uint32_t c = pb->client[k] % CLIENTS;

		if ((pb->flags[k] & VYRE_SQE_FENCE) && group_of[k] != UINT32_MAX) {
			if (!is_launch_start(plan, group_of[k])) {
				printf("%s: fence item %u does not start a launch\n", what, k);
				return -1;
			}
			if (seen[c] > group_of[k]) {
				printf(
				    "%s: fence item %u (group %u) not after an earlier item of its "
				    "client (group %u)\n",
				    what, k, group_of[k], seen[c] - 1);
				return -1;
			}
		}
		if (group_of[src] != UINT32_MAX && group_of[src] + 1 > seen[c])
			seen[c] = group_of[src] + 1;
	}
	return 0;
}

static int check_dedupe(const struct vyre_plan_batch *pb, const struct vyre_plan *plan,
			const uint32_t *group_of, const char *what)
{
	for (uint32_t k = 0; k < plan->accepted; k++) {
		uint32_t src = plan->dedup_from[k];

		if (src == VYRE_PLAN_NONE)
			continue;
		if (src >= k || group_of[src] == UINT32_MAX ||
		    (pb->flags[k] & VYRE_PLAN_F_INVALID) ||
		    ((pb->flags[k] | pb->flags[src]) & VYRE_PLAN_F_CHAIN) ||
		    (pb->flags[k] & (VYRE_SQE_FENCE | VYRE_SQE_NODEDUPE)) ||
		    memcmp(&pb->items[k], &pb->items[src], sizeof(pb->items[k])) != 0 ||
		    pb->exec[k].in_off != pb->exec[src].in_off ||
		    pb->exec[k].in_bytes != pb->exec[src].in_bytes ||
		    pb->exec[k].out_off != pb->exec[src].out_off ||
		    pb->exec[k].out_bytes != pb->exec[src].out_bytes ||
		    pb->domain[k] != pb->domain[src] ||
		    !vyre_op_idempotent_aux(&pb->items[k], pb->aux ? pb->aux[k] : 0) ||
		    !vyre_op_idempotent_aux(&pb->items[src], pb->aux ? pb->aux[src] : 0)) {
			printf("%s: item %u may not be deduplicated from item %u\n", what, k, src);
			return -1;
		}
	}
	return 0;
}

static int check_shape(const struct vyre_plan_batch *pb, const struct vyre_plan *plan,
		       uint32_t *group_of, const char *what)
{
	const struct vyre_exec_plan *x = &plan->exec;
	uint32_t start = 0, executed = 0;

	if (plan->accepted == 0 || plan->accepted > pb->n) {
		printf("%s: accepted %u of %u\n", what, plan->accepted, pb->n);
		return -1;
	}
	for (uint32_t k = 0; k < plan->accepted; k++) {
		group_of[k] = UINT32_MAX;
		executed +=
		    !(pb->flags[k] & VYRE_PLAN_F_INVALID) && plan->dedup_from[k] == VYRE_PLAN_NONE;
	}
	if (x->n_order != executed) {
		printf("%s: %u items ordered, %u must run\n", what, x->n_order, executed);
		return -1;
	}
	for (uint32_t g = 0; g < x->n_groups; g++) {
		if (x->group_end[g] <= start || x->group_end[g] > x->n_order) {
			printf("%s: group %u is empty or out of range\n", what, g);
			return -1;
		}
		for (uint32_t pos = start; pos < x->group_end[g]; pos++) {
			uint32_t k = x->order[pos];

			if (k >= plan->accepted || group_of[k] != UINT32_MAX ||
			    (pb->flags[k] & VYRE_PLAN_F_INVALID) ||
			    plan->dedup_from[k] != VYRE_PLAN_NONE) {
				printf("%s: order[%u] = %u may not run\n", what, pos, k);
				return -1;
			}
			group_of[k] = g;
		}
		start = x->group_end[g];
	}
	if (start != x->n_order || (x->n_groups && !x->n_launches) ||
	    (x->n_launches && x->launch_end[x->n_launches - 1] != x->n_groups)) {
		printf("%s: groups or launches do not cover the plan\n", what);
		return -1;
	}
	for (uint32_t l = 1; l < x->n_launches; l++)
		if (x->launch_end[l] <= x->launch_end[l - 1]) {
			printf("%s: launch %u is empty\n", what, l);
			return -1;
		}
	if (plan->stats.executed != executed || plan->stats.groups != x->n_groups ||
	    plan->stats.launches != x->n_launches ||
	    plan->stats.launches_avoided != x->n_groups - x->n_launches ||
	    plan->stats.accepted != plan->accepted ||
	    plan->stats.barriers != (x->n_groups ? x->n_groups - 1 : 0)) {
		printf("%s: plan figures disagree with the plan\n", what);
		return -1;
	}
	return 0;
}

/* A chained item runs after its predecessor; a plan holds whole chains; marks come in links. */
static int check_chains(const struct vyre_plan_batch *pb, const struct vyre_plan *plan,
			const uint32_t *group_of, const char *what)
{
	const uint32_t *m = plan->exec_flags;

	if (pb->flags[0] & VYRE_PLAN_F_AFTER_PREV) {
		printf("%s: the plan starts inside a chain\n", what);
		return -1;
	}
	for (uint32_t k = 1; k < plan->accepted; k++)
		if ((pb->flags[k] & VYRE_PLAN_F_AFTER_PREV) && group_of[k] != UINT32_MAX &&
		    (group_of[k - 1] == UINT32_MAX || group_of[k - 1] >= group_of[k])) {
			printf("%s: chained item %u does not run after item %u\n", what, k, k - 1);
			return -1;
		}
	for (uint32_t k = 0; m && k < plan->accepted; k++)
		if (((m[k] & VYRE_EXEC_HANDOFF_OUT) &&
		     (k + 1 >= plan->accepted || !(m[k + 1] & VYRE_EXEC_HANDOFF_IN) ||
		      !(pb->flags[k] & VYRE_PLAN_F_OUT_TRANSIENT))) ||
		    ((m[k] & VYRE_EXEC_HANDOFF_IN) &&
		     (k == 0 || !(pb->flags[k] & VYRE_PLAN_F_AFTER_PREV)))) {
			printf("%s: handoff marks of item %u are not a link\n", what, k);
			return -1;
		}
	return 0;
}

/* A byte range of a domain's heap that an item touches. */
struct range {
	uint64_t off;
	uint32_t bytes;
	uint32_t heap;
	int written;
};

/* The operands of executed item @x: its input, table and output, as ranges. */
static uint32_t ranges_of(const struct vyre_exec_item *x, struct range *r)
{
	const int mask = vyre_op_operands(x->op);
	uint32_t n = 0;

	if (mask <= 0)
		return 0;
	if ((mask & VYRE_OPERAND_IN) && x->in_bytes)
		r[n++] = (struct range){x->in_off, x->in_bytes, x->in_heap, 0};
	if ((mask & VYRE_OPERAND_TABLE) && x->table_bytes)
		r[n++] = (struct range){x->table_off, x->table_bytes, x->table_heap, 0};
	if ((mask & VYRE_OPERAND_OUT) && x->out_bytes)
		r[n++] = (struct range){x->out_off, x->out_bytes, x->out_heap, 1};
	return n;
}

static int same_range(const struct range *a, const struct range *b)
{
	return a->heap == b->heap && a->off == b->off && a->bytes == b->bytes;
}

/*
 * An item's bytes by the budget's rule: each distinct range once, a range
 * it both reads and writes twice (docs/design.md 7.4).
 */
static uint64_t item_bytes(const struct vyre_exec_item *x)
{
	struct range r[3];
	const uint32_t n = ranges_of(x, r);
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < n; i++) {
		int again = 0;

		for (uint32_t j = 0; j < i; j++)
			again |= same_range(&r[i], &r[j]) && !r[i].written && !r[j].written;
		bytes += again ? 0 : r[i].bytes;
	}
	return bytes;
}

/*
 * The memory budget is exact: the distinct ranges a group touches (the
 * world's buffers never overlap) add up to no more than the plan's peak
 * group bytes, nor than the budget unless an item of the group alone is
 * larger.
 */
static int check_budget(const struct vyre_plan_batch *pb, const struct vyre_plan *plan,
			uint64_t group_budget, uint32_t *shared, const char *what)
{
	static struct range seen[3 * WORLD_MAX_ITEMS];
	const struct vyre_exec_plan *x = &plan->exec;

	for (uint32_t g = 0, start = 0; g < x->n_groups; start = x->group_end[g++]) {
		uint64_t touched = 0, apiece = 0;
		uint32_t n_seen = 0;
		int oversized = 0;

		for (uint32_t pos = start; pos < x->group_end[g]; pos++) {
			const struct vyre_exec_item *it = &pb->exec[x->order[pos]];
			struct range r[3];
			const uint32_t n = ranges_of(it, r);

			oversized |= group_budget && item_bytes(it) > group_budget;
			apiece += (uint64_t)it->in_bytes + it->table_bytes + it->out_bytes;
			for (uint32_t i = 0; i < n; i++) {
				uint32_t j = 0;

				while (j < n_seen && !same_range(&seen[j], &r[i]))
					j++;
				if (j == n_seen) {
					seen[n_seen++] = r[i];
					touched += r[i].bytes;
				}
			}
		}
		if (touched > plan->stats.peak_group_bytes ||
		    (group_budget && touched > group_budget && !oversized)) {
			printf("%s: group %u touches %llu bytes: peak group bytes %llu, budget "
			       "%llu\n",
			       what, g, (unsigned long long)touched,
			       (unsigned long long)plan->stats.peak_group_bytes,
			       (unsigned long long)group_budget);
			return -1;
		}
		/* a group that fits only because its shared operands count once */
		*shared += group_budget && apiece > group_budget && !oversized;
	}
	return 0;
}

static int check_plan(const struct vyre_plan_batch *pb, const struct vyre_plan *plan,
		      uint64_t group_budget, uint32_t *shared, const char *what)
{
	static uint32_t group_of[WORLD_MAX_ITEMS];

	if (check_shape(pb, plan, group_of, what) || check_dedupe(pb, plan, group_of, what) ||
	    check_hazards(pb, plan, group_of, what) || check_fences(pb, plan, group_of, what) ||
	    check_chains(pb, plan, group_of, what) ||
	    check_budget(pb, plan, group_budget, shared, what))
		return -1;
	return 0;
}

/* ------------------------------------------------------------ runs */

/*
 * vyred's plan step (tools/vyred/plan_wrap.c): a plan that ends inside a
 * chain is planned again, shorter, before that chain; when that chain is
 * the first, *serial says it runs alone, one item at a time.
 */
static int plan_whole_chains(struct vyre_planner *p, struct vyre_plan_batch *pb,
			     struct vyre_plan *plan, int *serial, const char *what)
{
	*serial = 0;
	for (;;) {
		struct vyre_plan_error err;
		int rc = vyre_planner_plan(p, pb, plan, &err);
		uint32_t start = plan->accepted;

		if (rc) {
			char msg[256];

			vyre_plan_error_format(&err, msg, sizeof(msg));
			printf("%s: plan failed: %d: %s\n", what, rc, msg);
			return -1;
		}
		if (start >= pb->n || !(pb->flags[start] & VYRE_PLAN_F_AFTER_PREV))
			return 0;
		while (start > 0 && (pb->flags[start] & VYRE_PLAN_F_AFTER_PREV))
			start--;
		if (start == 0) {
			*serial = 1;
			return 0;
		}
		pb->n = start;
	}
}

/* The batch's first chain, one item per group and launch (vyred's sequential plan). */
static void serial_plan(const struct vyre_plan_batch *pb, uint32_t n, struct vyre_plan *plan)
{
	static uint32_t order[WORLD_MAX_ITEMS], ends[WORLD_MAX_ITEMS], none[WORLD_MAX_ITEMS];
	uint32_t end = 1, k = 0;

	while (end < n && (pb->flags[end] & VYRE_PLAN_F_AFTER_PREV))
		end++;
	for (uint32_t i = 0; i < end; i++) {
		none[i] = VYRE_PLAN_NONE;
		if (!(pb->flags[i] & VYRE_PLAN_F_INVALID)) {
			order[k] = i;
			ends[k] = k + 1;
			k++;
		}
	}
	*plan = (struct vyre_plan){
	    .exec = {order, k, ends, k, ends, k},
	    .accepted = end,
	    .dedup_from = none,
	};
}

int world_run_planned(struct world *w, struct batch *b, struct vyre_planner *p,
		      uint64_t group_budget, const struct vyre_backend_ops *ops,
		      struct vyre_backend *backend, struct planned_run *stats, const char *what)
{
	static struct vyre_exec_item xs[WORLD_MAX_ITEMS];
	uint32_t offset = 0;

	reset_heaps(w, w->run);
	for (uint32_t d = 0; d < WORLD_DOMAINS; d++)
		if (ops->register_heap(backend, d, w->run[d], w->heap_bytes))
			return printf("%s: register_heap failed\n", what), -1;
	for (uint32_t k = 0; k < b->n; k++)
		b->results[k] = (struct vyre_exec_result){.status = POISON_STATUS};
	while (offset < b->n) {
		struct vyre_plan_batch pb = {
		    .n = b->n - offset,
		    .items = b->items + offset,
		    .exec = b->exec + offset,
		    .domain = b->domain + offset,
		    .client = b->client + offset,
		    .flags = b->flags + offset,
		    .aux = b->aux + offset,
		};
		struct vyre_plan plan;
		uint32_t shared = 0;
		int serial;

		if (plan_whole_chains(p, &pb, &plan, &serial, what))
			return -1;
		if (serial)
			serial_plan(&pb, b->n - offset, &plan);
		else if (check_plan(&pb, &plan, group_budget, &shared, what))
			return -1;
		/* what vyred's exec items carry: the plan's handoff marks, batch-relative links */
		for (uint32_t k = 0; k < plan.accepted; k++) {
			xs[k] = b->exec[offset + k];
			if (xs[k].flags & VYRE_EXEC_AFTER_PREV)
				xs[k].prev -= offset;
			if (plan.exec_flags)
				xs[k].flags |= plan.exec_flags[k];
		}
		struct vyre_exec_batch eb = {
		    .items = xs,
		    .n_items = plan.accepted,
		    .plan = plan.exec,
		    .results = b->results + offset,
		};
		struct vyre_slot_done done = {0};
		int n;

		if (ops->submit(backend, 0, &eb))
			return printf("%s: submit failed\n", what), -1;
		/* One slot: the plans of one batch depend on each other. */
		n = ops->reap(backend, &done, 1, -1);
		if (n != 1 || done.slot != 0 || done.status != 0)
			return printf("%s: reap returned %d (slot %u, status %d)\n", what, n,
				      done.slot, done.status),
			       -1;
		vyre_plan_complete(&plan, &pb, b->results + offset);
		/* vyred's completion: a static failure after a failed predecessor is cancelled */
		for (uint32_t k = 1; k < plan.accepted; k++)
			if ((pb.flags[k] & VYRE_PLAN_F_INVALID) &&
			    (pb.flags[k] & VYRE_PLAN_F_AFTER_PREV) &&
			    b->results[offset + k - 1].status != 0)
				b->results[offset + k].status = VYRE_E_CANCELED;
		if (stats) {
			stats->plans++;
			stats->serial += serial;
			stats->shared += shared;
			stats->deduped += plan.stats.deduped;
			stats->groups += plan.stats.groups;
			stats->launches += plan.stats.launches;
			stats->retries += plan.stats.retries;
			stats->shrunk += plan.accepted < b->n - offset;
			for (uint32_t g = 0; g < plan.exec.n_groups; g++)
				stats->parallel +=
				    plan.exec.group_end[g] - (g ? plan.exec.group_end[g - 1] : 0) >=
				    2;
			for (uint32_t k = 0; plan.exec_flags && k < plan.accepted; k++)
				stats->handoffs +=
				    (plan.exec_flags[k] & VYRE_EXEC_HANDOFF_OUT) != 0;
		}
		offset += plan.accepted;
	}
	return 0;
}

int world_compare(const struct world *w, const struct batch *b, const char *what)
{
	for (uint32_t k = 0; k < b->n; k++)
		if (b->results[k].status != b->expect[k].status ||
		    b->results[k].result != b->expect[k].result) {
			printf("%s: item %u (op %u in %u out %u param %u, domain %u, flags %#x): "
			       "status %d result %llu, oracle status %d result %llu\n",
			       what, k, b->items[k].op_handle, b->items[k].input_handle,
			       b->items[k].output_handle, b->items[k].param, b->domain[k],
			       b->flags[k], b->results[k].status,
			       (unsigned long long)b->results[k].result, b->expect[k].status,
			       (unsigned long long)b->expect[k].result);
			return -1;
		}
	/* a transient buffer's bytes after its chain are undefined (docs/design.md 6.3) */
	const struct world_buffer *t = &w->buf[0][w->transient];

	for (uint32_t d = 0; d < WORLD_DOMAINS; d++)
		for (uint64_t i = 0; i < w->heap_bytes; i++)
			if (w->run[d][i] != w->oracle[d][i] &&
			    (i < t->off || i >= t->off + t->bytes)) {
				printf("%s: domain %u heap byte %llu differs from the oracle's\n",
				       what, w->domain_id[d], (unsigned long long)i);
				return -1;
			}
	return 0;
}
