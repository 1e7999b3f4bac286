/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_hs.c - the scan suite's Hyperscan peer, when vyre-bench is
 * built with libhs (VYRE_HAVE_HS, set by bench/build.mk): the literal set
 * compiled by hs_compile_lit_multi, a row of hs_scan per item with one
 * thread per online CPU (base64 rows decode each item first, with
 * bench_scan_b64.c's decoder), and one long scan split over those threads.
 */
#include "bench_scan_b64.h"
#include "bench_scan_hs.h"
#include "bench_scan_run.h"

#ifdef VYRE_HAVE_HS
#include <hs/hs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/dfa.h"
#include "harness_procs.h"

/* The distinct end offsets of one scan: matches of a literal set need not come in order. */
struct ends {
	uint64_t *map; /* one bit per end offset, clear between scans */
	uint64_t n;
	size_t lo, hi;	  /* the words set, to clear only those */
	uint64_t min_end; /* ends at or before this belong to the slice before */
};

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
		    unsigned int flags, void *arg)
{
	struct ends *e = arg;
	const size_t w = (size_t)((to - 1) / 64);
	const uint64_t bit = 1ull << ((to - 1) % 64);

	(void)id;
	(void)from;
	(void)flags;
	if (to <= e->min_end || (e->map[w] & bit))
		return 0;
	if (e->n++ == 0 || w < e->lo)
		e->lo = w;
	if (w >= e->hi)
		e->hi = w + 1;
	e->map[w] |= bit;
	return 0;
}

/* What a reporting user keeps of a scan: every (id, to), as vyre's records hold them. */
struct records {
	struct hs_record {
		uint32_t id;
		uint64_t to;
	} * r;
	uint64_t n, cap;
	int nomem;
};

static int on_record(unsigned int id, unsigned long long from, unsigned long long to,
		     unsigned int flags, void *arg)
{
	struct records *rs = arg;

	(void)from;
	(void)flags;
	if (rs->n == rs->cap) {
		const uint64_t cap = rs->cap ? rs->cap * 2 : 1024;
		void *p = realloc(rs->r, (size_t)cap * sizeof(*rs->r));

		if (!p) {
			rs->nomem = 1;
			return 1; /* stops the scan: hs_scan then says so */
		}
		rs->r = p;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct hs_record){id, to};
	return 0;
}

/* The records of @db's patterns in @data; -1 when hs_scan failed. */
static int64_t hs_records(const hs_database_t *db, hs_scratch_t *scratch, const uint8_t *data,
			  uint32_t bytes, struct records *rs)
{
	rs->n = 0;
	const hs_error_t rc = hs_scan(db, (const char *)data, bytes, 0, scratch, on_record, rs);

	return rc == HS_SUCCESS && !rs->nomem ? (int64_t)rs->n : -1;
}

static int ends_init(struct ends *e, uint64_t bytes)
{
	*e = (struct ends){.map = calloc((size_t)(bytes + 63) / 64, sizeof(uint64_t))};
	return e->map ? 0 : -1;
}

/* Distinct end offsets of @db's patterns in @data; -1 when hs_scan failed. */
static int64_t hs_count(const hs_database_t *db, hs_scratch_t *scratch, const uint8_t *data,
			uint32_t bytes, struct ends *e)
{
	e->n = 0;
	e->hi = 0;
	const hs_error_t rc = hs_scan(db, (const char *)data, bytes, 0, scratch, on_match, e);

	if (e->n)
		memset(e->map + e->lo, 0, (e->hi - e->lo) * sizeof(uint64_t));
	return rc == HS_SUCCESS ? (int64_t)e->n : -1;
}

hs_database_t *vyre_scan_hs_build(const struct vyre_dfa_pattern *p, uint32_t n)
{
	const char **expr = calloc(n, sizeof(*expr));
	size_t *lens = calloc(n, sizeof(*lens));
	unsigned *ids = calloc(n, sizeof(*ids)), *flags = calloc(n, sizeof(*flags));
	hs_database_t *db = NULL;
	hs_compile_error_t *err = NULL;

	for (uint32_t i = 0; expr && lens && ids && i < n; i++) {
		expr[i] = (const char *)p[i].bytes;
		lens[i] = p[i].len;
		ids[i] = i;
	}
	if (!expr || !lens || !ids || !flags)
		fprintf(stderr, "scan: out of memory\n");
	else if (hs_compile_lit_multi(expr, flags, ids, lens, n, HS_MODE_BLOCK, NULL, &db, &err) !=
		 HS_SUCCESS)
		fprintf(stderr, "scan: hs_compile_lit_multi of %u literals: %s\n", n,
			err ? err->message : "failed");
	hs_free_compile_error(err);
	free(expr);
	free(lens);
	free(ids);
	free(flags);
	return db;
}

void vyre_scan_hs_free(hs_database_t *db)
{
	hs_free_database(db);
}

struct hs_arg {
	const struct job *j;
	unsigned id;
	hs_scratch_t *scratch;
	pthread_t thread;
};

static void *hs_worker(void *arg)
{
	const struct hs_arg *a = arg;
	const struct job *j = a->j;
	struct worker *me = &j->b->w[a->id];
	uint32_t first, n;
	struct ends e;
	struct records rs = {0};

	uint8_t *decoded = j->mode & SCAN_B64 ? malloc(j->item_bytes) : NULL;

	vyre_scan_share(j, a->id, &first, &n);
	if (ends_init(&e, j->item_bytes) || ((j->mode & SCAN_B64) && !decoded)) {
		vyre_scan_fail(me, "out of memory");
		free(e.map);
		free(decoded);
		return NULL;
	}
	if (n == 0)
		__atomic_store_n(&me->pass_done, 1, __ATOMIC_RELEASE);
	if (vyre_scan_ready_then_go(j->b, me) == 0)
		for (uint64_t k = 0; n > 0 && !vyre_scan_stopping(j->b); k++) {
			const uint64_t at = first + k % n;
			const uint8_t *item = j->data + at * j->item_bytes;

			if (decoded &&
			    vyre_scan_b64_decode(j->enc + at * j->enc_stride, decoded,
						 j->item_bytes) != (int64_t)j->item_bytes) {
				vyre_scan_fail(me, "base64 decode failed");
				break;
			}
			const uint8_t *text = decoded ? decoded : item;
			const int64_t c =
			    j->mode & SCAN_REPORT
				? hs_records(j->db, a->scratch, text, j->item_bytes, &rs)
				: hs_count(j->db, a->scratch, text, j->item_bytes, &e);

			if (c < 0) {
				vyre_scan_fail(me, "hs_scan failed");
				break;
			}
			vyre_scan_item_done(me, k, n, j->item_bytes, (uint64_t)c);
		}
	free(e.map);
	free(rs.r);
	free(decoded);
	return NULL;
}

int vyre_scan_hs_row(const struct vyre_bench_ctx *ctx, struct job *j, const char *row,
		     struct figures *f)
{
	struct hs_arg a[MAX_WORKERS];
	struct figures got;
	hs_scratch_t *proto = NULL;
	unsigned started = 0;
	int rc = -1;

	j->workers =
	    (unsigned)vyre_bench_cpus() < MAX_WORKERS ? (unsigned)vyre_bench_cpus() : MAX_WORKERS;
	j->b = vyre_bench_shared_alloc(sizeof(*j->b));
	if (!j->b || hs_alloc_scratch(j->db, &proto) != HS_SUCCESS) {
		fprintf(stderr, "scan: %s: no memory for the board or hs scratch\n", row);
		goto out;
	}
	for (; started < j->workers; started++) {
		a[started] = (struct hs_arg){.j = j, .id = started};
		if (hs_clone_scratch(proto, &a[started].scratch) != HS_SUCCESS ||
		    pthread_create(&a[started].thread, NULL, hs_worker, &a[started]) != 0) {
			hs_free_scratch(a[started].scratch);
			break;
		}
	}
	if (started == j->workers)
		rc = vyre_scan_run_window(ctx, j->b, j->workers, row, 0, &got);
	__atomic_store_n(&j->b->stop, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(a[i].thread, NULL);
		hs_free_scratch(a[i].scratch);
	}
	if (vyre_scan_report_failed(j->b, started, row) || started < j->workers)
		rc = -1;
	if (rc == 0)
		*f = got;
out:
	hs_free_scratch(proto);
	if (j->b)
		vyre_bench_shared_free(j->b, sizeof(*j->b));
	j->b = NULL;
	return rc;
}

struct slice {
	const hs_database_t *db;
	const uint8_t *data;
	uint64_t lo, hi; /* the ends this thread counts: (lo, hi] */
	hs_scratch_t *scratch;
	struct ends e;
	int64_t count;
	pthread_t thread;
};

static void *slice_scan(void *arg)
{
	struct slice *sl = arg;
	const uint64_t from = sl->lo > PATTERN_MAX - 1 ? sl->lo - (PATTERN_MAX - 1) : 0;

	sl->e.min_end = sl->lo - from;
	sl->count =
	    hs_count(sl->db, sl->scratch, sl->data + from, (uint32_t)(sl->hi - from), &sl->e);
	return NULL;
}

/* One whole scan over @n slices at once; the distinct ends, or -1. */
static int64_t sliced_count(struct slice *sl, unsigned n)
{
	int64_t total = 0;
	unsigned started = 0;

	for (; started < n; started++)
		if (pthread_create(&sl[started].thread, NULL, slice_scan, &sl[started]) != 0)
			break;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(sl[i].thread, NULL);
		total = total < 0 || sl[i].count < 0 ? -1 : total + sl[i].count;
	}
	return started == n ? total : -1;
}

int vyre_scan_hs_single(const struct vyre_bench_ctx *ctx, const hs_database_t *db,
			const uint8_t *data, uint32_t bytes, struct figures *f)
{
	const long cpus = vyre_bench_cpus();
	const unsigned n = cpus < 1 ? 1 : cpus > (long)MAX_WORKERS ? MAX_WORKERS : (unsigned)cpus;
	struct slice *sl = calloc(n, sizeof(*sl));
	uint64_t scans = 0, t0, t;
	int64_t c = 0;
	int rc = sl ? 0 : -1;

	for (unsigned i = 0; rc == 0 && i < n; i++) {
		sl[i] = (struct slice){.db = db,
				       .data = data,
				       .lo = (uint64_t)bytes * i / n,
				       .hi = (uint64_t)bytes * (i + 1) / n};
		if (ends_init(&sl[i].e, sl[i].hi - sl[i].lo + PATTERN_MAX) ||
		    hs_alloc_scratch(db, &sl[i].scratch) != HS_SUCCESS)
			rc = -1;
	}
	t0 = t = vyre_bench_now_ns();
	while (rc == 0 && c >= 0 &&
	       (scans == 0 || (t - t0 < ctx->seconds * 1e9 && t - t0 < ROW_CAP_NS))) {
		c = sliced_count(sl, n);
		scans++;
		t = vyre_bench_now_ns();
	}
	for (unsigned i = 0; sl && i < n; i++) {
		hs_free_scratch(sl[i].scratch);
		free(sl[i].e.map);
	}
	free(sl);
	if (rc || c < 0) {
		fprintf(stderr, "scan: single hyperscan: %s\n",
			rc ? "out of memory" : "hs_scan failed");
		return -1;
	}
	*f = (struct figures){(double)bytes * (double)scans / (double)(t - t0), (uint64_t)c, 1, -1};
	return 0;
}

#endif /* VYRE_HAVE_HS */
