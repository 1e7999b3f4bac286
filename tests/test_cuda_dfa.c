/* SPDX-License-Identifier: MIT */
/*
 * DFA_SCAN and DFA_SCAN_COUNTED on the GPU (gpu/mk_dfa.cuh) against the
 * sequential walk, in persistent and in launch mode: literal-set automata
 * (vyre_dfa_compile, patterns drawn from the text so matches are dense and
 * straddle chunk boundaries), random tables small enough for shared memory
 * and too big for it, counters mod m (every byte a permutation: guesses
 * never converge), counters that reset on one rare byte, one-state tables,
 * accepting start states, malformed tables; inputs of 0 bytes up to 64 MiB,
 * lengths that are not a multiple of any chunk, counted lengths of any byte
 * count and too large ones. Every status, result and heap byte is compared.
 * Last, a host thread rewrites a table while large scans read it: the scans
 * may count anything or fail with VYRE_E_INVAL, but the device must not
 * fault, and the next batch must be right again.
 *
 * Exits 77 where no GPU is present. VYRE_TEST_SCALE multiplies the random
 * batches (150 per mode); VYRE_CUDA_DFA_BATCHES sets their count outright
 * and VYRE_CUDA_DFA_BIG=0 leaves out the 64 MiB scans and shrinks the
 * rewritten table's to 4 MiB (small runs under compute-sanitizer).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"
#include "cuda_backend.h"
#include "vyre/dfa.h"
#include "test_cuda_gen.h"

#define MIB	     (1u << 20)
#define HEAP_BYTES   (128u * MIB)
#define TEXT_BYTES   (64u * MIB + 4096u)
#define TABLE_OFF    (66u * MIB) /* tables, back to back */
#define TABLE_ROOM   (48u * MIB)
#define OUT_OFF	     (120u * MIB) /* item i's output word at OUT_OFF + 64 * i */
#define MAX_ITEMS    8u
#define POLL_TIMEOUT 60000000000ll
#define SHOW_FAILS   8u

enum table_kind {
	T_LIT10,
	T_LIT100,
	T_LIT1000,
	T_RANDOM_SMALL, /* 1..8 states: shared memory */
	T_RANDOM_MID,	/* 30..37 */
	T_RANDOM_BIG,	/* 300 states: beyond the default shared memory */
	T_RANDOM_HUGE,	/* 5000 states: beyond 16-bit entries' reach in shared memory */
	T_COUNTER,	/* bytes' sum mod m: never converges */
	T_RESET,	/* bytes since the last RESET_BYTE mod m */
	T_ONE,		/* one state */
	T_ACCEPT_START, /* random, its start state accepting */
	T_BAD,		/* malformed */
	T_KINDS
};

static const char *const kind_names[T_KINDS] = {
    "lit10",	  "lit100",  "lit1000", "random1-8", "random30-37",	"random300",
    "random5000", "counter", "reset",	"one-state", "accepting-start", "malformed"};

#define RESET_BYTE 0xffu

struct table {
	uint64_t off;
	uint32_t bytes;
	int valid;
};

struct ctx {
	uint8_t *heap, *want;
	int big; /* the 64 MiB scans, and 32 MiB ones while a table is rewritten */
	uint8_t (*words)[17];
	struct table tables[T_KINDS];
	struct gen_rng rng;
	uint32_t failures;
};

static void put_word(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static uint32_t get_word(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* ---- the text and the tables ----------------------------------------------------- */

#define VOCAB 4000u

/* Words of identifier characters between separators, like source code. */
static void make_text(struct ctx *c)
{
	uint8_t(*words)[17] = c->words;

	static const char sep[] = " \n\t(),;.*=+-{}[]";
	static const char ident[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";

	for (uint32_t w = 0; w < VOCAB; w++) {
		const uint32_t len = 5 + gen_below(&c->rng, 12);
		for (uint32_t i = 0; i < len; i++)
			words[w][i] = (uint8_t)ident[gen_below(&c->rng, i ? 63 : 53)];
		words[w][len] = 0;
	}
	for (uint32_t at = 0; at < TEXT_BYTES;) {
		/* a few frequent words, as in real text */
		const uint32_t w =
		    gen_below(&c->rng, 8) ? gen_below(&c->rng, 200) : gen_below(&c->rng, VOCAB);
		for (const uint8_t *p = words[w]; *p && at < TEXT_BYTES; p++)
			c->heap[at++] = *p;
		const uint32_t n = 1 + gen_below(&c->rng, 3);
		for (uint32_t i = 0; i < n && at < TEXT_BYTES; i++)
			c->heap[at++] = (uint8_t)sep[gen_below(&c->rng, sizeof(sep) - 1)];
	}
}

static uint32_t random_table(struct ctx *c, uint8_t *p, uint32_t n, enum table_kind kind)
{
	const uint32_t accept_words = (n + 31) / 32;
	uint8_t *next = p + 8 + 4 * accept_words;

	put_word(p, n);
	put_word(p + 4, gen_below(&c->rng, n));
	for (uint32_t i = 0; i < accept_words; i++)
		put_word(p + 8 + 4 * i, (uint32_t)gen_next(&c->rng) & (uint32_t)gen_next(&c->rng));
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t t;
			if (kind == T_COUNTER)
				t = (s + b) % n;
			else if (kind == T_RESET)
				t = b == RESET_BYTE ? 0 : (s + 1) % n;
			else
				t = gen_below(&c->rng, n);
			put_word(next + 4 * (256 * (uint64_t)s + b), t);
		}
	if (kind == T_ACCEPT_START) {
		const uint32_t start = get_word(p + 4);
		put_word(p + 8 + 4 * (start / 32),
			 get_word(p + 8 + 4 * (start / 32)) | 1u << (start % 32));
	}
	return (uint32_t)vyre_dfa_table_bytes(n);
}

static uint32_t literal_table(struct ctx *c, uint8_t *p, uint8_t words[VOCAB][17], uint32_t count)
{
	struct vyre_dfa_pattern pats[1000];
	uint8_t *table;
	uint32_t bytes;

	for (uint32_t i = 0; i < count; i++) {
		/* a word, or a piece of one: matches inside words and across their ends */
		const uint8_t *w = words[gen_below(&c->rng, i < count / 2 ? 200 : VOCAB)];
		const uint32_t len = (uint32_t)strlen((const char *)w);
		const uint32_t from = gen_below(&c->rng, 4) ? 0 : gen_below(&c->rng, len - 2);
		pats[i] = (struct vyre_dfa_pattern){w + from, len - from, i, 0};
	}
	if (vyre_dfa_compile(pats, count, VYRE_DFA_DEFAULT_MAX_STATES, &table, &bytes, NULL) != 0)
		return 0;
	memcpy(p, table, bytes);
	free(table);
	return bytes;
}

static int make_tables(struct ctx *c)
{
	uint8_t(*words)[17] = c->words;

	uint64_t off = TABLE_OFF;

	for (int k = 0; k < T_KINDS; k++) {
		uint8_t *p = c->heap + off;
		uint32_t bytes = 0;

		switch (k) {
		case T_LIT10:
		case T_LIT100:
		case T_LIT1000:
			bytes = literal_table(c, p, words,
					      k == T_LIT10    ? 10
					      : k == T_LIT100 ? 100
							      : 1000);
			break;
		case T_RANDOM_SMALL:
			bytes = random_table(c, p, 1 + gen_below(&c->rng, 8), T_RANDOM_SMALL);
			break;
		case T_RANDOM_MID:
			bytes = random_table(c, p, 30 + gen_below(&c->rng, 8), T_RANDOM_MID);
			break;
		case T_RANDOM_BIG:
			bytes = random_table(c, p, 300, T_RANDOM_BIG);
			break;
		case T_RANDOM_HUGE:
			bytes = random_table(c, p, 5000, T_RANDOM_HUGE);
			break;
		case T_COUNTER:
		case T_RESET:
			bytes = random_table(c, p, 2 + gen_below(&c->rng, 11), (enum table_kind)k);
			break;
		case T_ONE:
			bytes = random_table(c, p, 1, T_ONE);
			break;
		case T_ACCEPT_START:
			bytes = random_table(c, p, 3 + gen_below(&c->rng, 20), T_ACCEPT_START);
			break;
		default:
			/* a transition out of range deep inside a big table */
			bytes = random_table(c, p, 700, T_BAD);
			put_word(p + 8 + 4 * 22 + 4 * (256 * 650 + 17), 700);
			break;
		}
		if (bytes == 0 || off + bytes > TABLE_OFF + TABLE_ROOM) {
			printf("FAIL: table %s does not fit (%u bytes)\n", kind_names[k], bytes);
			return -1;
		}
		c->tables[k] = (struct table){off, bytes, k != T_BAD};
		off = (off + bytes + 63) & ~(uint64_t)63;
	}
	/* RESET_BYTE is rare: once in 4 KiB or so, and never in the literals' text otherwise */
	for (uint32_t i = 0; i < TEXT_BYTES / 4096; i++)
		c->heap[gen_below(&c->rng, TEXT_BYTES)] = RESET_BYTE;
	return 0;
}

/* ---- the reference ---------------------------------------------------------------------- */

/* The sequential walk over @len bytes at @in, as gpu/ops.c does it; -1 for a malformed table. */
static int64_t reference(const uint8_t *table, uint32_t table_bytes, const uint8_t *in,
			 uint32_t len)
{
	const uint32_t n = get_word(table), start = get_word(table + 4);
	const uint64_t need = vyre_dfa_table_bytes(n);

	if (need == 0 || need > table_bytes || start >= n)
		return -1;
	const uint8_t *accept = table + 8, *next = accept + 4 * (((uint64_t)n + 31) / 32);
	for (uint64_t i = 0; i < 256 * (uint64_t)n; i++)
		if (get_word(next + 4 * i) >= n)
			return -1;
	uint32_t s = start, hits = 0;
	for (uint32_t i = 0; i < len; i++) {
		s = get_word(next + 4 * (256 * (uint64_t)s + in[i]));
		hits += (get_word(accept + 4 * (s / 32)) >> (s % 32)) & 1u;
	}
	return hits;
}

/* ---- batches ------------------------------------------------------------------------------ */

struct batch {
	struct vyre_exec_item items[MAX_ITEMS];
	struct vyre_exec_result results[MAX_ITEMS], expect[MAX_ITEMS];
	uint32_t order[MAX_ITEMS], group_end[1], launch_end[1];
	const char *what[MAX_ITEMS];
	uint32_t n;
};

/*
 * Item b->n of @b: a scan of @len bytes at @in_off with table @kind
 * (counted: a length word, @len or a too large one when @bad_len, in the 4
 * bytes before them, which may lie in another item's bytes: expect() runs
 * once every item is there).
 */
static void add_item(struct ctx *c, struct batch *b, enum table_kind kind, uint64_t in_off,
		     uint32_t len, int counted, int bad_len)
{
	const uint32_t i = b->n++;
	const struct table *t = &c->tables[kind];
	struct vyre_exec_item *it = &b->items[i];

	*it = (struct vyre_exec_item){.op = counted ? VYRE_OP_DFA_SCAN_COUNTED : VYRE_OP_DFA_SCAN,
				      .in_off = in_off,
				      .in_bytes = len & ~3u,
				      .out_off = OUT_OFF + 64 * (uint64_t)i,
				      .out_bytes = 4,
				      .table_off = t->off,
				      .table_bytes = t->bytes};
	if (counted) {
		const uint32_t room = (len + 3) & ~3u;

		it->in_off = in_off - 4;
		it->in_bytes = 4 + room;
		put_word(c->heap + it->in_off, bad_len ? room + 1 + gen_below(&c->rng, 3) : len);
	}
	b->order[i] = i;
	b->what[i] = kind_names[kind];
}

/* Every item's expected outcome into b->expect and the expected heap c->want. */
static void expect(struct ctx *c, struct batch *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		const struct vyre_exec_item *it = &b->items[i];
		const uint8_t *table = c->heap + it->table_off;
		int64_t want;

		if (it->op == VYRE_OP_DFA_SCAN_COUNTED) {
			const uint32_t L = get_word(c->heap + it->in_off);
			want = L > it->in_bytes - 4
				   ? -1
				   : reference(table, it->table_bytes, c->heap + it->in_off + 4, L);
		} else {
			want =
			    reference(table, it->table_bytes, c->heap + it->in_off, it->in_bytes);
		}
		put_word(c->heap + it->out_off, 0xdeadbeef);
		b->expect[i] = (struct vyre_exec_result){want < 0 ? VYRE_E_INVAL : 0, 0,
							 want < 0 ? 0 : (uint64_t)want};
		b->results[i] = (struct vyre_exec_result){0x7eadbeef, 0, 0x5eed5eed5eedull};
	}
	memcpy(c->want, c->heap, HEAP_BYTES);
	for (uint32_t i = 0; i < b->n; i++)
		if (b->expect[i].status == 0)
			put_word(c->want + b->items[i].out_off, (uint32_t)b->expect[i].result);
}

static int run_batch(struct ctx *c, struct vyre_backend *b, struct batch *bt, const char *mode,
		     const char *label)
{
	const struct vyre_exec_batch batch = {
	    bt->items, bt->n, {bt->order, bt->n, bt->group_end, 1, bt->launch_end, 1}, bt->results};
	int fails = 0;

	bt->group_end[0] = bt->n;
	bt->launch_end[0] = 1;
	const int done = gen_run_one(b, &batch, POLL_TIMEOUT);

	if (done != 1) {
		printf("FAIL %s %s: submit/reap %d (%s)\n", mode, label, done,
		       vyre_cuda_last_error(b));
		return 1;
	}
	for (uint32_t i = 0; i < bt->n; i++) {
		const struct vyre_exec_result *r = &bt->results[i], *e = &bt->expect[i];
		const struct vyre_exec_item *it = &bt->items[i];

		if (r->status != e->status || r->result != e->result) {
			if (c->failures + fails < SHOW_FAILS)
				printf("FAIL %s %s item %u (%s %s, %u bytes at %llu): got status "
				       "%d result %llu, want %d %llu\n",
				       mode, label, i,
				       it->op == VYRE_OP_DFA_SCAN ? "DFA_SCAN" : "DFA_SCAN_COUNTED",
				       bt->what[i], it->in_bytes, (unsigned long long)it->in_off,
				       r->status, (unsigned long long)r->result, e->status,
				       (unsigned long long)e->result);
			fails++;
		}
	}
	if (memcmp(c->heap, c->want, HEAP_BYTES) != 0) {
		for (uint64_t o = 0; o < HEAP_BYTES; o++)
			if (c->heap[o] != c->want[o]) {
				printf("FAIL %s %s: heap byte %llu is 0x%02x, want 0x%02x\n", mode,
				       label, (unsigned long long)o, c->heap[o], c->want[o]);
				break;
			}
		memcpy(c->want, c->heap, HEAP_BYTES);
		fails++;
	}
	return fails;
}

/* A length for a random item: every size class, mostly odd ones. */
static uint32_t pick_len(struct ctx *c, enum table_kind kind)
{
	static const uint32_t edges[] = {0,
					 1,
					 3,
					 4,
					 15,
					 16,
					 17,
					 VYRE_MK_DFA_WARP_BYTES - 4,
					 VYRE_MK_DFA_WARP_BYTES,
					 VYRE_MK_DFA_WARP_BYTES + 4,
					 VYRE_MK_DFA_BLOCK_BYTES,
					 VYRE_MK_DFA_BLOCK_BYTES + 4,
					 VYRE_MK_DFA_PART_MIN * 3 + 12};
	/* a counter walks sequentially over host memory: keep it to a few MiB */
	const uint32_t most = kind == T_COUNTER ? 4 * MIB : 8 * MIB;

	switch (gen_below(&c->rng, 4)) {
	case 0:
		return edges[gen_below(&c->rng, sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return gen_below(&c->rng, 4096);
	case 2:
		return gen_below(&c->rng, 256 * 1024);
	default:
		return gen_below(&c->rng, most);
	}
}

static void random_batches(struct ctx *c, struct vyre_backend *b, const char *mode, uint32_t n)
{
	struct batch bt;
	char label[32];

	for (uint32_t k = 0; k < n; k++) {
		bt.n = 0;
		const uint32_t items = 1 + gen_below(&c->rng, 6);
		for (uint32_t i = 0; i < items; i++) {
			const enum table_kind kind = (enum table_kind)gen_below(&c->rng, T_KINDS);
			const uint32_t len = pick_len(c, kind);
			/* 4-byte aligned, sometimes 16 */
			const uint64_t in_off =
			    (gen_below(&c->rng, 2) ? 16 : 4) * (1 + gen_below(&c->rng, 4096));
			const int counted = gen_below(&c->rng, 2);
			add_item(c, &bt, kind, in_off, len, counted,
				 counted && gen_below(&c->rng, 10) == 0);
		}
		expect(c, &bt);
		snprintf(label, sizeof(label), "batch %u", k);
		c->failures += run_batch(c, b, &bt, mode, label);
	}
}

/* The largest scans: 64 MiB with each convergent table, one item each. */
static void big_batches(struct ctx *c, struct vyre_backend *b, const char *mode)
{
	static const enum table_kind kinds[] = {T_LIT10,       T_LIT100, T_LIT1000, T_RANDOM_BIG,
						T_RANDOM_HUGE, T_RESET,	 T_ONE,	    T_BAD};
	struct batch bt;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char label[48];

		bt.n = 0;
		add_item(c, &bt, kinds[k], 16, 64 * MIB, k % 2, 0);
		expect(c, &bt);
		snprintf(label, sizeof(label), "64 MiB %s", kind_names[kinds[k]]);
		c->failures += run_batch(c, b, &bt, mode, label);
	}
}

/* ---- a table rewritten while it is read ------------------------------------------- */

struct scribbler {
	uint8_t *table;
	uint32_t bytes;
	volatile int stop;
	uint64_t seed;
};

static void *scribble(void *arg)
{
	struct scribbler *s = arg;
	struct gen_rng r = {s->seed};

	while (!s->stop) {
		const uint32_t at = 4 * gen_below(&r, s->bytes / 4);
		/* n_states, start, transitions: anything, huge values included */
		__atomic_store_n((uint32_t *)(s->table + at), (uint32_t)gen_next(&r),
				 __ATOMIC_RELAXED);
	}
	return NULL;
}

static void hostile(struct ctx *c, struct vyre_backend *b, const char *mode)
{
	static const enum table_kind kinds[] = {T_RANDOM_HUGE, T_RANDOM_SMALL, T_LIT100};

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const struct table *t = &c->tables[kinds[k]];
		struct scribbler s = {c->heap + t->off, t->bytes, 0, gen_next(&c->rng)};
		struct batch bt = {.n = 0};
		pthread_t th;

		add_item(c, &bt, kinds[k], 16, c->big ? 32 * MIB : 4 * MIB, 0, 0);
		add_item(c, &bt, kinds[k], 64, 8 * MIB, 1, 0);
		add_item(c, &bt, kinds[k], 4096, 8000, 0, 0);
		add_item(c, &bt, kinds[k], 8192, 100000, 1, 0);
		expect(c, &bt);
		if (pthread_create(&th, NULL, scribble, &s) != 0) {
			printf("FAIL %s hostile: pthread_create\n", mode);
			c->failures++;
			return;
		}
		const struct vyre_exec_batch batch = {
		    bt.items,
		    bt.n,
		    {bt.order, bt.n, bt.group_end, 1, bt.launch_end, 1},
		    bt.results};
		bt.group_end[0] = bt.n;
		bt.launch_end[0] = 1;
		const int done = gen_run_one(b, &batch, POLL_TIMEOUT);

		s.stop = 1;
		pthread_join(th, NULL);
		for (uint32_t i = 0; done == 1 && i < bt.n; i++) {
			if (bt.results[i].status == 0 || bt.results[i].status == VYRE_E_INVAL)
				continue;
			printf("FAIL %s hostile %s item %u: status %d\n", mode,
			       kind_names[kinds[k]], i, bt.results[i].status);
			c->failures++;
		}
		if (done != 1 || !vyre_cuda_usable(b)) {
			printf("FAIL %s hostile %s: submit/reap %d, usable %d (%s)\n", mode,
			       kind_names[kinds[k]], done, vyre_cuda_usable(b),
			       vyre_cuda_last_error(b));
			c->failures++;
			return;
		}
		/* what the scribbler left is the table now; the outputs are whatever they are */
		memcpy(c->want, c->heap, HEAP_BYTES);
	}
	printf("%s: hostile rewrites: no fault\n", mode);
}

/* ---- main ---------------------------------------------------------------------------------- */

static void run_mode(struct ctx *c, enum vyre_cuda_mode mode, uint32_t n_random)
{
	const char *name = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	const struct vyre_backend_config cfg = {
	    .max_heaps = 1, .max_items = MAX_ITEMS, .cuda_mode = mode, .device = 0};
	struct vyre_backend *b;
	struct vyre_cuda_stats st;
	char why[512];
	const uint32_t before = c->failures;

	if (vyre_cuda_backend->init(&b, &cfg, why, sizeof(why)) != 0) {
		printf("FAIL %s: init: %s\n", name, why);
		c->failures++;
		return;
	}
	printf("%s: %s\n", name, vyre_cuda_describe(b));
	if (vyre_cuda_backend->register_heap(b, 0, c->heap, HEAP_BYTES) != 0) {
		printf("FAIL %s: register_heap: %s\n", name, vyre_cuda_last_error(b));
		c->failures++;
		vyre_cuda_backend->shutdown(b);
		return;
	}
	if (c->big) {
		big_batches(c, b, name);
		printf("%s: 64 MiB scans done, %u failures\n", name, c->failures - before);
	}
	random_batches(c, b, name, n_random);
	printf("%s: %u random batches done, %u failures\n", name, n_random, c->failures - before);
	if (mode == VYRE_CUDA_PERSISTENT) {
		hostile(c, b, name);
		/* the same backend, fresh tables: right again */
		if (make_tables(c) == 0)
			random_batches(c, b, name, 10);
		else
			c->failures++;
	}
	vyre_cuda_get_stats(b, &st);
	if (st.faults) {
		printf("FAIL %s: %llu device faults\n", name, (unsigned long long)st.faults);
		c->failures++;
	}
	vyre_cuda_backend->unregister_heap(b, 0);
	vyre_cuda_backend->shutdown(b);
}

int main(void)
{
	static uint8_t words[VOCAB][17];
	const char *big = getenv("VYRE_CUDA_DFA_BIG"), *batches = getenv("VYRE_CUDA_DFA_BATCHES");
	struct ctx c = {.words = words, .rng = {0xdfa5ca1}, .big = !big || atoi(big) != 0};
	const uint32_t n_random =
	    batches && atoi(batches) > 0 ? (uint32_t)atoi(batches) : 150 * gen_scale();

	setvbuf(stdout, NULL, _IOLBF, 0);
	const int skip = gen_require_gpu();

	if (skip)
		return skip;
	c.heap = gen_heap_map(HEAP_BYTES);
	c.want = malloc(HEAP_BYTES);
	if (!c.heap || !c.want) {
		printf("FAIL: no memory for a %u MiB heap\n", HEAP_BYTES / MIB);
		return 1;
	}
	make_text(&c);
	for (int m = 0; m < 2; m++) {
		if (make_tables(&c) != 0)
			return 1;
		run_mode(&c, m == 0 ? VYRE_CUDA_PERSISTENT : VYRE_CUDA_LAUNCH, n_random);
	}
	printf("cuda dfa: %u failures\n", c.failures);
	gen_heap_unmap(c.heap, HEAP_BYTES);
	free(c.want);
	return c.failures ? 1 : 0;
}
