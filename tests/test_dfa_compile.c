/* SPDX-License-Identifier: MIT */
/*
 * The literal-pattern DFA compiler (tools/submit/dfa_compile.c): every table
 * it emits is run by the DFA_SCAN oracle of gpu/ops.c and must count exactly
 * the byte positions where some pattern ends, as a naive substring search
 * does. VYRE_TEST_SCALE multiplies the number of random cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../gpu/ops.h"
#include "../tools/submit/dfa_compile.h"

#define MAX_PATTERNS 8
#define MAX_PATTERN  8
#define MAX_TEXT     256

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

/* Positions i in [1, len] where some pattern equals text[i - plen, i). */
static uint32_t naive_count(const struct vyre_dfa_pattern *p, uint32_t n, const uint8_t *text,
			    uint32_t len)
{
	uint32_t hits = 0;

	for (uint32_t end = 1; end <= len; end++)
		for (uint32_t k = 0; k < n; k++)
			if (p[k].len <= end &&
			    memcmp(text + end - p[k].len, p[k].bytes, p[k].len) == 0) {
				hits++;
				break;
			}
	return hits;
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
	uint32_t out;

	assert_non_null(mem);
	memcpy(mem, text, len);
	memcpy(mem + len, table, table_bytes);
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	memcpy(&out, mem + it.out_off, 4);
	assert_int_equal(out, result);
	free(mem);
	return (uint32_t)result;
}

static uint32_t compile_and_scan(const struct vyre_dfa_pattern *p, uint32_t n, const uint8_t *text,
				 uint32_t len)
{
	uint8_t *table = NULL;
	uint32_t bytes = 0;

	assert_int_equal(vyre_dfa_compile(p, n, VYRE_DFA_DEFAULT_MAX_STATES, &table, &bytes), 0);
	assert_int_equal(vyre_dfa_validate(table, bytes), 0);
	uint32_t got = oracle_scan(table, bytes, text, len);

	free(table);
	return got;
}

static uint32_t table_word(const uint8_t *table, uint32_t i)
{
	uint32_t v;

	memcpy(&v, table + 4 * (size_t)i, 4);
	return v;
}

static void test_known_vectors(void **state)
{
	(void)state;
	struct vyre_dfa_pattern he[] = {{(const uint8_t *)"he", 2},
					{(const uint8_t *)"she", 3},
					{(const uint8_t *)"his", 3},
					{(const uint8_t *)"hers", 4}};
	/* "she" and "he" end at the same byte: one position */
	assert_int_equal(compile_and_scan(he, 4, (const uint8_t *)"ushers\0\0", 8), 2);
	assert_int_equal(compile_and_scan(he, 4, (const uint8_t *)"hishe he", 8), 3);

	struct vyre_dfa_pattern aa[] = {{(const uint8_t *)"aa", 2}};
	assert_int_equal(compile_and_scan(aa, 1, (const uint8_t *)"aaaaaaaa", 8), 7);

	struct vyre_dfa_pattern empty[] = {{NULL, 0}};
	assert_int_equal(compile_and_scan(empty, 1, (const uint8_t *)"abcdefgh", 8), 8);

	assert_int_equal(compile_and_scan(NULL, 0, (const uint8_t *)"abcdefgh", 8), 0);
	assert_int_equal(compile_and_scan(aa, 1, (const uint8_t *)"", 0), 0);
}

static void test_table_layout(void **state)
{
	(void)state;
	struct vyre_dfa_pattern he[] = {{(const uint8_t *)"he", 2},
					{(const uint8_t *)"she", 3},
					{(const uint8_t *)"his", 3},
					{(const uint8_t *)"hers", 4}};
	uint8_t *table;
	uint32_t bytes;

	assert_int_equal(vyre_dfa_compile(he, 4, 100, &table, &bytes), 0);
	/* the trie of the textbook example has 10 states: root h he her hers hi his s sh she */
	assert_int_equal(table_word(table, 0), 10);
	assert_int_equal(table_word(table, 1), 0);
	assert_int_equal(bytes, vyre_dfa_table_bytes(10));
	/* accepting: he, hers, his, she (and she inherits he) = 4 bits in one word */
	assert_int_equal(__builtin_popcount(table_word(table, 2)), 4);
	free(table);

	assert_int_equal(vyre_dfa_compile(NULL, 0, 1, &table, &bytes), 0);
	assert_int_equal(table_word(table, 0), 1);
	assert_int_equal(table_word(table, 2), 0);
	for (uint32_t c = 0; c < 256; c++)
		assert_int_equal(table_word(table, 3 + c), 0);
	free(table);
}

static void test_state_limit_and_arguments(void **state)
{
	(void)state;
	struct vyre_dfa_pattern p[] = {{(const uint8_t *)"abcdef", 6}};
	uint8_t *table = (uint8_t *)&table;
	uint32_t bytes = 0;

	assert_int_equal(vyre_dfa_compile(p, 1, 6, &table, &bytes), VYRE_E_NOMEM);
	assert_int_equal(vyre_dfa_compile(p, 1, 7, &table, &bytes), 0);
	assert_int_equal(table_word(table, 0), 7);
	free(table);
	assert_int_equal(vyre_dfa_compile(p, 1, 0, &table, &bytes), VYRE_E_INVAL);
	assert_int_equal(vyre_dfa_compile(NULL, 1, 10, &table, &bytes), VYRE_E_INVAL);
	assert_int_equal(vyre_dfa_compile(p, 1, 10, NULL, &bytes), VYRE_E_INVAL);
	assert_int_equal(vyre_dfa_compile(p, 1, 10, &table, NULL), VYRE_E_INVAL);
	struct vyre_dfa_pattern bad[] = {{NULL, 3}};
	assert_int_equal(vyre_dfa_compile(bad, 1, 10, &table, &bytes), VYRE_E_INVAL);
}

/* Random patterns and texts over an alphabet of @alpha symbols starting at @base. */
static void random_cases(unsigned cases, uint32_t alpha, uint8_t base)
{
	uint8_t pat_bytes[MAX_PATTERNS][MAX_PATTERN];
	struct vyre_dfa_pattern p[MAX_PATTERNS];
	uint8_t text[MAX_TEXT];

	for (unsigned c = 0; c < cases; c++) {
		uint32_t n = rnd(MAX_PATTERNS + 1);
		uint32_t len = 4 * rnd(MAX_TEXT / 4 + 1);

		for (uint32_t k = 0; k < n; k++) {
			/* mostly short patterns so they occur; an empty one now and then */
			p[k].len = rnd(16) == 0 ? 0 : 1 + rnd(MAX_PATTERN);
			p[k].len = p[k].len > 4 && rnd(2) ? p[k].len - 3 : p[k].len;
			for (uint32_t i = 0; i < p[k].len; i++)
				pat_bytes[k][i] = (uint8_t)(base + rnd(alpha));
			p[k].bytes = pat_bytes[k];
		}
		for (uint32_t i = 0; i < len; i++)
			text[i] = (uint8_t)(base + rnd(alpha + 1));
		uint32_t want = naive_count(p, n, text, len);
		uint32_t got = compile_and_scan(p, n, text, len);

		if (got != want)
			fail_msg("case %u: %u patterns, %u text bytes: dfa %u, naive %u", c, n, len,
				 got, want);
	}
}

static void test_random_small_alphabet(void **state)
{
	(void)state;
	random_cases(2000 * scale(), 3, 'a');
}

static void test_random_binary(void **state)
{
	(void)state;
	/* wraps around 0xff -> 0x00 so both edge bytes appear */
	random_cases(500 * scale(), 4, 0xfe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_vectors),
	    cmocka_unit_test(test_table_layout),
	    cmocka_unit_test(test_state_limit_and_arguments),
	    cmocka_unit_test(test_random_small_alphabet),
	    cmocka_unit_test(test_random_binary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
