/* SPDX-License-Identifier: MIT */
/*
 * test_device_buffers - buffers allocated with VYRE_BUF_DEVICE through a
 * live vyred (docs/design.md section 6.2), on the CPU backend, or on the one
 * $VYRE_TEST_BACKEND names (test_cuda_e2e runs it with cuda):
 *
 *  - flags: TRANSIENT (not taken yet), both flags, unknown bits and odd
 *    sizes are VYRE_E_INVAL;
 *  - a device buffer is zero-filled, vyre_buffer_ptr gives NULL and its
 *    length, COPY host -> device -> host gives the bytes back, a freed one
 *    fails items;
 *  - every op reading and writing device buffers (input, output, DFA table,
 *    in place), one item at a time and all in one batch, against the oracle
 *    (tests/devbuf_model.c);
 *  - two clients of one domain share a device buffer;
 *  - validate once per write: a device DFA table rewritten between scans, in
 *    one batch and across batches: every status is the oracle's, so a table
 *    made invalid by an op gives VYRE_E_INVAL, even where the bad entry is
 *    never reached, and the valid table again gives the count;
 *  - random batches over heap and device buffers against the oracle;
 *  - --device-bytes-max over every loop (two loops): the allocation past it
 *    is VYRE_E_NOMEM and vyred's log names the flag; a free and a domain's
 *    close give the bytes back; --max-device-buffers likewise;
 *  - vyred exits 0 with device buffers still allocated.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devbuf_model.h"
#include "devbuf_session.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define WAIT_NS	  (30ll * 1000000000ll)
#define MAX_BATCH 256u

static struct vyre_test_daemon daemon_;
static const char *backend = "cpu";

/* ---- running items against vyred and the model ---------------------------------------- */

/*
 * Submit @n items (@flags per item, or NULL: one vyre_submit_batch), wait,
 * compare every CQE with the model; their statuses go to @status (may be NULL).
 */
static int run_st(struct dm_session *s, const struct vyre_work_item *its, const uint32_t *flags,
		  uint32_t n, const char *what, int32_t *status_out)
{
	uint64_t ud[MAX_BATCH];
	struct vyre_cqe cqe[MAX_BATCH];
	const uint64_t first = s->next_ud;
	uint32_t queued = 0;

	if (n > MAX_BATCH)
		FAIL("%s: %u items", what, n);
	for (uint32_t i = 0; i < n; i++)
		ud[i] = s->next_ud++;
	while (queued < n) {
		int rc = flags ? vyre_submit(s->c, &its[queued], ud[queued], flags[queued])
			       : vyre_submit_batch(s->c, &its[queued], &ud[queued], n - queued);

		if (rc < 0 && rc != VYRE_E_AGAIN)
			FAIL("%s: submit: %s", what, vyre_strerror(rc));
		queued += flags ? (rc == 0) : (uint32_t)(rc > 0 ? rc : 0);
		if (rc == VYRE_E_AGAIN || rc == 0)
			continue;
	}
	if (dm_wait_items(s, first, n, cqe, what))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		int32_t status;
		uint64_t result;

		dm_exec(s->m, &its[i], flags ? flags[i] : 0, &status, &result);
		if (status_out)
			status_out[i] = cqe[i].status;
		if (cqe[i].status != status || cqe[i].result != result)
			FAIL("%s: item %u (op %u in %#x out %#x param %#x): status %d result "
			     "%" PRIu64 ", oracle %d %" PRIu64,
			     what, i, its[i].op_handle, its[i].input_handle, its[i].output_handle,
			     its[i].param, cqe[i].status, cqe[i].result, status, result);
	}
	return 0;
}

static int run(struct dm_session *s, const struct vyre_work_item *its, const uint32_t *flags,
	       uint32_t n, const char *what)
{
	return run_st(s, its, flags, n, what, NULL);
}

static int run1(struct dm_session *s, uint32_t op, uint32_t in, uint32_t out, uint32_t param,
		const char *what)
{
	const struct vyre_work_item it = {op, in, out, param};

	return run(s, &it, NULL, 1, what);
}

/* Allocate a buffer in vyred and the model; heap buffers get @init (NULL: zeros). */
static int add(struct dm_session *s, uint32_t bytes, uint32_t flags, const void *init,
	       uint32_t *handle)
{
	int rc = vyre_buffer_alloc(s->c, bytes, flags, handle);
	uint32_t got = 12345;
	uint8_t *p;

	if (rc != 0)
		FAIL("alloc %u bytes flags %u: %s", bytes, flags, vyre_strerror(rc));
	p = vyre_buffer_ptr(s->c, *handle, &got);
	if (got != bytes)
		FAIL("buffer_ptr says %u bytes, not %u", got, bytes);
	if (flags & VYRE_BUF_DEVICE) {
		if (p)
			FAIL("buffer_ptr of a device buffer is not NULL");
		init = NULL;
	} else if (init) {
		memcpy(p, init, bytes);
	}
	if (dm_add(s->m, *handle, bytes, (flags & VYRE_BUF_DEVICE) != 0, init) < 0)
		FAIL("model full");
	return 0;
}

static int connect_to(const char *domain, struct vyre_client **c)
{
	const struct vyre_connect_opts o = {
	    .socket_path = daemon_.socket, .domain = domain, .heap_bytes = 1u << 20};
	int rc = vyre_connect(&o, c);

	if (rc != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	return 0;
}

static int open_session(struct dm_session *s, struct dm *m, const char *domain)
{
	memset(s, 0, sizeof(*s));
	memset(m, 0, sizeof(*m));
	s->m = m;
	s->next_ud = 1;
	if (connect_to(domain, &s->c) != 0)
		return -1;
	int rc = vyre_buffer_alloc(s->c, DM_SCRATCH, 0, &s->scratch);

	return rc == 0 ? 0 : -1;
}

static void close_session(struct dm_session *s)
{
	vyre_close(s->c);
	dm_free(s->m);
}

static void random_bytes(uint8_t *p, uint32_t n, uint64_t *rng)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = dm_rng(rng) % 5 == 0 ? 'a' : (uint8_t)dm_rng(rng);
}

/* ---- the cases ----------------------------------------------------------------------- */

static int t_flags(void)
{
	struct vyre_client *c;
	uint32_t h;

	if (connect_to(NULL, &c) != 0)
		return -1;
	/* a transient buffer is taken (test_chains) but not mapped, like a device buffer */
	if (vyre_buffer_alloc(c, 64, VYRE_BUF_TRANSIENT, &h) != 0 ||
	    vyre_buffer_ptr(c, h, NULL) != NULL || vyre_buffer_free(c, h) != 0)
		FAIL("VYRE_BUF_TRANSIENT");
	if (vyre_buffer_alloc(c, 64, VYRE_BUF_DEVICE | VYRE_BUF_TRANSIENT, &h) != VYRE_E_INVAL)
		FAIL("both flags");
	if (vyre_buffer_alloc(c, 64, 1u << 5, &h) != VYRE_E_INVAL ||
	    vyre_buffer_alloc(c, 64, VYRE_BUF_DEVICE | (1u << 31), &h) != VYRE_E_INVAL)
		FAIL("unknown flag bits");
	if (vyre_buffer_alloc(c, 6, VYRE_BUF_DEVICE, &h) != VYRE_E_INVAL)
		FAIL("a device buffer of 6 bytes");
	vyre_close(c);
	return 0;
}

static int t_basics(void)
{
	struct dm_session s;
	struct dm m;
	uint8_t data[1024], back[1024];
	uint64_t rng = 7;
	uint32_t host, dev, empty, out;

	if (open_session(&s, &m, NULL) != 0)
		return -1;
	random_bytes(data, sizeof(data), &rng);
	if (add(&s, sizeof(data), 0, data, &host) ||
	    add(&s, sizeof(data), VYRE_BUF_DEVICE, NULL, &dev) ||
	    add(&s, 0, VYRE_BUF_DEVICE, NULL, &empty) || add(&s, sizeof(data), 0, NULL, &out))
		return -1;
	const uint8_t *fresh = dm_read_device(&s, dev, sizeof(data));

	for (uint32_t i = 0; fresh && i < sizeof(data); i++)
		if (fresh[i])
			FAIL("a new device buffer is not zero-filled");
	if (run1(&s, VYRE_OP_COPY, host, dev, 0, "host -> device") ||
	    run1(&s, VYRE_OP_COPY, dev, out, 0, "device -> host"))
		return -1;
	memcpy(back, vyre_buffer_ptr(s.c, out, NULL), sizeof(back));
	if (memcmp(back, data, sizeof(data)) != 0)
		FAIL("COPY host -> device -> host changed the bytes");
	if (run1(&s, VYRE_OP_COPY, empty, out, 0, "an empty device buffer") ||
	    run1(&s, VYRE_OP_SUM, empty, out, 0, "SUM of an empty device buffer") ||
	    dm_check_buffers(&s, "basics"))
		return -1;
	if (vyre_buffer_free(s.c, dev) != 0)
		FAIL("free of a device buffer");
	dm_forget(&m, dev);
	if (run1(&s, VYRE_OP_COPY, host, dev, 0, "a freed device buffer"))
		return -1;
	if (vyre_buffer_free(s.c, dev) != VYRE_E_INVAL)
		FAIL("a device buffer freed twice");
	close_session(&s);
	return 0;
}

/* Every op over every mix of heap and device operands. */
static int t_ops(void)
{
	static const uint32_t sizes[3] = {4, 64, 1024};
	static const uint32_t ops[] = {VYRE_OP_FILL, VYRE_OP_COPY, VYRE_OP_ADD, VYRE_OP_XOR,
				       VYRE_OP_MUL,  VYRE_OP_SUM,  VYRE_OP_MAX, VYRE_OP_DFA_SCAN};
	struct vyre_work_item its[MAX_BATCH];
	uint32_t heap[3], dev[3], table[2], n = 0;
	uint32_t words[DM_TABLE2_BYTES / 4];
	uint8_t data[1024];
	uint64_t rng = 11;
	struct dm_session s;
	struct dm m;

	if (open_session(&s, &m, NULL) != 0)
		return -1;
	for (uint32_t i = 0; i < 3; i++) {
		random_bytes(data, sizes[i], &rng);
		if (add(&s, sizes[i], 0, data, &heap[i]) ||
		    add(&s, sizes[i], VYRE_BUF_DEVICE, NULL, &dev[i]))
			return -1;
		if (run1(&s, VYRE_OP_XOR, heap[i], dev[i], 0x5a5a5a5a, "fill a device buffer"))
			return -1;
	}
	dm_count_a_table(words, 0);
	if (add(&s, DM_TABLE2_BYTES, 0, words, &table[0]) ||
	    add(&s, DM_TABLE2_BYTES, VYRE_BUF_DEVICE, NULL, &table[1]) ||
	    run1(&s, VYRE_OP_COPY, table[0], table[1], 0, "the table to the device"))
		return -1;
	for (uint32_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		for (uint32_t k = 0; k < 4; k++)
			for (uint32_t i = 0; i < 3; i++) {
				/* k: bit 0 a device input, bit 1 a device output */
				struct vyre_work_item it = {ops[o], (k & 1 ? dev : heap)[i],
							    (k & 2 ? dev : heap)[(i + 1) % 3],
							    (uint32_t)dm_rng(&rng)};

				if (ops[o] == VYRE_OP_FILL)
					it.input_handle = 0;
				if (ops[o] == VYRE_OP_DFA_SCAN)
					it.param = table[(i + k) % 2];
				its[n++] = it;
				if (i == 2) { /* in place */
					it.output_handle =
					    it.input_handle ? it.input_handle : dev[i];
					its[n++] = it;
				}
			}
	/* one at a time (the single-item path), then all in one submission */
	for (uint32_t i = 0; i < n; i++)
		if (run(&s, &its[i], NULL, 1, "one op"))
			return -1;
	if (dm_check_buffers(&s, "ops one at a time") ||
	    run(&s, its, NULL, n, "every op at once") || dm_check_buffers(&s, "ops at once"))
		return -1;
	close_session(&s);
	return 0;
}

/* Two clients of one domain: what one writes into a device buffer, the other reads. */
static int t_shared(void)
{
	struct dm_session a, b;
	struct dm m, unused;
	uint32_t dev, src, sum, bytes = 0;
	uint32_t words[16];

	if (open_session(&a, &m, "devshare") != 0 || open_session(&b, &unused, "devshare") != 0)
		return -1;
	dm_free(&unused);
	b.m = &m; /* one domain, one model */
	for (uint32_t i = 0; i < 16; i++)
		words[i] = i * 1000 + 1;
	if (add(&a, sizeof(words), VYRE_BUF_DEVICE, NULL, &dev) ||
	    add(&a, sizeof(words), 0, words, &src) || add(&b, 4, 0, NULL, &sum))
		return -1;
	if (vyre_buffer_ptr(b.c, dev, &bytes) != NULL || bytes != sizeof(words))
		FAIL("another client's device buffer: buffer_ptr NULL with its length");
	if (run1(&a, VYRE_OP_COPY, src, dev, 0, "a writes the device buffer") ||
	    run1(&b, VYRE_OP_SUM, dev, sum, 0, "b reads it") ||
	    run1(&b, VYRE_OP_MUL, dev, dev, 3, "b writes it") ||
	    run1(&a, VYRE_OP_MAX, dev, src, 0, "a reads what b wrote") ||
	    dm_check_buffers(&a, "shared"))
		return -1;
	if (*(uint32_t *)vyre_buffer_ptr(b.c, sum, NULL) != 16 * 7500 + 16)
		FAIL("b's SUM of a's device buffer");
	if (vyre_buffer_free(b.c, dev) != 0)
		FAIL("b frees a's device buffer");
	dm_forget(&m, dev);
	if (run1(&a, VYRE_OP_SUM, dev, src, 0, "a's freed device buffer"))
		return -1;
	vyre_close(b.c);
	close_session(&a);
	return 0;
}

/*
 * A device table found valid is not checked again until an item writes it:
 * each write must make the next scan check it, in one batch and across
 * batches. Every status is compared with the oracle (run); @ok says what
 * the oracle must say, so the case keeps its meaning.
 */
static int t_validate_once(void)
{
	uint32_t good[DM_TABLE2_BYTES / 4], bad[DM_TABLE2_BYTES / 4];
	uint32_t tgood, tbad, dt, in, out, other;
	struct vyre_work_item its[32];
	int32_t ok[32], st[32];
	char text[256];
	struct dm_session s;
	struct dm m;
	uint32_t n = 0;

	if (open_session(&s, &m, NULL) != 0)
		return -1;
	dm_count_a_table(good, 0);
	dm_count_a_table(bad, 1);
	memset(text, 'a', sizeof(text));
	for (uint32_t i = 0; i < sizeof(text); i += 3)
		text[i] = 'b';
	if (add(&s, DM_TABLE2_BYTES, 0, good, &tgood) || add(&s, DM_TABLE2_BYTES, 0, bad, &tbad) ||
	    add(&s, DM_TABLE2_BYTES, VYRE_BUF_DEVICE, NULL, &dt) ||
	    add(&s, sizeof(text), 0, text, &in) || add(&s, 4, 0, NULL, &out) ||
	    add(&s, 4, VYRE_BUF_DEVICE, NULL, &other))
		return -1;
#define STEP(op, a, b, p, good_status)                                                             \
	do {                                                                                       \
		its[n] = (struct vyre_work_item){op, a, b, p};                                     \
		ok[n++] = good_status;                                                             \
	} while (0)
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 0);	  /* zeros: n_states 0 */
	STEP(VYRE_OP_COPY, tgood, dt, 0, 1);	  /* valid */
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 1);	  /* checked */
	STEP(VYRE_OP_DFA_SCAN, in, other, dt, 1); /* trusted */
	STEP(VYRE_OP_COPY, tbad, dt, 0, 1);	  /* invalid, the header intact */
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 0); /* checked again: the bad entry is never reached */
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 0); /* and again: never found valid since */
	STEP(VYRE_OP_COPY, tgood, dt, 0, 1);
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 1);
	STEP(VYRE_OP_DFA_SCAN, in, dt, dt, 1);	/* trusted; writes its own table's word 0 */
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 0); /* n_states is now the count: too long */
	STEP(VYRE_OP_COPY, tgood, dt, 0, 1);
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 1);
	STEP(VYRE_OP_ADD, tbad, dt, 0, 1); /* invalid through another op */
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 0);
	STEP(VYRE_OP_XOR, tgood, dt, 0, 1);
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 1);
	STEP(VYRE_OP_DFA_SCAN, in, other, dt, 1);
	STEP(VYRE_OP_FILL, 0, dt, 1, 1); /* n_states 1, start 1: invalid */
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 0);
	STEP(VYRE_OP_COPY, tgood, dt, 0, 1); /* ends valid: the next round starts trusted */
	STEP(VYRE_OP_DFA_SCAN, in, other, dt, 1);
#undef STEP
	/* one batch per item, then twice all in one submission */
	for (uint32_t i = 0; i < n; i++)
		if (run_st(&s, &its[i], NULL, 1, "validate once, across batches", &st[i]))
			return -1;
	for (int round = 0; round <= 2; round++) {
		if (round && run_st(&s, its, NULL, n, "validate once, in one batch", st))
			return -1;
		for (uint32_t i = round == 0 ? 0 : 1; i < n; i++)
			if ((st[i] == 0) != ok[i])
				FAIL("validate once, round %d, step %u (op %u): status %d", round,
				     i, its[i].op_handle, st[i]);
		if (dm_check_buffers(&s, "validate once"))
			return -1;
	}
	close_session(&s);
	return 0;
}

/*
 * The count-a table with a report section: id 7 (len 1) in state 1, after
 * each 'a'; with @bad, out_first ends at 0, not at n_out 1 (design.md 6.8:
 * invalid, though the DFA part is valid).
 */
#define REPORT_TABLE_WORDS (DM_TABLE2_BYTES / 4 + 7)
static void report_table(uint32_t *w, int bad)
{
	uint32_t *sec = w + DM_TABLE2_BYTES / 4;

	dm_count_a_table(w, 0);
	sec[0] = VYRE_DFA_REPORT_MAGIC;
	sec[1] = 1;
	sec[2] = 0;
	sec[3] = 0;
	sec[4] = bad ? 0 : 1;
	sec[5] = 7;
	sec[6] = 1;
}

/*
 * A device table's report section is trusted only after a DFA_REPORT found
 * it valid (VYRE_EXEC_REPORT_TRUSTED), never after a DFA_SCAN (which checks
 * next[] only), and no longer after any write: each status against the
 * oracle, which checks every section (a section trusted wrongly would give
 * status 0 where the oracle says VYRE_E_INVAL). In separate batches and in
 * one.
 */
static int t_validate_report(void)
{
	uint32_t good[REPORT_TABLE_WORDS], bad[REPORT_TABLE_WORDS];
	uint32_t tgood, tbad, dt, in, out, out2;
	struct vyre_work_item its[32];
	int32_t ok[32], st[32];
	char text[96];
	struct dm_session s;
	struct dm m;
	uint32_t n = 0;

	if (open_session(&s, &m, NULL) != 0)
		return -1;
	report_table(good, 0);
	report_table(bad, 1);
	memset(text, 'b', sizeof(text));
	for (uint32_t i = 0; i < sizeof(text); i += 5)
		text[i] = 'a';
	if (add(&s, sizeof(good), 0, good, &tgood) || add(&s, sizeof(bad), 0, bad, &tbad) ||
	    add(&s, sizeof(good), VYRE_BUF_DEVICE, NULL, &dt) ||
	    add(&s, sizeof(text), 0, text, &in) || add(&s, 16 + 24 * 32, 0, NULL, &out) ||
	    add(&s, 16 + 24 * 4, VYRE_BUF_DEVICE, NULL, &out2))
		return -1;
#define STEP(op, a, b, p, good_status)                                                             \
	do {                                                                                       \
		its[n] = (struct vyre_work_item){op, a, b, p};                                     \
		ok[n++] = good_status;                                                             \
	} while (0)
	STEP(VYRE_OP_COPY, tbad, dt, 0, 1);	   /* the section invalid, next[] valid */
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 1);	   /* validates next[] only */
	STEP(VYRE_OP_DFA_SCAN, in, out, dt, 1);	   /* next[] trusted */
	STEP(VYRE_OP_DFA_REPORT, in, out, dt, 0);  /* the section is checked */
	STEP(VYRE_OP_DFA_REPORT, in, out, dt, 0);  /* and again: never found valid */
	STEP(VYRE_OP_COPY, tgood, dt, 0, 1);	   /* valid */
	STEP(VYRE_OP_DFA_REPORT, in, out, dt, 1);  /* checked: found valid */
	STEP(VYRE_OP_DFA_REPORT, in, out2, dt, 1); /* trusted, capacity 4 of 20 records */
	STEP(VYRE_OP_DFA_REPORT, in, out, dt, 1);  /* trusted */
	STEP(VYRE_OP_COPY, tbad, dt, 0, 1);	   /* a write: no longer trusted */
	STEP(VYRE_OP_DFA_REPORT, in, out, dt, 0);  /* checked */
	STEP(VYRE_OP_COPY, tgood, dt, 0, 1);
	STEP(VYRE_OP_DFA_REPORT_COUNTED, in, out, dt, 0); /* 'a' * 4 + ...: length too long */
	STEP(VYRE_OP_DFA_REPORT, in, out, dt, 1);	  /* checked, found valid */
	STEP(VYRE_OP_DFA_REPORT, in, out2, dt, 1);	  /* trusted */
	STEP(VYRE_OP_FILL, 0, dt, 2, 1); /* through another op: n_states 2, start 2 */
	STEP(VYRE_OP_DFA_REPORT, in, out, dt, 0);
	STEP(VYRE_OP_COPY, tgood, dt, 0, 1);
	STEP(VYRE_OP_DFA_REPORT, in, out, dt, 1);
	STEP(VYRE_OP_COPY, tbad, dt, 0, 1); /* ends invalid: the next round starts checked */
#undef STEP
	for (uint32_t i = 0; i < n; i++)
		if (run_st(&s, &its[i], NULL, 1, "report section, across batches", &st[i]))
			return -1;
	for (int round = 0; round <= 2; round++) {
		if (round && run_st(&s, its, NULL, n, "report section, in one batch", st))
			return -1;
		for (uint32_t i = round == 0 ? 0 : 1; i < n; i++)
			if ((st[i] == 0) != ok[i])
				FAIL("report section, round %d, step %u (op %u): status %d", round,
				     i, its[i].op_handle, st[i]);
		if (dm_check_buffers(&s, "report section"))
			return -1;
	}
	close_session(&s);
	return 0;
}

/* Random batches over heap and device buffers, DFA tables of both kinds, against the oracle. */
static int t_random(uint32_t rounds)
{
	static const uint32_t heap_sizes[] = {0, 4, 12, 64, 256, 1024};
	static const uint32_t dev_sizes[] = {4, 12, 64, 256, 1024};
	enum { NH = 6, ND = 5, NDATA = NH + ND };
	uint32_t data[NDATA], tables[3], words[4 * 259];
	struct vyre_work_item its[64];
	uint32_t flags[64];
	uint8_t bytes[1024];
	uint64_t rng = 0x5eed;
	struct dm_session s;
	struct dm m;

	if (open_session(&s, &m, NULL) != 0)
		return -1;
	for (uint32_t i = 0; i < NH; i++) {
		random_bytes(bytes, heap_sizes[i], &rng);
		if (add(&s, heap_sizes[i], 0, bytes, &data[i]))
			return -1;
	}
	for (uint32_t i = 0; i < ND; i++)
		if (add(&s, dev_sizes[i], VYRE_BUF_DEVICE, NULL, &data[NH + i]))
			return -1;
	for (uint32_t t = 0; t < 2; t++) {
		memset(words, 0, sizeof(words));
		dm_random_table(words, 3 + t, &rng);
		if (add(&s, (uint32_t)vyre_dfa_table_bytes(3 + t), 0, words, &tables[t]))
			return -1;
	}
	if (add(&s, (uint32_t)vyre_dfa_table_bytes(4), VYRE_BUF_DEVICE, NULL, &tables[2]))
		return -1;
	for (uint32_t r = 0; r < rounds; r++) {
		const uint32_t n = 1 + (uint32_t)(dm_rng(&rng) % 64);
		const int with_flags = dm_rng(&rng) % 4 == 0;

		for (uint32_t i = 0; i < n; i++) {
			const uint32_t kind = (uint32_t)(dm_rng(&rng) % 100);
			struct vyre_work_item *it = &its[i];

			it->op_handle = (uint32_t)(dm_rng(&rng) % VYRE_OP_COUNT);
			it->input_handle = data[dm_rng(&rng) % NDATA];
			it->output_handle = data[dm_rng(&rng) % NDATA];
			it->param = (uint32_t)dm_rng(&rng) % 7;
			flags[i] = with_flags ? (uint32_t)(dm_rng(&rng) % 4) : 0;
			if (kind < 10) {
				it->op_handle =
				    VYRE_OP_COPY; /* a host table into the device table */
				it->input_handle = tables[dm_rng(&rng) % 2];
				it->output_handle = tables[2];
			} else if (kind < 14) {
				it->output_handle = tables[dm_rng(&rng) % 3]; /* scribble */
			} else if (kind < 30) {
				it->output_handle = it->input_handle; /* in place */
			} else if (kind < 32) {
				it->op_handle = VYRE_OP_COUNT + (uint32_t)(dm_rng(&rng) % 50);
			}
			if (it->op_handle == VYRE_OP_NOP)
				it->input_handle = it->output_handle = 0;
			if (it->op_handle == VYRE_OP_FILL)
				it->input_handle = 0;
			if (it->op_handle == VYRE_OP_DFA_SCAN)
				it->param = tables[dm_rng(&rng) % 3];
		}
		if (run(&s, its, with_flags ? flags : NULL, n, "random"))
			return -1;
		if (r % 64 == 63 && dm_check_buffers(&s, "random"))
			return -1;
	}
	if (dm_check_buffers(&s, "random, at the end"))
		return -1;
	close_session(&s);
	return 0;
}

/* Allocations until @flags... fail; how many succeeded (their handles in @h). */
static int alloc_until(struct vyre_client *c, uint32_t bytes, uint32_t *h, uint32_t max, int *last)
{
	int n = 0;

	while ((uint32_t)n < max &&
	       (*last = vyre_buffer_alloc(c, bytes, VYRE_BUF_DEVICE, &h[n])) == 0)
		n++;
	return n;
}

/* An allocation that must succeed once vyred has handled an earlier client's exit. */
static int alloc_soon(struct vyre_client *c, uint32_t bytes, uint32_t *h)
{
	int rc = VYRE_E_NOMEM;

	for (int i = 0; i < 500 && rc == VYRE_E_NOMEM; i++) {
		rc = vyre_buffer_alloc(c, bytes, VYRE_BUF_DEVICE, h);
		if (rc == VYRE_E_NOMEM)
			nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	return rc;
}

/*
 * --device-bytes-max 64 KiB and --max-device-buffers 6 on a vyred of one
 * GPU with two loops: private domains of two clients land in different loops, and the
 * bytes limit counts both.
 */
static int t_limits(void)
{
	/* one GPU: the limit is per GPU (docs/design.md 8.8) */
	const char *extra[] = {"--backend",
			       backend,
			       "--gpus",
			       "0",
			       "--loops",
			       "2",
			       "--device-bytes-max",
			       "65536",
			       "--max-device-buffers",
			       "6",
			       NULL};
	struct vyre_client *a, *b, *c;
	uint32_t h[16], hb, hc;
	int last;

	if (vyre_test_daemon_start(&daemon_, extra) != 0)
		return -1;
	if (connect_to(NULL, &a) || connect_to(NULL, &b))
		return -1;
	if (alloc_until(a, 16384, h, 16, &last) != 4 || last != VYRE_E_NOMEM)
		FAIL("64 KiB: four device buffers of 16 KiB, then VYRE_E_NOMEM (got %s)",
		     vyre_strerror(last));
	if (!vyre_test_log_has(daemon_.log, "--device-bytes-max 65536 reached"))
		FAIL("the log does not name --device-bytes-max");
	if (vyre_buffer_alloc(b, 4, VYRE_BUF_DEVICE, &hb) != VYRE_E_NOMEM)
		FAIL("another loop's client: the limit counts every loop");
	if (vyre_buffer_alloc(b, 4, 0, &hb) != 0)
		FAIL("heap buffers do not count against --device-bytes-max");
	if (vyre_buffer_free(a, h[3]) != 0 ||
	    vyre_buffer_alloc(b, 16384, VYRE_BUF_DEVICE, &hb) != 0)
		FAIL("a free gives the bytes back");
	if (vyre_buffer_alloc(a, 4, VYRE_BUF_DEVICE, &h[3]) != VYRE_E_NOMEM)
		FAIL("full again");
	vyre_close(a); /* its domain closes: 48 KiB come back */
	if (alloc_soon(b, 32768, &h[0]) != 0 || vyre_buffer_alloc(b, 16384, VYRE_BUF_DEVICE, &h[1]))
		FAIL("a domain's close gives its device bytes back");
	if (vyre_buffer_alloc(b, 4, VYRE_BUF_DEVICE, &h[2]) != VYRE_E_NOMEM)
		FAIL("full once more");
	/* --max-device-buffers is per loop: b's loop holds 3, c (the other loop) none */
	if (vyre_buffer_free(b, h[0]) || vyre_buffer_free(b, h[1]) || connect_to(NULL, &c))
		return -1;
	if (alloc_until(b, 0, h, 16, &last) != 5 || last != VYRE_E_NOMEM)
		FAIL("--max-device-buffers 6: five more in b's loop (got %s)", vyre_strerror(last));
	if (!vyre_test_log_has(daemon_.log, "--max-device-buffers 6 reached"))
		FAIL("the log does not name --max-device-buffers");
	if (alloc_until(c, 0, h, 16, &last) != 6)
		FAIL("the other loop has its own six");
	if (vyre_buffer_alloc(c, 4, 0, &hc) != 0)
		FAIL("heap buffers still");
	vyre_close(b);
	vyre_close(c);
	int rc = vyre_test_daemon_stop(&daemon_);

	if (rc != 0)
		FAIL("vyred exit %d", rc);
	vyre_test_daemon_cleanup(&daemon_);
	return 0;
}

int main(void)
{
	const char *extra[] = {"--backend", NULL, "--device-bytes-max", "16777216", NULL};
	uint32_t rounds = (uint32_t)(400 * vyre_test_scale());
	const struct dm_case cases[] = {{"flags", t_flags},
					{"basics", t_basics},
					{"ops", t_ops},
					{"shared", t_shared},
					{"validate once", t_validate_once},
					{"validate a report section once", t_validate_report}};
	int rc = dm_start_daemon(&daemon_, extra, &backend);

	if (rc)
		return rc;
	rc = dm_run_cases(cases, sizeof(cases) / sizeof(cases[0]));
	if (rc == 0) {
		rc = t_random(rounds);
		printf("random, %u batches: %s\n", rounds, rc ? "FAIL" : "ok");
	}
	/* device buffers are still allocated: vyred's exit releases them */
	int exit_rc = vyre_test_daemon_stop(&daemon_);

	if (rc == 0 && exit_rc != 0) {
		fprintf(stderr, "FAIL: vyred exit %d\n", exit_rc);
		rc = 1;
	}
	if (rc == 0 && !vyre_test_log_has(daemon_.log, "DFA scans trusted a device table"))
		rc = 1, fprintf(stderr, "FAIL: vyred's exit log says nothing of device buffers\n");
	if (rc)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	if (rc == 0) {
		rc = t_limits() != 0;
		printf("limits: %s\n", rc ? "FAIL" : "ok");
	}
	if (rc && daemon_.pid)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	if (rc == 0)
		printf("PASS (%s backend)\n", backend);
	return rc ? 1 : 0;
}
