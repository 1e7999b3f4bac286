/* SPDX-License-Identifier: MIT */
/*
 * The literal-pattern DFA compiler (ring/dfa_*.c, include/vyre/dfa.h,
 * docs/design.md 6.8): every table it builds is walked through start, next[][]
 * and its report section, and after every byte of a random text must list
 * exactly what a brute-force search finds there (for each id whose pattern,
 * folded when caseless, ends at that byte: its longest such length), with the
 * accept bit set exactly where that list is not empty; the DFA_SCAN oracle of
 * gpu/ops.c must count those positions. VYRE_TEST_SCALE multiplies the
 * number of random cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../gpu/ops.h"
#include "vyre/abi.h"
#include "vyre/dfa.h"

#define MAX_PATTERNS 300
#define MAX_PATTERN  12
#define MAX_TEXT     256

struct entry {
	uint32_t id, len;
};

static uint32_t rng_state = 0x9e3779b9u;

static uint32_t rnd(uint32_t bound)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state % bound;
}

static unsigned scale(void)
{
	const char *s = getenv("VYRE_TEST_SCALE");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v > 0 ? (unsigned)v : 1;
}

static uint32_t word(const uint8_t *table, uint64_t i)
{
	uint32_t v;

	memcpy(&v, table + 4 * i, 4);
	return v;
}

static uint8_t fold(uint8_t b)
{
	return b >= 'A' && b <= 'Z' ? (uint8_t)(b + 32) : b;
}

/* ---- the reference: written from design.md 6.8, sharing nothing with ring/ */

static int ends_at(const struct vyre_dfa_pattern *p, const uint8_t *text, uint32_t end)
{
	if (p->len > end)
		return 0;
	const uint8_t *t = text + end - p->len;

	for (uint32_t i = 0; i < p->len; i++) {
		uint8_t a = t[i], b = p->bytes[i];

		if (p->flags & VYRE_DFA_CASELESS ? fold(a) != fold(b) : a != b)
			return 0;
	}
	return 1;
}

/* The (id, longest len) list of the patterns ending at @end, ids increasing. */
static uint32_t reference_list(const struct vyre_dfa_pattern *p, uint32_t n, const uint8_t *text,
			       uint32_t end, struct entry *out)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!ends_at(&p[i], text, end))
			continue;
		uint32_t j = 0;

		while (j < k && out[j].id != p[i].id)
			j++;
		if (j == k)
			out[k++] = (struct entry){p[i].id, p[i].len};
		else if (out[j].len < p[i].len)
			out[j].len = p[i].len;
	}
	for (uint32_t a = 1; a < k; a++) /* insertion sort by id */
		for (uint32_t b = a; b > 0 && out[b - 1].id > out[b].id; b--) {
			struct entry t = out[b];

			out[b] = out[b - 1];
			out[b - 1] = t;
		}
	return k;
}

/* ---- the table, as design.md 6.8 describes it */

struct view {
	const uint8_t *t;
	uint32_t n, start;
	uint64_t accept, next, first, ent, n_out; /* word offsets */
};

/* Checks every rule of sections 6 and 6.8 (sizes exact), fills @v. */
static void check_layout(const uint8_t *t, uint32_t bytes, struct view *v)
{
	assert_int_equal(bytes % 4, 0);
	assert_true(bytes >= 8);
	assert_int_equal(vyre_dfa_validate(t, bytes), 0);
	v->t = t;
	v->n = word(t, 0);
	v->start = word(t, 1);
	assert_true(v->n >= 1 && v->start < v->n);
	v->accept = 2;
	v->next = v->accept + (v->n + 31) / 32;
	uint64_t rep = v->next + 256 * (uint64_t)v->n;

	assert_true(4 * (rep + 2) <= bytes);
	assert_int_equal(word(t, rep), VYRE_DFA_REPORT_MAGIC);
	v->n_out = word(t, rep + 1);
	v->first = rep + 2;
	v->ent = v->first + v->n + 1;
	assert_int_equal(4 * (v->ent + 2 * v->n_out), bytes);
	assert_int_equal(word(t, v->first), 0);
	assert_int_equal(word(t, v->first + v->n), v->n_out);
	for (uint32_t s = 0; s < v->n; s++) {
		uint32_t a = word(t, v->first + s), b = word(t, v->first + s + 1);
		uint32_t acc = (word(t, v->accept + s / 32) >> (s % 32)) & 1;

		assert_true(a <= b);
		assert_int_equal(acc, a != b);
		for (uint32_t k = a; k < b; k++) {
			assert_true(word(t, v->ent + 2 * (uint64_t)k + 1) >= 1);
			if (k > a)
				assert_true(word(t, v->ent + 2 * (uint64_t)k) >
					    word(t, v->ent + 2 * (uint64_t)k - 2));
		}
	}
	/* no pattern is empty, so nothing ends before the first byte */
	assert_int_equal(word(t, v->first + v->start), word(t, v->first + v->start + 1));
}

static uint32_t step(const struct view *v, uint32_t s, uint8_t b)
{
	return word(v->t, v->next + 256 * (uint64_t)s + b);
}

/* DFA_SCAN of @text (a multiple of 4 bytes) with @table through the oracle. */
static uint32_t oracle_scan(const uint8_t *table, uint32_t table_bytes, const uint8_t *text,
			    uint32_t len)
{
	uint64_t heap_bytes = (uint64_t)table_bytes + len + 4;
	uint8_t *mem = malloc(heap_bytes);
	struct vyre_heap_view heap = {mem, heap_bytes};
	struct vyre_exec_item it = {.op = VYRE_OP_DFA_SCAN,
				    .in_off = 0,
				    .in_bytes = len,
				    .table_off = len,
				    .table_bytes = table_bytes,
				    .out_off = len + (uint64_t)table_bytes,
				    .out_bytes = 4};
	uint64_t result = 0;

	assert_non_null(mem);
	memcpy(mem, text, len);
	memcpy(mem + len, table, table_bytes);
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	free(mem);
	return (uint32_t)result;
}

/* Walks @text and compares every position with the reference; returns the table's states. */
static uint32_t check_set(const struct vyre_dfa_pattern *p, uint32_t n, const uint8_t *text,
			  uint32_t len, const char *what)
{
	uint8_t *table = NULL;
	uint32_t bytes = 0, hits = 0;
	struct vyre_dfa_info info;
	struct view v;
	struct entry want[MAX_PATTERNS];

	assert_int_equal(vyre_dfa_compile(p, n, 0, &table, &bytes, &info), 0);
	check_layout(table, bytes, &v);
	assert_int_equal(info.states, v.n);
	assert_int_equal(info.table_bytes, bytes);
	assert_int_equal(info.report_entries, v.n_out);

	uint32_t s = v.start;

	for (uint32_t e = 1; e <= len; e++) {
		s = step(&v, s, text[e - 1]);
		uint32_t k = reference_list(p, n, text, e, want);
		uint32_t a = word(table, v.first + s), b = word(table, v.first + s + 1);

		hits += k != 0;
		if (b - a != k)
			fail_msg("%s: %u patterns, offset %u: table lists %u, reference %u", what,
				 n, e, b - a, k);
		for (uint32_t j = 0; j < k; j++) {
			uint32_t id = word(table, v.ent + 2 * ((uint64_t)a + j));
			uint32_t l = word(table, v.ent + 2 * ((uint64_t)a + j) + 1);

			if (id != want[j].id || l != want[j].len)
				fail_msg(
				    "%s: offset %u entry %u: table (%u, %u), reference (%u, %u)",
				    what, e, j, id, l, want[j].id, want[j].len);
		}
	}
	if (len % 4 == 0)
		assert_int_equal(oracle_scan(table, bytes, text, len), hits);
	uint32_t states = v.n;

	vyre_dfa_free(table);
	return states;
}

/* One state fewer than the set needs: NOMEM, and info a lower bound beyond the limit. */
static void check_limit(const struct vyre_dfa_pattern *p, uint32_t n, uint32_t states,
			uint32_t table_bytes)
{
	uint8_t *table = (uint8_t *)&table;
	uint32_t bytes = 7;
	struct vyre_dfa_info info;

	assert_int_equal(vyre_dfa_compile(p, n, states - 1, &table, &bytes, &info), VYRE_E_NOMEM);
	assert_true(info.states >= states - 1 + 1 - (states == 1));
	assert_true(info.states <= states);
	assert_true(info.table_bytes <= table_bytes);
	assert_true(info.table_bytes >= vyre_dfa_table_bytes((uint32_t)info.states));
	assert_ptr_equal(table, (uint8_t *)&table); /* untouched */
	assert_int_equal(bytes, 7);
}

static void test_known_vectors(void **state)
{
	(void)state;
	struct vyre_dfa_pattern he[] = {{(const uint8_t *)"he", 2, 1, 0},
					{(const uint8_t *)"she", 3, 2, 0},
					{(const uint8_t *)"his", 3, 3, 0},
					{(const uint8_t *)"hers", 4, 4, 0}};
	uint8_t *table;
	uint32_t bytes;
	struct view v;

	assert_int_equal(vyre_dfa_compile(he, 4, 100, &table, &bytes, NULL), 0);
	check_layout(table, bytes, &v);
	/* the textbook trie: root h he her hers hi his s sh she */
	assert_int_equal(v.n, 10);
	/* he, hers, his, she accept; she lists he too: 5 entries */
	assert_int_equal(v.n_out, 5);
	uint32_t s = v.start;

	for (const char *c = "ushe"; *c; c++)
		s = step(&v, s, (uint8_t)*c);
	uint32_t a = word(table, v.first + s);

	assert_int_equal(word(table, v.first + s + 1) - a, 2);
	assert_int_equal(word(table, v.ent + 2 * a), 1);
	assert_int_equal(word(table, v.ent + 2 * a + 1), 2);
	assert_int_equal(word(table, v.ent + 2 * a + 2), 2);
	assert_int_equal(word(table, v.ent + 2 * a + 3), 3);
	vyre_dfa_free(table);
	check_set(he, 4, (const uint8_t *)"ushers hishe he", 15, "he");

	/* one id for two patterns: the longer one ending there is its len */
	struct vyre_dfa_pattern same[] = {{(const uint8_t *)"b", 1, 9, 0},
					  {(const uint8_t *)"abab", 4, 9, 0},
					  {(const uint8_t *)"ab", 2, 9, 0},
					  {(const uint8_t *)"ab", 2, 3, 0}};
	check_set(same, 4, (const uint8_t *)"ababbab", 7, "same id");

	/* caseless and case-sensitive together, NUL and 0xff in patterns */
	static const uint8_t bin[] = {0, 0xff, 'M', 'Z'};
	struct vyre_dfa_pattern mixed[] = {{(const uint8_t *)"GET /admin", 10, 10, 0},
					   {(const uint8_t *)"PassWord", 8, 11, VYRE_DFA_CASELESS},
					   {bin, 4, 12, 0},
					   {(const uint8_t *)"mz", 2, 13, VYRE_DFA_CASELESS},
					   {(const uint8_t *)"MZ", 2, 14, 0}};
	static const uint8_t text[] = "GET /admin?PASSWORD=password\0\xffMZ mZ Mz GET /ADMIN";

	check_set(mixed, 5, text, sizeof(text) - 1, "mixed");
}

static void test_arguments(void **state)
{
	(void)state;
	static uint8_t big[VYRE_DFA_PATTERN_MAX + 1];
	struct vyre_dfa_pattern p[] = {{(const uint8_t *)"abcdef", 6, 0, 0}};
	uint8_t *table = (uint8_t *)&table;
	uint32_t bytes = 0;
	struct vyre_dfa_info info;

	assert_int_equal(vyre_dfa_compile(NULL, 1, 10, &table, &bytes, &info), VYRE_E_INVAL);
	assert_int_equal(vyre_dfa_compile(p, 0, 10, &table, &bytes, &info), VYRE_E_INVAL);
	assert_int_equal(vyre_dfa_compile(p, 1, 10, NULL, &bytes, &info), VYRE_E_INVAL);
	assert_int_equal(vyre_dfa_compile(p, 1, 10, &table, NULL, &info), VYRE_E_INVAL);
	struct vyre_dfa_pattern bad[][2] = {
	    {{(const uint8_t *)"ab", 2, 0, 0}, {NULL, 3, 0, 0}},
	    {{(const uint8_t *)"ab", 2, 0, 0}, {(const uint8_t *)"", 0, 0, 0}},
	    {{(const uint8_t *)"ab", 2, 0, 0}, {big, VYRE_DFA_PATTERN_MAX + 1, 0, 0}},
	    {{(const uint8_t *)"ab", 2, 0, 0}, {(const uint8_t *)"x", 1, 0, 2}},
	    {{(const uint8_t *)"ab", 2, 0, 0}, {(const uint8_t *)"x", 1, 0, 0x80000000u}},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		info.states = 99;
		assert_int_equal(vyre_dfa_compile(bad[i], 2, 0, &table, &bytes, &info),
				 VYRE_E_INVAL);
		assert_int_equal(info.states, 0);
	}
	assert_ptr_equal(table, (uint8_t *)&table);

	/* the longest pattern is fine: one state a byte, just the default limit */
	memset(big, 'x', sizeof(big));
	struct vyre_dfa_pattern longest = {big, VYRE_DFA_PATTERN_MAX, 1, VYRE_DFA_CASELESS};

	assert_int_equal(vyre_dfa_compile(&longest, 1, VYRE_DFA_PATTERN_MAX, &table, &bytes, &info),
			 VYRE_E_NOMEM);
	assert_int_equal(info.states, VYRE_DFA_PATTERN_MAX + 1);
	assert_int_equal(vyre_dfa_compile(&longest, 1, 0, &table, &bytes, &info), 0);
	assert_int_equal(info.states, VYRE_DFA_PATTERN_MAX + 1);
	vyre_dfa_free(table);
}

static void test_state_limit(void **state)
{
	(void)state;
	struct vyre_dfa_pattern p[] = {{(const uint8_t *)"abcdef", 6, 0, 0}};
	uint8_t *table = (uint8_t *)&table;
	uint32_t bytes = 0;
	struct vyre_dfa_info info;

	assert_int_equal(vyre_dfa_compile(p, 1, 6, &table, &bytes, &info), VYRE_E_NOMEM);
	assert_int_equal(info.states, 7); /* one kind: the trie is exact */
	assert_true(info.table_bytes >= vyre_dfa_table_bytes(7));
	assert_int_equal(vyre_dfa_compile(p, 1, 7, &table, &bytes, &info), 0);
	assert_int_equal(word(table, 0), 7);
	vyre_dfa_free(table);

	/*
	 * Mixed: the tries are small, their product is not. "a" and "b"
	 * caseless and a set of case-sensitive words over A/B: each state of
	 * one is paired with several of the other.
	 */
	struct vyre_dfa_pattern m[] = {{(const uint8_t *)"aaaa", 4, 0, VYRE_DFA_CASELESS},
				       {(const uint8_t *)"AbAb", 4, 1, 0},
				       {(const uint8_t *)"bAAb", 4, 2, 0}};
	assert_int_equal(vyre_dfa_compile(m, 3, 0, &table, &bytes, &info), 0);
	uint32_t need = (uint32_t)info.states, need_bytes = bytes;

	vyre_dfa_free(table);
	assert_true(need > 7); /* more than either trie */
	check_limit(m, 3, need, need_bytes);
	assert_int_equal(vyre_dfa_compile(m, 3, need - 1, &table, &bytes, &info), VYRE_E_NOMEM);
	assert_int_equal(info.states, need); /* stopped one past the limit */
}

/* Random sets over bytes base .. base + alpha - 1 (wrapping), texts mixing cases. */
static void random_cases(unsigned cases, uint32_t alpha, uint8_t base, uint32_t caseless_pct)
{
	static uint8_t pat_bytes[MAX_PATTERNS][MAX_PATTERN];
	static struct vyre_dfa_pattern p[MAX_PATTERNS];
	uint8_t text[MAX_TEXT];

	for (unsigned c = 0; c < cases; c++) {
		uint32_t n = 1 + (rnd(4) ? rnd(20) : rnd(MAX_PATTERNS));
		uint32_t len = rnd(MAX_TEXT + 1);
		uint32_t id_range = rnd(2) ? n : 1 + n / 4; /* dense duplicate ids half the time */

		for (uint32_t k = 0; k < n; k++) {
			if (k && rnd(8) == 0) { /* the same bytes again, under another id */
				p[k] = p[rnd(k)];
				p[k].id = rnd(id_range);
				continue;
			}
			p[k].len = 1 + (rnd(3) ? rnd(4) : rnd(MAX_PATTERN));
			for (uint32_t i = 0; i < p[k].len; i++) {
				uint8_t b = (uint8_t)(base + rnd(alpha));

				pat_bytes[k][i] = rnd(4) == 0 && b >= 'a' && b <= 'z' ? b - 32 : b;
			}
			p[k].bytes = pat_bytes[k];
			p[k].id = rnd(id_range);
			p[k].flags = rnd(100) < caseless_pct ? VYRE_DFA_CASELESS : 0;
		}
		for (uint32_t i = 0; i < len; i++) {
			uint8_t b = (uint8_t)(base + rnd(alpha + 1));

			text[i] = rnd(3) == 0 && b >= 'a' && b <= 'z' ? b - 32 : b;
		}
		char what[64];

		snprintf(what, sizeof(what), "case %u (alphabet %u at 0x%02x, %u%% caseless)", c,
			 alpha, base, caseless_pct);
		uint32_t states = check_set(p, n, text, len, what);

		if (c % 16 == 0 && states > 1) {
			uint8_t *table;
			uint32_t bytes;

			assert_int_equal(vyre_dfa_compile(p, n, states, &table, &bytes, NULL), 0);
			vyre_dfa_free(table);
			check_limit(p, n, states, bytes);
		}
	}
}

static void test_random_sensitive(void **state)
{
	(void)state;
	random_cases(300 * scale(), 3, 'a', 0);
	random_cases(100 * scale(), 256, 0, 0);
}

static void test_random_caseless(void **state)
{
	(void)state;
	random_cases(300 * scale(), 3, 'a', 100);
	random_cases(100 * scale(), 256, 0, 100);
}

static void test_random_mixed(void **state)
{
	(void)state;
	random_cases(400 * scale(), 3, 'a', 50);
	random_cases(200 * scale(), 2, 'y', 20);  /* y z { across the letters' end */
	random_cases(100 * scale(), 4, 0xfe, 50); /* wraps: 0xfe 0xff 0x00 0x01 */
	random_cases(100 * scale(), 256, 0, 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_vectors),   cmocka_unit_test(test_arguments),
	    cmocka_unit_test(test_state_limit),	    cmocka_unit_test(test_random_sensitive),
	    cmocka_unit_test(test_random_caseless), cmocka_unit_test(test_random_mixed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
