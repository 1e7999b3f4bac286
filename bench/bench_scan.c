/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan.c - suite "scan": literal-set scanning through vyre's
 * DFA_SCAN against Hyperscan, on the same bytes, in one run (issue 11). It
 * records the starting point: DFA_SCAN walks each item with one thread (one
 * CPU worker, or one GPU thread reading the table over PCIe), so vyre is
 * expected to be far behind.
 *
 * Data: text shipped by Debian packages (the C headers in /usr/include and
 * /usr/include/linux, the licenses in /usr/share/common-licenses), files in
 * sorted name order, concatenated and repeated to the size needed. Patterns:
 * sets of 10, 100 and 1000 distinct identifiers of 5 to 16 bytes taken from
 * that text by a fixed-seed PRNG; each set is compiled by vyre_dfa_compile
 * (tools/submit) and by hs_compile_lit_multi.
 *
 * Rows "litN SIZE PEER" per pattern set and item size (4 KiB, 64 KiB, 1 MiB;
 * the item set is 16 MiB, --quick 2 MiB):
 *   hyperscan  one thread per online CPU, its own scratch, its share of the
 *              items, hs_scan per item
 *   vyre-cpu   16 producer processes (--quick 2) through a vyred this suite
 *   (or -cuda) starts (--backend cpu with --backend cpu, else auto), each
 *              with its own domain holding a copy of the table and its share
 *              of the items, DFA_SCAN per item with up to 256 KiB in flight
 * GB/s is input bytes completed over wall time; `matches` is the number of
 * distinct match end offsets over one pass of the item set (what DFA_SCAN
 * counts), and the suite fails when the two peers disagree on it. Rows
 * "single litN PEER": one scan of a prefix of the data, as long as --seconds
 * allows (at most 256 MiB), with the time a whole 1 GiB would take at that
 * rate. Rows "limit ..." (GPU machines): pinned host to device copy and
 * device to device copy bandwidth, from a forked child after every producer
 * has gone, since CUDA does not survive fork. bench_scan.h lists the parts.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"
#include "bench_scan.h"
#include "dfa_compile.h"
#include "harness.h"

#define MAX_PATTERNS	 1000u
#define PREFIX_MAX	 (256u * MIB)
#define QUICK_PREFIX_MAX (32u * MIB)

static const uint32_t pattern_counts[] = {10, 100, 1000};
static const uint32_t item_sizes[] = {4 * KIB, 64 * KIB, MIB};
#define N_SETS	(sizeof(pattern_counts) / sizeof(pattern_counts[0]))
#define N_SIZES (sizeof(item_sizes) / sizeof(item_sizes[0]))

static const char *size_name(uint64_t bytes, char *buf, size_t len)
{
	if (bytes % MIB == 0)
		snprintf(buf, len, "%lluMiB", (unsigned long long)(bytes / MIB));
	else
		snprintf(buf, len, "%lluKiB", (unsigned long long)(bytes / KIB));
	return buf;
}

struct set {
	uint32_t n;
	uint8_t *table; /* NULL: the DFA did not fit vyre_dfa_compile's limit */
	uint32_t table_bytes;
#ifdef VYRE_HAVE_HS
	struct hs_database *db;
#endif
};

static void report_figures(struct vyre_bench_ctx *ctx, const char *name, const struct figures *f)
{
	vyre_bench_report(ctx, SUITE, name, "GB/s", f->gbps, "GB/s");
	if (f->counted)
		vyre_bench_report(ctx, SUITE, name, "matches", (double)f->matches, "count");
}

/* The count check; -1 when both counted and disagree. */
static int check_counts(const char *what, const struct figures *v, const struct figures *h,
			unsigned *checked)
{
	if (!v->counted || !h->counted)
		return 0;
	if (v->matches != h->matches) {
		fprintf(stderr, "scan: %s: COUNTS DIFFER: vyre %llu, hyperscan %llu\n", what,
			(unsigned long long)v->matches, (unsigned long long)h->matches);
		return -1;
	}
	(*checked)++;
	return 0;
}

static void report_ratio(struct vyre_bench_ctx *ctx, const char *name, const struct figures *v,
			 const struct figures *h)
{
	if (h->gbps > 0)
		vyre_bench_report(ctx, SUITE, name, "GB/s", v->gbps / h->gbps, "x");
}

/*
 * Compiles set @s from the first s->n of @p. A DFA over vyre_dfa_compile's
 * state limit only skips the vyre rows; any other failure is the suite's.
 */
static int set_build(struct set *s, const struct vyre_dfa_pattern *p)
{
	const int rc =
	    vyre_dfa_compile(p, s->n, VYRE_DFA_DEFAULT_MAX_STATES, &s->table, &s->table_bytes);
	uint32_t n_states;

	if (rc == 0) {
		memcpy(&n_states, s->table, sizeof(n_states));
		fprintf(stderr, "scan: lit%u: DFA of %u states (%u KiB)\n", s->n, n_states,
			s->table_bytes / KIB);
	} else if (rc == VYRE_E_NOMEM) {
		fprintf(stderr,
			"scan: lit%u: the DFA needs more than %u states (vyre_dfa_compile's "
			"limit) or more memory than there is: vyre rows skipped\n",
			s->n, VYRE_DFA_DEFAULT_MAX_STATES);
	} else {
		fprintf(stderr, "scan: lit%u: vyre_dfa_compile: %s\n", s->n, vyre_strerror(rc));
	}
	if (rc)
		s->table = NULL;
	if (rc && rc != VYRE_E_NOMEM)
		return -1;
#ifdef VYRE_HAVE_HS
	s->db = scan_hs_build(p, s->n);
	if (!s->db)
		return -1;
#endif
	return 0;
}

static void set_free(struct set *s)
{
	free(s->table);
#ifdef VYRE_HAVE_HS
	scan_hs_free(s->db);
#endif
}

struct run {
	struct vyre_bench_ctx *ctx;
	const struct corpus *corp;
	struct vyred *d; /* NULL: no vyred */
	unsigned checked;
};

/* Rows of set @s at item size @item over @data (@set_bytes of it). */
static int item_rows(struct run *r, const struct set *s, const uint8_t *data, uint32_t set_bytes,
		     uint32_t item)
{
	char name[96], size[24];
	struct figures v = {0}, h = {0};
	struct job j = {.data = data, .item_bytes = item, .n_items = set_bytes / item};
	int rc = 0, have_v = 0;

	size_name(item, size, sizeof(size));
#ifdef VYRE_HAVE_HS
	j.db = s->db;
	snprintf(name, sizeof(name), "lit%u %s hyperscan", s->n, size);
	if (s->db && scan_hs_row(r->ctx, &j, name, &h) == 0)
		report_figures(r->ctx, name, &h);
	else if (s->db)
		rc = -1;
#endif
	if (r->d && s->table) {
		j.socket = r->d->run.sock;
		j.table = s->table;
		j.table_bytes = s->table_bytes;
		snprintf(name, sizeof(name), "lit%u %s %s", s->n, size, r->d->peer);
		if (scan_vyre_row(r->ctx, &j, name, &v) == 0) {
			report_figures(r->ctx, name, &v);
			have_v = 1;
		} else {
			rc = -1;
		}
	}
	if (have_v && h.gbps > 0) {
		snprintf(name, sizeof(name), "lit%u %s %s:hyperscan", s->n, size, r->d->peer);
		report_ratio(r->ctx, name, &v, &h);
		snprintf(name, sizeof(name), "lit%u %s", s->n, size);
		rc |= check_counts(name, &v, &h, &r->checked);
	}
	return rc;
}

/* The single-scan rows of set @s. */
static int single_rows(struct run *r, const struct set *s)
{
	const uint32_t max = r->ctx->quick ? QUICK_PREFIX_MAX : PREFIX_MAX;
	struct job j = {.socket = r->d->run.sock, .table = s->table, .table_bytes = s->table_bytes};
	struct single one;
	char name[96], size[24];
	int rc = 0;

	if (scan_vyre_single_row(r->ctx, &j, r->corp, max, &one))
		return -1;
	const struct figures v = {(double)one.bytes / (double)one.ns, one.matches, 1};

	size_name(one.bytes, size, sizeof(size));
	fprintf(stderr,
		"scan: single scan: %s took %.3f s for a %s prefix; a whole 1 GiB would take "
		"about %.1f s at that rate, so only the prefix is measured\n",
		r->d->peer, (double)one.ns / 1e9, size, (double)GIB / v.gbps / 1e9);
	snprintf(name, sizeof(name), "single lit%u %s %s", s->n, size, r->d->peer);
	report_figures(r->ctx, name, &v);
	vyre_bench_report(r->ctx, SUITE, name, "est-1GiB", (double)GIB / v.gbps / 1e9, "s");
#ifdef VYRE_HAVE_HS
	struct figures h;
	uint8_t *data = malloc(one.bytes);

	if (!data) {
		fprintf(stderr, "scan: single hyperscan: out of memory\n");
		return -1;
	}
	scan_tile(r->corp, data, one.bytes);
	snprintf(name, sizeof(name), "single lit%u %s hyperscan", s->n, size);
	rc = scan_hs_single(r->ctx, s->db, data, (uint32_t)one.bytes, &h);
	free(data);
	if (rc == 0) {
		report_figures(r->ctx, name, &h);
		vyre_bench_report(r->ctx, SUITE, name, "est-1GiB", (double)GIB / h.gbps / 1e9, "s");
		snprintf(name, sizeof(name), "single lit%u %s %s:hyperscan", s->n, size,
			 r->d->peer);
		report_ratio(r->ctx, name, &v, &h);
		snprintf(name, sizeof(name), "single lit%u %s", s->n, size);
		rc = check_counts(name, &v, &h, &r->checked);
	}
#endif
	return rc;
}

static int scan_suite(struct vyre_bench_ctx *ctx)
{
	struct corpus corp = {0};
	struct vyre_dfa_pattern *pat = calloc(MAX_PATTERNS, sizeof(*pat));
	struct set sets[N_SETS] = {0};
	const uint32_t set_bytes = ctx->quick ? QUICK_SET_BYTES : SET_BYTES;
	uint8_t *data = malloc(set_bytes);
	struct vyred d = {0};
	char bin[PATH_MAX];
	struct run r = {ctx, &corp, NULL, 0};
	int rc = 0;

	if (!pat || !data) {
		fprintf(stderr, "scan: out of memory\n");
		rc = -1;
		goto out;
	}
	if (scan_corpus_load(&corp)) {
		fprintf(stderr, "scan: skipped: under %u bytes of text in those files\n",
			PICK_BYTES);
		goto out;
	}
	scan_tile(&corp, data, set_bytes);
	const uint32_t n_pat = scan_pick_patterns(corp.bytes, pat, MAX_PATTERNS);

	fprintf(stderr, "scan: %u distinct identifiers of %u-%u bytes picked; first: %.*s %.*s\n",
		n_pat, PATTERN_MIN, PATTERN_MAX, (int)pat[0].len, (const char *)pat[0].bytes,
		(int)pat[1].len, (const char *)pat[1].bytes);
#ifndef VYRE_HAVE_HS
	fprintf(stderr, "scan: hyperscan rows and the count check skipped: vyre-bench was built "
			"without libhs (libhyperscan-dev, amd64 only)\n");
#endif
	if (!vyre_bench_find_vyred(bin, sizeof(bin)))
		fprintf(stderr, "scan: vyre rows skipped: no vyred next to vyre-bench\n");
	else if (scan_vyred_start(&d, bin, ctx->cpu_only) == 0)
		r.d = &d;
	else
		rc = -1;
	for (size_t i = 0; i < N_SETS; i++) {
		struct set *s = &sets[i];

		s->n = pattern_counts[i];
		if (s->n > n_pat) {
			fprintf(stderr, "scan: lit%u skipped: only %u distinct identifiers\n", s->n,
				n_pat);
			continue;
		}
		if (set_build(s, pat)) {
			rc = -1;
			continue;
		}
		for (size_t k = 0; k < N_SIZES; k++)
			rc |= item_rows(&r, s, data, set_bytes, item_sizes[k]);
	}
	/* the largest set vyre could take: the single scan is the 1 GiB row */
	for (size_t i = N_SETS; r.d && i-- > 0;)
		if (sets[i].table) {
			rc |= single_rows(&r, &sets[i]);
			break;
		}
	if (r.d)
		scan_vyred_stop(&d);
	if (r.checked)
		fprintf(stderr,
			"scan: vyre and hyperscan counted the same matches in all %u "
			"comparisons\n",
			r.checked);
	if (ctx->cpu_only)
		fprintf(stderr, "scan: limit rows skipped: --backend cpu\n");
	else
		rc |= scan_limits_rows(ctx);
out:
	for (size_t i = 0; i < N_SETS; i++)
		set_free(&sets[i]);
	free(corp.bytes);
	free(data);
	free(pat);
	return rc ? -1 : 0;
}

VYRE_BENCH_SUITE(scan, "literal sets of 10/100/1000 over real text: vyre DFA_SCAN vs Hyperscan",
		 scan_suite)
