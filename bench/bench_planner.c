/* SPDX-License-Identifier: MIT */
/*
 * vyre-bench suite "planner": the cost of the whole plan (dedupe,
 * dependencies, barrier layering, frontier splitting, launch fusion and the
 * cross-arm report) per item at 16..65536 items with a low- and a
 * high-hazard mix, the allocator calls per batch (counted by wrapping
 * malloc and friends at link time, planner/build.mk), and what the planner
 * buys on a realistic mix.
 *
 * Mixes (items touch 64-byte buffers unless noted):
 *   low   every item reads a shared payload and writes its own output;
 *         2% repeats, 1% fences: one wide layer, little to dedupe.
 *   high  16 buffers per domain, 25% in-place, 30% repeats, 5% fences, 5%
 *         NODEDUPE, 5% statically invalid, tables rewritten: long chains.
 *   vyred-low/18, vyred-high/18: the two mixes in batches of 18 items (vyred's
 *         mean under load) on a planner set up like vyred's defaults (4096
 *         items, 256 clients, a 1 MiB handoff budget, no cross-arm report).
 *   scan  32 producers of one domain scan 64 shared 4 KiB payloads with one
 *         8-state DFA into a shared per-payload result word, copy the word
 *         to a private buffer and post-process it; a writer refreshes a
 *         payload 1% of the time and producers fence every 64 items.
 *
 * `fresh` rows (low/N, high/N and the vyred rows): the same mixes, but each plan
 * takes the next of a pool of distinct batches (other seeds, generated
 * before the clock starts, FRESH_ITEMS items in all and 2 batches at
 * least), so the branch predictor cannot learn the batch as it does when
 * one batch is planned over and over: the honest figure for vyred, whose
 * batches never repeat. The pool's batches are read from L3 or memory.
 *
 * VYRE_BENCH_PLANNER_ONLY=TEXT runs only the rows whose name holds TEXT
 * ("high/65536", "/18"), for perf record on one row.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../gpu/ops.h"
#include "../planner/planner.h"
#include "bench.h"

#define SUITE	  "planner"
#define MAX_ITEMS 65536u
/* Items of a fresh row's pool of batches: far more branches than a predictor holds. */
#define FRESH_ITEMS (2 * MAX_ITEMS)
/* vyred's --max-buffers + 1 by default: every handle the generators make is below it */
#define DIRECT_HANDLES 262145u

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
int __real_posix_memalign(void **p, size_t align, size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
void __wrap_free(void *p);

/* Every allocator call of the process, whoever makes it. */
static atomic_ulong alloc_calls;

void *__wrap_malloc(size_t size)
{
	atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
	return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
	return __real_realloc(p, size);
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
	atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
	return __real_aligned_alloc(align, size);
}

int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
	atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
	return __real_posix_memalign(p, align, size);
}

void __wrap_free(void *p)
{
	atomic_fetch_add_explicit(&alloc_calls, 1, memory_order_relaxed);
	__real_free(p);
}

struct bench_batch {
	uint32_t n;
	struct vyre_work_item *items;
	struct vyre_exec_item *exec;
	uint32_t *domain;
	uint32_t *client;
	uint32_t *flags;
};

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(rng_next(s) % n);
}

static void set_item(struct bench_batch *b, uint32_t k, uint32_t op, uint32_t in, uint32_t out,
		     uint32_t param, uint32_t bytes)
{
	int mask = vyre_op_operands(op);

	b->items[k] = (struct vyre_work_item){op, in, out, param};
	b->exec[k] = (struct vyre_exec_item){.op = op, .param = param};
	if (mask > 0 && (mask & VYRE_OPERAND_IN))
		b->exec[k].in_bytes = bytes;
	if (mask > 0 && (mask & VYRE_OPERAND_OUT))
		b->exec[k].out_bytes = bytes;
	if (mask > 0 && (mask & VYRE_OPERAND_TABLE))
		b->exec[k].table_bytes = (uint32_t)vyre_dfa_table_bytes(8);
}

static void repeat_item(struct bench_batch *b, uint32_t k, uint32_t j)
{
	b->items[k] = b->items[j];
	b->exec[k] = b->exec[j];
	b->domain[k] = b->domain[j];
}

static void gen_low(struct bench_batch *b, uint32_t n, uint64_t seed)
{
	b->n = n;
	for (uint32_t k = 0; k < n; k++) {
		b->domain[k] = 1 + k % 4;
		b->client[k] = k % 64;
		b->flags[k] = below(&seed, 100) < 1 ? VYRE_SQE_FENCE : 0;
		if (k && below(&seed, 100) < 2)
			repeat_item(b, k, below(&seed, k));
		else
			set_item(b, k, VYRE_OP_ADD + below(&seed, 5), 1 + below(&seed, 8), 100 + k,
				 below(&seed, 9), 64);
	}
}

/* The gpus suite's trivial load: one client FILLs its own buffers, one after the other. */
static void gen_trivial(struct bench_batch *b, uint32_t n)
{
	b->n = n;
	for (uint32_t k = 0; k < n; k++) {
		b->domain[k] = 1;
		b->client[k] = 0;
		b->flags[k] = 0;
		set_item(b, k, VYRE_OP_FILL, 0, 1 + k, k, 4);
	}
}

static void gen_high(struct bench_batch *b, uint32_t n, uint64_t seed)
{
	b->n = n;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t roll = below(&seed, 100), in = 1 + below(&seed, 16);

		b->domain[k] = 1 + below(&seed, 2);
		b->client[k] = below(&seed, 8);
		b->flags[k] = (roll < 5 ? VYRE_SQE_FENCE : 0) |
			      (below(&seed, 100) < 5 ? VYRE_SQE_NODEDUPE : 0);
		if (k && roll >= 70) {
			repeat_item(b, k, below(&seed, k));
		} else if (roll < 10) {
			set_item(b, k, VYRE_OP_DFA_SCAN, in, 1 + below(&seed, 16),
				 17 + below(&seed, 2), 64);
		} else if (roll < 15) {
			set_item(b, k, VYRE_OP_COPY, 19, 17 + below(&seed, 2), 0, 64);
		} else if (roll < 20) {
			set_item(b, k, 42, 0, 0, 0, 0);
			b->flags[k] |= VYRE_PLAN_F_INVALID;
		} else {
			uint32_t out = below(&seed, 4) == 0 ? in : 1 + below(&seed, 16);

			set_item(b, k, VYRE_OP_FILL + below(&seed, 7), in, out, below(&seed, 4),
				 64);
			if (b->items[k].op_handle == VYRE_OP_FILL)
				set_item(b, k, VYRE_OP_FILL, 0, out, below(&seed, 4), 64);
		}
	}
}

#define SCAN_PRODUCERS	32u
#define SCAN_PAYLOADS	64u
#define SCAN_TABLE	1000u
#define SCAN_RESULT(p)	(2000u + (p))
#define SCAN_PRIVATE(c) (3000u + (c))

static void gen_scan(struct bench_batch *b, uint32_t n, uint64_t seed)
{
	uint32_t next[SCAN_PRODUCERS] = {0}, k = 0;

	b->n = n;
	while (k < n) {
		uint32_t c = below(&seed, SCAN_PRODUCERS), p = below(&seed, SCAN_PAYLOADS);
		uint32_t steps[3][4] = {
		    {VYRE_OP_DFA_SCAN, 1 + p, SCAN_RESULT(p), SCAN_TABLE},
		    {VYRE_OP_COPY, SCAN_RESULT(p), SCAN_PRIVATE(c), 0},
		    {VYRE_OP_ADD, SCAN_PRIVATE(c), SCAN_PRIVATE(c), 1},
		};

		if (below(&seed, 100) == 0) {
			set_item(b, k, VYRE_OP_FILL, 0, 1 + p, below(&seed, 256), 4096);
			b->domain[k] = 1;
			b->client[k] = SCAN_PRODUCERS;
			b->flags[k++] = 0;
			continue;
		}
		for (uint32_t s = 0; s < 3 && k < n; s++, k++) {
			set_item(b, k, steps[s][0], steps[s][1], steps[s][2], steps[s][3],
				 s == 0 ? 4096 : 4);
			if (s == 0)
				b->exec[k].out_bytes = 4;
			b->domain[k] = 1;
			b->client[k] = c;
			b->flags[k] = ++next[c] % 64 == 0 ? VYRE_SQE_FENCE : 0;
		}
	}
}

/* The row is to run (VYRE_BENCH_PLANNER_ONLY). */
static int wanted(const char *name)
{
	const char *only = getenv("VYRE_BENCH_PLANNER_ONLY");

	return !only || strstr(name, only);
}

static struct vyre_plan_batch view(const struct bench_batch *b)
{
	return (struct vyre_plan_batch){b->n,	   b->items, b->exec, b->domain,
					b->client, b->flags, NULL};
}

/* Batch @i of @n items of a pool laid out one after the other in @b. */
static struct bench_batch pool_batch(const struct bench_batch *b, uint32_t n, uint32_t i)
{
	const size_t at = (size_t)i * n;

	return (struct bench_batch){
	    n, b->items + at, b->exec + at, b->domain + at, b->client + at, b->flags + at};
}

/* Batches a fresh row's pool holds for batches of @n items. */
static uint32_t pool_batches(uint32_t n)
{
	const uint32_t p = FRESH_ITEMS / 4 / n;

	return p > 2 ? p : 2;
}

typedef void gen_fn(struct bench_batch *b, uint32_t n, uint64_t seed);

/* @count batches of @n items of @gen into @pool, from seeds other than the plain rows'. */
static void gen_pool(struct bench_batch *pool, uint32_t n, uint32_t count, gen_fn *gen,
		     uint64_t seed)
{
	for (uint32_t i = 0; i < count; i++) {
		struct bench_batch one = pool_batch(pool, n, i);

		gen(&one, n, seed * 1000003u + 1000 + i);
	}
}

struct measured {
	double ns_per_item;	/* wall clock */
	double cpu_ns_per_item; /* this thread's CPU time */
	double allocs_per_batch;
	struct vyre_plan_stats last;
};

/* CPU time of this thread: planning is single-threaded, and the machines are shared. */
static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define ROUNDS 7u

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * ROUNDS rounds of --seconds / ROUNDS each; the medians of their per-item
 * costs are reported, so a round disturbed by another process on a shared
 * machine does not move the figure.
 */
static int measure_plans(struct vyre_bench_ctx *ctx, struct vyre_planner *p,
			 const struct bench_batch *b, uint32_t n_batches, struct measured *m)
{
	struct vyre_plan plan;
	double cpu[ROUNDS], wall[ROUNDS];
	uint64_t target = (uint64_t)(ctx->seconds * 1e9 / ROUNDS), batches = 0;
	const uint32_t n = b->n;
	uint32_t next = 0;
	unsigned long calls;

	/* Warm-up: touches the arena's pages once, and checks every batch fits. */
	for (uint32_t i = 0; i < n_batches; i++) {
		struct bench_batch one = pool_batch(b, n, i);
		struct vyre_plan_batch v = view(&one);

		if (vyre_planner_plan(p, &v, &plan, NULL) || plan.accepted != n)
			return -1;
	}
	calls = atomic_load(&alloc_calls);
	for (uint32_t r = 0; r < ROUNDS; r++) {
		uint64_t iters = 0, start = vyre_bench_now_ns(), cpu_start = thread_ns(), elapsed;

		do {
			for (int i = 0; i < 4; i++) {
				struct bench_batch one = pool_batch(b, n, next);
				struct vyre_plan_batch v = view(&one);

				next = next + 1 < n_batches ? next + 1 : 0;
				if (vyre_planner_plan(p, &v, &plan, NULL))
					return -1;
			}
			iters += 4;
			elapsed = vyre_bench_now_ns() - start;
		} while (elapsed < target);
		cpu[r] = (double)(thread_ns() - cpu_start) / ((double)iters * n);
		wall[r] = (double)elapsed / ((double)iters * n);
		batches += iters;
	}
	m->allocs_per_batch = (double)(atomic_load(&alloc_calls) - calls) / (double)batches;
	qsort(cpu, ROUNDS, sizeof(double), cmp_double);
	qsort(wall, ROUNDS, sizeof(double), cmp_double);
	m->cpu_ns_per_item = cpu[ROUNDS / 2];
	m->ns_per_item = wall[ROUNDS / 2];
	m->last = plan.stats;
	return 0;
}

/* The plain row's one batch of @gen (@seed), or a fresh row's pool: the batches to plan. */
static uint32_t gen_row(struct bench_batch *b, gen_fn *gen, uint32_t n, uint64_t seed, int fresh)
{
	if (!fresh) {
		gen(b, n, seed);
		return 1;
	}
	gen_pool(b, n, pool_batches(n), gen, seed);
	b->n = n;
	return pool_batches(n);
}

static void report_row(struct vyre_bench_ctx *ctx, const char *name, const struct measured *m)
{
	vyre_bench_report(ctx, SUITE, name, "plan_cpu", m->cpu_ns_per_item, "ns/item");
	vyre_bench_report(ctx, SUITE, name, "plan_wall", m->ns_per_item, "ns/item");
	vyre_bench_report(ctx, SUITE, name, "allocations", m->allocs_per_batch, "calls/batch");
	vyre_bench_report(ctx, SUITE, name, "groups", m->last.groups, "count");
}

static int bench_sizes(struct vyre_bench_ctx *ctx, struct bench_batch *b)
{
	static const uint32_t sizes[] = {16, 64, 256, 1024, 16384, 65536};
	/* the 64..65536 rows keep the seeds they had before the 16 and 256 rows came */
	static const uint64_t seeds[] = {5, 1, 6, 2, 3, 4};
	static const char *mix_names[] = {"low", "high"};
	static gen_fn *const gens[] = {gen_low, gen_high};
	uint32_t n_sizes = ctx->quick ? 4 : 6;

	for (uint32_t s = 0; s < n_sizes; s++) {
		struct vyre_planner_config cfg;
		struct vyre_planner *p;

		vyre_planner_config_default(&cfg);
		cfg.max_items = sizes[s];
		cfg.max_clients = sizes[s];
		cfg.max_groups = sizes[s];
		cfg.max_stages = sizes[s];
		/* as vyred sets it up: handles index a table of the loop's buffers */
		cfg.direct_handles = DIRECT_HANDLES;
		if (vyre_planner_create(&cfg, &p, NULL))
			return -1;
		for (uint32_t row = 0; row < 4; row++) {
			const uint32_t mix = row & 1, fresh = row >> 1;
			struct measured m;
			char name[64];
			uint32_t n_batches;

			snprintf(name, sizeof(name), "%s/%u%s", mix_names[mix], sizes[s],
				 fresh ? " fresh" : "");
			if (!wanted(name))
				continue;
			n_batches = gen_row(b, gens[mix], sizes[s], seeds[s], fresh);
			if (measure_plans(ctx, p, b, n_batches, &m)) {
				vyre_planner_destroy(p);
				return -1;
			}
			report_row(ctx, name, &m);
			vyre_bench_report(ctx, SUITE, name, "deduped", m.last.deduped, "items");
		}
		vyre_planner_destroy(p);
	}
	return 0;
}

/*
 * Batches of 18 items (vyred's mean under load, issue 23) planned by a
 * planner set up as vyred sets it up by default: --max-batch 4096,
 * --max-clients 256, the CPU backend's 1 MiB handoff budget, no cross-arm
 * report (plan_stage.c).
 */
static int bench_vyred_config(struct vyre_bench_ctx *ctx, struct bench_batch *b)
{
	static const char *names[] = {"vyred-low/18", "vyred-high/18", "vyred-low/18 fresh",
				      "vyred-high/18 fresh"};
	static gen_fn *const gens[] = {gen_low, gen_high};
	struct vyre_planner_config cfg;
	struct vyre_planner *p;

	vyre_planner_config_default(&cfg);
	cfg.max_clients = 256;
	cfg.handoff_bytes = 1u << 20;
	cfg.direct_handles = DIRECT_HANDLES;
	cfg.cross_arm_report = 0;
	if (vyre_planner_create(&cfg, &p, NULL))
		return -1;
	for (uint32_t row = 0; row < 4; row++) {
		struct measured m;
		uint32_t n_batches;

		if (!wanted(names[row]))
			continue;
		n_batches = gen_row(b, gens[row & 1], 18, 8, row >> 1);
		if (measure_plans(ctx, p, b, n_batches, &m)) {
			vyre_planner_destroy(p);
			return -1;
		}
		report_row(ctx, names[row], &m);
	}
	vyre_planner_destroy(p);
	return 0;
}

/*
 * trivial/65536: the gpus suite's batches (65536 FILLs of one client into
 * buffers of their own, vyred --max-batch 65536), looked up by handle index
 * as vyred does and hashed (`hashed` rows) as before issue 23.
 */
static int bench_trivial(struct vyre_bench_ctx *ctx, struct bench_batch *b)
{
	const uint32_t n = ctx->quick ? 4096 : MAX_ITEMS;

	gen_trivial(b, n);
	for (int direct = 1; direct >= 0; direct--) {
		struct vyre_planner_config cfg;
		struct vyre_planner *p;
		struct measured m;
		char name[64];

		snprintf(name, sizeof(name), "trivial/%u%s", n, direct ? "" : " hashed");
		if (!wanted(name))
			continue;
		vyre_planner_config_default(&cfg);
		cfg.max_items = cfg.max_clients = cfg.max_groups = cfg.max_stages = n;
		cfg.direct_handles = direct ? DIRECT_HANDLES : 0;
		if (vyre_planner_create(&cfg, &p, NULL))
			return -1;
		if (measure_plans(ctx, p, b, 1, &m)) {
			vyre_planner_destroy(p);
			return -1;
		}
		vyre_bench_report(ctx, SUITE, name, "plan_cpu", m.cpu_ns_per_item, "ns/item");
		vyre_bench_report(ctx, SUITE, name, "plan_wall", m.ns_per_item, "ns/item");
		vyre_bench_report(ctx, SUITE, name, "groups", m.last.groups, "count");
		vyre_planner_destroy(p);
	}
	return 0;
}

static int bench_scan_mix(struct vyre_bench_ctx *ctx, struct bench_batch *b)
{
	struct vyre_planner_config cfg;
	struct vyre_planner *p;
	struct measured m;
	const char *name = "scan/4096";

	if (!wanted(name))
		return 0;
	vyre_planner_config_default(&cfg);
	gen_scan(b, 4096, 7);
	if (vyre_planner_create(&cfg, &p, NULL))
		return -1;
	if (measure_plans(ctx, p, b, 1, &m)) {
		vyre_planner_destroy(p);
		return -1;
	}
	vyre_planner_destroy(p);
	vyre_bench_report(ctx, SUITE, name, "plan_cpu", m.cpu_ns_per_item, "ns/item");
	vyre_bench_report(ctx, SUITE, name, "plan_wall", m.ns_per_item, "ns/item");
	vyre_bench_report(ctx, SUITE, name, "items", m.last.items_in, "items");
	vyre_bench_report(ctx, SUITE, name, "deduped", m.last.deduped, "items");
	vyre_bench_report(ctx, SUITE, name, "executed", m.last.executed, "items");
	vyre_bench_report(ctx, SUITE, name, "cross_arm_redundant", m.last.cross_arm_redundant,
			  "items");
	vyre_bench_report(ctx, SUITE, name, "groups", m.last.groups, "count");
	vyre_bench_report(ctx, SUITE, name, "launches", m.last.launches, "count");
	vyre_bench_report(ctx, SUITE, name, "launches_avoided", m.last.launches_avoided, "count");
	vyre_bench_report(ctx, SUITE, name, "bytes_avoided", (double)m.last.bytes_avoided, "bytes");
	vyre_bench_report(ctx, SUITE, name, "launches_vs_one_per_item",
			  (double)m.last.items_in / (m.last.launches ? m.last.launches : 1), "x");
	vyre_bench_report(ctx, SUITE, name, "launches_vs_one_per_group",
			  (double)m.last.groups / (m.last.launches ? m.last.launches : 1), "x");
	return 0;
}

static int bench_planner(struct vyre_bench_ctx *ctx)
{
	struct bench_batch b = {0};
	int rc = -1;

	b.items = calloc(FRESH_ITEMS, sizeof(*b.items));
	b.exec = calloc(FRESH_ITEMS, sizeof(*b.exec));
	b.domain = calloc(FRESH_ITEMS, sizeof(*b.domain));
	b.client = calloc(FRESH_ITEMS, sizeof(*b.client));
	b.flags = calloc(FRESH_ITEMS, sizeof(*b.flags));
	if (b.items && b.exec && b.domain && b.client && b.flags)
		rc = bench_sizes(ctx, &b) || bench_vyred_config(ctx, &b) ||
			     bench_trivial(ctx, &b) || bench_scan_mix(ctx, &b)
			 ? -1
			 : 0;
	free(b.items);
	free(b.exec);
	free(b.domain);
	free(b.client);
	free(b.flags);
	return rc;
}

VYRE_BENCH_SUITE(planner,
		 "whole plan ns/item at 16..65536 items, allocations per batch, "
		 "what dedupe and fusion save on a scan mix",
		 bench_planner)
