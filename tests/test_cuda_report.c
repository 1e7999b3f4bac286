/* SPDX-License-Identifier: MIT */
/*
 * DFA_REPORT and DFA_REPORT_COUNTED on the GPU (gpu/mk_report.cuh) against
 * the CPU oracle (vyre_exec_sequential), in persistent and in launch mode.
 * Random batches over a heap of source-like text and a device buffer:
 * report items over literal-set tables (vyre_dfa_compile: repeated ids, a
 * fifth of the patterns caseless, the compiler's report section) and
 * random tables with random report sections (guesses often wrong), whole
 * and counted inputs at random ranges (some unaligned), every operand in
 * the heap or the device buffer, capacities that overflow, streams cut at
 * random offsets into several items of one batch (serial groups order
 * them), bad stream states, counted lengths and tables; and
 * BASE64_DECODE -> DFA_REPORT_COUNTED chains that the planner's marks make
 * an on-chip run (the transient buffer must keep its bytes). Items of at
 * most 16 KiB run on a warp (batches of many such: several to a block),
 * larger ones on a block; a third of the valid tables come claimed trusted
 * (VYRE_EXEC_TABLE_TRUSTED and _REPORT_TRUSTED, the same tables batch after
 * batch), which must change nothing. Every status,
 * result, heap byte and device-buffer byte is compared.
 *
 * Exits 77 where no GPU is present. VYRE_TEST_SCALE multiplies the batches
 * (200 per mode); VYRE_CUDA_REPORT_BATCHES sets their count outright.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"
#include "cuda_backend.h"
#include "vyre/dfa.h"
#include "test_counted.h"
#include "test_cuda_gen.h"

#define MIB	     (1u << 20)
#define HEAP_BYTES   (48u * MIB)
#define TEXT_BYTES   (16u * MIB)
#define TABLE_OFF    (16u * MIB) /* tables, back to back */
#define TABLE_ROOM   (8u * MIB)
#define WORK_OFF     (24u * MIB) /* a batch's own buffers */
#define DEV_BYTES    (8u * MIB)	 /* the device buffer, heap 1 */
#define MIRROR_OFF   (HEAP_BYTES - DEV_BYTES)
#define MAX_ITEMS    24u
#define N_TABLES     6u
#define POLL_TIMEOUT 60000000000ll
#define SHOW_FAILS   8u
#define VOCAB	     2000u

struct table {
	uint64_t off;
	uint32_t bytes, n;
};

struct ctx {
	uint8_t *heap, *want, *before, *shadow, *shadow_want;
	uint8_t (*words)[17];
	struct table tables[N_TABLES];
	struct gen_rng rng;
	uint32_t failures;
	uint64_t bump[2]; /* a batch's next free byte in each heap */
	uint64_t records, overflows, stream_items, chains, invalid, trusted, small_batches;
};

struct batch {
	struct vyre_exec_item items[MAX_ITEMS];
	struct vyre_exec_result results[MAX_ITEMS], expect[MAX_ITEMS];
	uint32_t order[MAX_ITEMS], group_end[MAX_ITEMS], launch_end[MAX_ITEMS];
	uint32_t n, n_groups, n_launches;
	int serial;			  /* items depend on each other: a group each */
	uint64_t transient[MAX_ITEMS][2]; /* heap 0 ranges of on-chip handoffs */
	uint32_t n_transient;
};

static int is_report(uint32_t op)
{
	return op == VYRE_OP_DFA_REPORT || op == VYRE_OP_DFA_REPORT_COUNTED;
}

static uint32_t below(struct ctx *c, uint32_t n)
{
	return n ? gen_below(&c->rng, n) : 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* ---- text and tables ------------------------------------------------------------- */

static void make_text(struct ctx *c)
{
	static const char sep[] = " \n\t(),;.*=+-{}[]";
	static const char ident[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

	for (uint32_t w = 0; w < VOCAB; w++) {
		const uint32_t len = 3 + below(c, 12);
		for (uint32_t i = 0; i < len; i++)
			c->words[w][i] = (uint8_t)ident[below(c, i ? 63 : 53)];
		c->words[w][len] = 0;
	}
	for (uint32_t at = 0; at < TEXT_BYTES;) {
		const uint32_t w = below(c, 8) ? below(c, 100) : below(c, VOCAB);
		for (const uint8_t *p = c->words[w]; *p && at < TEXT_BYTES; p++)
			c->heap[at++] = *p;
		const uint32_t n = 1 + below(c, 3);
		for (uint32_t i = 0; i < n && at < TEXT_BYTES; i++)
			c->heap[at++] = (uint8_t)sep[below(c, sizeof(sep) - 1)];
	}
}

/*
 * Appends a report section (design.md 6.8) to the table of n states at p
 * (its DFA_SCAN part, `bytes` long): lists of 1-3 ids, strictly increasing,
 * with lens of 1-24, on the states with the accept bit (all states with
 * probability 1/3 when `all`). Returns the table's new length.
 */
static uint32_t add_section(struct ctx *c, uint8_t *p, uint32_t bytes, int all)
{
	const uint32_t n = get32(p);
	uint8_t *first = p + bytes + 8;
	uint8_t *out = first + 4 * ((uint64_t)n + 1);
	uint32_t n_out = 0;

	for (uint32_t s = 0; s < n; s++) {
		const int accept = (get32(p + 8 + 4 * (s / 32)) >> (s % 32)) & 1;
		put32(first + 4 * s, n_out);
		if (all ? below(c, 3) != 0 : !accept)
			continue;
		uint32_t id = below(c, 8);
		for (uint32_t k = 1 + below(c, 3); k > 0; k--) {
			put32(out + 8 * n_out, id);
			put32(out + 8 * n_out + 4, 1 + below(c, 24));
			n_out++;
			id += 1 + below(c, 100);
		}
	}
	put32(first + 4 * n, n_out);
	put32(p + bytes, VYRE_DFA_REPORT_MAGIC);
	put32(p + bytes + 4, n_out);
	return bytes + 8 + 4 * (n + 1) + 8 * n_out;
}

static uint32_t literal_table(struct ctx *c, uint8_t *p, uint32_t count)
{
	struct vyre_dfa_pattern pats[400];
	uint8_t *table;
	uint32_t bytes;

	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *w = c->words[below(c, i < count / 2 ? 100 : VOCAB)];
		const uint32_t len = (uint32_t)strlen((const char *)w);
		const uint32_t from = below(c, 4) ? 0 : below(c, len - 1);
		/* ids repeat (one record per id and end), a fifth are caseless */
		pats[i] = (struct vyre_dfa_pattern){w + from, len - from, below(c, count),
						    below(c, 5) ? 0 : VYRE_DFA_CASELESS};
	}
	if (vyre_dfa_compile(pats, count, VYRE_DFA_DEFAULT_MAX_STATES, &table, &bytes, NULL) != 0)
		return 0;
	memcpy(p, table, bytes);
	free(table);
	return bytes; /* the compiler's own report section */
}

static uint32_t random_table(struct ctx *c, uint8_t *p, uint32_t n)
{
	const uint32_t aw = (n + 31) / 32;

	put32(p, n);
	put32(p + 4, below(c, n));
	for (uint32_t i = 0; i < aw; i++)
		put32(p + 8 + 4 * i, (uint32_t)gen_next(&c->rng));
	for (uint32_t i = 0; i < 256 * n; i++)
		put32(p + 8 + 4 * aw + 4 * i, below(c, n));
	return add_section(c, p, 4 * (2 + aw + 256 * n), 1);
}

static int make_tables(struct ctx *c)
{
	uint64_t at = TABLE_OFF;

	for (uint32_t k = 0; k < N_TABLES; k++) {
		uint8_t *p = c->heap + at;
		const uint32_t bytes = k == 0	? literal_table(c, p, 10)
				       : k == 1 ? literal_table(c, p, 100)
				       : k == 2 ? literal_table(c, p, 400)
				       : k == 3 ? random_table(c, p, 1 + below(c, 8))
				       : k == 4 ? random_table(c, p, 30 + below(c, 8))
						: random_table(c, p, 300);
		if (bytes == 0 || at + bytes > TABLE_OFF + TABLE_ROOM) {
			printf("FAIL: table %u does not build\n", k);
			return -1;
		}
		c->tables[k] = (struct table){at, bytes, get32(p)};
		at = (at + bytes + 63) & ~63ull;
	}
	return 0;
}

/* ---- items ------------------------------------------------------------------------- */

/* A batch buffer of @bytes in @heap (word aligned), or ~0 when full. */
static uint64_t take(struct ctx *c, uint32_t heap, uint32_t bytes)
{
	const uint64_t end = heap ? DEV_BYTES : MIRROR_OFF;
	const uint64_t at = c->bump[heap];

	if (at + bytes + 64 > end)
		return ~0ull;
	c->bump[heap] = (at + bytes + 63) & ~63ull;
	return at;
}

static uint8_t *mem(struct ctx *c, uint32_t heap, uint64_t off)
{
	return heap ? c->shadow + off : c->heap + off;
}

static uint32_t pick_heap(struct ctx *c)
{
	return below(c, 3) == 0;
}

static uint32_t pick_len(struct ctx *c)
{
	static const uint32_t edges[] = {0, 1, 3, 4, 31, 32, 33, 255, 256, 1023, 1024, 4095};

	switch (below(c, 4)) {
	case 0:
		return edges[below(c, sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return below(c, 256 << 10);
	case 2:
		return below(c, 2 << 20);
	default:
		return below(c, 8192);
	}
}

/* Output room for about @want records: overflowing, exact or ample. */
static uint32_t pick_out(struct ctx *c, uint32_t len)
{
	const uint32_t guess = len / 8 + 4;
	const uint32_t cap = below(c, 3) == 0 ? below(c, 4) : below(c, 2 * guess);

	return 16 + 24 * cap + 4 * below(c, 6);
}

/* The table, in the heap where it lies or copied into the device buffer. */
static void set_table(struct ctx *c, struct vyre_exec_item *it, const struct table *t)
{
	it->table_heap = 0;
	it->table_off = t->off;
	it->table_bytes = t->bytes;
	if (pick_heap(c)) {
		const uint64_t at = take(c, 1, t->bytes);
		if (at != ~0ull) {
			memcpy(c->shadow + at, c->heap + t->off, t->bytes);
			it->table_heap = 1;
			it->table_off = at;
		}
	}
	if (below(c, 40) == 0) { /* a bad table: no section, or a transition out of range */
		const uint64_t at = take(c, 0, t->bytes);
		if (at != ~0ull) {
			memcpy(c->heap + at, mem(c, it->table_heap, it->table_off), t->bytes);
			if (below(c, 2))
				it->table_bytes -= 4 + 4 * below(c, 4);
			else
				put32(c->heap + at + 8 + 4 * ((t->n + 31) / 32) +
					  4 * below(c, 256 * t->n),
				      t->n + below(c, 3));
			it->table_heap = 0;
			it->table_off = at;
			c->invalid++;
			return;
		}
	}
	/*
	 * a valid table claimed trusted, as vyred claims a device table found
	 * valid (VYRE_EXEC_TABLE_TRUSTED, VYRE_EXEC_REPORT_TRUSTED): the same
	 * records, the checks skipped on the device and in the oracle alike
	 */
	if (below(c, 3) == 0) {
		it->flags |= VYRE_EXEC_TABLE_TRUSTED | VYRE_EXEC_REPORT_TRUSTED;
		c->trusted++;
	}
}

/* Input: a text range in place, or a counted copy of one. */
static int set_input(struct ctx *c, struct vyre_exec_item *it, uint64_t from, uint32_t len)
{
	const uint32_t heap = pick_heap(c);

	if (it->op == VYRE_OP_DFA_REPORT && heap == 0) {
		it->in_heap = 0;
		it->in_off = from;
		it->in_bytes = len & ~3u;
		return 0;
	}
	const uint32_t room =
	    it->op == VYRE_OP_DFA_REPORT ? len & ~3u : 4 + ((len + 3) & ~3u) + 4 * below(c, 3);
	const uint64_t at = take(c, heap, room + 4);
	if (at == ~0ull)
		return -1;
	uint8_t *p = mem(c, heap, at);
	it->in_heap = heap;
	it->in_off = at;
	it->in_bytes = room;
	if (it->op == VYRE_OP_DFA_REPORT) {
		memcpy(p, c->heap + from, room);
		return 0;
	}
	put32(p, below(c, 40) == 0 ? room - 3 + below(c, 8) : len);
	memcpy(p + 4, c->heap + from, len);
	return 0;
}

static int set_output(struct ctx *c, struct vyre_exec_item *it, uint32_t len)
{
	const uint32_t heap = pick_heap(c), bytes = pick_out(c, len);
	uint64_t at = take(c, heap, bytes + 12);

	if (at == ~0ull)
		return -1;
	/* 4-, 8- and 16-byte aligned outputs: the records' stores differ */
	at += 4 * below(c, 4);
	memset(mem(c, heap, at), 0xab, bytes);
	it->out_heap = heap;
	it->out_off = at;
	it->out_bytes = bytes;
	return 0;
}

/* A new stream buffer (zeroed, sometimes a bad state); ~0 when full. */
static uint64_t new_stream(struct ctx *c, uint32_t heap, uint32_t n_states)
{
	const uint64_t at = take(c, heap, 32);

	if (at == ~0ull)
		return at;
	memset(mem(c, heap, at), 0, 32);
	if (below(c, 30) == 0) {
		/* started 2, a state beyond the table, or not zeroed though not started */
		const uint32_t k = below(c, 3);
		put32(mem(c, heap, at), k == 0 ? 2 : k == 1 ? 1 : 0);
		put32(mem(c, heap, at) + 4 + 4 * (k == 2 && below(c, 2)), n_states + below(c, 3));
		c->invalid++;
	}
	return at;
}

/* One report item over text [from, from + len), maybe continuing a stream. */
static int add_report(struct ctx *c, struct batch *b, const struct table *t, uint64_t from,
		      uint32_t len, uint32_t stream_heap, uint64_t stream)
{
	/* an unaligned range now and then (a stream's pieces stay contiguous) */
	const uint32_t shift = stream == ~0ull && below(c, 8) == 0 ? below(c, 4) : 0;
	struct vyre_exec_item *it = &b->items[b->n];

	*it = (struct vyre_exec_item){.op = below(c, 2) ? VYRE_OP_DFA_REPORT_COUNTED
							: VYRE_OP_DFA_REPORT};
	/* a whole input is a multiple of 4 bytes: a stream piece is then cut there */
	if (set_input(c, it, from + shift, len) || set_output(c, it, len))
		return -1;
	set_table(c, it, t);
	if (stream != ~0ull) {
		it->aux_heap = stream_heap;
		it->aux_off = stream;
		it->aux_bytes = 16 + 16 * below(c, 2);
		c->stream_items++;
	}
	b->n++;
	return 0;
}

/* A stream: the text [from, from + len) cut into 2-5 items of one batch. */
static int add_stream(struct ctx *c, struct batch *b, const struct table *t)
{
	const uint32_t pieces = 2 + below(c, 4), heap = pick_heap(c);
	const uint64_t s = new_stream(c, heap, t->n);
	uint64_t from = below(c, TEXT_BYTES - (4 << 20));

	if (s == ~0ull || b->n + pieces > MAX_ITEMS)
		return -1;
	b->serial = 1;
	for (uint32_t k = 0; k < pieces; k++) {
		const uint32_t len = below(c, 3) ? below(c, 3000) : below(c, 600 << 10);
		const uint32_t before = b->n;
		if (add_report(c, b, t, from, len, heap, s) != 0)
			return -1;
		/* the next piece starts where this one's scanned bytes end */
		const struct vyre_exec_item *it = &b->items[before];
		from += it->op == VYRE_OP_DFA_REPORT ? it->in_bytes : len;
	}
	return 0;
}

/* BASE64_DECODE -> DFA_REPORT_COUNTED, marked for an on-chip handoff. */
static int add_chain(struct ctx *c, struct batch *b, const struct table *t)
{
	const uint32_t len = below(c, 2) ? below(c, 4096) : below(c, 300 << 10);
	const uint32_t enc_room = 4 + (len + 2) / 3 * 4 + 4;
	const uint32_t d_bytes = 4 + ((len + 3) & ~3u);
	const uint64_t from = below(c, TEXT_BYTES - len);
	const uint64_t in = take(c, 0, enc_room), mid = take(c, 0, d_bytes);

	if (in == ~0ull || mid == ~0ull || b->n + 2 > MAX_ITEMS)
		return -1;
	const uint32_t enc = test_base64_encode(c->heap + from, len, c->heap + in + 4);
	put32(c->heap + in, enc);
	if (enc && below(c, 10) == 0) {
		c->heap[in + 4 + below(c, enc)] = '!';
		c->invalid++;
	}
	memset(c->heap + mid, 0x77, d_bytes);
	b->items[b->n] = (struct vyre_exec_item){.op = VYRE_OP_BASE64_DECODE,
						 .flags = VYRE_EXEC_HANDOFF_OUT,
						 .in_off = in,
						 .in_bytes = (4 + enc + 3) & ~3u,
						 .out_off = mid,
						 .out_bytes = d_bytes};
	struct vyre_exec_item *r = &b->items[b->n + 1];
	*r = (struct vyre_exec_item){.op = VYRE_OP_DFA_REPORT_COUNTED,
				     .flags = VYRE_EXEC_HANDOFF_IN | VYRE_EXEC_AFTER_PREV,
				     .prev = b->n,
				     .in_off = mid,
				     .in_bytes = d_bytes};
	if (set_output(c, r, len))
		return -1;
	set_table(c, r, t);
	if (below(c, 2)) {
		const uint32_t heap = pick_heap(c);
		const uint64_t s = new_stream(c, heap, t->n);
		if (s == ~0ull)
			return -1;
		r->aux_heap = heap;
		r->aux_off = s;
		r->aux_bytes = 16;
	}
	b->transient[b->n_transient][0] = mid;
	b->transient[b->n_transient][1] = d_bytes;
	b->n_transient++;
	b->n += 2;
	b->serial = 1;
	c->chains++;
	return 0;
}

/* ---- running -------------------------------------------------------------------- */

static void make_batch(struct ctx *c, struct batch *b)
{
	memset(b, 0, sizeof(*b));
	c->bump[0] = WORK_OFF;
	c->bump[1] = 0;
	for (uint32_t k = 1 + below(c, 6); k > 0 && b->n < MAX_ITEMS - 6; k--) {
		const struct table *t = &c->tables[below(c, N_TABLES)];
		const uint32_t what = below(c, 7);

		if (what == 6) {
			/* many small items: warp units, several to a block at once */
			while (b->n < MAX_ITEMS - 6) {
				const uint32_t len =
				    below(c, 2) ? below(c, 4097) : below(c, 16 << 10);
				if (add_report(c, b, &c->tables[below(c, N_TABLES)],
					       below(c, TEXT_BYTES - len - 8), len, 0, ~0ull))
					break;
			}
			c->small_batches++;
		} else if (what == 0)
			add_stream(c, b, t);
		else if (what == 1)
			add_chain(c, b, t);
		else {
			const uint32_t len = pick_len(c);
			add_report(c, b, t, below(c, TEXT_BYTES - len - 8), len, 0, ~0ull);
		}
	}
	/* serial: a group each, in order, one launch (a chain's members share it) */
	for (uint32_t i = 0; i < b->n; i++)
		b->order[i] = i;
	if (b->serial || below(c, 2)) {
		for (uint32_t i = 0; i < b->n; i++)
			b->group_end[i] = i + 1;
		b->n_groups = b->n;
	} else {
		b->group_end[0] = b->n;
		b->n_groups = b->n ? 1 : 0;
	}
	b->n_launches = b->n ? 1 : 0;
	b->launch_end[0] = b->n_groups;
	if (!b->serial && b->n_groups > 1 && below(c, 2)) {
		for (uint32_t g = 0; g < b->n_groups; g++)
			b->launch_end[g] = g + 1;
		b->n_launches = b->n_groups;
	}
}

static int copy_dev(struct vyre_backend *be, int up)
{
	struct vyre_exec_item it = {.op = VYRE_OP_COPY,
				    .in_heap = up ? 0 : 1,
				    .out_heap = up ? 1 : 0,
				    .in_bytes = DEV_BYTES,
				    .out_bytes = DEV_BYTES,
				    .in_off = up ? MIRROR_OFF : 0,
				    .out_off = up ? 0 : MIRROR_OFF};
	const uint32_t order = 0, group_end = 1, launch_end = 1;
	struct vyre_exec_result r;
	const struct vyre_exec_batch batch = {
	    &it, 1, {&order, 1, &group_end, 1, &launch_end, 1}, &r};

	return gen_run_one(be, &batch, POLL_TIMEOUT) == 1 && r.status == 0 ? 0 : -1;
}

/*
 * A report item whose output differs: where, and what it ran as (a warp or a
 * block by its size, host or device input, a chain's member), so that a
 * failure says which path wrote it without another run.
 */
static void show_report(const struct ctx *c, const struct batch *b, const char *mode,
			uint32_t index, uint32_t i)
{
	const struct vyre_exec_item *it = &b->items[i];
	const uint8_t *got = (it->out_heap ? c->heap + MIRROR_OFF : c->heap) + it->out_off;
	const uint8_t *want = (it->out_heap ? c->shadow_want : c->want) + it->out_off;
	const size_t hdr = sizeof(struct vyre_report_header),
		     rec = sizeof(struct vyre_report_record);
	const uint32_t cap = it->out_bytes >= hdr ? (uint32_t)((it->out_bytes - hdr) / rec) : 0;
	struct vyre_report_header gh, wh;
	uint32_t k = 0;

	if (it->out_bytes < hdr || memcmp(got, want, it->out_bytes) == 0)
		return;
	memcpy(&gh, got, hdr);
	memcpy(&wh, want, hdr);
	while (k < cap && memcmp(got + hdr + rec * k, want + hdr + rec * k, rec) == 0)
		k++;
	printf("FAIL %s batch %u item %u: %s in %u bytes heap %u at %llu (%s), table heap %u "
	       "bytes %u flags 0x%x, out %u (cap %u), stream %u, after-prev %u: "
	       "got %u records flags 0x%x, want %u flags 0x%x; first record differing %u",
	       mode, index, i, gen_op_name(it->op), it->in_bytes, it->in_heap,
	       (unsigned long long)it->in_off,
	       it->in_bytes <= VYRE_MK_DFA_WARP_BYTES ? "warp" : "block", it->table_heap,
	       it->table_bytes, it->flags, it->out_bytes, cap, it->aux_bytes,
	       (it->flags & VYRE_EXEC_AFTER_PREV) != 0, gh.kept, gh.flags, wh.kept, wh.flags, k);
	if (k < cap) {
		struct vyre_report_record g, w;

		memcpy(&g, got + hdr + rec * k, rec);
		memcpy(&w, want + hdr + rec * k, rec);
		printf(": got (id %u, %llu, %llu) want (id %u, %llu, %llu)", g.id,
		       (unsigned long long)g.start, (unsigned long long)g.end, w.id,
		       (unsigned long long)w.start, (unsigned long long)w.end);
	}
	printf("\n");
}

static uint32_t run_batch(struct ctx *c, struct vyre_backend *be, struct batch *b, const char *mode,
			  uint32_t index)
{
	const struct vyre_exec_batch batch = {
	    b->items,
	    b->n,
	    {b->order, b->n, b->group_end, b->n_groups, b->launch_end, b->n_launches},
	    b->results};
	uint32_t fails = 0;

	/* the device buffer gets the shadow's bytes through the heap's mirror */
	memcpy(c->heap + MIRROR_OFF, c->shadow, DEV_BYTES);
	if (copy_dev(be, 1) != 0) {
		printf("FAIL %s batch %u: upload: %s\n", mode, index, vyre_cuda_last_error(be));
		return 1;
	}
	memcpy(c->before, c->heap, HEAP_BYTES);
	memcpy(c->want, c->heap, HEAP_BYTES);
	memcpy(c->shadow_want, c->shadow, DEV_BYTES);
	const struct vyre_heap_view views[2] = {{c->want, HEAP_BYTES}, {c->shadow_want, DEV_BYTES}};
	vyre_exec_sequential(views, b->items, b->n, b->expect);
	for (uint32_t k = 0; k < b->n_transient; k++)
		memcpy(c->want + b->transient[k][0], c->before + b->transient[k][0],
		       b->transient[k][1]);
	memcpy(c->want + MIRROR_OFF, c->shadow_want, DEV_BYTES);
	for (uint32_t i = 0; i < b->n; i++)
		b->results[i] = (struct vyre_exec_result){0x7eadbeef, 0, 0x5eed5eed5eedull};

	const int done = gen_run_one(be, &batch, POLL_TIMEOUT);
	if (done != 1 || copy_dev(be, 0) != 0) {
		printf("FAIL %s batch %u: submit/reap %d (%s)\n", mode, index, done,
		       vyre_cuda_last_error(be));
		return 1;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		const struct vyre_exec_result *r = &b->results[i], *e = &b->expect[i];
		const struct vyre_exec_item *it = &b->items[i];

		if (e->status == 0 && is_report(it->op)) {
			const uint8_t *h = (it->out_heap ? c->shadow_want : c->want) + it->out_off;
			c->records += get32(h);
			c->overflows += (get32(h + 4) & VYRE_REPORT_OVERFLOW) != 0;
		}
		if (r->status != e->status || r->result != e->result) {
			if (c->failures + fails < SHOW_FAILS)
				printf("FAIL %s batch %u item %u (%s, in %u bytes heap %u at %llu, "
				       "out %u, aux %u): got %d %llu, want %d %llu\n",
				       mode, index, i, gen_op_name(it->op), it->in_bytes,
				       it->in_heap, (unsigned long long)it->in_off, it->out_bytes,
				       it->aux_bytes, r->status, (unsigned long long)r->result,
				       e->status, (unsigned long long)e->result);
			fails++;
		}
	}
	if (memcmp(c->heap, c->want, HEAP_BYTES) != 0) {
		for (uint64_t o = 0; o < HEAP_BYTES; o++)
			if (c->heap[o] != c->want[o]) {
				printf("FAIL %s batch %u: %s byte %llu is 0x%02x, want 0x%02x\n",
				       mode, index, o >= MIRROR_OFF ? "device buffer" : "heap",
				       (unsigned long long)(o >= MIRROR_OFF ? o - MIRROR_OFF : o),
				       c->heap[o], c->want[o]);
				break;
			}
		for (uint32_t i = 0; i < b->n; i++)
			if (b->expect[i].status == 0 && is_report(b->items[i].op))
				show_report(c, b, mode, index, i);
		fails++;
	}
	/* the next batch starts from what this one left */
	memcpy(c->heap, c->want, HEAP_BYTES);
	memcpy(c->shadow, c->shadow_want, DEV_BYTES);
	return fails;
}

static void run_mode(struct ctx *c, enum vyre_cuda_mode mode, uint32_t n_batches)
{
	const char *name = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	const struct vyre_backend_config cfg = {
	    .max_heaps = 2, .max_items = MAX_ITEMS, .cuda_mode = mode, .device = 0};
	struct vyre_backend *b;
	struct vyre_cuda_stats st;
	static struct batch bt;
	char why[512];
	const uint32_t before = c->failures;

	if (vyre_cuda_backend->init(&b, &cfg, why, sizeof(why)) != 0) {
		printf("FAIL %s: init: %s\n", name, why);
		c->failures++;
		return;
	}
	printf("%s: %s\n", name, vyre_cuda_describe(b));
	if (vyre_cuda_backend->register_heap(b, 0, c->heap, HEAP_BYTES) != 0 ||
	    vyre_cuda_backend->alloc_device(b, 1, DEV_BYTES, why, sizeof(why)) != 0) {
		printf("FAIL %s: heaps: %s %s\n", name, why, vyre_cuda_last_error(b));
		c->failures++;
		vyre_cuda_backend->shutdown(b);
		return;
	}
	memset(c->shadow, 0, DEV_BYTES);
	for (uint32_t i = 0; i < n_batches; i++) {
		make_batch(c, &bt);
		c->failures += run_batch(c, b, &bt, name, i);
	}
	printf("%s: %u batches, %u failures\n", name, n_batches, c->failures - before);
	vyre_cuda_get_stats(b, &st);
	if (st.faults) {
		printf("FAIL %s: %llu device faults\n", name, (unsigned long long)st.faults);
		c->failures++;
	}
	vyre_cuda_backend->free_device(b, 1);
	vyre_cuda_backend->unregister_heap(b, 0);
	vyre_cuda_backend->shutdown(b);
}

int main(void)
{
	static uint8_t words[VOCAB][17];
	const char *batches = getenv("VYRE_CUDA_REPORT_BATCHES");
	struct ctx c = {.words = words, .rng = {0x5e9041}};
	const uint32_t n =
	    batches && atoi(batches) > 0 ? (uint32_t)atoi(batches) : 200 * gen_scale();

	setvbuf(stdout, NULL, _IOLBF, 0);
	const int skip = gen_require_gpu();

	if (skip)
		return skip;
	c.heap = gen_heap_map(HEAP_BYTES);
	c.want = malloc(HEAP_BYTES);
	c.before = malloc(HEAP_BYTES);
	c.shadow = malloc(DEV_BYTES);
	c.shadow_want = malloc(DEV_BYTES);
	if (!c.heap || !c.want || !c.before || !c.shadow || !c.shadow_want) {
		printf("FAIL: no memory\n");
		c.failures++;
	} else {
		make_text(&c);
	}
	for (int m = 0; m < 2 && !c.failures; m++) {
		if (make_tables(&c) != 0)
			c.failures++;
		else
			run_mode(&c, m == 0 ? VYRE_CUDA_PERSISTENT : VYRE_CUDA_LAUNCH, n);
	}
	printf("cuda report: %llu records kept, %llu overflowed reports, %llu stream items, %llu "
	       "chains, %llu invalid operands, %llu trusted tables, %llu batches of small items; "
	       "%u failures\n",
	       (unsigned long long)c.records, (unsigned long long)c.overflows,
	       (unsigned long long)c.stream_items, (unsigned long long)c.chains,
	       (unsigned long long)c.invalid, (unsigned long long)c.trusted,
	       (unsigned long long)c.small_batches, c.failures);
	if (c.heap)
		gen_heap_unmap(c.heap, HEAP_BYTES);
	free(c.want);
	free(c.before);
	free(c.shadow);
	free(c.shadow_want);
	return c.failures ? 1 : 0;
}
