/* SPDX-License-Identifier: MIT */
/* Random planned batches for the CUDA backend tests (see test_cuda_gen.h). */
#include "test_cuda_gen.h"

#include "cuda_driver.h"
#include "test_counted.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define POISON_STATUS 0x7eadbeef
#define POISON_RESULT 0x5eed5eed5eed5eedull
#define SCRATCH_BYTES 4096u
/* the handed-off ranges: below the scratch buffer, apart from every other buffer */
#define TRANS_BYTES (96u << 10)
/* counted inputs in the scratch buffer at byte 1028 * j, j < 4: unaligned but the first */
#define SPOT_STRIDE 1028u
#define SPOT_BYTES  1000u

uint64_t gen_next(struct gen_rng *r)
{
	/* splitmix64 */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t gen_below(struct gen_rng *r, uint32_t n)
{
	return (uint32_t)(gen_next(r) % n);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

const char *gen_op_name(uint32_t op)
{
	static const char *const names[VYRE_OP_COUNT] = {"NOP",
							 "FILL",
							 "COPY",
							 "ADD",
							 "XOR",
							 "MUL",
							 "SUM",
							 "MAX",
							 "DFA_SCAN",
							 "BASE64_DECODE",
							 "HEX_DECODE",
							 "BYTEMAP",
							 "DFA_SCAN_COUNTED",
							 "DFA_REPORT",
							 "DFA_REPORT_COUNTED"};

	return op < VYRE_OP_COUNT ? names[op] : "unknown-op";
}

/* A DFA table of @n states at @p (bytes available: @room); malformed when @bad. */
static uint32_t write_dfa(struct gen_rng *r, uint8_t *p, uint32_t n, int bad)
{
	const uint32_t accept_words = (n + 31) / 32;
	const uint32_t bytes = (uint32_t)vyre_dfa_table_bytes(n);
	uint8_t *next = p + 8 + 4 * accept_words;

	put32(p, n);
	put32(p + 4, gen_below(r, n));
	for (uint32_t i = 0; i < accept_words; i++)
		put32(p + 8 + 4 * i, (uint32_t)gen_next(r));
	for (uint32_t i = 0; i < 256 * n; i++)
		put32(next + 4 * i, gen_below(r, n));
	if (bad) {
		switch (gen_below(r, 3)) {
		case 0: /* a transition out of range */
			put32(next + 4 * gen_below(r, 256 * n), n + gen_below(r, 5));
			break;
		case 1: /* start out of range */
			put32(p + 4, n + gen_below(r, 3));
			break;
		default: /* n_states that needs more bytes than the buffer holds */
			put32(p, n + 1 + gen_below(r, 4));
			break;
		}
	}
	return bytes;
}

static void fill_random(struct gen_rng *r, uint8_t *p, uint64_t bytes)
{
	for (uint64_t i = 0; i < bytes; i += 8) {
		const uint64_t v = gen_next(r);

		memcpy(p + i, &v, bytes - i < 8 ? bytes - i : 8);
	}
}

/*
 * Lay out fresh buffers with fresh random contents (DFA tables written as
 * such); the last one is the scratch area for odd ranges. Bytes outside the
 * buffers keep what earlier batches left: any stray write still shows.
 */
static void gen_buffers(struct gen_rng *r, uint8_t *heap, uint64_t heap_bytes, struct gen_batch *g)
{
	const uint64_t limit = heap_bytes - SCRATCH_BYTES - TRANS_BYTES - 128;
	uint64_t cursor = 4 * gen_below(r, 16);

	g->n_bufs = 3 + gen_below(r, GEN_MAX_BUFS - 4);
	for (uint32_t b = 0; b + 1 < g->n_bufs; b++) {
		const uint32_t kind = gen_below(r, 100);
		uint32_t bytes;

		if (kind < 8) {
			bytes = 0;
		} else if (kind < 45) {
			bytes = 4 * gen_below(r, 65);
		} else if (kind < 72) {
			bytes = 4 * (64 + gen_below(r, 1024));
		} else if (kind < 80) {
			bytes = 4 * (2048 + gen_below(r, 10000));
		} else {
			/* a DFA table: usually small, sometimes too big for shared memory */
			const uint32_t n =
			    gen_below(r, 10) ? 1 + gen_below(r, 8) : 30 + gen_below(r, 8);
			const int bad = gen_below(r, 5) == 0;

			bytes = (uint32_t)vyre_dfa_table_bytes(n) + 4 * gen_below(r, 3);
			if (cursor + bytes > limit)
				bytes = 0;
			else
				write_dfa(r, heap + cursor, n, bad);
		}
		if (cursor + bytes > limit)
			bytes = 0;
		if (kind < 80)
			fill_random(r, heap + cursor, bytes);
		/* counted bytes for the byte ops, valid or malformed */
		if (kind < 80 && bytes >= 4 && gen_below(r, 2))
			test_counted_fill(heap + cursor, bytes, gen_next(r));
		g->buf_off[b] = cursor;
		g->buf_bytes[b] = bytes;
		/* gaps keep some buffers 16-byte aligned and some only 4-byte aligned */
		cursor += bytes + 4 * gen_below(r, 8);
	}
	g->n_trans = 0;
	g->buf_off[g->n_bufs - 1] = (heap_bytes - SCRATCH_BYTES) & ~(uint64_t)63;
	g->buf_bytes[g->n_bufs - 1] = SCRATCH_BYTES;
	fill_random(r, heap + g->buf_off[g->n_bufs - 1], SCRATCH_BYTES);
	for (uint32_t j = 0; j < 4; j++)
		test_counted_fill(heap + g->buf_off[g->n_bufs - 1] + SPOT_STRIDE * j, SPOT_BYTES,
				  gen_next(r));
}

static void use_buffer(const struct gen_batch *g, uint32_t buf, uint64_t *off, uint32_t *bytes)
{
	*off = g->buf_off[buf];
	*bytes = g->buf_bytes[buf];
}

static const uint32_t byte_ops[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE, VYRE_OP_BYTEMAP};

/*
 * A byte op over the scratch buffer's counted spots: in place, or out to
 * another spot or an odd place, partly overlapping or not.
 */
static void gen_odd_byte_item(struct gen_rng *r, struct gen_batch *g, uint32_t i)
{
	struct vyre_exec_item *it = &g->items[i];
	const uint32_t scratch = g->n_bufs - 1;
	const uint64_t base = g->buf_off[scratch];
	const uint32_t a = gen_below(r, 4), b = gen_below(r, 4);

	it->op = byte_ops[gen_below(r, 3)];
	it->in_off = base + SPOT_STRIDE * a;
	it->in_bytes = SPOT_BYTES;
	if (gen_below(r, 3) == 0) {
		it->out_off = it->in_off;
		it->out_bytes = it->in_bytes;
	} else {
		it->out_off = base + SPOT_STRIDE * b + (gen_below(r, 4) ? 0 : 4 * gen_below(r, 8));
		it->out_bytes = 4 * (1 + gen_below(r, SPOT_BYTES / 4));
	}
	g->work[i] = (struct vyre_work_item){it->op, scratch + 1, scratch + 1, 0};
	if (it->op == VYRE_OP_BYTEMAP) {
		const uint32_t t = gen_below(r, scratch + 1);

		use_buffer(g, t, &it->table_off, &it->table_bytes);
		g->work[i].param = t + 1;
	}
}

/* An item over odd ranges of the scratch buffer: unaligned or partially overlapping. */
static void gen_odd_item(struct gen_rng *r, struct gen_batch *g, uint32_t i)
{
	struct vyre_exec_item *it = &g->items[i];
	struct vyre_work_item *w = &g->work[i];
	const uint32_t scratch = g->n_bufs - 1;
	const uint64_t base = g->buf_off[scratch];
	const uint32_t op = VYRE_OP_FILL + gen_below(r, VYRE_OP_DFA_SCAN);

	if (gen_below(r, 3) == 0) {
		gen_odd_byte_item(r, g, i);
		return;
	}
	it->op = op;
	it->param = (uint32_t)gen_next(r);
	w->op_handle = op;
	w->input_handle = op == VYRE_OP_FILL ? 0 : scratch + 1;
	w->output_handle = scratch + 1;
	if (gen_below(r, 2) && op >= VYRE_OP_COPY && op <= VYRE_OP_MUL) {
		/* aligned, overlapping, not equal */
		const uint32_t words = 1 + gen_below(r, 300);
		const uint32_t shift = 1 + gen_below(r, 40);
		const uint64_t a = base + 4 * gen_below(r, 200);
		const int up = gen_below(r, 2);

		it->in_off = up ? a : a + 4 * shift;
		it->out_off = up ? a + 4 * shift : a;
		it->in_bytes = 4 * words;
		it->out_bytes = 4 * (words + gen_below(r, 3));
	} else {
		it->in_off =
		    op == VYRE_OP_FILL ? 0 : base + 1 + gen_below(r, 3) + 4 * gen_below(r, 300);
		it->in_bytes = op == VYRE_OP_FILL ? 0 : 4 * gen_below(r, 200);
		it->out_off =
		    base + 4 * gen_below(r, 300) + (gen_below(r, 2) ? 1 + gen_below(r, 3) : 0);
		it->out_bytes = 4 * (1 + gen_below(r, 200));
	}
	if (op == VYRE_OP_DFA_SCAN) {
		const uint32_t t = gen_below(r, scratch);

		use_buffer(g, t, &it->table_off, &it->table_bytes);
		w->param = t + 1;
		if (gen_below(r, 3) == 0) {
			/* an unaligned copy of a table can only be INVAL or run sequentially */
			it->table_off = base + 2;
			it->table_bytes = 4 * gen_below(r, 256);
			w->param = scratch + 1;
		}
	}
}

static void gen_item(struct gen_rng *r, struct gen_batch *g, uint32_t i, uint64_t heap_bytes)
{
	struct vyre_exec_item *it = &g->items[i];
	struct vyre_work_item *w = &g->work[i];
	const uint32_t kind = gen_below(r, 100);
	const uint32_t nb = g->n_bufs;

	memset(it, 0, sizeof(*it));
	memset(w, 0, sizeof(*w));
	if (kind < 4) {
		it->op = VYRE_OP_NOP;
		return;
	}
	if (kind < 14) {
		gen_odd_item(r, g, i);
		return;
	}
	static const uint32_t ops[] = {VYRE_OP_FILL,
				       VYRE_OP_COPY,
				       VYRE_OP_ADD,
				       VYRE_OP_XOR,
				       VYRE_OP_MUL,
				       VYRE_OP_SUM,
				       VYRE_OP_MAX,
				       VYRE_OP_DFA_SCAN,
				       VYRE_OP_DFA_SCAN,
				       VYRE_OP_SUM,
				       VYRE_OP_COPY,
				       VYRE_OP_ADD,
				       VYRE_OP_BASE64_DECODE,
				       VYRE_OP_BASE64_DECODE,
				       VYRE_OP_HEX_DECODE,
				       VYRE_OP_BYTEMAP,
				       VYRE_OP_DFA_SCAN_COUNTED};
	const uint32_t op = ops[gen_below(r, sizeof(ops) / sizeof(ops[0]))];
	const int mask = vyre_op_operands(op);
	const uint32_t in = gen_below(r, nb);
	const uint32_t out = gen_below(r, 4) == 0 ? in : gen_below(r, nb);

	it->op = op;
	it->param = gen_below(r, 3) ? (uint32_t)gen_next(r) : gen_below(r, 4);
	w->op_handle = op;
	if (mask & VYRE_OPERAND_IN) {
		use_buffer(g, in, &it->in_off, &it->in_bytes);
		w->input_handle = in + 1;
	}
	use_buffer(g, out, &it->out_off, &it->out_bytes);
	w->output_handle = out + 1;
	if (mask & VYRE_OPERAND_TABLE) {
		uint32_t t = gen_below(r, nb);

		/* prefer buffers that hold a table */
		for (int tries = 0; tries < 8 && g->buf_bytes[t] < 1032; tries++)
			t = gen_below(r, nb);
		use_buffer(g, t, &it->table_off, &it->table_bytes);
		w->param = t + 1;
	}
	if (kind < 24) {
		/* statically invalid: the backend must never touch the heap */
		switch (kind % 5) {
		case 0:
			it->op = VYRE_OP_COUNT + gen_below(r, 300);
			break;
		case 1:
			it->in_heap = it->out_heap = it->table_heap = 1;
			break;
		case 2:
			it->out_off = heap_bytes + 4 * gen_below(r, 4);
			break;
		case 3:
			it->in_bytes |= 2;
			break;
		default:
			it->table_bytes += 1;
			break;
		}
		memset(w, 0, sizeof(*w));
		w->op_handle = VYRE_OP_NOP;
	}
}

/* Item @i: @op from buffer @a to buffer @b, with buffer @t as its table if it takes one. */
static void set_buffers(struct gen_batch *g, uint32_t i, uint32_t op, uint32_t a, uint32_t b,
			uint32_t t)
{
	struct vyre_exec_item *it = &g->items[i];

	*it = (struct vyre_exec_item){.op = op};
	use_buffer(g, a, &it->in_off, &it->in_bytes);
	use_buffer(g, b, &it->out_off, &it->out_bytes);
	g->work[i] = (struct vyre_work_item){op, a + 1, b + 1, 0};
	if (op == VYRE_OP_BYTEMAP || op == VYRE_OP_DFA_SCAN) {
		use_buffer(g, t, &it->table_off, &it->table_bytes);
		g->work[i].param = t + 1;
	}
}

/*
 * Items @i .. @i + 2: decode -> map -> scan (DFA_SCAN over the counted
 * buffer, length word included), over buffers other than the scratch one.
 */
static void gen_chain(struct gen_rng *r, struct gen_batch *g, uint32_t i)
{
	const uint32_t nb = g->n_bufs - 1;
	const uint32_t a = gen_below(r, nb), b = gen_below(r, nb), c = gen_below(r, nb);
	uint32_t t = gen_below(r, nb);

	for (int tries = 0; tries < 8 && g->buf_bytes[t] < 1032; tries++)
		t = gen_below(r, nb);
	set_buffers(g, i, gen_below(r, 3) ? VYRE_OP_BASE64_DECODE : VYRE_OP_HEX_DECODE, a, b, 0);
	set_buffers(g, i + 1, VYRE_OP_BYTEMAP, b, gen_below(r, 3) ? c : b, t);
	set_buffers(g, i + 2, VYRE_OP_DFA_SCAN, g->work[i + 1].output_handle - 1, gen_below(r, nb),
		    t);
}

/* A handed-off range of @bytes (4-byte aligned) of its own, or 0 when none is left. */
static uint64_t gen_trans(struct gen_batch *g, uint64_t heap_bytes, uint32_t bytes)
{
	const uint64_t area = ((heap_bytes - SCRATCH_BYTES) & ~(uint64_t)63) - TRANS_BYTES;
	uint64_t at = area;

	if (g->n_trans == GEN_MAX_TRANS)
		return 0;
	if (g->n_trans)
		at = (g->trans_off[g->n_trans - 1] + g->trans_bytes[g->n_trans - 1] + 15) &
		     ~(uint64_t)15;
	if (at + bytes > area + TRANS_BYTES)
		return 0;
	g->trans_off[g->n_trans] = at;
	g->trans_bytes[g->n_trans++] = bytes;
	return at;
}

/* A buffer other than the scratch one of at least @min bytes, preferring @want bytes. */
static uint32_t gen_pick_buffer(struct gen_rng *r, const struct gen_batch *g, uint32_t min,
				uint32_t want)
{
	uint32_t b = gen_below(r, g->n_bufs - 1);

	for (int tries = 0; tries < 16 && g->buf_bytes[b] < want; tries++)
		b = gen_below(r, g->n_bufs - 1);
	for (uint32_t k = 0; k < g->n_bufs - 1 && g->buf_bytes[b] < min; k++)
		b = (b + 1) % (g->n_bufs - 1);
	return g->buf_bytes[b] >= min ? b : UINT32_MAX;
}

/*
 * Items @i .. (returned count, at most @room, at least 2): an on-chip
 * handoff run as the planner marks one, each member reading the handed-off
 * range the one before wrote; 0 when the heap has no room for it.
 */
static uint32_t gen_handoff_run(struct gen_rng *r, struct gen_batch *g, uint32_t i, uint32_t room,
				uint64_t heap_bytes)
{
	static const uint32_t writers[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE,
					   VYRE_OP_BYTEMAP};
	const uint32_t m = 2 + gen_below(r, room < 4 ? room - 1 : 3);
	const uint32_t a = gen_pick_buffer(r, g, 4, 64);
	const uint32_t n_trans = g->n_trans;

	if (room < 2 || a == UINT32_MAX)
		return 0;
	uint64_t in_off = g->buf_off[a];
	uint32_t in_bytes = g->buf_bytes[a], in_handle = a + 1;

	for (uint32_t j = 0; j < m; j++) {
		struct vyre_exec_item *it = &g->items[i + j];
		const int last = j + 1 == m;
		const uint32_t op = j == 0			    ? writers[gen_below(r, 3)]
				    : !last || gen_below(r, 3) == 0 ? VYRE_OP_BYTEMAP
								    : VYRE_OP_DFA_SCAN_COUNTED;
		uint32_t out_handle;

		*it = (struct vyre_exec_item){.op = op, .in_off = in_off, .in_bytes = in_bytes};
		if (!last) {
			/* room for what it writes, now and then too little */
			uint32_t bytes = in_bytes;

			if (gen_below(r, 12) == 0)
				bytes = 4 * (1 + gen_below(r, in_bytes / 8 + 1));
			it->out_off = gen_trans(g, heap_bytes, bytes);
			it->out_bytes = bytes;
			out_handle = GEN_MAX_BUFS + g->n_trans;
			if (it->out_off == 0) {
				g->n_trans = n_trans;
				return 0;
			}
		} else {
			uint32_t o = op == VYRE_OP_BYTEMAP && gen_below(r, 3) == 0
					 ? a /* in place over the run's input */
					 : gen_pick_buffer(r, g, 4, 4);
			if (o == UINT32_MAX) {
				g->n_trans = n_trans;
				return 0;
			}
			use_buffer(g, o, &it->out_off, &it->out_bytes);
			out_handle = o + 1;
		}
		g->work[i + j] = (struct vyre_work_item){op, in_handle, out_handle, 0};
		if (op != VYRE_OP_BASE64_DECODE && op != VYRE_OP_HEX_DECODE) {
			const uint32_t t =
			    gen_pick_buffer(r, g, 0, op == VYRE_OP_BYTEMAP ? 256 : 1032);

			use_buffer(g, t, &it->table_off, &it->table_bytes);
			g->work[i + j].param = t + 1;
		}
		if (j > 0) {
			it->flags = VYRE_EXEC_AFTER_PREV | VYRE_EXEC_HANDOFF_IN;
			it->prev = i + j - 1;
		}
		if (!last)
			it->flags |= VYRE_EXEC_HANDOFF_OUT;
		in_off = it->out_off;
		in_bytes = it->out_bytes;
		in_handle = out_handle;
	}
	return m;
}

/*
 * Items @i .. (returned count, at most @room, at least 2): a chain of random
 * items, some failing when they run, with now and then a handoff run inside.
 */
static uint32_t gen_chain_items(struct gen_rng *r, struct gen_batch *g, uint32_t i, uint32_t room,
				uint64_t heap_bytes)
{
	const uint32_t len = 2 + gen_below(r, room < 5 ? room - 1 : 4);
	uint32_t n = 0;

	while (n < len) {
		uint32_t k = 0;

		if (len - n >= 2 && gen_below(r, 2))
			k = gen_handoff_run(r, g, i + n, len - n, heap_bytes);
		if (k == 0) {
			gen_item(r, g, i + n, heap_bytes);
			k = 1;
		}
		n += k;
	}
	for (uint32_t j = 1; j < n; j++) {
		g->items[i + j].flags |= VYRE_EXEC_AFTER_PREV;
		g->items[i + j].prev = i + j - 1;
	}
	return n;
}

static int chained(const struct gen_batch *g, uint32_t n, uint32_t i)
{
	return (g->items[i].flags & VYRE_EXEC_AFTER_PREV) ||
	       (i + 1 < n && (g->items[i + 1].flags & VYRE_EXEC_AFTER_PREV));
}

static int conflicts(const struct vyre_work_item *a, const struct vyre_work_item *b)
{
	struct vyre_op_access x, y;

	vyre_op_access(a, &x);
	vyre_op_access(b, &y);
	if (x.write && x.write == y.write)
		return 1;
	for (uint32_t i = 0; i < y.n_reads; i++)
		if (x.write && x.write == y.reads[i])
			return 1;
	for (uint32_t i = 0; i < x.n_reads; i++)
		if (y.write && y.write == x.reads[i])
			return 1;
	return 0;
}

/*
 * Whether item @i must start a new group after order positions
 * [@group_start, @n_order): a conflict, its chain predecessor there, or, for
 * a handoff run's first item, a conflict of any member there (the members
 * run in its group).
 */
static int must_split(const struct gen_batch *g, uint32_t n, uint32_t i, uint32_t group_start,
		      uint32_t n_order)
{
	uint32_t last = i;

	while ((g->items[last].flags & VYRE_EXEC_HANDOFF_OUT) && last + 1 < n)
		last++;
	for (uint32_t k = group_start; k < n_order; k++) {
		if ((g->items[i].flags & VYRE_EXEC_AFTER_PREV) && g->order[k] == g->items[i].prev)
			return 1;
		for (uint32_t j = i; j <= last; j++)
			if (conflicts(&g->work[g->order[k]], &g->work[j]))
				return 1;
	}
	return 0;
}

/* No launch ends between a handoff run's first group and its last member's group. */
static void keep_runs_whole(const struct gen_batch *g, uint32_t n, uint8_t *no_cut)
{
	const struct vyre_exec_plan *p = &g->batch.plan;
	uint32_t group_of[GEN_MAX_ITEMS];

	for (uint32_t gi = 0, k = 0; gi < p->n_groups; gi++)
		for (; k < p->group_end[gi]; k++)
			group_of[g->order[k]] = gi;
	for (uint32_t gi = 0; gi <= p->n_groups; gi++)
		no_cut[gi] = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!(g->items[i].flags & VYRE_EXEC_HANDOFF_OUT) ||
		    (g->items[i].flags & VYRE_EXEC_HANDOFF_IN))
			continue;
		uint32_t last = i;

		while ((g->items[last].flags & VYRE_EXEC_HANDOFF_OUT) && last + 1 < n)
			last++;
		for (uint32_t c = group_of[i] + 1; c <= group_of[last]; c++)
			no_cut[c] = 1;
	}
}

static void gen_plan(struct gen_rng *r, struct gen_batch *g, enum gen_plan plan, uint32_t n)
{
	struct vyre_exec_plan *p = &g->batch.plan;
	uint32_t n_order = 0, n_groups = 0, n_launches = 0, group_start = 0;
	uint8_t no_cut[GEN_MAX_ITEMS + 1];

	for (uint32_t i = 0; i < n; i++) {
		/* as if deduplicated; never an item of a chain */
		if (!chained(g, n, i) && gen_below(r, 20) == 0)
			continue;
		if (plan == GEN_PLAN_SERIAL) {
			g->order[n_order++] = i;
			g->group_end[n_groups++] = n_order;
			continue;
		}
		const int clash = must_split(g, n, i, group_start, n_order);
		if (clash) {
			g->group_end[n_groups++] = n_order;
			group_start = n_order;
		}
		g->order[n_order++] = i;
	}
	if (plan == GEN_PLAN_GROUPED && n_order > group_start)
		g->group_end[n_groups++] = n_order;
	if (plan == GEN_PLAN_GROUPED) {
		/* the order inside a group is the planner's to choose */
		for (uint32_t gi = 0, start = 0; gi < n_groups; start = g->group_end[gi++]) {
			for (uint32_t k = g->group_end[gi]; k > start + 1; k--) {
				uint32_t j = start + gen_below(r, k - start);
				uint32_t t = g->order[k - 1];
				g->order[k - 1] = g->order[j];
				g->order[j] = t;
			}
		}
	}
	p->order = g->order;
	p->n_order = n_order;
	p->group_end = g->group_end;
	p->n_groups = n_groups;
	keep_runs_whole(g, n, no_cut);
	for (uint32_t gi = 0; gi < n_groups;) {
		gi += 1 + gen_below(r, gen_below(r, 4) ? 3 : 12);
		while (gi < n_groups && no_cut[gi])
			gi++;
		g->launch_end[n_launches++] = gi < n_groups ? gi : n_groups;
	}
	p->launch_end = g->launch_end;
	p->n_launches = n_launches;
}

void gen_batch(struct gen_rng *r, uint8_t *heap, uint64_t heap_bytes, enum gen_plan plan,
	       uint32_t max_items, struct gen_batch *g)
{
	const uint32_t size = gen_below(r, 10);
	uint32_t n;

	if (max_items > GEN_MAX_ITEMS)
		max_items = GEN_MAX_ITEMS;
	n = 1 + gen_below(r, size < 7	? (max_items < 16 ? max_items : 16)
			     : size < 9 ? (max_items < 128 ? max_items : 128)
					: max_items);
	gen_buffers(r, heap, heap_bytes, g);
	for (uint32_t i = 0; i < n;) {
		if (i + 3 <= n && gen_below(r, 40) == 0) {
			gen_chain(r, g, i);
			i += 3;
		} else if (i + 2 <= n && gen_below(r, 12) == 0) {
			i += gen_chain_items(r, g, i, n - i, heap_bytes);
		} else {
			gen_item(r, g, i++, heap_bytes);
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		g->results[i].status = POISON_STATUS;
		g->results[i].reserved = 0;
		g->results[i].result = POISON_RESULT;
	}
	g->batch.items = g->items;
	g->batch.n_items = n;
	g->batch.results = g->results;
	gen_plan(r, g, plan, n);
}

void gen_small_batch(struct gen_rng *r, uint8_t *heap, uint64_t heap_bytes, uint32_t max_items,
		     struct gen_batch *g)
{
	static const uint32_t ops[] = {VYRE_OP_FILL, VYRE_OP_COPY, VYRE_OP_ADD, VYRE_OP_XOR,
				       VYRE_OP_MUL,  VYRE_OP_SUM,  VYRE_OP_MAX};
	/* an item's ranges and gaps take less than 4096 bytes */
	const uint64_t fit = heap_bytes / 4096;
	uint32_t n;
	uint64_t cursor = 4 * gen_below(r, 16);

	if (max_items > GEN_SMALL_MAX_ITEMS)
		max_items = GEN_SMALL_MAX_ITEMS;
	if (max_items > fit)
		max_items = (uint32_t)fit;
	n = 1 + gen_below(r, max_items ? max_items : 1);

	for (uint32_t i = 0; i < n; i++) {
		struct vyre_exec_item *it = &g->items[i];
		const uint32_t kind = gen_below(r, 20);
		const uint32_t op = ops[gen_below(r, sizeof(ops) / sizeof(ops[0]))];
		const int reduce = op == VYRE_OP_SUM || op == VYRE_OP_MAX;
		const uint32_t words = kind == 0 ? 1 + gen_below(r, 300) : gen_below(r, 25);
		const uint32_t out_bytes = reduce ? 4 : 4 * words;
		const int in_place = gen_below(r, 3) == 0;

		*it = (struct vyre_exec_item){
		    .op = op,
		    .param = gen_below(r, 3) ? (uint32_t)gen_next(r) : gen_below(r, 4),
		    .in_off = cursor,
		    .in_bytes = op == VYRE_OP_FILL ? 0 : 4 * words,
		    .out_bytes = out_bytes,
		};
		it->out_off = in_place ? cursor : cursor + 4 * words + 4 * gen_below(r, 4);
		/* in place, a reduction's input runs past its one output word */
		const uint64_t end = it->out_off + (out_bytes > 4 * words ? out_bytes : 4 * words);
		fill_random(r, heap + cursor, end - cursor);
		cursor = end + 4 * gen_below(r, 16);
		if (kind == 1)
			it->op = VYRE_OP_NOP;
		else if (kind == 2)
			it->in_heap = it->out_heap = 1; /* never registered */
		memset(&g->work[i], 0, sizeof(g->work[i]));
		g->order[i] = i;
		g->results[i] = (struct vyre_exec_result){POISON_STATUS, 0, POISON_RESULT};
	}
	g->group_end[0] = n;
	g->launch_end[0] = 1;
	g->n_bufs = 0;
	g->batch.items = g->items;
	g->batch.n_items = n;
	g->batch.results = g->results;
	g->batch.plan = (struct vyre_exec_plan){g->order, n, g->group_end, 1, g->launch_end, 1};
}

void gen_oracle_heaps(const struct vyre_heap_view *views, uint32_t n_views,
		      const struct gen_batch *g, struct vyre_exec_result *expect)
{
	const struct vyre_exec_plan *p = &g->batch.plan;

	for (uint32_t i = 0; i < g->batch.n_items; i++) {
		expect[i].status = POISON_STATUS;
		expect[i].reserved = 0;
		expect[i].result = POISON_RESULT;
	}
	uint8_t *kept = g->n_trans ? malloc(TRANS_BYTES) : NULL;
	uint64_t kept_at = 0;

	/* the handed-off ranges as they were (gen_trans lays them out in order) */
	for (uint32_t t = 0; kept && t < g->n_trans; t++) {
		memcpy(kept + kept_at, views[0].base + g->trans_off[t], g->trans_bytes[t]);
		kept_at += g->trans_bytes[t];
	}
	for (uint32_t k = 0; k < p->n_order; k++) {
		const uint32_t i = p->order[k];

		expect[i].reserved = 0;
		if (vyre_exec_canceled(&g->items[i], expect, g->batch.n_items)) {
			/* the plan runs the predecessor in an earlier group */
			expect[i].status = VYRE_E_CANCELED;
			expect[i].result = 0;
			continue;
		}
		if (!vyre_exec_heaps_ok(views, n_views, &g->items[i])) {
			/* an operand in a heap that is not registered: what the backends answer */
			expect[i].status = VYRE_E_INVAL;
			expect[i].result = 0;
			continue;
		}
		expect[i].status = vyre_exec_one(views, &g->items[i], &expect[i].result);
	}
	kept_at = 0;
	for (uint32_t t = 0; kept && t < g->n_trans; t++) {
		memcpy(views[0].base + g->trans_off[t], kept + kept_at, g->trans_bytes[t]);
		kept_at += g->trans_bytes[t];
	}
	free(kept);
}

void gen_oracle(uint8_t *heap, uint64_t heap_bytes, const struct gen_batch *g,
		struct vyre_exec_result *expect)
{
	const struct vyre_heap_view view[1] = {{heap, heap_bytes}};

	gen_oracle_heaps(view, 1, g, expect);
}

void gen_split_heaps(struct gen_rng *r, struct gen_batch *g, uint32_t dev)
{
	for (uint32_t i = 0; i < g->batch.n_items; i++) {
		struct vyre_exec_item *x = &g->items[i];

		/* a handed-off range stays where the run's members look for it */
		if (x->in_heap == 0 && !(x->flags & VYRE_EXEC_HANDOFF_IN) && gen_below(r, 3) == 0)
			x->in_heap = dev;
		if (x->out_heap == 0 && !(x->flags & VYRE_EXEC_HANDOFF_OUT) && gen_below(r, 3) == 0)
			x->out_heap = dev;
		if (x->table_heap == 0 && gen_below(r, 2) == 0)
			x->table_heap = dev;
	}
}

int gen_compare(const struct gen_batch *g, const struct vyre_exec_result *expect,
		const uint8_t *got_heap, const uint8_t *want_heap, uint64_t heap_bytes, char *msg,
		uint32_t msg_len)
{
	for (uint32_t i = 0; i < g->batch.n_items; i++) {
		const struct vyre_exec_result *a = &g->results[i], *e = &expect[i];
		const struct vyre_exec_item *it = &g->items[i];

		if (a->status != e->status || a->result != e->result) {
			snprintf(msg, msg_len,
				 "item %u (%s in %u@%llu out %u@%llu table %u@%llu param %u): got "
				 "status %d result %llu, want status %d result %llu",
				 i, gen_op_name(it->op), it->in_bytes,
				 (unsigned long long)it->in_off, it->out_bytes,
				 (unsigned long long)it->out_off, it->table_bytes,
				 (unsigned long long)it->table_off, it->param, a->status,
				 (unsigned long long)a->result, e->status,
				 (unsigned long long)e->result);
			return -1;
		}
	}
	if (memcmp(got_heap, want_heap, heap_bytes) == 0)
		return 0;
	for (uint64_t o = 0; o < heap_bytes; o++) {
		if (got_heap[o] != want_heap[o]) {
			snprintf(msg, msg_len, "heap byte %llu: got 0x%02x, want 0x%02x",
				 (unsigned long long)o, got_heap[o], want_heap[o]);
			return -1;
		}
	}
	return 0;
}

uint8_t *gen_heap_map(uint64_t bytes)
{
	int fd = memfd_create("vyre-test-heap", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)bytes) != 0) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

void gen_heap_unmap(uint8_t *heap, uint64_t bytes)
{
	if (heap)
		munmap(heap, bytes);
}

int gen_gpu_present(char *why, uint32_t why_len)
{
	const struct vyre_cuda_driver *d = vyre_cuda_driver_load(why, why_len);
	int count = 0;
	CUresult r;

	if (!d)
		return 0;
	r = d->cuDeviceGetCount(&count);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, why, why_len, "cuDeviceGetCount", r);
		return 0;
	}
	if (count == 0) {
		snprintf(why, why_len, "the NVIDIA driver sees no CUDA device");
		return 0;
	}
	return 1;
}

int gen_require_gpu(void)
{
	char why[512];

	if (!vyre_cuda_backend) {
		printf("%s\n", vyre_cuda_unavailable);
		return 77;
	}
	if (!gen_gpu_present(why, sizeof(why))) {
		printf("no GPU: %s\n", why);
		return 77;
	}
	return 0;
}

void gen_device_batch(struct gen_batch *g, uint32_t heap)
{
	const uint32_t n = 24;

	memset(&g->batch, 0, sizeof(g->batch));
	for (uint32_t i = 0; i < n; i++) {
		g->items[i] = (struct vyre_exec_item){
		    .op = i % 3 == 0   ? VYRE_OP_FILL
			  : i % 3 == 1 ? VYRE_OP_ADD
				       : VYRE_OP_SUM,
		    .param = i,
		    .in_heap = heap,
		    .out_heap = heap,
		    .in_off = 4096 * (i % 8),
		    .in_bytes = 4096,
		    .out_off = 65536 + 4096 * i,
		    .out_bytes = 4096,
		};
		if (g->items[i].op == VYRE_OP_FILL)
			g->items[i].in_off = g->items[i].in_bytes = 0;
		g->order[i] = i;
		g->group_end[i] = i + 1;
		g->results[i] = (struct vyre_exec_result){0x1111, 0, 0x2222};
	}
	g->launch_end[0] = n;
	g->batch.items = g->items;
	g->batch.n_items = n;
	g->batch.results = g->results;
	g->batch.plan = (struct vyre_exec_plan){g->order, n, g->group_end, n, g->launch_end, 1};
}

int gen_gpu_present_in_child(char *why, uint32_t why_len)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(gen_gpu_present(why, why_len) ? 0 : 77);
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0)
		return 1;
	/* no GPU (or no fork): the reason, from this process, which then never runs CUDA work */
	if (gen_gpu_present(why, why_len))
		snprintf(why, why_len, "the GPU probe's child process failed (status 0x%x)",
			 status);
	return 0;
}

int gen_require_gpu_in_child(void)
{
	char why[512];

	if (!vyre_cuda_backend) {
		printf("skipped: %s\n", vyre_cuda_unavailable);
		return 77;
	}
	/* this process never touches CUDA, so every child starts clean */
	if (!gen_gpu_present_in_child(why, sizeof(why))) {
		printf("skipped: no GPU: %s\n", why);
		return 77;
	}
	return 0;
}

uint32_t gen_in_child(void (*fn)(int), int arg, uint32_t *failures)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		*failures = 0;
		fn(arg);
		_exit(*failures ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		printf("FAIL: fork/wait\n");
		return 1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	printf("FAIL: child for scenario %d ended with status 0x%x\n", arg, status);
	return 1;
}

int gen_run_one(struct vyre_backend *b, const struct vyre_exec_batch *batch, int64_t timeout_ns)
{
	struct vyre_slot_done done;
	int err = vyre_cuda_backend->submit(b, 0, batch);
	int n;

	if (err)
		return err;
	n = vyre_cuda_backend->reap(b, &done, 1, timeout_ns);
	if (n <= 0)
		return n;
	return done.slot != 0 ? VYRE_E_INVAL : done.status ? done.status : 1;
}

uint32_t gen_scale(void)
{
	const char *s = getenv("VYRE_TEST_SCALE");
	int v = s ? atoi(s) : 1;

	return v > 0 ? (uint32_t)v : 1;
}
