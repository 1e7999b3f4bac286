/* SPDX-License-Identifier: MIT */
/*
 * The "dfa" suite: DFA_SCAN in the megakernel (gpu/mk_dfa.cuh) with its
 * input and table in device memory, against the device's memory bandwidth
 * measured in the same run.
 *
 *   hbm        a device-to-device copy, bytes read plus bytes written
 *   litN       the scan suite's literal sets of 10, 100 and 1000 patterns
 *              (identifiers from Debian's text, bench/bench_scan_data.c),
 *              compiled with vyre_dfa_compile, over that text tiled to size:
 *              one 64 MiB item, one 1 GiB item (split into parts and a
 *              join), and 16384 items of 4 KiB in one launch; the table
 *              trusted (a device buffer validated once: no validation pass)
 *              and, for 64 MiB and 4 KiB, validated by every item; at 64 MiB
 *              also with no dynamic shared memory (every table read from
 *              global memory) and with the most the device allows
 *   h2d        a pinned host-to-device copy of 256 MiB
 *   litN host  the same text in registered host memory (read over PCIe), the
 *              table trusted in device memory: one 1 GiB item, one 64 MiB
 *              item, 16384 items of 4 KiB; "host" is how the backend runs
 *              them (staged through shared memory, VYRE_MK_DFA_HOST_IN),
 *              "host direct" the same units without the flag (every thread
 *              reads its own chunk in place, as device input does)
 *
 * Rows are GB/s of scanned bytes (the median of repeated launch +
 * synchronize, lowering excluded) and their ratio to hbm (host rows: to
 * h2d). Every count is
 * checked against the sequential walk on the CPU, computed on threads of
 * its own while the GPU runs.
 */
#include <stdio.h>

#include "bench.h"

#ifdef VYRE_HAVE_CUDA
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench_scan_data.h"
#include "bench_scan_job.h"
#include "cuda_driver.h"
#include "cuda_peers.h"
#include "vyre/dfa.h"
#include "vyre/vyre.h"

#define DFA_SUITE   "dfa"
#define DFA_STR(x)  #x
#define DFA_XSTR(x) DFA_STR(x)
#define BIG	    (1024ull * MIB)
#define MID	    (64u * MIB)
#define SMALL	    4096u
#define N_SMALL	    (MID / SMALL)
#define N_SETS	    3u
#define TABLE_ROOM  (20u * MIB) /* a table's room in device memory (1000 literals: 6 MiB) */
#define MAX_REPS    41u

static const uint32_t set_sizes[N_SETS] = {10, 100, 1000};

struct set {
	uint8_t *table;
	uint32_t bytes, n;
	uint64_t table_off; /* in the device heap */
	/* the sequential walk's counts, from the reference thread */
	uint64_t want_mid, want_big, want_small;
	const uint8_t *text;
	pthread_t th;
	int started;
};

struct dfa_bench {
	struct vyre_bench_ctx *ctx;
	struct vyre_cuda_peers *p;
	const struct vyre_cuda_driver *d;
	CUdeviceptr heap;
	uint64_t heap_bytes, out_off;
	uint8_t *text;	      /* BIG bytes: the corpus tiled, registered (the host heap) */
	CUdeviceptr text_dev; /* its device address */
	int registered;
	struct set sets[N_SETS];
	struct vyre_exec_item *items;
	struct vyre_exec_result *results;
	uint32_t *order, group_end[1], launch_end[1];
	uint32_t smem_default, smem_max;
	double hbm, h2d;
	int failed;
};

/* The sequential walk of @len bytes from the start state. */
static uint64_t walk(const uint8_t *table, const uint8_t *in, uint64_t len)
{
	uint32_t n, s, hits = 0;
	uint64_t total = 0;

	memcpy(&n, table, 4);
	memcpy(&s, table + 4, 4);
	const uint32_t *accept = (const uint32_t *)(table + 8);
	const uint32_t *next = accept + (n + 31) / 32;
	for (uint64_t i = 0; i < len; i++) {
		s = next[(uint64_t)s * 256 + in[i]];
		hits += (accept[s / 32] >> (s % 32)) & 1u;
		if ((i & 0xfffffff) == 0xfffffff) {
			total += hits;
			hits = 0;
		}
	}
	return total + hits;
}

static void *reference(void *arg)
{
	struct set *s = arg;

	s->want_mid = walk(s->table, s->text, MID);
	s->want_small = 0;
	for (uint32_t i = 0; i < N_SMALL; i++)
		s->want_small += walk(s->table, s->text + (uint64_t)i * SMALL, SMALL);
	s->want_big = walk(s->table, s->text, BIG);
	return NULL;
}

/* ---- device memory ------------------------------------------------------------------ */

/* The copies the driver table does not carry, from the library it loaded. */
struct copies {
	__typeof__(cuMemcpyHtoD) *h2d;
	__typeof__(cuMemcpyDtoDAsync) *d2d;
	__typeof__(cuMemcpyHtoDAsync) *h2d_async;
};

static int load_copies(struct copies *cp)
{
	void *dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *h2d = dl ? dlsym(dl, DFA_XSTR(cuMemcpyHtoD)) : NULL;
	void *d2d = dl ? dlsym(dl, DFA_XSTR(cuMemcpyDtoDAsync)) : NULL;
	void *h2d_async = dl ? dlsym(dl, DFA_XSTR(cuMemcpyHtoDAsync)) : NULL;

	if (!h2d || !d2d || !h2d_async) {
		fprintf(stderr, "dfa: libcuda.so.1 lacks %s, %s or %s\n", DFA_XSTR(cuMemcpyHtoD),
			DFA_XSTR(cuMemcpyDtoDAsync), DFA_XSTR(cuMemcpyHtoDAsync));
		return -1;
	}
	memcpy(&cp->h2d, &h2d, sizeof(h2d));
	memcpy(&cp->d2d, &d2d, sizeof(d2d));
	memcpy(&cp->h2d_async, &h2d_async, sizeof(h2d_async));
	return 0;
}

static int cu_ok(const struct vyre_cuda_driver *d, const char *what, CUresult r)
{
	char why[256];

	if (r == CUDA_SUCCESS)
		return 0;
	vyre_cuda_error(d, why, sizeof(why), what, r);
	fprintf(stderr, "dfa: %s\n", why);
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * GB/s of a copy of 512 MiB into new device memory, read + written, from the
 * heap (device to device), or of 256 MiB from the registered text (host to
 * device) when @from_host.
 */
static int measure_copy(struct dfa_bench *b, const struct copies *cp, int from_host)
{
	const size_t bytes = (from_host ? 256u : 512u) * MIB;
	uint64_t ns[MAX_REPS];
	CUstream st;
	uint32_t reps = 0;
	CUdeviceptr dst;

	if (cu_ok(b->d, "cuMemAlloc(copy)", b->d->cuMemAlloc(&dst, bytes)))
		return -1;
	if (cu_ok(b->d, "cuStreamCreate", b->d->cuStreamCreate(&st, CU_STREAM_NON_BLOCKING))) {
		b->d->cuMemFree(dst);
		return -1;
	}
	for (uint64_t t0 = vyre_bench_now_ns(); reps < MAX_REPS;) {
		const uint64_t s = vyre_bench_now_ns();
		const CUresult r = from_host ? cp->h2d_async(dst, b->text, bytes, st)
					     : cp->d2d(dst, b->heap, bytes, st);
		if (cu_ok(b->d, from_host ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoDAsync", r) ||
		    cu_ok(b->d, "cuStreamSynchronize", b->d->cuStreamSynchronize(st)))
			break;
		ns[reps++] = vyre_bench_now_ns() - s;
		if (reps >= 5 && vyre_bench_now_ns() - t0 > b->ctx->seconds * 1e9)
			break;
	}
	b->d->cuStreamDestroy(st);
	b->d->cuMemFree(dst);
	if (reps < 2)
		return -1;
	qsort(ns + 1, reps - 1, sizeof(ns[0]), cmp_u64); /* the first one warms up */
	const double gbps =
	    (from_host ? 1.0 : 2.0) * (double)bytes / (double)ns[1 + (reps - 1) / 2];
	*(from_host ? &b->h2d : &b->hbm) = gbps;
	vyre_bench_report(b->ctx, DFA_SUITE, from_host ? "h2d copy" : "hbm d2d copy", "GB/s", gbps,
			  "GB/s");
	return 0;
}

/* ---- scans ------------------------------------------------------------------------------- */

/*
 * @n items of @bytes from the start of the text, back to back, with set @s's
 * table; the text in the device heap (0) or the host heap (1).
 */
static void build(struct dfa_bench *b, const struct set *s, uint32_t n, uint32_t bytes,
		  uint32_t in_heap)
{
	for (uint32_t i = 0; i < n; i++) {
		b->items[i] = (struct vyre_exec_item){.op = VYRE_OP_DFA_SCAN,
						      .in_heap = in_heap,
						      .in_off = (uint64_t)i * bytes,
						      .in_bytes = bytes,
						      .out_off = b->out_off + 4 * (uint64_t)i,
						      .out_bytes = 4,
						      .table_off = s->table_off,
						      .table_bytes = s->bytes};
		b->order[i] = i;
	}
	b->group_end[0] = n;
	b->launch_end[0] = 1;
}

/* Where a row's input lives. */
enum where { DEV, HOST, HOST_DIRECT };

/*
 * Scans n items of @bytes with set @s's table until --seconds (at least 3,
 * at most MAX_REPS times, the first a warm-up); the median's GB/s, or -1.
 * *count: the items' counts added up, checked by the caller. HOST_DIRECT
 * describes the host heap as device memory, so lowering leaves out
 * VYRE_MK_DFA_HOST_IN (the kernel reads it in place all the same).
 */
static double scan_rate(struct dfa_bench *b, const struct set *s, uint32_t n, uint32_t bytes,
			uint32_t smem, int trusted, enum where in, uint64_t *count)
{
	const struct vyre_exec_batch batch = {
	    b->items, n, {b->order, n, b->group_end, 1, b->launch_end, 1}, b->results};
	const struct vyre_cuda_heap heaps[2] = {
	    {b->heap, b->heap_bytes, 1, 1},
	    {b->text_dev, BIG, 1, in == HOST_DIRECT},
	};
	uint64_t ns[MAX_REPS];
	uint32_t reps = 0;

	build(b, s, n, bytes, in != DEV);
	for (uint64_t t0 = vyre_bench_now_ns(); reps < MAX_REPS;) {
		if (vyre_cuda_peer_launch_heaps(b->p, &batch, heaps, 2, smem, trusted, &ns[reps]) !=
		    0) {
			fprintf(stderr, "dfa: scan: %s\n", vyre_cuda_peers_error(b->p));
			return -1;
		}
		reps++;
		if (reps >= 3 && vyre_bench_now_ns() - t0 > b->ctx->seconds * 1e9)
			break;
	}
	*count = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (b->results[i].status != 0) {
			fprintf(stderr, "dfa: item %u: status %d\n", i, b->results[i].status);
			return -1;
		}
		*count += b->results[i].result;
	}
	qsort(ns + 1, reps - 1, sizeof(ns[0]), cmp_u64);
	return (double)n * bytes / (double)ns[1 + (reps - 1) / 2];
}

struct row {
	const char *name;
	uint32_t n, bytes;
	int trusted, smem; /* smem: 0 default, 1 none, 2 the most */
	enum where in;
};

static const struct row rows[] = {
    {"64MiB", 1, MID, 1, 0, DEV},
    {"64MiB validated", 1, MID, 0, 0, DEV},
    {"64MiB no-shared", 1, MID, 1, 1, DEV},
    {"64MiB max-shared", 1, MID, 1, 2, DEV},
    {"1GiB", 1, (uint32_t)BIG, 1, 0, DEV},
    {"4KiB x16384", N_SMALL, SMALL, 1, 0, DEV},
    {"4KiB x16384 validated", N_SMALL, SMALL, 0, 0, DEV},
    {"host 1GiB", 1, (uint32_t)BIG, 1, 0, HOST},
    {"host 64MiB", 1, MID, 1, 0, HOST},
    {"host 4KiB x16384", N_SMALL, SMALL, 1, 0, HOST},
    {"host direct 1GiB", 1, (uint32_t)BIG, 1, 0, HOST_DIRECT},
    {"host direct 64MiB", 1, MID, 1, 0, HOST_DIRECT},
    {"host direct 4KiB x16384", N_SMALL, SMALL, 1, 0, HOST_DIRECT},
};

static int set_rows(struct dfa_bench *b, struct set *s, uint32_t size, uint64_t *got)
{
	char name[96];

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const uint32_t smem = rows[r].smem == 0	  ? b->smem_default
				      : rows[r].smem == 1 ? 0
							  : b->smem_max;
		const int host = rows[r].in != DEV;
		const double gbps = scan_rate(b, s, rows[r].n, rows[r].bytes, smem, rows[r].trusted,
					      rows[r].in, &got[r]);
		if (gbps < 0)
			return -1;
		snprintf(name, sizeof(name), "lit%u %s", size, rows[r].name);
		vyre_bench_report(b->ctx, DFA_SUITE, name, "GB/s", gbps, "GB/s");
		snprintf(name, sizeof(name), "lit%u %s:%s", size, rows[r].name,
			 host ? "h2d" : "hbm");
		vyre_bench_report(b->ctx, DFA_SUITE, name, "GB/s", gbps / (host ? b->h2d : b->hbm),
				  "x");
	}
	return 0;
}

/* The counts of every row against the reference walks. */
static int check(const struct set *s, uint32_t size, const uint64_t *got)
{
	int bad = 0;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const uint64_t want = rows[r].n > 1	     ? s->want_small
				      : rows[r].bytes == MID ? s->want_mid
							     : s->want_big;
		if (got[r] != want) {
			fprintf(stderr, "dfa: lit%u %s: counted %llu, the sequential walk %llu\n",
				size, rows[r].name, (unsigned long long)got[r],
				(unsigned long long)want);
			bad = 1;
		}
	}
	return bad;
}

static void free_bench(struct dfa_bench *b)
{
	for (uint32_t i = 0; i < N_SETS; i++) {
		if (b->sets[i].started)
			pthread_join(b->sets[i].th, NULL);
		free(b->sets[i].table);
	}
	if (b->heap)
		b->d->cuMemFree(b->heap);
	if (b->registered)
		b->d->cuMemHostUnregister(b->text);
	vyre_cuda_peers_close(b->p);
	free(b->text);
	free(b->items);
	free(b->results);
	free(b->order);
	free(b);
}

/* The text, the tables and the device heap; the reference threads started. 1: skip. */
static int setup(struct dfa_bench *b, const struct copies *cp)
{
	struct corpus corp = {0};
	struct vyre_dfa_pattern pats[1000];

	if (vyre_scan_corpus_load(&corp) != 0 ||
	    vyre_scan_pick_patterns(corp.bytes, pats, 1000) < 1000) {
		fprintf(stderr, "dfa: skipped: too little text for 1000 patterns\n");
		free(corp.bytes);
		return 1;
	}
	b->text = aligned_alloc(4096, BIG);
	b->items = calloc(N_SMALL, sizeof(*b->items));
	b->results = calloc(N_SMALL, sizeof(*b->results));
	b->order = calloc(N_SMALL, sizeof(*b->order));
	if (!b->text || !b->items || !b->results || !b->order) {
		free(corp.bytes);
		return -1;
	}
	vyre_scan_tile(&corp, b->text, BIG);
	b->registered = !cu_ok(b->d, "cuMemHostRegister(text)",
			       b->d->cuMemHostRegister(b->text, BIG, CU_MEMHOSTREGISTER_DEVICEMAP));
	if (!b->registered || cu_ok(b->d, "cuMemHostGetDevicePointer(text)",
				    b->d->cuMemHostGetDevicePointer(&b->text_dev, b->text, 0))) {
		free(corp.bytes);
		return -1;
	}
	b->out_off = BIG + (uint64_t)N_SETS * TABLE_ROOM;
	b->heap_bytes = b->out_off + 4 * (uint64_t)N_SMALL;
	if (cu_ok(b->d, "cuMemAlloc(heap)", b->d->cuMemAlloc(&b->heap, b->heap_bytes)) ||
	    cu_ok(b->d, "cuMemcpyHtoD(text)", cp->h2d(b->heap, b->text, BIG))) {
		free(corp.bytes);
		return -1;
	}
	for (uint32_t i = 0; i < N_SETS; i++) {
		struct set *s = &b->sets[i];

		s->table_off = BIG + (uint64_t)i * TABLE_ROOM;
		s->text = b->text;
		if (vyre_dfa_compile(pats, set_sizes[i], VYRE_DFA_DEFAULT_MAX_STATES, &s->table,
				     &s->bytes, NULL) != 0 ||
		    s->bytes > TABLE_ROOM ||
		    cu_ok(b->d, "cuMemcpyHtoD(table)",
			  cp->h2d(b->heap + s->table_off, s->table, s->bytes))) {
			free(corp.bytes);
			return -1;
		}
		memcpy(&s->n, s->table, 4);
		fprintf(stderr, "dfa: lit%u: %u states, %u table bytes\n", set_sizes[i], s->n,
			s->bytes);
		s->started = pthread_create(&s->th, NULL, reference, s) == 0;
		if (!s->started) {
			free(corp.bytes);
			return -1;
		}
	}
	free(corp.bytes);
	return 0;
}

static int run_dfa(struct vyre_bench_ctx *ctx)
{
	struct dfa_bench *b = calloc(1, sizeof(*b));
	uint64_t got[N_SETS][sizeof(rows) / sizeof(rows[0])];
	struct copies cp;
	char why[512];
	int err;

	if (!vyre_cuda_backend) {
		fprintf(stderr, "dfa: skipped: %s\n", vyre_cuda_unavailable);
		free(b);
		return 0;
	}
	if (!b)
		return -1;
	b->ctx = ctx;
	err = vyre_cuda_peers_open(&b->p, 0, 4096, N_SMALL, why, sizeof(why));
	if (err) {
		/* no driver or no device is a skip; a GPU that fails is a failure */
		const int skip = err == VYRE_E_DEVICE &&
				 (strstr(why, "libcuda") || strstr(why, "no CUDA device") ||
				  strstr(why, "CUDA_ERROR_NO_DEVICE"));
		fprintf(stderr, "dfa: %s: %s\n", skip ? "skipped" : "failed", why);
		free(b);
		return skip ? 0 : -1;
	}
	b->d = vyre_cuda_driver_load(why, sizeof(why));
	vyre_cuda_peers_smem(b->p, &b->smem_default, &b->smem_max);
	fprintf(stderr, "dfa: dynamic shared memory %u bytes a block, at most %u\n",
		b->smem_default, b->smem_max);
	err = b->d && load_copies(&cp) == 0 ? setup(b, &cp) : -1;
	if (err) {
		free_bench(b);
		return err > 0 ? 0 : -1;
	}
	err = measure_copy(b, &cp, 0);
	if (!err)
		err = measure_copy(b, &cp, 1);
	for (uint32_t i = 0; i < N_SETS && !err; i++)
		err = set_rows(b, &b->sets[i], set_sizes[i], got[i]);
	for (uint32_t i = 0; i < N_SETS; i++) {
		if (b->sets[i].started)
			pthread_join(b->sets[i].th, NULL);
		b->sets[i].started = 0;
	}
	for (uint32_t i = 0; i < N_SETS && !err; i++)
		err = check(&b->sets[i], set_sizes[i], got[i]);
	if (!err)
		fprintf(stderr, "dfa: every count equals the sequential walk's\n");
	free_bench(b);
	return err ? -1 : 0;
}
#else
static int run_dfa(struct vyre_bench_ctx *ctx)
{
	(void)ctx;
	fprintf(stderr, "dfa: skipped: built without nvcc, so without the CUDA backend\n");
	return 0;
}
#endif

VYRE_BENCH_SUITE(dfa,
		 "DFA_SCAN in the megakernel from device and host memory: GB/s against the HBM "
		 "and h2d copies",
		 run_dfa)
