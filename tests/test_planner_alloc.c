/* SPDX-License-Identifier: MIT */
/*
 * Zero allocations on the steady-state path: after one warm-up batch, a
 * planned run of 1M items (planning, the CPU backend's worker threads,
 * completion of deduplicated items) must not call malloc, calloc, realloc,
 * aligned_alloc, posix_memalign or free. The calls are counted by link-time
 * wrapping (-Wl,--wrap) of every object linked into this test.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_planner_world.h"

#define BATCH 4096u
#define ITEMS (1u << 20)

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

static atomic_int counting;
static atomic_ulong calls;

static void count(void)
{
	if (atomic_load_explicit(&counting, memory_order_relaxed))
		atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
}

void *__wrap_malloc(size_t size)
{
	count();
	return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	count();
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	count();
	return __real_realloc(p, size);
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
	count();
	return __real_aligned_alloc(align, size);
}

int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
	count();
	return __real_posix_memalign(p, align, size);
}

void __wrap_free(void *p)
{
	count();
	__real_free(p);
}

int main(void)
{
	struct vyre_planner_config cfg;
	struct vyre_planner *p;
	struct vyre_backend_config bcfg = {
	    .max_heaps = WORLD_DOMAINS,
	    .max_items = BATCH,
	    .cpu_threads = 2,
	    .cpu_parallel_min_bytes = 1,
	};
	struct vyre_backend *backend;
	struct planned_run stats = {0};
	struct world w;
	struct batch b;
	char why[128];
	uint64_t items = 0;
	unsigned long during;
	int rc = 0;

	vyre_planner_config_default(&cfg);
	cfg.max_items = BATCH;
	if (vyre_planner_create(&cfg, &p, NULL) || batch_alloc(&b, BATCH))
		return 1;
	if (vyre_cpu_backend.init(&backend, &bcfg, why, sizeof(why))) {
		printf("cpu backend: %s\n", why);
		return 1;
	}
	world_init(&w, 7);
	/* Warm-up: the first batch may touch lazily initialized library state. */
	batch_generate(&b, &w, 1, BATCH, &mix_heavy);
	world_run_oracle(&w, &b);
	rc = world_run_planned(&w, &b, p, cfg.budget_bytes, &vyre_cpu_backend, backend, NULL,
			       "warm-up");

	atomic_store(&counting, 1);
	for (uint64_t seed = 2; items < ITEMS && rc == 0; seed++) {
		batch_generate(&b, &w, seed, BATCH, seed % 2 ? &mix_heavy : &mix_light);
		world_run_oracle(&w, &b);
		rc = world_run_planned(&w, &b, p, cfg.budget_bytes, &vyre_cpu_backend, backend,
				       &stats, "1M run");
		if (rc == 0)
			rc = world_compare(&w, &b, "1M run");
		items += BATCH;
	}
	atomic_store(&counting, 0);
	during = atomic_load(&calls);

	printf("%llu items in %u plans (%u deduplicated): %lu allocator calls\n",
	       (unsigned long long)items, stats.plans, stats.deduped, during);
	if (during != 0)
		rc = -1;
	world_fini(&w);
	vyre_cpu_backend.shutdown(backend);
	vyre_planner_destroy(p);
	batch_free(&b);
	return rc ? 1 : 0;
}
