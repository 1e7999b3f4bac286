/* SPDX-License-Identifier: MIT */
/*
 * test_ranges - items on byte ranges of their buffers (VYRE_SQE_RANGE,
 * docs/design.md 6.6) through a live vyred on the CPU backend, or on the
 * one $VYRE_TEST_BACKEND names:
 *
 *  - slices: 16384 DFA_SCAN items over the 4 KiB slices of one 64 MiB
 *    device buffer write their counts into the words of one 64 KiB output
 *    buffer; every count is a sequential walk's;
 *  - ops: every op on ranges of heap and device buffers, and whole-buffer
 *    items among them, in random batches against the oracle
 *    (tests/devbuf_model.c): statuses, results and every buffer's bytes;
 *  - invalid ranges: each case completes with VYRE_E_INVAL and changes
 *    nothing; the client calls refuse a range without VYRE_SQE_RANGE and
 *    VYRE_SQE_RANGE without a range;
 *  - dedupe: items of the same handles and different ranges both run,
 *    identical ranges are deduplicated (one batch, behind a slow item);
 *  - the planner: disjoint ranges of one buffer in one group, overlapping
 *    ones ordered (RAW, WAR, WAW), 4096 slices in one group;
 *  - in flight: two clients of one named domain; writes of ranges apart
 *    from a slow scan's run beside it, a read of what it writes (RAW) and a
 *    write of what it reads (WAR) wait for it and see what sequential
 *    execution gives.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../planner/planner.h"
#include "devbuf_model.h"
#include "devbuf_session.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define WAIT_NS	   (120ll * 1000000000ll)
#define MAX_BATCH  64u
#define SLICE	   4096u
#define SLICES	   16384u
#define BIG_BYTES  (64u << 20)
#define STAGE	   (1u << 20)
#define HEAP_BYTES (16ull << 20)

static struct vyre_test_daemon daemon_;
static const char *backend = "cpu";

static int connect_to(const char *domain, struct vyre_client **c)
{
	const struct vyre_connect_opts o = {
	    .socket_path = daemon_.socket, .domain = domain, .heap_bytes = HEAP_BYTES};
	int rc = vyre_connect(&o, c);

	if (rc != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	return 0;
}

static int alloc(struct vyre_client *c, uint32_t bytes, uint32_t flags, uint32_t *h)
{
	int rc = vyre_buffer_alloc(c, bytes, flags, h);

	if (rc != 0)
		FAIL("alloc %u bytes (flags %u): %s", bytes, flags, vyre_strerror(rc));
	return 0;
}

static struct vyre_item_range rng_of(uint64_t in_off, uint32_t in_len, uint64_t out_off,
				     uint32_t out_len)
{
	return (struct vyre_item_range){in_off, out_off, in_len, out_len};
}

/* One ranged item (@r NULL: a plain one), waited for. */
static int run1(struct vyre_client *c, uint32_t op, uint32_t in, uint32_t out, uint32_t param,
		const struct vyre_item_range *r, uint64_t ud, struct vyre_cqe *cqe)
{
	const struct vyre_work_item it = {op, in, out, param};
	int rc = r ? vyre_submit_range(c, &it, r, ud, 0) : vyre_submit(c, &it, ud, 0);

	if (rc != 0)
		FAIL("submit %" PRIu64 ": %s", ud, vyre_strerror(rc));
	rc = vyre_wait(c, cqe, 1, WAIT_NS);
	if (rc != 1 || cqe->user_data != ud)
		FAIL("no CQE for %" PRIu64 ": %s", ud, rc < 0 ? vyre_strerror(rc) : "another");
	return 0;
}

/* The count of a DFA table's walk over @n bytes, independently of gpu/ops.c. */
static uint32_t walk(const uint32_t *t, const uint8_t *p, uint32_t n)
{
	const uint32_t states = t[0], aw = (states + 31) / 32;
	uint32_t s = t[1], hits = 0;

	for (uint32_t i = 0; i < n; i++) {
		s = t[2 + aw + 256 * s + p[i]];
		hits += (t[2 + s / 32] >> (s % 32)) & 1u;
	}
	return hits;
}

/* ---- slices of one device buffer -------------------------------------------------------- */

static int t_slices(void)
{
	struct vyre_client *c;
	uint32_t dev, out, table, stage, n_states = 3;
	const uint32_t table_bytes = (uint32_t)vyre_dfa_table_bytes(n_states);
	uint8_t *content = malloc(BIG_BYTES);
	struct vyre_work_item *its = malloc(SLICES * sizeof(*its));
	struct vyre_item_range *rs = malloc(SLICES * sizeof(*rs));
	uint64_t *ud = malloc(SLICES * sizeof(*ud)), rng = 0x736c69636573ull;
	uint8_t *seen = calloc(SLICES, 1);
	struct vyre_cqe cqe[256];
	uint32_t queued = 0, done = 0;
	int rc = -1;

	if (!content || !its || !rs || !ud || !seen || connect_to(NULL, &c))
		goto out;
	if (alloc(c, BIG_BYTES, VYRE_BUF_DEVICE, &dev) || alloc(c, 4 * SLICES, 0, &out) ||
	    alloc(c, table_bytes, 0, &table) || alloc(c, STAGE, 0, &stage))
		goto close;
	uint32_t *t = vyre_buffer_ptr(c, table, NULL);
	uint8_t *sp = vyre_buffer_ptr(c, stage, NULL);
	uint32_t *o = vyre_buffer_ptr(c, out, NULL);

	/* state (s + b) % 3 after byte b, states 0 and 1 accept: every count differs */
	t[0] = n_states;
	t[1] = 0;
	t[2] = 3;
	for (uint32_t st = 0; st < n_states; st++)
		for (uint32_t b = 0; b < 256; b++)
			t[3 + 256 * st + b] = (st + b) % n_states;
	for (uint32_t i = 0; i < BIG_BYTES; i++)
		content[i] = (uint8_t)(dm_rng(&rng) >> 29);
	/* the device buffer's bytes, a MiB at a time, through ranged copies */
	for (uint32_t k = 0; k < BIG_BYTES / STAGE; k++) {
		const struct vyre_item_range r = rng_of(0, STAGE, (uint64_t)k * STAGE, STAGE);

		memcpy(sp, content + (size_t)k * STAGE, STAGE);
		if (run1(c, VYRE_OP_COPY, stage, dev, 0, &r, 1000 + k, &cqe[0]))
			goto close;
		if (cqe[0].status != 0) {
			fprintf(stderr, "FAIL: copy %u: %s\n", k, vyre_strerror(cqe[0].status));
			goto close;
		}
	}
	for (uint32_t i = 0; i < SLICES; i++) {
		its[i] = (struct vyre_work_item){VYRE_OP_DFA_SCAN, dev, out, table};
		rs[i] = rng_of((uint64_t)i * SLICE, SLICE, 4 * (uint64_t)i, 4);
		ud[i] = i;
		o[i] = 0xdeadbeefu;
	}
	while (done < SLICES) {
		if (queued < SLICES) {
			int got = vyre_submit_batch_range(c, &its[queued], &rs[queued], &ud[queued],
							  SLICES - queued);

			if (got < 0) {
				fprintf(stderr, "FAIL: submit: %s\n", vyre_strerror(got));
				goto close;
			}
			queued += (uint32_t)got;
		}
		if (done == queued)
			continue;
		int k = vyre_wait(c, cqe, 256, WAIT_NS);

		if (k <= 0) {
			fprintf(stderr, "FAIL: wait: %s\n", k < 0 ? vyre_strerror(k) : "nothing");
			goto close;
		}
		for (int j = 0; j < k; j++) {
			const uint64_t i = cqe[j].user_data;
			const uint32_t want = i < SLICES ? walk(t, content + i * SLICE, SLICE) : 0;

			if (i >= SLICES || seen[i] || cqe[j].status != 0 || cqe[j].result != want) {
				fprintf(stderr,
					"FAIL: slice %" PRIu64 ": status %d result %" PRIu64
					", walk %u\n",
					i, cqe[j].status, cqe[j].result, want);
				goto close;
			}
			seen[i] = 1;
		}
		done += (uint32_t)k;
	}
	for (uint32_t i = 0; i < SLICES; i++)
		if (o[i] != walk(t, content + (size_t)i * SLICE, SLICE)) {
			fprintf(stderr, "FAIL: output word %u is %u\n", i, o[i]);
			goto close;
		}
	rc = 0;
close:
	vyre_close(c);
out:
	free(content);
	free(its);
	free(rs);
	free(ud);
	free(seen);
	return rc;
}

/* ---- every op against the oracle ------------------------------------------------------- */

/*
 * Submit @n items, ranged where @ranged[i] (@r[i]) and plain otherwise,
 * wait, and compare every CQE with the oracle run in order.
 */
static int run_mixed(struct dm_session *s, const struct vyre_work_item *its,
		     const struct vyre_item_range *r, const uint8_t *ranged, uint32_t n,
		     const char *what)
{
	struct vyre_cqe cqe[MAX_BATCH];
	const uint64_t first = s->next_ud;

	for (uint32_t i = 0; i < n; i++) {
		const uint64_t ud = s->next_ud++;
		int rc;

		do
			rc = ranged[i] ? vyre_submit_range(s->c, &its[i], &r[i], ud, 0)
				       : vyre_submit(s->c, &its[i], ud, 0);
		while (rc == VYRE_E_AGAIN);
		if (rc != 0)
			FAIL("%s: submit: %s", what, vyre_strerror(rc));
	}
	if (dm_wait_items(s, first, n, cqe, what))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		int32_t status;
		uint64_t result;

		if (ranged[i])
			dm_exec_range(s->m, &its[i], VYRE_SQE_RANGE, &r[i], &status, &result);
		else
			dm_exec(s->m, &its[i], 0, &status, &result);
		if (cqe[i].status != status || cqe[i].result != result)
			FAIL("%s: item %u (op %u in %#x [%" PRIu64 ", +%u) out %#x [%" PRIu64
			     ", +%u) param %#x%s): status %d result %" PRIu64
			     ", oracle %d %" PRIu64,
			     what, i, its[i].op_handle, its[i].input_handle, r[i].in_offset,
			     r[i].in_length, its[i].output_handle, r[i].out_offset, r[i].out_length,
			     its[i].param, ranged[i] ? "" : ", whole", cqe[i].status, cqe[i].result,
			     status, result);
	}
	return 0;
}

/* A buffer in vyred and the model: heap ones start as @init, device ones as its copy. */
static int add(struct dm_session *s, uint32_t bytes, int device, const uint8_t *init, uint32_t *h)
{
	if (alloc(s->c, bytes, device ? VYRE_BUF_DEVICE : 0, h))
		return -1;
	if (dm_add(s->m, *h, bytes, device, device ? NULL : init) < 0)
		FAIL("model full");
	if (!device) {
		memcpy(vyre_buffer_ptr(s->c, *h, NULL), init, bytes);
		return 0;
	}
	/* through the scratch buffer, a plain copy the model makes too */
	uint32_t tmp;
	struct vyre_work_item it = {VYRE_OP_COPY, 0, *h, 0};
	const uint8_t whole = 0;
	const struct vyre_item_range none = {0};

	if (add(s, bytes, 0, init, &tmp))
		return -1;
	it.input_handle = tmp;
	return run_mixed(s, &it, &none, &whole, 1, "device buffer contents");
}

/* Bytes for the byte ops: counted headers every 64 bytes over digits, letters or anything. */
static void op_bytes(uint8_t *p, uint32_t bytes, int kind, uint64_t *rng)
{
	static const char hex[] = "0123456789abcdef";

	for (uint32_t i = 0; i < bytes; i++)
		p[i] = kind == 0   ? (uint8_t)hex[dm_rng(rng) % 16]
		       : kind == 1 ? (uint8_t)('A' + dm_rng(rng) % 26)
				   : (uint8_t)dm_rng(rng);
	for (uint32_t at = 0; at + 4 <= bytes; at += 64) {
		const uint32_t len = 4 * (uint32_t)(dm_rng(rng) % 15);

		memcpy(p + at, &len, 4);
	}
}

/* A range of a 256-byte buffer on a 16-byte grid; now and then empty, whole or bad. */
static void pick(uint64_t *rng, uint64_t *off, uint32_t *len)
{
	const uint32_t roll = (uint32_t)(dm_rng(rng) % 100);

	*off = 16 * (dm_rng(rng) % 16);
	*len = 4 * (uint32_t)(dm_rng(rng) % ((256 - *off) / 4 + 1));
	if (roll < 8) {
		*off = 0;
		*len = 256;
	} else if (roll < 10) {
		*off += 2; /* unaligned: invalid */
	} else if (roll < 12) {
		*len = 256 - (uint32_t)*off + 4; /* past the end: invalid */
	}
}

static int t_ops(uint32_t rounds)
{
	struct dm_session s = {0};
	struct dm m = {0};
	uint32_t h[8], n_h = 0, table, dtable, bmap;
	uint64_t rng = 0x6f7073ull;
	uint8_t init[256];
	uint32_t words[1024];
	int rc = -1;

	s.m = &m;
	s.next_ud = 1;
	if (connect_to(NULL, &s.c) || alloc(s.c, DM_SCRATCH, 0, &s.scratch))
		return -1;
	/* heap and device buffers of digits, letters and noise */
	for (uint32_t i = 0; i < 6; i++) {
		op_bytes(init, sizeof(init), (int)(i % 3), &rng);
		if (add(&s, sizeof(init), i >= 3, init, &h[n_h++]))
			goto out;
	}
	dm_random_table(words, 3, &rng);
	if (add(&s, (uint32_t)vyre_dfa_table_bytes(3), 0, (const uint8_t *)words, &table) ||
	    add(&s, (uint32_t)vyre_dfa_table_bytes(3), 1, (const uint8_t *)words, &dtable))
		goto out;
	for (uint32_t i = 0; i < 256; i++)
		init[i] = (uint8_t)dm_rng(&rng);
	if (add(&s, 256, 0, init, &bmap))
		goto out;
	for (uint32_t round = 0; round < rounds; round++) {
		struct vyre_work_item its[MAX_BATCH];
		struct vyre_item_range r[MAX_BATCH];
		uint8_t ranged[MAX_BATCH];
		const uint32_t n = 1 + (uint32_t)(dm_rng(&rng) % 24);
		char what[64];

		for (uint32_t i = 0; i < n; i++) {
			const uint32_t op = (uint32_t)(dm_rng(&rng) % VYRE_OP_COUNT);
			const int mask = vyre_op_operands(op);
			struct vyre_work_item *it = &its[i];

			*it = (struct vyre_work_item){op, 0, 0, (uint32_t)dm_rng(&rng) % 5};
			r[i] = (struct vyre_item_range){0};
			ranged[i] = dm_rng(&rng) % 8 != 0;
			if (mask & VYRE_OPERAND_IN)
				it->input_handle = h[dm_rng(&rng) % n_h];
			if (mask & VYRE_OPERAND_OUT)
				it->output_handle = dm_rng(&rng) % 4 == 0 && it->input_handle
							? it->input_handle
							: h[dm_rng(&rng) % n_h];
			if (mask & VYRE_OPERAND_TABLE)
				it->param = op == VYRE_OP_BYTEMAP ? bmap
					    : dm_rng(&rng) % 2	  ? table
								  : dtable;
			if (mask & VYRE_OPERAND_IN)
				pick(&rng, &r[i].in_offset, &r[i].in_length);
			if (mask & VYRE_OPERAND_OUT)
				pick(&rng, &r[i].out_offset, &r[i].out_length);
			/* the same range in place now and then */
			if (it->input_handle && it->input_handle == it->output_handle &&
			    dm_rng(&rng) % 2) {
				r[i].out_offset = r[i].in_offset;
				r[i].out_length = r[i].in_length;
			}
			/* an operand the op lacks with a range: invalid */
			if (mask <= 0 && dm_rng(&rng) % 4 == 0)
				r[i].in_offset = 16;
		}
		snprintf(what, sizeof(what), "ops round %u", round);
		if (run_mixed(&s, its, r, ranged, n, what) ||
		    (round % 16 == 15 && dm_check_buffers(&s, what)))
			goto out;
	}
	rc = dm_check_buffers(&s, "ops, the end");
out:
	vyre_close(s.c);
	dm_free(&m);
	return rc;
}

/* ---- invalid ranges -------------------------------------------------------------------- */

static int t_invalid(void)
{
	struct dm_session s = {0};
	struct dm m = {0};
	uint32_t a, b, d, t;
	uint8_t init[64];
	uint32_t words[1024];
	uint64_t rng = 0x696e76ull;
	int rc = -1;
	const uint64_t top = UINT64_MAX - 3;
	const struct {
		uint32_t op;
		int in, out; /* 0: a, 1: b, 2: d (device), -1: none */
		int table;
		struct vyre_item_range r;
		const char *why;
	} cases[] = {
	    {VYRE_OP_COPY, 0, 1, 0, {2, 0, 4, 4}, "unaligned input offset"},
	    {VYRE_OP_COPY, 0, 1, 0, {0, 0, 6, 4}, "unaligned input length"},
	    {VYRE_OP_COPY, 0, 1, 0, {0, 6, 4, 4}, "unaligned output offset"},
	    {VYRE_OP_COPY, 0, 1, 0, {0, 0, 4, 2}, "unaligned output length"},
	    {VYRE_OP_COPY, 0, 1, 0, {64, 0, 4, 4}, "input past the end"},
	    {VYRE_OP_COPY, 0, 1, 0, {68, 0, 0, 4}, "input offset past the end"},
	    {VYRE_OP_COPY, 0, 1, 0, {top, 0, 8, 4}, "input offset + length overflows"},
	    {VYRE_OP_COPY, 0, 1, 0, {0, top, 4, 8}, "output offset + length overflows"},
	    {VYRE_OP_COPY, 0, 1, 0, {0, 60, 4, 8}, "output past the end"},
	    {VYRE_OP_COPY, 0, 2, 0, {0, 60, 4, 8}, "device output past the end"},
	    {VYRE_OP_COPY, 2, 1, 0, {32, 0, 40, 4}, "device input past the end"},
	    {VYRE_OP_FILL, -1, 1, 0, {4, 0, 0, 4}, "a range of the input FILL lacks"},
	    {VYRE_OP_FILL, -1, 1, 0, {0, 0, 4, 4}, "a length of the input FILL lacks"},
	    {VYRE_OP_NOP, -1, -1, 0, {0, 4, 0, 0}, "a range of NOP's output"},
	    {VYRE_OP_COPY, 0, 0, 0, {0, 8, 16, 16}, "input and output overlap in part"},
	    {VYRE_OP_ADD, 0, 0, 0, {0, 0, 16, 8}, "same start, other length"},
	    {VYRE_OP_SUM, 0, 1, 0, {0, 0, 16, 0}, "SUM into an empty range"},
	    {VYRE_OP_DFA_SCAN, 0, 1, 1, {0, 0, 16, 0}, "DFA_SCAN into an empty range"},
	    {VYRE_OP_DFA_SCAN_COUNTED, 0, 1, 1, {0, 0, 0, 4}, "a counted input of 0 bytes"},
	    {VYRE_OP_BASE64_DECODE, 0, 1, 0, {0, 0, 8, 0}, "a counted output of 0 bytes"},
	};

	s.m = &m;
	s.next_ud = 1;
	for (uint32_t i = 0; i < sizeof(init); i++)
		init[i] = (uint8_t)dm_rng(&rng);
	dm_random_table(words, 2, &rng);
	if (connect_to(NULL, &s.c) || alloc(s.c, DM_SCRATCH, 0, &s.scratch) ||
	    add(&s, 64, 0, init, &a) || add(&s, 64, 0, init, &b) || add(&s, 64, 1, init, &d) ||
	    add(&s, (uint32_t)vyre_dfa_table_bytes(2), 0, (const uint8_t *)words, &t))
		goto out;
	const uint32_t hs[3] = {a, b, d};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct vyre_work_item it = {cases[k].op, cases[k].in < 0 ? 0 : hs[cases[k].in],
					    cases[k].out < 0 ? 0 : hs[cases[k].out],
					    cases[k].table ? t : 0};
		struct vyre_cqe cqe;
		int32_t status;
		uint64_t result;

		dm_exec_range(&m, &it, VYRE_SQE_RANGE, &cases[k].r, &status, &result);
		if (status != VYRE_E_INVAL)
			FAIL("the oracle takes %s", cases[k].why);
		if (run1(s.c, it.op_handle, it.input_handle, it.output_handle, it.param,
			 &cases[k].r, s.next_ud++, &cqe))
			goto out;
		if (cqe.status != VYRE_E_INVAL || cqe.result != 0)
			FAIL("%s: status %d result %" PRIu64, cases[k].why, cqe.status, cqe.result);
	}
	if (dm_check_buffers(&s, "after the invalid ranges"))
		goto out;
	/* the client calls: a range only with vyre_submit_range, which needs one */
	const struct vyre_work_item it = {VYRE_OP_COPY, a, b, 0};
	const struct vyre_item_range r = {0, 0, 4, 4};
	const uint64_t ud = 1;

	if (vyre_submit(s.c, &it, 1, VYRE_SQE_RANGE) != VYRE_E_INVAL ||
	    vyre_submit_range(s.c, &it, NULL, 1, 0) != VYRE_E_INVAL ||
	    vyre_submit_range(s.c, &it, &r, 1, 1u << 12) != VYRE_E_INVAL ||
	    vyre_submit_batch_range(s.c, &it, NULL, &ud, 1) != VYRE_E_INVAL)
		FAIL("a client call took a range without VYRE_SQE_RANGE, or the flag without one");
	/* and what is valid: equal ranges in place, ranges apart in one buffer */
	const struct vyre_work_item ok[3] = {
	    {VYRE_OP_ADD, a, a, 3}, {VYRE_OP_COPY, a, a, 0}, {VYRE_OP_COPY, d, d, 0}};
	const struct vyre_item_range okr[3] = {{8, 8, 16, 16}, {0, 32, 16, 32}, {48, 0, 16, 16}};
	const uint8_t ranged[3] = {1, 1, 1};

	if (run_mixed(&s, ok, okr, ranged, 3, "valid ranges of one buffer") ||
	    dm_check_buffers(&s, "valid ranges of one buffer"))
		goto out;
	rc = 0;
out:
	vyre_close(s.c);
	dm_free(&m);
	return rc;
}

/* ---- dedupe ---------------------------------------------------------------------------- */

/* A one-state DFA that accepts after every byte: a scan of n bytes counts n. */
static int count_table(struct vyre_client *c, uint32_t *h)
{
	if (alloc(c, (uint32_t)vyre_dfa_table_bytes(1), 0, h))
		return -1;
	uint32_t *w = vyre_buffer_ptr(c, *h, NULL);

	w[0] = 1;
	w[1] = 0;
	w[2] = 1;
	return 0;
}

static int t_dedupe(void)
{
	struct vyre_client *c;
	uint32_t big, table, a, o;
	struct vyre_cqe cqe[8];
	uint32_t seen = 0;
	int rc = -1;

	if (connect_to(NULL, &c))
		return -1;
	if (alloc(c, BIG_BYTES / 2, VYRE_BUF_DEVICE, &big) || count_table(c, &table) ||
	    alloc(c, 64, 0, &a) || alloc(c, 16, 0, &o))
		goto out;
	uint32_t *ap = vyre_buffer_ptr(c, a, NULL), *op = vyre_buffer_ptr(c, o, NULL);

	for (uint32_t i = 0; i < 16; i++)
		ap[i] = i + 1;
	/* it writes o whole (no range): the sums wait for it, then come in one batch */
	const struct vyre_work_item slow = {VYRE_OP_DFA_SCAN, big, o, table};
	const struct vyre_work_item sum = {VYRE_OP_SUM, a, o, 0};
	const struct vyre_work_item its[4] = {sum, sum, sum, sum};
	const struct vyre_item_range rs[4] = {
	    {0, 0, 32, 4}, {32, 4, 32, 4}, {0, 8, 32, 4}, {0, 8, 32, 4}};
	const uint64_t ud[4] = {2, 3, 4, 5};

	if (vyre_submit(c, &slow, 1, 0) != 0 || vyre_test_wait_dispatched(&daemon_, 1, WAIT_NS) ||
	    vyre_submit_batch_range(c, its, rs, ud, 4) != 4) {
		fprintf(stderr, "FAIL: submit\n");
		goto out;
	}
	while (seen < 5) {
		int k = vyre_wait(c, &cqe[seen], 5 - seen, WAIT_NS);

		if (k <= 0) {
			fprintf(stderr, "FAIL: wait\n");
			goto out;
		}
		seen += (uint32_t)k;
	}
	for (uint32_t i = 0; i < 5; i++) {
		const uint64_t u = cqe[i].user_data;
		const uint64_t want = u == 1 ? BIG_BYTES / 2 : u == 3 ? 100 : 36;
		const int dedup = (cqe[i].flags & VYRE_CQE_DEDUPED) != 0;

		if (cqe[i].status != 0 || cqe[i].result != want || dedup != (u == 5))
			FAIL("item %" PRIu64 ": status %d result %" PRIu64 " deduped %d", u,
			     cqe[i].status, cqe[i].result, dedup);
	}
	if (op[0] != 36 || op[1] != 100 || op[2] != 36)
		FAIL("sums %u %u %u, not 36 100 36", op[0], op[1], op[2]);
	rc = 0;
out:
	vyre_close(c);
	return rc;
}

/* ---- the planner ----------------------------------------------------------------------- */

#define PLAN_N 4096u

struct plan_case {
	struct vyre_work_item items[PLAN_N];
	struct vyre_exec_item exec[PLAN_N];
	uint32_t domain[PLAN_N], client[PLAN_N], flags[PLAN_N];
	uint32_t n;
};

/* Item @op of handles @in (range [io, +il)) and @out ([oo, +ol)), in heap 0 at 4 KiB a handle. */
static void plan_item(struct plan_case *pc, uint32_t op, uint32_t in, uint32_t io, uint32_t il,
		      uint32_t out, uint32_t oo, uint32_t ol)
{
	const uint32_t k = pc->n++;

	pc->items[k] = (struct vyre_work_item){op, in, out, 0};
	pc->exec[k] = (struct vyre_exec_item){.op = op,
					      .in_off = in ? 4096ull * in + io : 0,
					      .in_bytes = in ? il : 0,
					      .out_off = 4096ull * out + oo,
					      .out_bytes = ol};
	pc->domain[k] = 1;
	pc->client[k] = 0;
	pc->flags[k] = VYRE_SQE_RANGE;
}

static int plan(struct vyre_planner *p, struct plan_case *pc, struct vyre_plan *out,
		uint32_t *group_of)
{
	const struct vyre_plan_batch b = {pc->n,      pc->items, pc->exec, pc->domain,
					  pc->client, pc->flags, NULL};

	if (vyre_planner_plan(p, &b, out, NULL) != 0 || out->accepted != pc->n)
		FAIL("plan of %u items", pc->n);
	for (uint32_t k = 0; k < pc->n; k++)
		group_of[k] = UINT32_MAX;
	for (uint32_t g = 0, pos = 0; g < out->exec.n_groups; g++)
		for (; pos < out->exec.group_end[g]; pos++)
			group_of[out->exec.order[pos]] = g;
	return 0;
}

static int t_planner(void)
{
	static struct plan_case pc;
	static uint32_t group_of[PLAN_N];
	struct vyre_planner_config cfg;
	struct vyre_planner *p;
	struct vyre_plan pl;
	int rc = -1;

	vyre_planner_config_default(&cfg);
	if (vyre_planner_create(&cfg, &p, NULL))
		FAIL("planner");
	/* 4096 scans of slices of one buffer into words of another: one group */
	pc.n = 0;
	for (uint32_t k = 0; k < PLAN_N; k++)
		plan_item(&pc, VYRE_OP_SUM, 1, 0, 0, 2, 4 * k, 4);
	for (uint32_t k = 0; k < PLAN_N; k++)
		pc.exec[k].in_off = 4096ull * 1000 + 64ull * k, pc.exec[k].in_bytes = 64;
	if (plan(p, &pc, &pl, group_of))
		goto out;
	if (pl.stats.groups != 1 || pl.stats.deduped || pl.stats.executed != PLAN_N)
		FAIL("4096 slices: %u groups, %u deduped", pl.stats.groups, pl.stats.deduped);
	/* as writes of the whole buffer (no VYRE_SQE_RANGE; NODEDUPE: all run), one by one */
	for (uint32_t k = 0; k < PLAN_N; k++)
		pc.flags[k] = VYRE_SQE_NODEDUPE;
	if (plan(p, &pc, &pl, group_of))
		goto out;
	if (pl.stats.groups != PLAN_N)
		FAIL("without ranges: %u groups", pl.stats.groups);
	/* RAW, WAR, WAW per range; ranges apart in the first group */
	pc.n = 0;
	plan_item(&pc, VYRE_OP_FILL, 0, 0, 0, 2, 0, 16);   /* 0: writes 2[0,16) */
	plan_item(&pc, VYRE_OP_COPY, 2, 8, 4, 3, 0, 4);	   /* 1: RAW on 2[8,12) */
	plan_item(&pc, VYRE_OP_COPY, 2, 16, 16, 3, 4, 16); /* 2: reads 2[16,32): apart */
	plan_item(&pc, VYRE_OP_FILL, 0, 0, 0, 2, 28, 4);   /* 3: WAR on 2[28,32) */
	plan_item(&pc, VYRE_OP_FILL, 0, 0, 0, 2, 0, 4);	   /* 4: WAW on 2[0,4) */
	plan_item(&pc, VYRE_OP_FILL, 0, 0, 0, 3, 64, 4);   /* 5: apart from everything */
	plan_item(&pc, VYRE_OP_SUM, 3, 0, 4, 3, 32, 4);	   /* 6: RAW on 3[0,4) after 1 */
	plan_item(&pc, VYRE_OP_SUM, 3, 0, 4, 3, 36, 4);	   /* 7: the same, another output */
	plan_item(&pc, VYRE_OP_SUM, 3, 0, 4, 3, 32, 4);	   /* 8: identical to 6: deduped */
	if (plan(p, &pc, &pl, group_of))
		goto out;
	if (group_of[0] != 0 || group_of[2] != 0 || group_of[5] != 0 ||
	    group_of[1] <= group_of[0] || group_of[3] <= group_of[2] ||
	    group_of[4] <= group_of[0] || group_of[6] <= group_of[1] || group_of[7] == UINT32_MAX ||
	    pl.dedup_from[7] != VYRE_PLAN_NONE || pl.dedup_from[8] != 6)
		FAIL("groups %u %u %u %u %u %u %u %u, dedupe of 7 and 8 %u %u", group_of[0],
		     group_of[1], group_of[2], group_of[3], group_of[4], group_of[5], group_of[6],
		     group_of[7], pl.dedup_from[7], pl.dedup_from[8]);
	rc = 0;
out:
	vyre_planner_destroy(p);
	return rc;
}

/* ---- in flight, two clients of one domain ---------------------------------------------- */

static int t_inflight(void)
{
	struct vyre_client *a, *b;
	uint32_t big, table, o, p;
	struct vyre_cqe cqe[4];
	const uint32_t half = BIG_BYTES / 2;
	int rc = -1;

	if (connect_to("ranges", &a) || connect_to("ranges", &b))
		return -1;
	if (alloc(a, BIG_BYTES, VYRE_BUF_DEVICE, &big) || alloc(a, 64, 0, &o) ||
	    alloc(a, 64, 0, &p) || alloc(a, DM_TABLE2_BYTES, 0, &table))
		goto out;
	uint32_t *pp = vyre_buffer_ptr(b, p, NULL), *opp = vyre_buffer_ptr(b, o, NULL);

	dm_count_a_table(vyre_buffer_ptr(a, table, NULL), 0);
	const struct vyre_item_range lo = {0, 0, 0, half};
	const struct vyre_item_range scan = {0, 0, half, 4};

	if (run1(a, VYRE_OP_FILL, 0, big, 0x61616161u, &lo, 1, &cqe[0]) || cqe[0].status)
		FAIL("fill");
	for (int war = 0; war < 2; war++) {
		const struct vyre_work_item slow = {VYRE_OP_DFA_SCAN, big, o, table};
		/* apart from the scan's ranges: they run beside it */
		const struct vyre_item_range w1 = {0, 4, 0, 4}, w2 = {0, half, 0, 64};
		uint64_t u = 0;
		int beside = 0;

		/*
		 * The writes apart must complete while the scan runs. The GPU may
		 * still run them after it (in launch mode the scan's launch can hold
		 * every SM), so a try where the scan ended first tells nothing and
		 * is made again; a vyred that held them back would fail every try.
		 */
		for (uint32_t again = 0; again < 8 && !beside; again++) {
			u = 10 + 10 * (uint64_t)war + 100 * (uint64_t)again;
			if (vyre_submit_range(a, &slow, &scan, u, 0) ||
			    vyre_test_wait_dispatched(&daemon_, u, WAIT_NS))
				FAIL("slow scan");
			if (run1(b, VYRE_OP_FILL, 0, o, 7, &w1, u + 1, &cqe[0]) || cqe[0].status ||
			    run1(b, VYRE_OP_FILL, 0, big, 1, &w2, u + 2, &cqe[0]) || cqe[0].status)
				FAIL("writes apart");
			if (vyre_reap(a, &cqe[1], 1) == 0)
				beside = 1;
			else if (cqe[1].user_data != u || cqe[1].status || cqe[1].result != half)
				FAIL("the scan that ended first: user_data %" PRIu64 ", status %d, "
				     "count %" PRIu64,
				     cqe[1].user_data, cqe[1].status, cqe[1].result);
		}
		if (!beside)
			FAIL("the scan ended before the writes apart from it in 8 tries");
		/* RAW: a copy of the count; WAR: a write of what it scans */
		const struct vyre_item_range raw = {0, 0, 4, 4}, wr = {0, 0, 0, 64};

		if (war ? run1(b, VYRE_OP_FILL, 0, big, 0, &wr, u + 3, &cqe[0])
			: run1(b, VYRE_OP_COPY, o, p, 0, &raw, u + 3, &cqe[0]))
			return -1;
		if (cqe[0].status || vyre_reap(a, &cqe[1], 1) != 1 || cqe[1].user_data != u ||
		    cqe[1].status || cqe[1].result != half)
			FAIL("%s: it ran before the scan ended, or the scan counted %" PRIu64,
			     war ? "WAR" : "RAW", cqe[1].result);
		if (!war && pp[0] != half)
			FAIL("RAW: the copy saw %u", pp[0]);
		if (opp[1] != 7)
			FAIL("the write apart is lost");
		/* back to 'a's for the next round */
		if (!war &&
		    (run1(a, VYRE_OP_FILL, 0, big, 0x61616161u, &lo, 2, &cqe[0]) || cqe[0].status))
			FAIL("refill");
	}
	rc = 0;
out:
	vyre_close(a);
	vyre_close(b);
	return rc;
}

int main(void)
{
	const char *extra[] = {"--backend",	NULL,	      "--device-bytes-max",
			       "268435456",	"--inflight", "4",
			       "--cpu-threads", "2",	      NULL};
	uint32_t rounds = (uint32_t)(300 * vyre_test_scale());
	const struct dm_case cases[] = {{"slices", t_slices},
					{"invalid ranges", t_invalid},
					{"dedupe", t_dedupe},
					{"in flight", t_inflight}};
	int rc = t_planner();

	printf("planner: %s\n", rc ? "FAIL" : "ok");
	if (rc)
		return 1;
	if ((rc = dm_start_daemon(&daemon_, extra, &backend)))
		return rc;
	rc = dm_run_cases(cases, sizeof(cases) / sizeof(cases[0]));
	if (rc == 0) {
		rc = t_ops(rounds);
		printf("ops, %u batches: %s\n", rounds, rc ? "FAIL" : "ok");
	}
	if (vyre_test_daemon_finish(&daemon_) != 0)
		rc = -1;
	if (rc == 0)
		printf("PASS (%s backend)\n", backend);
	return rc ? 1 : 0;
}
