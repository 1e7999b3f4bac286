/* SPDX-License-Identifier: MIT */
/*
 * DFA_REPORT through a live vyred on the CPU backend (docs/design.md 6.8):
 * a text cut into pieces submitted with vyre_submit_stream, many in flight
 * over small batches, gives exactly the whole text's records, with a table
 * built by tests/report_ac.h and with tables of vyre_dfa_compile (ids,
 * caseless and binary patterns; in a heap or a device buffer); a stream in a
 * device buffer; a BASE64_DECODE -> DFA_REPORT_COUNTED chain through a
 * transient buffer; identical stream items that must both run; streams
 * vyred refuses (transient, one of the item's operands, too small, freed).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_ac.h"
#include "test_integration_daemon.h"
#include "test_rand.h"
#include "vyre/dfa.h"
#include "vyre/vyre.h"

#define WAIT_NS	 (60ll * 1000000000ll)
#define PIECES	 40u
#define TEXT_MAX 4096u
#define REC_MAX	 65536u

static struct vyre_test_daemon daemon_;
static const struct ac_pat pats[] = {
    {(const uint8_t *)"ab", 2, 1}, {(const uint8_t *)"abc", 3, 1}, {(const uint8_t *)"bca", 3, 2},
    {(const uint8_t *)"c", 1, 3},  {(const uint8_t *)"aaa", 3, 4}, {(const uint8_t *)"cab", 3, 0},
};
#define N_PATS (sizeof(pats) / sizeof(pats[0]))

/* Patterns and the bytes of the texts scanned with them. */
struct rule_set {
	struct vyre_dfa_pattern p[16];
	uint32_t n;
	const uint8_t *alpha;
	uint32_t n_alpha;
};

static int alloc(struct vyre_client *c, uint32_t bytes, uint32_t flags, uint32_t *h, uint8_t **p)
{
	int rc = vyre_buffer_alloc(c, bytes, flags, h);

	if (rc != 0)
		FAIL("alloc %u bytes: %s", bytes, vyre_strerror(rc));
	*p = vyre_buffer_ptr(c, *h, NULL);
	if (!*p && !(flags & (VYRE_BUF_TRANSIENT | VYRE_BUF_DEVICE)))
		FAIL("buffer_ptr");
	return 0;
}

/* Wait for @n CQEs into @out[user_data] (user_data < @max). */
static int collect(struct vyre_client *c, struct vyre_cqe *out, uint32_t max, uint32_t n)
{
	for (uint32_t got = 0; got < n;) {
		struct vyre_cqe cq[32];
		int k = vyre_wait(c, cq, 32, WAIT_NS);

		if (k <= 0)
			FAIL("wait: %s", vyre_strerror(k));
		for (int i = 0; i < k; i++) {
			if (cq[i].user_data >= max)
				FAIL("user_data %" PRIu64, cq[i].user_data);
			out[cq[i].user_data] = cq[i];
		}
		got += (uint32_t)k;
	}
	return 0;
}

/* The report at @r equals want[from, from + n) with total @n. */
static int check_records(const uint8_t *r, const struct ac_rec *want, uint64_t from, uint64_t n,
			 uint32_t cap, const char *what)
{
	uint32_t kept, flags;
	uint64_t total;

	memcpy(&kept, r, 4);
	memcpy(&flags, r + 4, 4);
	memcpy(&total, r + 8, 8);
	if (total != n || kept != (n < cap ? n : cap) ||
	    flags != (n > cap ? VYRE_REPORT_OVERFLOW : 0))
		FAIL("%s: kept %u flags %u total %" PRIu64 ", want total %" PRIu64, what, kept,
		     flags, total, n);
	for (uint32_t k = 0; k < kept; k++) {
		struct vyre_report_record rec;

		memcpy(&rec, r + 16 + 24 * (size_t)k, sizeof(rec));
		if (rec.id != want[from + k].id || rec.zero || rec.start != want[from + k].start ||
		    rec.end != want[from + k].end)
			FAIL("%s: record %u is (%u, %" PRIu64 ", %" PRIu64 "), want (%u, %" PRIu64
			     ", %" PRIu64 ")",
			     what, k, rec.id, rec.start, rec.end, want[from + k].id,
			     want[from + k].start, want[from + k].end);
	}
	return 0;
}

static int put_table(struct vyre_client *c, uint32_t *h)
{
	uint32_t bytes;
	uint8_t *t = ac_build(pats, N_PATS, &bytes), *p;

	if (!t || alloc(c, bytes, 0, h, &p)) {
		free(t);
		FAIL("table");
	}
	memcpy(p, t, bytes);
	free(t);
	return 0;
}

/* @set compiled by vyre_dfa_compile into a heap buffer, or COPied from one into a device buffer. */
static int put_compiled(struct vyre_client *c, const struct rule_set *set, int device, uint32_t *h)
{
	uint8_t *t = NULL, *p;
	uint32_t bytes = 0, heap_copy;
	int rc = vyre_dfa_compile(set->p, set->n, 0, &t, &bytes, NULL);

	if (rc != 0)
		FAIL("vyre_dfa_compile: %s", vyre_strerror(rc));
	if (alloc(c, bytes, 0, &heap_copy, &p)) {
		vyre_dfa_free(t);
		return -1;
	}
	memcpy(p, t, bytes);
	vyre_dfa_free(t);
	if (!device) {
		*h = heap_copy;
		return 0;
	}
	const struct vyre_work_item cp = {VYRE_OP_COPY, heap_copy, 0, 0};
	struct vyre_work_item it = cp;
	struct vyre_cqe one;

	if (alloc(c, bytes, VYRE_BUF_DEVICE, h, &p))
		return -1;
	it.output_handle = *h;
	if (vyre_submit(c, &it, 0, VYRE_SQE_FENCE) || collect(c, &one, 1, 1) || one.status ||
	    vyre_buffer_free(c, heap_copy))
		FAIL("table copy to the device");
	return 0;
}

/* A random set over @alpha: ids repeat, some patterns caseless, NUL and 0xff bytes. */
static void random_set(struct rule_set *set, uint8_t (*store)[8], uint64_t seed)
{
	static const uint8_t alpha[] = {'a', 'b', 'A', 'B', 'c', 0, 0xff};
	uint64_t rng = seed;

	set->n = 1 + (uint32_t)(splitmix64(&rng) % 16);
	set->alpha = alpha;
	set->n_alpha = 3 + (uint32_t)(splitmix64(&rng) % 5);
	for (uint32_t i = 0; i < set->n; i++) {
		const uint32_t len = 1 + (uint32_t)(splitmix64(&rng) % 6);

		for (uint32_t j = 0; j < len; j++)
			store[i][j] = alpha[splitmix64(&rng) % set->n_alpha];
		set->p[i] = (struct vyre_dfa_pattern){store[i], len,
						      (uint32_t)(splitmix64(&rng) % 5) * 1000003u,
						      splitmix64(&rng) % 2 ? VYRE_DFA_CASELESS : 0};
	}
}

/* A text cut into PIECES counted inputs, all submitted on one stream before any is reaped. */
static int pieces_in_flight(struct vyre_client *c, uint32_t table, const struct rule_set *set,
			    uint64_t seed, int device)
{
	static uint8_t text[TEXT_MAX];
	static struct ac_rec want[REC_MAX];
	static struct vyre_cqe cqe[PIECES];
	uint32_t cut[PIECES + 1], in[PIECES], out[PIECES], stream, copy;
	uint8_t *inp[PIECES], *outp[PIECES], *sp, *cp;
	uint64_t rng = seed;
	const uint32_t len = 1 + (uint32_t)(splitmix64(&rng) % TEXT_MAX);

	for (uint32_t i = 0; i < len;) {
		/* a pattern now and then (caseless ones in any case), else a byte of the alphabet
		 */
		const struct vyre_dfa_pattern *q = &set->p[splitmix64(&rng) % set->n];

		if (splitmix64(&rng) % 4 == 0)
			for (uint32_t j = 0; j < q->len && i < len; j++)
				text[i++] = (uint8_t)(q->bytes[j] ^
						      ((q->flags & VYRE_DFA_CASELESS) &&
							       ((q->bytes[j] | 0x20) >= 'a' &&
								(q->bytes[j] | 0x20) <= 'z') &&
							       splitmix64(&rng) % 2
							   ? 0x20
							   : 0));
		else
			text[i++] = set->alpha[splitmix64(&rng) % set->n_alpha];
	}
	const uint64_t total = ac_brute_dfa(set->p, set->n, text, len, want, REC_MAX);

	cut[0] = 0;
	cut[PIECES] = len;
	for (uint32_t k = 1; k < PIECES; k++)
		cut[k] = (uint32_t)(splitmix64(&rng) % (len + 1));
	for (uint32_t a = 1; a < PIECES; a++)
		for (uint32_t b = a; b > 1 && cut[b - 1] > cut[b]; b--) {
			const uint32_t x = cut[b];

			cut[b] = cut[b - 1];
			cut[b - 1] = x;
		}
	if (alloc(c, 16, device ? VYRE_BUF_DEVICE : 0, &stream, &sp) || alloc(c, 16, 0, &copy, &cp))
		return -1;
	for (uint32_t k = 0; k < PIECES; k++) {
		const uint32_t n = cut[k + 1] - cut[k];

		if (alloc(c, 4 + ((n + 3) & ~3u), 0, &in[k], &inp[k]) ||
		    alloc(c, 16 + 24 * 64, 0, &out[k], &outp[k]))
			return -1;
		memcpy(inp[k], &n, 4);
		memcpy(inp[k] + 4, text + cut[k], n);
	}
	for (uint32_t k = 0; k < PIECES; k++) {
		const struct vyre_work_item it = {VYRE_OP_DFA_REPORT_COUNTED, in[k], out[k], table};
		int rc;

		while ((rc = vyre_submit_stream(c, &it, stream, NULL, k, 0)) == VYRE_E_AGAIN)
			;
		if (rc != 0)
			FAIL("submit_stream: %s", vyre_strerror(rc));
	}
	if (collect(c, cqe, PIECES, PIECES))
		return -1;
	uint64_t at = 0;

	for (uint32_t k = 0; k < PIECES; k++) {
		uint64_t n = 0;
		char what[64];

		while (at + n < total && want[at + n].end <= cut[k + 1])
			n++;
		snprintf(what, sizeof(what), "piece %u of %u bytes", k, cut[k + 1] - cut[k]);
		if (cqe[k].status != 0 || cqe[k].result != n || cqe[k].flags)
			FAIL("%s: status %d result %" PRIu64 " flags %u, want %" PRIu64, what,
			     cqe[k].status, cqe[k].result, cqe[k].flags, n);
		if (check_records(outp[k], want, at, n, 64, what))
			return -1;
		at += n;
	}
	if (at != total)
		FAIL("%" PRIu64 " records of %" PRIu64, at, total);
	/* the stream's state, read through a COPY (a device stream has no mapping) */
	const struct vyre_work_item cp_it = {VYRE_OP_COPY, stream, copy, 0};
	struct vyre_cqe one;

	if (vyre_submit(c, &cp_it, 0, VYRE_SQE_FENCE) || collect(c, &one, 1, 1) || one.status)
		FAIL("copy of the stream");
	struct vyre_stream_state st;

	memcpy(&st, cp, sizeof(st));
	if (st.started != 1 || st.bytes_seen != len)
		FAIL("stream: started %u, %" PRIu64 " bytes seen of %u", st.started, st.bytes_seen,
		     len);
	for (uint32_t k = 0; k < PIECES; k++)
		if (vyre_buffer_free(c, in[k]) || vyre_buffer_free(c, out[k]))
			FAIL("free");
	if (vyre_buffer_free(c, stream) || vyre_buffer_free(c, copy))
		FAIL("free");
	return 0;
}

/* vyre_dfa_compile's tables through vyred: a fixed mixed set, then random ones. */
static int compiled_sets(struct vyre_client *c)
{
	static const uint8_t bin[] = {0, 0xff, 'm', 'z'};
	static const uint8_t fixed_alpha[] = {'h', 'e', 's', 'r', 'H', 'E', 'S', 0, 0xff, 'm', 'Z'};
	static struct rule_set set = {.p = {{(const uint8_t *)"he", 2, 1, 0},
					    {(const uint8_t *)"SHE", 3, 2, VYRE_DFA_CASELESS},
					    {(const uint8_t *)"hers", 4, 3, 0},
					    {(const uint8_t *)"his", 3, 2, 0},
					    {bin, 4, 4, VYRE_DFA_CASELESS},
					    {bin, 1, 5, 0},
					    {(const uint8_t *)"hE", 2, 6, VYRE_DFA_CASELESS}},
				      .n = 7,
				      .alpha = fixed_alpha,
				      .n_alpha = sizeof(fixed_alpha)};
	uint8_t store[16][8];
	uint32_t table;

	for (uint64_t seed = 1; seed <= 4; seed++)
		if (put_compiled(c, &set, seed % 2, &table) ||
		    pieces_in_flight(c, table, &set, 100 + seed, seed == 3) ||
		    vyre_buffer_free(c, table))
			FAIL("the fixed compiled set, seed %" PRIu64, seed);
	for (uint64_t seed = 1; seed <= 16; seed++) {
		struct rule_set r;

		random_set(&r, store, 0xc0de + seed);
		if (put_compiled(c, &r, seed % 3 == 1, &table) ||
		    pieces_in_flight(c, table, &r, 200 + seed, seed % 4 == 0) ||
		    vyre_buffer_free(c, table))
			FAIL("random compiled set %" PRIu64, seed);
	}
	return 0;
}

/* Base64 of "xcabcx" -> DFA_REPORT_COUNTED through a transient buffer, twice on one stream. */
static int decode_chain(struct vyre_client *c, uint32_t table)
{
	static const char b64[] = "eGNhYmN4"; /* "xcabcx" */
	uint32_t in, mid, out[2], stream;
	uint8_t *inp, *midp, *outp[2], *sp;
	const uint32_t l = 8;
	struct vyre_cqe cq[4];
	static struct ac_rec want[64];
	uint8_t text[12];

	if (alloc(c, 12, 0, &in, &inp) || alloc(c, 12, VYRE_BUF_TRANSIENT, &mid, &midp) ||
	    alloc(c, 16 + 24 * 16, 0, &out[0], &outp[0]) ||
	    alloc(c, 16 + 24 * 16, 0, &out[1], &outp[1]) || alloc(c, 16, 0, &stream, &sp))
		return -1;
	memcpy(inp, &l, 4);
	memcpy(inp + 4, b64, 8);
	for (uint32_t k = 0; k < 2; k++) {
		const struct vyre_work_item d = {VYRE_OP_BASE64_DECODE, in, mid, 0};
		const struct vyre_work_item r = {VYRE_OP_DFA_REPORT_COUNTED, mid, out[k], table};

		if (vyre_submit(c, &d, 2 * k, VYRE_SQE_CHAIN) ||
		    vyre_submit_stream(c, &r, stream, NULL, 2 * k + 1, 0))
			FAIL("submit chain");
	}
	if (collect(c, cq, 4, 4))
		return -1;
	memcpy(text, "xcabcxxcabcx", 12);
	const uint64_t total = ac_brute(pats, N_PATS, text, 12, want, 64);
	const uint64_t first = ac_brute(pats, N_PATS, text, 6, want, 64);

	for (uint32_t k = 0; k < 4; k++)
		if (cq[k].status != 0)
			FAIL("chain item %u: %s", k, vyre_strerror(cq[k].status));
	if (cq[1].result != first || cq[3].result != total - first ||
	    check_records(outp[0], want, 0, first, 16, "chain 1") ||
	    check_records(outp[1], want, first, total - first, 16, "chain 2"))
		FAIL("chain records");
	return 0;
}

/* Two identical items on one stream both run (never deduplicated): the second reports on. */
static int identical_items(struct vyre_client *c, uint32_t table)
{
	uint32_t in, out, stream;
	uint8_t *inp, *outp, *sp;
	struct vyre_cqe cq[2];
	const uint32_t l = 4;

	if (alloc(c, 8, 0, &in, &inp) || alloc(c, 16 + 24 * 16, 0, &out, &outp) ||
	    alloc(c, 16, 0, &stream, &sp))
		return -1;
	memcpy(inp, &l, 4);
	memcpy(inp + 4, "abca", 4);
	const struct vyre_work_item r = {VYRE_OP_DFA_REPORT_COUNTED, in, out, table};

	if (vyre_submit_stream(c, &r, stream, NULL, 0, 0) ||
	    vyre_submit_stream(c, &r, stream, NULL, 1, 0) || collect(c, cq, 2, 2))
		FAIL("submit identical");
	struct ac_rec want[16];
	const uint64_t total = ac_brute(pats, N_PATS, (const uint8_t *)"abcaabca", 8, want, 16);
	const uint64_t first = ac_brute(pats, N_PATS, (const uint8_t *)"abca", 4, want, 16);
	struct vyre_stream_state st;

	memcpy(&st, sp, sizeof(st));
	if (cq[0].status || cq[1].status || (cq[0].flags | cq[1].flags) || st.bytes_seen != 8 ||
	    check_records(outp, want, first, total - first, 16, "second identical item"))
		FAIL("identical stream items: flags %u %u, %" PRIu64 " bytes seen", cq[0].flags,
		     cq[1].flags, st.bytes_seen);
	return 0;
}

/* Streams vyred refuses with VYRE_E_INVAL, changing nothing. */
static int bad_streams(struct vyre_client *c, uint32_t table)
{
	uint32_t in, out, small, tr, gone, stream;
	uint8_t *inp, *outp, *p;
	struct vyre_cqe cq[6];
	const uint32_t l = 4;

	if (alloc(c, 8, 0, &in, &inp) || alloc(c, 64, 0, &out, &outp) ||
	    alloc(c, 12, 0, &small, &p) || alloc(c, 16, VYRE_BUF_TRANSIENT, &tr, &p) ||
	    alloc(c, 16, 0, &gone, &p) || alloc(c, 16, 0, &stream, &p))
		return -1;
	memcpy(inp, &l, 4);
	memcpy(inp + 4, "abca", 4);
	memset(outp, 0x5a, 64);
	if (vyre_buffer_free(c, gone))
		FAIL("free");
	const struct vyre_work_item r = {VYRE_OP_DFA_REPORT_COUNTED, in, out, table};
	const uint32_t bad[] = {small, tr, gone, in, out, table};

	for (uint32_t k = 0; k < 6; k++)
		if (vyre_submit_stream(c, &r, bad[k], NULL, k, 0))
			FAIL("submit bad stream %u", k);
	if (collect(c, cq, 6, 6))
		return -1;
	for (uint32_t k = 0; k < 6; k++)
		if (cq[k].status != VYRE_E_INVAL)
			FAIL("bad stream %u: status %d", k, cq[k].status);
	for (uint32_t i = 0; i < 64; i++)
		if (outp[i] != 0x5a)
			FAIL("a refused item wrote its output");
	/* the API refuses a stream on another op */
	const struct vyre_work_item scan = {VYRE_OP_DFA_SCAN_COUNTED, in, out, table};

	if (vyre_submit_stream(c, &scan, stream, NULL, 0, 0) != VYRE_E_INVAL)
		FAIL("vyre_submit_stream of DFA_SCAN_COUNTED");
	return 0;
}

static int run(void)
{
	const char *cpu[] = {"--backend",  "cpu", "--max-batch",   "4", "--min-share", "1",
			     "--inflight", "3",	  "--cpu-threads", "2", NULL};
	struct vyre_client *c;
	uint32_t table;

	if (vyre_test_daemon_start(&daemon_, cpu) != 0)
		return -1;
	struct vyre_connect_opts o = {.socket_path = daemon_.socket,
				      .domain = "report",
				      .sq_entries = 64,
				      .cq_entries = 128,
				      .heap_bytes = 8u << 20};
	int rc = vyre_connect(&o, &c);

	if (rc != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	if (put_table(c, &table))
		return -1;
	struct rule_set hand = {.n = N_PATS, .alpha = (const uint8_t *)"abc", .n_alpha = 3};

	for (uint32_t i = 0; i < N_PATS; i++)
		hand.p[i] = (struct vyre_dfa_pattern){pats[i].bytes, pats[i].len, pats[i].id, 0};
	for (uint64_t seed = 1; seed <= 12; seed++)
		if (pieces_in_flight(c, table, &hand, seed, seed % 3 == 0))
			return -1;
	if (compiled_sets(c) || decode_chain(c, table) || identical_items(c, table) ||
	    bad_streams(c, table))
		return -1;
	vyre_close(c);
	rc = vyre_test_daemon_stop(&daemon_);
	if (rc != 0)
		FAIL("vyred exit %d", rc);
	return 0;
}

int main(void)
{
	int rc = run();

	if (rc != 0)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	if (rc == 0)
		printf("PASS\n");
	return rc == 0 ? 0 : 1;
}
