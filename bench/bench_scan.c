/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan.c - suite "scan": literal-set scanning through vyre
 * against Hyperscan, on the same bytes, in one run (issue 11).
 *
 * Data: text shipped by Debian packages (the C headers in /usr/include and
 * /usr/include/linux, the licenses in /usr/share/common-licenses), files in
 * sorted name order, concatenated and repeated to the size needed. Patterns:
 * sets of 10, 100 and 1000 distinct identifiers of 5 to 16 bytes taken from
 * that text by a fixed-seed PRNG; each set is compiled by vyre_dfa_compile
 * (libvyre) and by hs_compile_lit_multi.
 *
 * Rows "litN SIZE PEER" per pattern set and item size (4 KiB, 64 KiB, 1 MiB;
 * the item set is 16 MiB, --quick 2 MiB):
 *   hyperscan      one thread per online CPU, its own scratch, its share of
 *                  the items, hs_scan per item
 *   vyre-cpu       16 producer processes (--quick 2) through a vyred this
 *   (or vyre-cuda) suite starts (--backend cpu with --backend cpu, else
 *                  auto), each with its own domain, the DFA table uploaded
 *                  once into a device buffer, its share of the items in the
 *                  heap, DFA_SCAN per item with up to 256 KiB in flight
 *   ... dev        the same with the items uploaded once into device buffers
 * Rows "b64 litN SIZE PEER" scan the same items base64-encoded: hyperscan
 * decodes each (a scalar decoder) and scans it; vyre runs BASE64_DECODE then
 * DFA_SCAN_COUNTED per item, "unfused" as two items through a heap buffer,
 * "fused" as one chain through a transient buffer. GB/s counts decoded bytes.
 * GB/s is input bytes completed over wall time; `matches` is the number of
 * distinct match end offsets over one pass of the item set (what DFA_SCAN
 * counts), and the suite fails when two peers disagree on it. Rows "single
 * litN SIZE PEER": one buffer of 1 GiB (--quick 32 MiB) scanned whole, by
 * vyre from the heap and from a device buffer, and by Hyperscan split over
 * every CPU. Every vyre row has a row "vyred cpu" too: the ns of CPU vyred
 * spent over the window per work item it ran (a base64 item is two, its
 * decode and its scan; harness_cpu.h). Rows "cnt KIND litN 4KiB PEER" and
 * "rpt KIND litN 4KiB PEER" (issue 26; VYRE_BENCH_SCAN_ONLY=rpt runs them
 * alone): for the sets above ("dense") and for sets drawn uniformly from the
 * distinct identifiers of the whole corpus ("sparse", most of which occur
 * seldom or never in the items), Hyperscan counting and storing every (id,
 * to) in an array, vyre counting (DFA_SCAN) and reporting (DFA_REPORT into a
 * report buffer per item that the producer reads), items in device buffers;
 * `matches` of a rpt row counts records, one per (id, end), and ":count" is
 * vyre's reporting over its counting. Rows "limit ..." (GPU machines): pinned host to device copy
 * and device to device copy bandwidth, from a forked child after every producer has gone, since
 * CUDA does not survive fork. bench_scan_job.h lists the parts.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"
#include "bench_scan_b64.h"
#include "bench_scan_data.h"
#include "bench_scan_hs.h"
#include "bench_scan_job.h"
#include "bench_scan_limits.h"
#include "bench_scan_vyre.h"
#include "vyre/dfa.h"
#include "harness_cpu.h"
#include "harness_vyred.h"

#define MAX_PATTERNS 1000u
#define SINGLE_BYTES (1024u * MIB)
#define QUICK_SINGLE (32u * MIB)

static const uint32_t pattern_counts[] = {10, 100, 1000};
static const uint32_t item_sizes[] = {4 * KIB, 64 * KIB, MIB};
static const uint32_t b64_sizes[] = {4 * KIB, 64 * KIB};
/* the report rows (issue 26): sets of both kinds, items of 4 KiB in device buffers */
static const uint32_t report_counts[] = {100, 1000};
#define REPORT_ITEM (4 * KIB)
#define N_REPORT    (sizeof(report_counts) / sizeof(report_counts[0]))
#define N_SETS	    (sizeof(pattern_counts) / sizeof(pattern_counts[0]))
#define N_SIZES	    (sizeof(item_sizes) / sizeof(item_sizes[0]))
#define N_B64_SIZES (sizeof(b64_sizes) / sizeof(b64_sizes[0]))

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
	struct vyre_dfa_info info;
	const int rc = vyre_dfa_compile(p, s->n, VYRE_DFA_DEFAULT_MAX_STATES, &s->table,
					&s->table_bytes, &info);
	uint32_t n_states;

	if (rc == 0) {
		memcpy(&n_states, s->table, sizeof(n_states));
		fprintf(stderr, "scan: lit%u: DFA of %u states (%u KiB)\n", s->n, n_states,
			s->table_bytes / KIB);
	} else if (rc == VYRE_E_NOMEM) {
		fprintf(stderr,
			"scan: lit%u: the DFA needs at least %llu states and %llu table bytes "
			"(vyre_dfa_compile's limit: %u states), or more memory than there is: "
			"vyre rows skipped\n",
			s->n, (unsigned long long)info.states, (unsigned long long)info.table_bytes,
			VYRE_DFA_DEFAULT_MAX_STATES);
	} else {
		fprintf(stderr, "scan: lit%u: vyre_dfa_compile: %s\n", s->n, vyre_strerror(rc));
	}
	if (rc)
		s->table = NULL;
	if (rc && rc != VYRE_E_NOMEM)
		return -1;
#ifdef VYRE_HAVE_HS
	s->db = vyre_scan_hs_build(p, s->n);
	if (!s->db)
		return -1;
#endif
	return 0;
}

static void set_free(struct set *s)
{
	free(s->table);
#ifdef VYRE_HAVE_HS
	vyre_scan_hs_free(s->db);
#endif
}

struct run {
	struct vyre_bench_ctx *ctx;
	const struct corpus *corp;
	struct vyred *d; /* NULL: no vyred */
	unsigned checked;
};

/* @j through the suite's vyred, with @s's table. */
static void vyre_job(const struct run *r, const struct set *s, struct job *j)
{
	j->socket = r->d->run.sock;
	j->vyred = r->d->run.pid;
	j->table = s->table;
	j->table_bytes = s->table_bytes;
}

/*
 * One vyre row of @j in @mode named "@prefix @peer@suffix", checked and
 * compared with @h; its figures in *@out when not NULL.
 */
static int vyre_row(struct run *r, struct job *j, uint32_t mode, const char *prefix,
		    const char *suffix, const struct figures *h, struct figures *out)
{
	char name[128];
	struct figures v = {0};

	j->mode = mode;
	snprintf(name, sizeof(name), "%s %s%s", prefix, r->d->peer, suffix);
	if (vyre_scan_vyre_row(r->ctx, j, name, &v) != 0)
		return -1;
	report_figures(r->ctx, name, &v);
	if (out)
		*out = v;
	vyre_bench_report_vyred_cpu(r->ctx, SUITE, name, v.vyred_cpu);
	if (h->gbps <= 0)
		return 0;
	snprintf(name, sizeof(name), "%s %s%s:hyperscan", prefix, r->d->peer, suffix);
	report_ratio(r->ctx, name, &v, h);
	return check_counts(prefix, &v, h, &r->checked);
}

/* The hyperscan row of @j named "@prefix hyperscan"; @h stays zero without it. */
static int hs_row(struct run *r, const struct set *s, struct job *j, const char *prefix,
		  struct figures *h)
{
#ifdef VYRE_HAVE_HS
	char name[128];

	j->db = s->db;
	snprintf(name, sizeof(name), "%s hyperscan", prefix);
	if (!s->db)
		return 0;
	if (vyre_scan_hs_row(r->ctx, j, name, h) != 0)
		return -1;
	report_figures(r->ctx, name, h);
#else
	(void)r;
	(void)s;
	(void)j;
	(void)prefix;
	(void)h;
#endif
	return 0;
}

/* Rows of set @s at item size @item over @data (@set_bytes of it). */
static int item_rows(struct run *r, const struct set *s, const uint8_t *data, uint32_t set_bytes,
		     uint32_t item)
{
	char prefix[64], size[24];
	struct figures h = {0};
	struct job j = {.data = data, .item_bytes = item, .n_items = set_bytes / item};

	snprintf(prefix, sizeof(prefix), "lit%u %s", s->n, size_name(item, size, sizeof(size)));
	int rc = hs_row(r, s, &j, prefix, &h);

	if (r->d && s->table) {
		vyre_job(r, s, &j);
		rc |= vyre_row(r, &j, 0, prefix, "", &h, NULL);
		rc |= vyre_row(r, &j, SCAN_ITEMS_DEVICE, prefix, " dev", &h, NULL);
	}
	return rc;
}

/*
 * The report rows (issue 26) of set @s (@kind "dense" or "sparse") at item
 * size @item, items in device buffers: Hyperscan counting and storing
 * (id, to) per match, vyre counting (DFA_SCAN) and reporting (DFA_REPORT,
 * records read by the producer); the record counts must agree.
 */
static int report_rows(struct run *r, const struct set *s, const char *kind, const uint8_t *data,
		       uint32_t set_bytes, uint32_t item)
{
	char prefix[64], size[24], name[160];
	struct figures hc = {0}, hr = {0}, vc = {0}, vr = {0};
	struct job j = {.data = data, .item_bytes = item, .n_items = set_bytes / item};
	int rc = 0;

	size_name(item, size, sizeof(size));
	snprintf(prefix, sizeof(prefix), "cnt %s lit%u %s", kind, s->n, size);
	rc |= hs_row(r, s, &j, prefix, &hc);
	j.mode = SCAN_REPORT;
	snprintf(prefix, sizeof(prefix), "rpt %s lit%u %s", kind, s->n, size);
	rc |= hs_row(r, s, &j, prefix, &hr);
	if (hr.counted)
		fprintf(stderr, "scan: %s: %llu matches in %u KiB: one per %.0f bytes\n", prefix,
			(unsigned long long)hr.matches, set_bytes / KIB,
			hr.matches ? (double)set_bytes / (double)hr.matches : 0.0);
	if (!r->d || !s->table)
		return rc;
	vyre_job(r, s, &j);
	snprintf(prefix, sizeof(prefix), "cnt %s lit%u %s", kind, s->n, size);
	j.mode = SCAN_ITEMS_DEVICE;
	snprintf(name, sizeof(name), "%s %s dev", prefix, r->d->peer);
	if (vyre_scan_vyre_row(r->ctx, &j, name, &vc) == 0) {
		report_figures(r->ctx, name, &vc);
		vyre_bench_report_vyred_cpu(r->ctx, SUITE, name, vc.vyred_cpu);
	} else {
		rc = -1;
	}
	rc |= check_counts(prefix, &vc, &hc, &r->checked);
	snprintf(prefix, sizeof(prefix), "rpt %s lit%u %s", kind, s->n, size);
	rc |= vyre_row(r, &j, SCAN_ITEMS_DEVICE | SCAN_REPORT, prefix, " dev", &hr, &vr);
	/* what reporting costs against counting the same items (issue 26: >= 0.8 on sparse sets) */
	snprintf(name, sizeof(name), "%s %s dev:count", prefix, r->d->peer);
	report_ratio(r->ctx, name, &vr, &vc);
	return rc;
}

/* The base64 rows of set @s at item size @item: @data encoded, at @enc. */
static int b64_rows(struct run *r, const struct set *s, const uint8_t *data, uint32_t set_bytes,
		    uint32_t item, uint8_t *enc)
{
	char prefix[64], size[24];
	struct figures h = {0};
	struct job j = {.data = data,
			.item_bytes = item,
			.n_items = set_bytes / item,
			.mode = SCAN_B64,
			.enc = enc,
			.enc_stride = vyre_scan_b64_counted_bytes(item)};

	vyre_scan_b64_encode_items(data, item, j.n_items, enc, j.enc_stride);
	snprintf(prefix, sizeof(prefix), "b64 lit%u %s", s->n, size_name(item, size, sizeof(size)));
	int rc = hs_row(r, s, &j, prefix, &h);

	if (r->d && s->table) {
		vyre_job(r, s, &j);
		rc |= vyre_row(r, &j, SCAN_B64, prefix, " unfused", &h, NULL);
		rc |= vyre_row(r, &j, SCAN_B64 | SCAN_FUSED, prefix, " fused", &h, NULL);
	}
	return rc;
}

/* The single-scan rows of set @s: vyre from the heap and from a device buffer, Hyperscan. */
static int single_rows(struct run *r, const struct set *s)
{
	const uint32_t bytes = r->ctx->quick ? QUICK_SINGLE : SINGLE_BYTES;
	struct job j = {0};
	struct figures v[2];

	vyre_job(r, s, &j);
	memset(v, 0, sizeof(v));
	char name[128], size[24];
	int rc = 0;

	size_name(bytes, size, sizeof(size));
	for (int device = 0; device < 2; device++) {
		struct single one = {0};

		if (vyre_scan_vyre_single_row(r->ctx, &j, r->corp, bytes, device, &one)) {
			rc = -1;
			continue;
		}
		v[device] = (struct figures){(double)one.bytes * (double)one.scans / (double)one.ns,
					     one.matches, 1, one.vyred_cpu};
		snprintf(name, sizeof(name), "single lit%u %s %s%s", s->n, size, r->d->peer,
			 device ? " dev" : "");
		report_figures(r->ctx, name, &v[device]);
		vyre_bench_report_vyred_cpu(r->ctx, SUITE, name, v[device].vyred_cpu);
	}
#ifdef VYRE_HAVE_HS
	struct figures h = {0};
	uint8_t *data = malloc(bytes);

	if (!data) {
		fprintf(stderr, "scan: single hyperscan: out of memory\n");
		return -1;
	}
	vyre_scan_tile(r->corp, data, bytes);
	snprintf(name, sizeof(name), "single lit%u %s hyperscan", s->n, size);
	if (vyre_scan_hs_single(r->ctx, s->db, data, bytes, &h) == 0)
		report_figures(r->ctx, name, &h);
	else
		rc = -1;
	free(data);
	for (int device = 0; device < 2 && h.gbps > 0; device++) {
		if (v[device].gbps <= 0)
			continue;
		snprintf(name, sizeof(name), "single lit%u %s %s%s:hyperscan", s->n, size,
			 r->d->peer, device ? " dev" : "");
		report_ratio(r->ctx, name, &v[device], &h);
		snprintf(name, sizeof(name), "single lit%u %s", s->n, size);
		rc |= check_counts(name, &v[device], &h, &r->checked);
	}
#endif
	return rc;
}

/* The item size VYRE_BENCH_SCAN_ONLY names in KiB ("4k", "64k"), else 0. */
static uint32_t only_size(const char *only)
{
	char *end = NULL;
	const unsigned long kib = only ? strtoul(only, &end, 10) : 0;

	return end != only && end && strcmp(end, "k") == 0 && kib > 0 && kib < 1024 * 1024
		   ? (uint32_t)kib * 1024u
		   : 0;
}

static int scan_suite(struct vyre_bench_ctx *ctx)
{
	struct corpus corp = {0};
	struct vyre_dfa_pattern *pat = calloc(MAX_PATTERNS, sizeof(*pat));
	struct set sets[N_SETS] = {0};
	const uint32_t set_bytes = ctx->quick ? QUICK_SET_BYTES : SET_BYTES;
	uint8_t *data = malloc(set_bytes);
	uint8_t *enc =
	    malloc((uint64_t)set_bytes / b64_sizes[0] * vyre_scan_b64_counted_bytes(b64_sizes[0]));
	struct vyred d = {0};
	char bin[PATH_MAX];
	struct run r = {ctx, &corp, NULL, 0};
	/* VYRE_BENCH_SCAN_ONLY=b64: the base64 rows alone, for a short run on a GPU lease */
	const char *only = getenv("VYRE_BENCH_SCAN_ONLY");
	const int b64_only = only && strcmp(only, "b64") == 0;
	/* VYRE_BENCH_SCAN_ONLY=4k (or 64k, ...): the item rows of that size alone, likewise */
	const uint32_t size_only = only_size(only);
	const int one_size = size_only != 0;
	/* VYRE_BENCH_SCAN_ONLY=rpt: the report rows alone */
	const int rpt_only = only && strcmp(only, "rpt") == 0;
	struct set sparse[N_REPORT] = {0};
	struct vyre_dfa_pattern *sparse_pat = calloc(MAX_PATTERNS, sizeof(*sparse_pat));
	int rc = 0;

	if (!pat || !data || !enc || !sparse_pat) {
		fprintf(stderr, "scan: out of memory\n");
		rc = -1;
		goto out;
	}
	if (vyre_scan_corpus_load(&corp)) {
		fprintf(stderr, "scan: skipped: under %u bytes of text in those files\n",
			PICK_BYTES);
		goto out;
	}
	vyre_scan_tile(&corp, data, set_bytes);
	const uint32_t n_pat = vyre_scan_pick_patterns(corp.bytes, pat, MAX_PATTERNS);

	fprintf(stderr, "scan: %u distinct identifiers of %u-%u bytes picked; first: %.*s %.*s\n",
		n_pat, PATTERN_MIN, PATTERN_MAX, (int)pat[0].len, (const char *)pat[0].bytes,
		(int)pat[1].len, (const char *)pat[1].bytes);
#ifndef VYRE_HAVE_HS
	fprintf(stderr, "scan: hyperscan rows and the count check skipped: vyre-bench was built "
			"without libhs (libhyperscan-dev, amd64 only)\n");
#endif
	if (!vyre_bench_find_vyred(bin, sizeof(bin)))
		fprintf(stderr, "scan: vyre rows skipped: no vyred next to vyre-bench\n");
	else if (vyre_scan_vyred_start(&d, ctx, bin, 0) == 0)
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
		for (size_t k = 0; k < N_SIZES && !b64_only && !rpt_only; k++)
			if (!one_size || item_sizes[k] == size_only)
				rc |= item_rows(&r, s, data, set_bytes, item_sizes[k]);
		for (size_t k = 0; k < N_B64_SIZES && !one_size && !rpt_only; k++)
			rc |= b64_rows(&r, s, data, set_bytes, b64_sizes[k], enc);
	}
	/* the report rows: the dense sets above, then sets drawn uniformly (sparse) */
	const uint32_t n_sparse =
	    b64_only || one_size
		? 0
		: vyre_scan_pick_sparse(corp.bytes, corp.len, sparse_pat, MAX_PATTERNS);

	if (!b64_only && !one_size)
		fprintf(stderr, "scan: sparse sets: %u identifiers drawn from the distinct ones\n",
			n_sparse);
	for (size_t i = 0; i < N_REPORT && n_sparse; i++) {
		for (size_t k = 0; k < N_SETS; k++)
			if (sets[k].n == report_counts[i])
				rc |= report_rows(&r, &sets[k], "dense", data, set_bytes,
						  REPORT_ITEM);
		sparse[i].n = report_counts[i];
		if (sparse[i].n > n_sparse || set_build(&sparse[i], sparse_pat)) {
			fprintf(stderr, "scan: sparse lit%u skipped\n", sparse[i].n);
			continue;
		}
		rc |= report_rows(&r, &sparse[i], "sparse", data, set_bytes, REPORT_ITEM);
	}
	/*
	 * One item of 1 GiB is one domain's: with several event loops it would
	 * get one loop's share of the GPU (docs/design.md 8.7), so the single
	 * scans run on a vyred of one loop, as an operator would configure it
	 * for such work.
	 */
	if (r.d && !b64_only && !one_size && !rpt_only) {
		vyre_scan_vyred_stop(&d);
		r.d = vyre_scan_vyred_start(&d, ctx, bin, 1) == 0 ? &d : NULL;
		rc |= r.d ? 0 : -1;
	}
	for (size_t i = 0; r.d && !b64_only && !one_size && !rpt_only && i < N_SETS; i++)
		if (sets[i].table)
			rc |= single_rows(&r, &sets[i]);
	if (r.d)
		vyre_scan_vyred_stop(&d);
	if (r.checked)
		fprintf(stderr,
			"scan: vyre and hyperscan counted the same matches in all %u "
			"comparisons\n",
			r.checked);
	if (ctx->cpu_only || b64_only || one_size || rpt_only)
		fprintf(stderr, "scan: limit rows skipped: %s\n",
			only ? "VYRE_BENCH_SCAN_ONLY" : "--backend cpu");
	else
		rc |= vyre_scan_limits_rows(ctx);
out:
	for (size_t i = 0; i < N_SETS; i++)
		set_free(&sets[i]);
	for (size_t i = 0; i < N_REPORT; i++)
		set_free(&sparse[i]);
	free(sparse_pat);
	free(corp.bytes);
	free(data);
	free(enc);
	free(pat);
	return rc ? -1 : 0;
}

VYRE_BENCH_SUITE(scan, "literal sets of 10/100/1000 over real text: vyre DFA_SCAN vs Hyperscan",
		 scan_suite)
