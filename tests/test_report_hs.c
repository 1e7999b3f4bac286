/* SPDX-License-Identifier: MIT */
/*
 * DFA_REPORT against Hyperscan (docs/design.md 6.8): literal sets compiled by
 * vyre_dfa_compile and by hs_compile_lit_multi (HS_FLAG_SOM_LEFTMOST, with
 * HS_FLAG_CASELESS where vyre has VYRE_DFA_CASELESS), scanned by the oracle
 * and by hs_scan / hs_scan_stream. Hyperscan's callbacks, reduced to one
 * (id, to) with the smallest from and sorted by (to, id), must be exactly
 * vyre's records and total: random sets over small alphabets, all 256 byte
 * values, caseless and mixed sets whose patterns share prefixes, ids distinct
 * and repeated; random and real text (C headers); streams cut at every
 * offset (every pair of offsets) of short texts and at random offsets of
 * long ones; capacities below the total. Exits 77 without libhs.
 */
#include <stdint.h>
#include <stdio.h>

#ifndef VYRE_HAVE_HS
int main(void)
{
	printf("libhs (Hyperscan) was not found at build time (pkg-config libhs): skipped\n");
	return 77;
}
#else

#include <glob.h>
#include <hs.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/ops.h"
#include "test_rand.h"
#include "vyre/dfa.h"

#define TEST_NAME "test_report_hs"
#include "test_check.h"

#define HEAP_BYTES (24u << 20)
#define IN_OFF	   0u
#define IN_MAX	   (2u << 20)
#define OUT_OFF	   IN_MAX
#define OUT_MAX	   (12u << 20)
#define STREAM_OFF (OUT_OFF + OUT_MAX)
#define TABLE_OFF  (STREAM_OFF + 4096u)
#define TABLE_MAX  (HEAP_BYTES - TABLE_OFF)
#define REAL_MAX   (512u << 10)
#define PAT_MAX	   24u
#define SET_MAX	   64u

struct pat {
	uint8_t b[PAT_MAX];
	uint32_t len, id, flags;
};

struct rec {
	uint32_t id;
	uint64_t start, end;
};

/* A growing array of records, Hyperscan's callbacks or the expected ones. */
struct recs {
	struct rec *r;
	size_t n, cap;
};

struct set {
	struct pat p[SET_MAX];
	uint32_t n;
	uint32_t table_bytes;
	hs_database_t *block, *stream;
	hs_scratch_t *scratch;
};

static uint8_t *heap_mem;
static struct vyre_heap_view heap;

static void fail_out(const char *what)
{
	fprintf(stderr, "%s: %s\n", TEST_NAME, what);
	exit(1);
}

static void push(struct recs *v, uint32_t id, uint64_t start, uint64_t end)
{
	if (v->n == v->cap) {
		const size_t cap = v->cap ? 2 * v->cap : 1024;
		struct rec *r = realloc(v->r, cap * sizeof(*r));

		if (!r)
			fail_out("out of memory");
		v->r = r;
		v->cap = cap;
	}
	v->r[v->n++] = (struct rec){id, start, end};
}

/* Never NULL, so that qsort and pointer sums see a real array. */
static struct recs recs_new(void)
{
	struct recs v = {malloc(1024 * sizeof(struct rec)), 0, 1024};

	if (!v.r)
		fail_out("out of memory");
	return v;
}

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
		    unsigned int flags, void *ctx)
{
	(void)flags;
	push(ctx, id, from, to);
	return 0;
}

static int rec_order(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Hyperscan's callbacks from index @from on: sorted, one (id, end) with its smallest start. */
static void hs_normalize(struct recs *v, size_t from)
{
	size_t w = from;

	if (v->n - from < 2)
		return;
	qsort(v->r + from, v->n - from, sizeof(*v->r), rec_order);
	for (size_t i = from; i < v->n; i++)
		if (w == from || v->r[w - 1].id != v->r[i].id || v->r[w - 1].end != v->r[i].end)
			v->r[w++] = v->r[i];
	v->n = w;
}

static uint32_t rd32(uint64_t off)
{
	uint32_t v;

	memcpy(&v, heap_mem + off, 4);
	return v;
}

static uint64_t rd64(uint64_t off)
{
	uint64_t v;

	memcpy(&v, heap_mem + off, 8);
	return v;
}

/* The report at OUT_OFF is @want[0, n) with total n for capacity @cap. */
static int check_report(const struct rec *want, uint64_t n, uint64_t cap, uint64_t result,
			const char *what)
{
	const uint64_t kept = n < cap ? n : cap;
	const int before = test_failures;

	CHECK(result == n, "%s: result %llu, hyperscan %llu", what, (unsigned long long)result,
	      (unsigned long long)n);
	CHECK(rd64(OUT_OFF + 8) == n, "%s: total %llu, hyperscan %llu", what,
	      (unsigned long long)rd64(OUT_OFF + 8), (unsigned long long)n);
	CHECK(rd32(OUT_OFF) == kept, "%s: kept %u, want %llu", what, rd32(OUT_OFF),
	      (unsigned long long)kept);
	CHECK(rd32(OUT_OFF + 4) == (n > cap ? VYRE_REPORT_OVERFLOW : 0), "%s: flags %u", what,
	      rd32(OUT_OFF + 4));
	for (uint64_t k = 0; k < kept && test_failures == before; k++) {
		const uint64_t r = OUT_OFF + 16 + 24 * k;

		CHECK(rd32(r) == want[k].id && rd32(r + 4) == 0 && rd64(r + 8) == want[k].start &&
			  rd64(r + 16) == want[k].end,
		      "%s: record %llu is (%u, %llu, %llu), hyperscan (%u, %llu, %llu)", what,
		      (unsigned long long)k, rd32(r), (unsigned long long)rd64(r + 8),
		      (unsigned long long)rd64(r + 16), want[k].id,
		      (unsigned long long)want[k].start, (unsigned long long)want[k].end);
	}
	if (test_failures > 20)
		fail_out("too many failures");
	return test_failures == before ? 0 : -1;
}

/* Compile @s with both; 0, or -1 when Hyperscan refuses it (said why). */
static int set_compile(struct set *s)
{
	struct vyre_dfa_pattern vp[SET_MAX];
	const char *expr[SET_MAX];
	unsigned int flags[SET_MAX], ids[SET_MAX];
	size_t lens[SET_MAX];
	hs_compile_error_t *err = NULL;
	uint8_t *table = NULL;
	uint32_t bytes = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		const struct pat *p = &s->p[i];

		vp[i] = (struct vyre_dfa_pattern){p->b, p->len, p->id, p->flags};
		expr[i] = (const char *)p->b;
		lens[i] = p->len;
		ids[i] = p->id;
		flags[i] =
		    HS_FLAG_SOM_LEFTMOST | ((p->flags & VYRE_DFA_CASELESS) ? HS_FLAG_CASELESS : 0);
	}
	const int rc = vyre_dfa_compile(vp, s->n, 0, &table, &bytes, NULL);

	if (rc != 0 || bytes > TABLE_MAX) {
		fprintf(stderr, "vyre_dfa_compile: %d, %u bytes\n", rc, bytes);
		fail_out("compile");
	}
	memcpy(heap_mem + TABLE_OFF, table, bytes);
	vyre_dfa_free(table);
	s->table_bytes = bytes;
	if (hs_compile_lit_multi(expr, flags, ids, lens, s->n, HS_MODE_BLOCK, NULL, &s->block,
				 &err) != HS_SUCCESS ||
	    hs_compile_lit_multi(expr, flags, ids, lens, s->n,
				 HS_MODE_STREAM | HS_MODE_SOM_HORIZON_LARGE, NULL, &s->stream,
				 &err) != HS_SUCCESS) {
		fprintf(stderr, "%s: hs_compile_lit_multi: %s\n", TEST_NAME,
			err ? err->message : "?");
		hs_free_compile_error(err);
		fail_out("hyperscan compile");
	}
	s->scratch = NULL;
	if (hs_alloc_scratch(s->block, &s->scratch) != HS_SUCCESS ||
	    hs_alloc_scratch(s->stream, &s->scratch) != HS_SUCCESS)
		fail_out("hs_alloc_scratch");
	return 0;
}

static void set_free(struct set *s)
{
	hs_free_scratch(s->scratch);
	hs_free_database(s->block);
	hs_free_database(s->stream);
}

static struct vyre_exec_item report_item(uint32_t op, uint32_t in_bytes, uint64_t cap,
					 uint32_t table_bytes, int stream)
{
	return (struct vyre_exec_item){.op = op,
				       .in_bytes = in_bytes,
				       .out_bytes = (uint32_t)(16 + 24 * cap),
				       .table_bytes = table_bytes,
				       .in_off = IN_OFF,
				       .out_off = OUT_OFF,
				       .table_off = TABLE_OFF,
				       .aux_off = STREAM_OFF,
				       .aux_bytes = stream ? 16 : 0};
}

#define CAP_MAX ((OUT_MAX - 16) / 24)

/* Scan @text (@len bytes) with DFA_REPORT_COUNTED (or DFA_REPORT, the text
 * padded to words with zeros that both scan), capacity @cap; returns the
 * oracle's status, the result in *result. */
static int vyre_scan(const struct set *s, const uint8_t *text, uint32_t len, int counted,
		     uint64_t cap, int stream, uint64_t *result, uint32_t *scanned)
{
	const uint32_t at = counted ? 4 : 0, bytes = (at + len + 3) & ~3u;

	if (bytes + 4 > IN_MAX)
		fail_out("text too long");
	memset(heap_mem + IN_OFF + bytes - 4, 0, 8);
	if (counted)
		memcpy(heap_mem + IN_OFF, &len, 4);
	memcpy(heap_mem + IN_OFF + at, text, len);
	*scanned = counted ? len : bytes;
	const struct vyre_exec_item it =
	    report_item(counted ? VYRE_OP_DFA_REPORT_COUNTED : VYRE_OP_DFA_REPORT, bytes, cap,
			s->table_bytes, stream);

	return vyre_exec_one(&heap, &it, result);
}

/* One whole-text scan of both, at capacities from none to all. */
static void block_diff(const struct set *s, const uint8_t *text, uint32_t len, uint64_t *seed,
		       const char *what)
{
	struct recs hs = recs_new();
	uint64_t result;
	uint32_t scanned;
	const int counted = splitmix64(seed) % 4 != 0;
	char label[160];

	/* the hyperscan side scans the very bytes vyre scans, padding included */
	int rc = vyre_scan(s, text, len, counted, CAP_MAX, 0, &result, &scanned);

	CHECK(rc == 0, "%s: DFA_REPORT %d", what, rc);
	if (hs_scan(s->block, (const char *)heap_mem + IN_OFF + (counted ? 4 : 0), scanned, 0,
		    s->scratch, on_match, &hs) != HS_SUCCESS)
		fail_out("hs_scan");
	hs_normalize(&hs, 0);
	snprintf(label, sizeof(label), "%s, %u bytes, %s", what, scanned,
		 counted ? "counted" : "plain");
	if (rc == 0 && check_report(hs.r, hs.n, CAP_MAX, result, label) == 0 && hs.n > 0) {
		/* overflow: the first records only, total still counted */
		const uint64_t caps[] = {0, 1, hs.n - 1, splitmix64(seed) % hs.n};

		for (int k = 0; k < 4; k++) {
			char lab2[200];

			rc = vyre_scan(s, text, len, counted, caps[k], 0, &result, &scanned);
			snprintf(lab2, sizeof(lab2), "%s, capacity %llu", label,
				 (unsigned long long)caps[k]);
			CHECK(rc == 0, "%s: %d", lab2, rc);
			check_report(hs.r, hs.n, caps[k], result, lab2);
		}
	}
	free(hs.r);
}

/* The text cut at @cuts (sorted), piece by piece on one vyre stream and one hs stream. */
static void stream_diff(const struct set *s, const uint8_t *text, uint32_t len,
			const uint32_t *cuts, uint32_t n_cuts, const char *what)
{
	struct recs hs = recs_new();
	hs_stream_t *st = NULL;
	uint64_t seen = 0;

	memset(heap_mem + STREAM_OFF, 0, 16);
	if (hs_open_stream(s->stream, 0, &st) != HS_SUCCESS)
		fail_out("hs_open_stream");
	for (uint32_t c = 0, from = 0; c <= n_cuts; c++) {
		const uint32_t to = c < n_cuts ? cuts[c] : len;
		const size_t at = hs.n;
		uint64_t result;
		uint32_t scanned;
		char label[160];

		if (hs_scan_stream(st, (const char *)text + from, to - from, 0, s->scratch,
				   on_match, &hs) != HS_SUCCESS)
			fail_out("hs_scan_stream");
		hs_normalize(&hs, at);
		const int rc =
		    vyre_scan(s, text + from, to - from, 1, CAP_MAX, 1, &result, &scanned);

		snprintf(label, sizeof(label), "%s, stream piece %u [%u, %u) of %u", what, c, from,
			 to, len);
		CHECK(rc == 0, "%s: %d", label, rc);
		if (rc != 0 || check_report(hs.r + at, hs.n - at, CAP_MAX, result, label) != 0)
			break;
		seen += to - from;
		CHECK(rd32(STREAM_OFF) == 1 && rd64(STREAM_OFF + 8) == seen,
		      "%s: stream started %u, %llu bytes seen", label, rd32(STREAM_OFF),
		      (unsigned long long)rd64(STREAM_OFF + 8));
		from = to;
	}
	/* literals end nothing at end of data; whatever it says would be a difference */
	const size_t before = hs.n;

	hs_close_stream(st, s->scratch, on_match, &hs);
	CHECK(hs.n == before, "%s: %zu matches at end of stream", what, hs.n - before);
	free(hs.r);
}

static void sort_cuts(uint32_t *cuts, uint32_t n)
{
	for (uint32_t a = 1; a < n; a++)
		for (uint32_t b = a; b > 0 && cuts[b - 1] > cuts[b]; b--) {
			const uint32_t x = cuts[b];

			cuts[b] = cuts[b - 1];
			cuts[b - 1] = x;
		}
}

static void random_cuts(const struct set *s, const uint8_t *text, uint32_t len, uint64_t *seed,
			uint32_t max_cuts, const char *what)
{
	uint32_t cuts[64];
	const uint32_t n = (uint32_t)(splitmix64(seed) % (max_cuts + 1));

	for (uint32_t c = 0; c < n; c++)
		cuts[c] = (uint32_t)(splitmix64(seed) % (len + 1));
	sort_cuts(cuts, n);
	stream_diff(s, text, len, cuts, n, what);
}

enum kind { K_SMALL, K_BINARY, K_CASELESS, K_MIXED, K_KINDS };
static const char *const kind_names[] = {"small alphabet", "binary", "caseless", "mixed prefixes"};

static uint8_t flip_case(uint8_t c, uint64_t *seed)
{
	if (((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && splitmix64(seed) % 2)
		return c ^ 0x20;
	return c;
}

static uint8_t alpha_byte(enum kind k, uint32_t alpha, uint64_t *seed)
{
	static const uint8_t letters[] = "abAB";

	switch (k) {
	case K_BINARY:
		return (uint8_t)splitmix64(seed);
	case K_SMALL:
		return (uint8_t)('a' + splitmix64(seed) % alpha);
	default:
		return letters[splitmix64(seed) % alpha];
	}
}

/* A random set of @kind: overlapping, nested and repeated patterns, ids distinct or not. */
static void random_set(struct set *s, enum kind k, uint64_t *seed)
{
	const uint32_t n = 1 + (uint32_t)(splitmix64(seed) % 24);
	const uint32_t alpha = 2 + (uint32_t)(splitmix64(seed) % 3);
	const int distinct = splitmix64(seed) % 2;
	uint8_t prefix[8];
	const uint32_t plen = 1 + (uint32_t)(splitmix64(seed) % 4);

	for (uint32_t j = 0; j < plen; j++)
		prefix[j] = alpha_byte(K_MIXED, 4, seed);
	s->n = n;
	for (uint32_t i = 0; i < n; i++) {
		struct pat *p = &s->p[i];
		const uint32_t dup = i > 0 && splitmix64(seed) % 8 == 0;

		if (dup) { /* the same bytes again, maybe another id or flag */
			*p = s->p[splitmix64(seed) % i];
		} else {
			p->len = 1 + (uint32_t)(splitmix64(seed) % (k == K_BINARY ? 4 : 7));
			for (uint32_t j = 0; j < p->len; j++)
				p->b[j] = alpha_byte(k, k == K_BINARY ? 256 : alpha, seed);
			if (k == K_MIXED && splitmix64(seed) % 4 != 0) {
				/* sharing a prefix, with its letters' case flipped at random */
				const uint32_t l = plen + (uint32_t)(splitmix64(seed) % 4);

				for (uint32_t j = 0; j < l; j++)
					p->b[j] = j < plen ? flip_case(prefix[j], seed)
							   : alpha_byte(k, 4, seed);
				p->len = l;
			}
		}
		p->flags = 0;
		if (k == K_CASELESS || (k != K_SMALL && splitmix64(seed) % 2))
			p->flags = VYRE_DFA_CASELESS;
		p->id = distinct ? i * 7 + (uint32_t)(splitmix64(seed) % 3) * 0x40000000u
				 : (uint32_t)(splitmix64(seed) % (n / 2 + 1));
	}
}

/* Random text of @kind with the set's patterns planted (caseless ones in any case). */
static void random_text(const struct set *s, enum kind k, uint8_t *t, uint32_t len, uint64_t *seed)
{
	const uint32_t alpha = 2 + (uint32_t)(splitmix64(seed) % 3);

	for (uint32_t i = 0; i < len;) {
		if (splitmix64(seed) % 3 == 0) {
			const struct pat *p = &s->p[splitmix64(seed) % s->n];

			for (uint32_t j = 0; j < p->len && i < len; j++)
				t[i++] = (p->flags & VYRE_DFA_CASELESS) ? flip_case(p->b[j], seed)
									: p->b[j];
		} else {
			t[i++] = alpha_byte(k, k == K_BINARY ? 256 : alpha, seed);
		}
	}
}

static void test_random(uint64_t *seed)
{
	static uint8_t text[8192];
	struct set s;
	char what[96];

	for (int round = 0; round < 160; round++) {
		const enum kind k = (enum kind)(round % K_KINDS);

		random_set(&s, k, seed);
		set_compile(&s);
		snprintf(what, sizeof(what), "random round %d (%s, %u patterns)", round,
			 kind_names[k], s.n);
		for (int t = 0; t < 3; t++) {
			const uint32_t len = (uint32_t)(splitmix64(seed) % (t == 2 ? 8192 : 300));

			random_text(&s, k, text, len, seed);
			block_diff(&s, text, len, seed, what);
			if (t == 2)
				random_cuts(&s, text, len, seed, 40, what);
		}
		set_free(&s);
	}
}

/* Short texts: one cut at every offset, and for very short ones every pair of cuts. */
static void test_every_cut(uint64_t *seed)
{
	uint8_t text[40];
	struct set s;
	char what[96];

	for (int round = 0; round < 24; round++) {
		const enum kind k = (enum kind)(round % K_KINDS);
		const uint32_t len = 1 + (uint32_t)(splitmix64(seed) % (round % 2 ? 40 : 14));

		random_set(&s, k, seed);
		set_compile(&s);
		random_text(&s, k, text, len, seed);
		snprintf(what, sizeof(what), "every cut, round %d (%s)", round, kind_names[k]);
		for (uint32_t a = 0; a <= len; a++) {
			stream_diff(&s, text, len, &a, 1, what);
			for (uint32_t b = a; len <= 14 && b <= len; b++) {
				const uint32_t cuts[2] = {a, b};

				stream_diff(&s, text, len, cuts, 2, what);
			}
		}
		set_free(&s);
	}
}

/* C headers this machine has (the scan benchmark's kind of text), up to REAL_MAX bytes. */
static uint32_t load_real(uint8_t *buf)
{
	glob_t g;
	uint32_t len = 0;

	if (glob("/usr/include/*.h", 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc && len < REAL_MAX; i++) {
		FILE *f = fopen(g.gl_pathv[i], "rb");

		if (!f)
			continue;
		len += (uint32_t)fread(buf + len, 1, REAL_MAX - len, f);
		fclose(f);
	}
	globfree(&g);
	return len;
}

static void test_real_text(uint64_t *seed)
{
	uint8_t *text = malloc(REAL_MAX);
	struct set s;
	char what[96];

	if (!text)
		fail_out("out of memory");
	const uint32_t len = load_real(text);

	if (len < 4096) {
		printf("no C headers under /usr/include: real text skipped\n");
		free(text);
		return;
	}
	for (int round = 0; round < 6; round++) {
		/* literals taken from the text, some caseless, some in changed case, a few keywords
		 */
		static const char *const words[] = {"#define", "include", "__", "extern",
						    "(",       "struct",  "\n", "int"};

		s.n = 8 + (uint32_t)(splitmix64(seed) % 40);
		for (uint32_t i = 0; i < s.n; i++) {
			struct pat *p = &s.p[i];

			if (i < 8 && round % 2) {
				p->len = (uint32_t)strlen(words[i]);
				memcpy(p->b, words[i], p->len);
			} else {
				const uint32_t at = (uint32_t)(splitmix64(seed) % (len - PAT_MAX));

				p->len = 2 + (uint32_t)(splitmix64(seed) % (PAT_MAX - 2));
				memcpy(p->b, text + at, p->len);
			}
			p->flags = splitmix64(seed) % 3 == 0 ? VYRE_DFA_CASELESS : 0;
			if (p->flags)
				for (uint32_t j = 0; j < p->len; j++)
					p->b[j] = flip_case(p->b[j], seed);
			p->id = splitmix64(seed) % 2 ? i : (uint32_t)(splitmix64(seed) % 5);
		}
		set_compile(&s);
		snprintf(what, sizeof(what), "real text, round %d (%u patterns)", round, s.n);
		const uint32_t at = (uint32_t)(splitmix64(seed) % (len / 2));
		const uint32_t part = len - at < (256u << 10) ? len - at : (256u << 10);

		block_diff(&s, text + at, part, seed, what);
		random_cuts(&s, text + at, part, seed, 64, what);
		set_free(&s);
	}
	free(text);
}

/* Goldens of the mixed product, where a caseless and a case-sensitive pattern share a prefix. */
static void test_mixed_golden(void)
{
	struct set s = {.n = 4};
	const struct {
		const char *b;
		uint32_t id, flags;
	} p[] = {{"abc", 1, 0},
		 {"ABD", 2, VYRE_DFA_CASELESS},
		 {"aB", 3, 0},
		 {"b", 4, VYRE_DFA_CASELESS}};
	const char text[] = "abcABDabdaBcabDAbc";
	uint64_t seed = 1;

	for (uint32_t i = 0; i < s.n; i++) {
		s.p[i].len = (uint32_t)strlen(p[i].b);
		memcpy(s.p[i].b, p[i].b, s.p[i].len);
		s.p[i].id = p[i].id;
		s.p[i].flags = p[i].flags;
	}
	set_compile(&s);
	block_diff(&s, (const uint8_t *)text, sizeof(text) - 1, &seed, "mixed golden");
	for (uint32_t a = 0; a < sizeof(text); a++)
		stream_diff(&s, (const uint8_t *)text, sizeof(text) - 1, &a, 1, "mixed golden");
	/* and the records themselves: abc at 0, ABD at 3, abd at 6, aB at 9, abD at 12 */
	uint64_t result;
	uint32_t scanned;

	CHECK(vyre_scan(&s, (const uint8_t *)text, sizeof(text) - 1, 1, 64, 0, &result, &scanned) ==
		  0,
	      "mixed golden scan");
	const struct rec want[] = {{4, 1, 2},	{1, 0, 3},   {4, 4, 5},	 {2, 3, 6},
				   {4, 7, 8},	{2, 6, 9},   {3, 9, 11}, {4, 10, 11},
				   {4, 13, 14}, {2, 12, 15}, {4, 16, 17}};

	check_report(want, sizeof(want) / sizeof(want[0]), 64, result, "mixed golden records");
	set_free(&s);
}

int main(void)
{
	uint64_t seed = 0x4853u;

	heap_mem = aligned_alloc(64, HEAP_BYTES);
	if (!heap_mem)
		fail_out("out of memory");
	memset(heap_mem, 0, HEAP_BYTES);
	heap = (struct vyre_heap_view){heap_mem, HEAP_BYTES};
	test_mixed_golden();
	test_random(&seed);
	test_every_cut(&seed);
	test_real_text(&seed);
	free(heap_mem);
	if (test_failures) {
		fprintf(stderr, "%s: %d failures\n", TEST_NAME, test_failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}

#endif /* VYRE_HAVE_HS */
