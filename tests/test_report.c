/* SPDX-License-Identifier: MIT */
/*
 * DFA_REPORT and DFA_REPORT_COUNTED in the oracle (docs/design.md 6.8):
 * goldens, random literal sets against a brute-force matcher, capacity and
 * overflow, streams cut at every offset of short texts and at random
 * offsets of long ones, and every failure path, which must change nothing.
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
#include "report_ac.h"
#include "test_rand.h"

#define HEAP_BYTES (4u << 20)
#define IN_OFF	   0u
#define OUT_OFF	   (1u << 20)
#define STREAM_OFF (2u << 20)
#define TABLE_OFF  (3u << 20)
#define OUT_MAX	   (STREAM_OFF - OUT_OFF)

static uint8_t *heap_mem;
static uint8_t *snap;
static struct vyre_heap_view heap;

static int setup(void **state)
{
	(void)state;
	heap_mem = aligned_alloc(64, HEAP_BYTES);
	snap = malloc(HEAP_BYTES);
	heap = (struct vyre_heap_view){heap_mem, HEAP_BYTES};
	return heap_mem && snap ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(heap_mem);
	free(snap);
	return 0;
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

static uint32_t put_table(const struct ac_pat *p, uint32_t n)
{
	uint32_t bytes = 0;
	uint8_t *t = ac_build(p, n, &bytes);

	assert_non_null(t);
	assert_true(bytes <= HEAP_BYTES - TABLE_OFF);
	memcpy(heap_mem + TABLE_OFF, t, bytes);
	free(t);
	return bytes;
}

static struct vyre_exec_item report_item(uint32_t op, uint32_t in_bytes, uint32_t out_bytes,
					 uint32_t table_bytes, uint32_t stream_bytes)
{
	return (struct vyre_exec_item){.op = op,
				       .in_bytes = in_bytes,
				       .out_bytes = out_bytes,
				       .table_bytes = table_bytes,
				       .in_off = IN_OFF,
				       .out_off = OUT_OFF,
				       .table_off = TABLE_OFF,
				       .aux_off = STREAM_OFF,
				       .aux_bytes = stream_bytes};
}

/* Text at IN_OFF: plain (padded to words) or counted. Returns the input's bytes. */
static uint32_t put_text(const uint8_t *text, uint32_t len, int counted)
{
	uint32_t at = counted ? 4 : 0, bytes = (at + len + 3) & ~3u;

	memset(heap_mem + IN_OFF, 0, bytes + 4);
	if (counted)
		memcpy(heap_mem + IN_OFF, &len, 4);
	memcpy(heap_mem + IN_OFF + at, text, len);
	return bytes;
}

/* The report at OUT_OFF equals @want[0, total) (those that fit @cap). */
static void check_report(const struct ac_rec *want, uint64_t total, uint64_t cap, uint64_t result,
			 uint64_t base)
{
	const uint64_t kept = total < cap ? total : cap;

	assert_int_equal(result, total);
	assert_int_equal(rd32(OUT_OFF), kept);
	assert_int_equal(rd32(OUT_OFF + 4), total > cap ? VYRE_REPORT_OVERFLOW : 0);
	assert_int_equal(rd64(OUT_OFF + 8), total);
	for (uint64_t k = 0; k < kept; k++) {
		const uint64_t r = OUT_OFF + 16 + 24 * k;

		assert_int_equal(rd32(r), want[base + k].id);
		assert_int_equal(rd32(r + 4), 0);
		assert_int_equal(rd64(r + 8), want[base + k].start);
		assert_int_equal(rd64(r + 16), want[base + k].end);
	}
}

static const uint8_t *s8(const char *s)
{
	return (const uint8_t *)s;
}

static void test_golden(void **state)
{
	(void)state;
	const struct ac_pat p[] = {
	    {s8("he"), 2, 0}, {s8("she"), 3, 1}, {s8("his"), 3, 2}, {s8("hers"), 4, 3}};
	const uint32_t tb = put_table(p, 4);
	const uint32_t ib = put_text(s8("ushers"), 6, 0);
	/* "ushers" + 2 NUL bytes of padding: the input is whole words */
	const struct ac_rec want[] = {{0, 2, 4}, {1, 1, 4}, {3, 2, 6}};
	struct vyre_exec_item it = report_item(VYRE_OP_DFA_REPORT, ib, 16 + 24 * 8, tb, 0);
	uint64_t result;

	memset(heap_mem + OUT_OFF, 0xee, 512);
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	check_report(want, 3, 8, result, 0);
	/* bytes after the last record stay */
	assert_int_equal(heap_mem[OUT_OFF + 16 + 24 * 3], 0xee);
	/* room for one record: the first, overflow, total 3 */
	memset(heap_mem + OUT_OFF, 0xee, 512);
	it.out_bytes = 16 + 24 + 20;
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	check_report(want, 3, 1, result, 0);
	assert_int_equal(heap_mem[OUT_OFF + 40], 0xee);
	/* a header alone: total, no record */
	it.out_bytes = 16;
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	check_report(want, 3, 0, result, 0);
	/* counted: only the counted bytes ("ushe") */
	const uint32_t cb = put_text(s8("ushers"), 4, 1);

	it = report_item(VYRE_OP_DFA_REPORT_COUNTED, cb + 4, 16 + 24 * 8, tb, 0);
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	check_report(want, 2, 8, result, 0);
}

/* Random patterns over a small alphabet (ids repeat, patterns nest and overlap). */
static uint32_t random_set(uint64_t *seed, struct ac_pat *p, uint8_t (*store)[16], uint32_t max)
{
	const uint32_t n = 1 + (uint32_t)(splitmix64(seed) % max);
	const uint32_t alpha = 2 + (uint32_t)(splitmix64(seed) % 3);
	const int binary = splitmix64(seed) % 4 == 0;

	for (uint32_t i = 0; i < n; i++) {
		const uint32_t len = 1 + (uint32_t)(splitmix64(seed) % 6);

		for (uint32_t j = 0; j < len; j++)
			store[i][j] = binary ? (uint8_t)splitmix64(seed)
					     : (uint8_t)('a' + splitmix64(seed) % alpha);
		p[i] = (struct ac_pat){store[i], len, (uint32_t)(splitmix64(seed) % (n + 1))};
	}
	return n;
}

static void random_text(uint64_t *seed, uint8_t *t, uint32_t len, const struct ac_pat *p,
			uint32_t n)
{
	for (uint32_t i = 0; i < len;) {
		if (splitmix64(seed) % 3 == 0) {
			const struct ac_pat *q = &p[splitmix64(seed) % n];

			for (uint32_t j = 0; j < q->len && i < len; j++)
				t[i++] = q->bytes[j];
		} else {
			t[i++] = (uint8_t)('a' + splitmix64(seed) % 3);
		}
	}
}

#define MAX_RECS (1u << 16)

static void test_random_vs_brute(void **state)
{
	(void)state;
	uint64_t seed = 0x5eed26;
	struct ac_pat p[12];
	uint8_t store[12][16], text[2048];
	struct ac_rec *want = calloc(MAX_RECS, sizeof(*want));

	assert_non_null(want);
	for (int round = 0; round < 300; round++) {
		const uint32_t n = random_set(&seed, p, store, 12);
		const uint32_t tb = put_table(p, n);
		const uint32_t len = (uint32_t)(splitmix64(&seed) % 2048);
		const int counted = round & 1;

		random_text(&seed, text, len, p, n);
		/* the plain op scans whole words: the padding is part of its text */
		const uint32_t ib = put_text(text, len, counted);
		const uint64_t tl = counted ? len : ib;
		const uint64_t total =
		    ac_brute(p, n, heap_mem + IN_OFF + (counted ? 4 : 0), tl, want, MAX_RECS);
		const uint64_t cap = splitmix64(&seed) % 2 ? total + 1 : splitmix64(&seed) % 64;
		struct vyre_exec_item it =
		    report_item(counted ? VYRE_OP_DFA_REPORT_COUNTED : VYRE_OP_DFA_REPORT, ib,
				(uint32_t)(16 + 24 * (cap < 40000 ? cap : 40000)), tb, 0);
		uint64_t result;

		assert_true(total <= MAX_RECS);
		assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
		check_report(want, total, cap < 40000 ? cap : 40000, result, 0);
	}
	free(want);
}

/* Scan @text in pieces cut at @cuts (increasing) through one stream; check each piece. */
static void stream_pieces(uint32_t tb, const uint8_t *text, uint32_t len, const uint32_t *cuts,
			  uint32_t n_cuts, const struct ac_rec *want, uint64_t total)
{
	uint64_t at = 0;

	memset(heap_mem + STREAM_OFF, 0, 16);
	for (uint32_t c = 0, from = 0; c <= n_cuts; c++) {
		const uint32_t to = c < n_cuts ? cuts[c] : len;
		const uint32_t ib = put_text(text + from, to - from, 1);
		struct vyre_exec_item it =
		    report_item(VYRE_OP_DFA_REPORT_COUNTED, ib, 16 + 24 * 1024, tb, 16);
		uint64_t result, k = 0;

		assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
		while (at + k < total && want[at + k].end <= to)
			k++;
		assert_int_equal(result, k);
		check_report(want, k, 1024, result, at);
		at += k;
		assert_int_equal(rd32(STREAM_OFF), 1);
		assert_int_equal(rd64(STREAM_OFF + 8), to);
		from = to;
	}
	assert_int_equal(at, total);
}

static void test_streams(void **state)
{
	(void)state;
	uint64_t seed = 0x57ea3;
	struct ac_pat p[8];
	uint8_t store[8][16], text[4096];
	struct ac_rec *want = calloc(MAX_RECS, sizeof(*want));

	assert_non_null(want);
	/* short texts: one cut and two cuts at every offset */
	for (int round = 0; round < 40; round++) {
		const uint32_t n = random_set(&seed, p, store, 8);
		const uint32_t tb = put_table(p, n);
		const uint32_t len = 1 + (uint32_t)(splitmix64(&seed) % 24);

		random_text(&seed, text, len, p, n);
		const uint64_t total = ac_brute(p, n, text, len, want, MAX_RECS);

		for (uint32_t a = 0; a <= len; a++)
			for (uint32_t b = a; b <= len; b++) {
				const uint32_t cuts[2] = {a, b};

				stream_pieces(tb, text, len, cuts, 2, want, total);
			}
	}
	/* long texts at random offsets */
	for (int round = 0; round < 40; round++) {
		const uint32_t n = random_set(&seed, p, store, 8);
		const uint32_t tb = put_table(p, n);
		const uint32_t len = 1 + (uint32_t)(splitmix64(&seed) % sizeof(text));
		uint32_t cuts[16];
		const uint32_t n_cuts = (uint32_t)(splitmix64(&seed) % 16);

		random_text(&seed, text, len, p, n);
		const uint64_t total = ac_brute(p, n, text, len, want, MAX_RECS);

		for (uint32_t c = 0; c < n_cuts; c++)
			cuts[c] = (uint32_t)(splitmix64(&seed) % (len + 1));
		for (uint32_t a = 1; a < n_cuts; a++)
			for (uint32_t b = a; b > 0 && cuts[b - 1] > cuts[b]; b--) {
				const uint32_t x = cuts[b];

				cuts[b] = cuts[b - 1];
				cuts[b - 1] = x;
			}
		stream_pieces(tb, text, len, cuts, n_cuts, want, total);
	}
	free(want);
}

/* @it fails with VYRE_E_INVAL, result 0, and no byte of the heap changes. */
static void expect_inval(const struct vyre_exec_item *it)
{
	uint64_t result = 77;

	memcpy(snap, heap_mem, HEAP_BYTES);
	assert_int_equal(vyre_exec_one(&heap, it, &result), VYRE_E_INVAL);
	assert_int_equal(result, 0);
	assert_memory_equal(snap, heap_mem, HEAP_BYTES);
}

static void poke32(uint64_t off, uint32_t v)
{
	memcpy(heap_mem + off, &v, 4);
}

static void test_failures(void **state)
{
	(void)state;
	const struct ac_pat p[] = {{s8("ab"), 2, 5}, {s8("b"), 1, 7}, {s8("abc"), 3, 9}};
	const uint32_t tb = put_table(p, 3);
	const uint32_t n_states = rd32(TABLE_OFF);
	const uint64_t sec = TABLE_OFF + vyre_dfa_table_bytes(n_states);
	const uint32_t n_out = rd32(sec + 4);
	const uint32_t ib = put_text(s8("xxabcabc"), 8, 0);
	struct vyre_exec_item it = report_item(VYRE_OP_DFA_REPORT, ib, 16 + 24 * 8, tb, 16);
	uint64_t result;

	memset(heap_mem + STREAM_OFF, 0, 16);
	memset(heap_mem + OUT_OFF, 0x11, 4096);
	memcpy(snap, heap_mem, HEAP_BYTES);
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	assert_int_equal(result, 6);
	memset(heap_mem + STREAM_OFF, 0, 16);

	/* the report section */
	struct vyre_exec_item t = it;

	t.table_bytes = (uint32_t)(sec - TABLE_OFF); /* no section: a DFA_SCAN table */
	expect_inval(&t);
	t.table_bytes = tb - 4; /* the last entry cut */
	expect_inval(&t);
	poke32(sec, VYRE_DFA_REPORT_MAGIC + 1);
	expect_inval(&it);
	poke32(sec, VYRE_DFA_REPORT_MAGIC);
	poke32(sec + 4, n_out + 1); /* n_out past out_first[n_states] */
	expect_inval(&it);
	poke32(sec + 4, n_out);
	poke32(sec + 8, 1); /* out_first[0] != 0 */
	expect_inval(&it);
	poke32(sec + 8, 0);
	/* a state's list with a decreasing out_first */
	for (uint32_t s = 1; s < n_states; s++)
		if (rd32(sec + 8 + 4 * s) > 0) {
			const uint32_t v = rd32(sec + 8 + 4 * s);

			poke32(sec + 8 + 4 * s, n_out + 1);
			expect_inval(&it);
			poke32(sec + 8 + 4 * s, v);
			break;
		}
	/* an entry of len 0; ids not increasing within a state */
	const uint64_t outs = sec + 8 + 4 * ((uint64_t)n_states + 1);

	poke32(outs + 4, 0);
	expect_inval(&it);
	put_table(p, 3);
	for (uint32_t s = 0; s < n_states; s++) {
		const uint32_t lo = rd32(sec + 8 + 4 * s), hi = rd32(sec + 12 + 4 * s);

		if (hi - lo >= 2) {
			const uint32_t a = rd32(outs + 8 * lo);

			poke32(outs + 8 * lo, rd32(outs + 8 * (lo + 1)));
			expect_inval(&it);
			poke32(outs + 8 * lo, a);
		}
	}
	/* a list on a state that does not accept; an accepting state without one is fine */
	put_table(p, 3);
	const uint64_t acc = TABLE_OFF + 8;

	for (uint32_t s = 0; s < n_states; s++)
		if (rd32(sec + 12 + 4 * s) > rd32(sec + 8 + 4 * s)) {
			poke32(acc + 4 * (s / 32), rd32(acc + 4 * (s / 32)) & ~(1u << (s % 32)));
			expect_inval(&it);
			/* a trusted section may lie: that state's records are left out */
			t = it;
			t.flags = VYRE_EXEC_REPORT_TRUSTED;
			assert_int_equal(vyre_exec_one(&heap, &t, &result), 0);
			assert_true(result < 6);
			memset(heap_mem + STREAM_OFF, 0, 16);
			put_table(p, 3);
			break;
		}
	for (uint32_t s = 0; s < n_states; s++)
		if (rd32(sec + 12 + 4 * s) == rd32(sec + 8 + 4 * s))
			poke32(acc + 4 * (s / 32), rd32(acc + 4 * (s / 32)) | 1u << (s % 32));
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	assert_int_equal(result, 6);
	memset(heap_mem + STREAM_OFF, 0, 16);
	put_table(p, 3);

	/* a bad transition with the table not trusted; trusted, the section is still checked */
	const uint64_t next0 = TABLE_OFF + 8 + 4 * ((n_states + 31) / 32);

	poke32(next0 + 4 * 'x', n_states);
	expect_inval(&it);
	put_table(p, 3);
	t = it;
	t.flags = VYRE_EXEC_TABLE_TRUSTED;
	poke32(sec, 0);
	expect_inval(&t);
	put_table(p, 3);

	/* the output */
	t = it;
	t.out_bytes = 12;
	expect_inval(&t);
	t = it;
	t.out_off = IN_OFF + 4; /* overlaps the input */
	expect_inval(&t);
	t.out_off = IN_OFF; /* in == out */
	expect_inval(&t);
	t = it;
	t.out_off = TABLE_OFF + tb - 16; /* overlaps the table */
	t.out_bytes = 64;
	expect_inval(&t);

	/* the stream */
	t = it;
	t.aux_bytes = 12;
	expect_inval(&t);
	t = it;
	t.aux_off = IN_OFF;
	expect_inval(&t);
	t.aux_off = OUT_OFF + 16;
	expect_inval(&t);
	t.aux_off = TABLE_OFF;
	expect_inval(&t);
	poke32(STREAM_OFF, 2);
	expect_inval(&it);
	poke32(STREAM_OFF, 0);
	poke32(STREAM_OFF + 4, 1); /* not started, yet a state */
	expect_inval(&it);
	poke32(STREAM_OFF, 1);
	poke32(STREAM_OFF + 4, n_states);
	expect_inval(&it);
	poke32(STREAM_OFF + 4, 0);
	memset(heap_mem + STREAM_OFF + 8, 0xff, 8); /* bytes_seen would wrap */
	expect_inval(&it);
	memset(heap_mem + STREAM_OFF, 0, 16);

	/* the counted input */
	t = report_item(VYRE_OP_DFA_REPORT_COUNTED, ib, 16 + 24 * 8, tb, 16);
	poke32(IN_OFF, ib - 3);
	expect_inval(&t);
	t.in_bytes = 0;
	expect_inval(&t);

	/* with the table fixed again the item runs: the checks above had a cause each */
	put_table(p, 3);
	memset(heap_mem + STREAM_OFF, 0, 16);
	put_text(s8("xxabcabc"), 8, 0);
	assert_int_equal(vyre_exec_one(&heap, &it, &result), 0);
	assert_int_equal(result, 6);
}

static void test_static(void **state)
{
	(void)state;
	const struct vyre_work_item w = {VYRE_OP_DFA_REPORT, 3, 4, 5};
	const struct vyre_work_item scan = {VYRE_OP_DFA_SCAN, 3, 4, 5};
	struct vyre_op_access acc;
	struct vyre_sqe sqe = {.item = w, .aux_handle = 6};

	vyre_op_access_aux(&w, 6, &acc);
	assert_int_equal(acc.n_reads, 2);
	assert_int_equal(acc.write, 4);
	assert_int_equal(acc.aux, 6);
	assert_int_equal(vyre_sqe_aux(&sqe), 6);
	sqe.item = scan;
	assert_int_equal(vyre_sqe_aux(&sqe), 0);
	vyre_op_access_aux(&scan, 6, &acc);
	assert_int_equal(acc.aux, 0);
	assert_true(vyre_op_idempotent(&w));
	assert_false(vyre_op_idempotent_aux(&w, 6));
	assert_int_equal(vyre_op_check_lengths(VYRE_OP_DFA_REPORT, &w, 4, 16), 0);
	const struct vyre_work_item no_table = {VYRE_OP_DFA_REPORT_COUNTED, 3, 4, 0};

	assert_int_equal(vyre_op_check_lengths(VYRE_OP_DFA_REPORT_COUNTED, &no_table, 4, 16),
			 VYRE_E_INVAL);
	assert_int_equal(vyre_op_check_lengths(VYRE_OP_DFA_REPORT_COUNTED, &w, 0, 16),
			 VYRE_E_INVAL);
	/* the stream's heap must exist when the item has one */
	struct vyre_exec_item x = report_item(VYRE_OP_DFA_REPORT, 4, 16, 4, 16);

	x.aux_heap = 1;
	assert_false(vyre_exec_heaps_ok(&heap, 1, &x));
	x.aux_bytes = 0;
	assert_true(vyre_exec_heaps_ok(&heap, 1, &x));
	/* an exec item's aux_bytes shares param's word (gpu/ops.h): only table ops have one */
	for (uint32_t op = 0; op < VYRE_OP_COUNT; op++) {
		const int mask = vyre_op_operands(op);

		assert_true(mask <= 0 || !(mask & VYRE_OPERAND_AUX) || (mask & VYRE_OPERAND_TABLE));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden),  cmocka_unit_test(test_random_vs_brute),
	    cmocka_unit_test(test_streams), cmocka_unit_test(test_failures),
	    cmocka_unit_test(test_static),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
