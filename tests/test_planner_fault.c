/* SPDX-License-Identifier: MIT */
/*
 * Fault injection: a batch is planned with its arena made to fail at the
 * Nth reservation, for every N the batch's plan reaches, once and from N on.
 * The planner must neither crash nor leak, and must still accept at least
 * one item per round; items left unaccepted are planned in the next round
 * exactly as vyred does, and every item must complete with the oracle's
 * result.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test_planner_world.h"

#define SEEDS	  300u
#define MAX_BATCH 64u

static int run_faults(uint64_t seed, struct vyre_planner *p, struct vyre_backend *backend,
		      struct batch *b, uint64_t *rounds)
{
	struct world w;
	struct vyre_plan plan;
	struct vyre_plan_batch whole;
	uint64_t rng = seed, before;
	uint32_t n = 1 + (uint32_t)(splitmix64(&rng) % MAX_BATCH), reached;
	char what[128];
	int rc = 0;

	world_init(&w, seed);
	batch_generate(b, &w, seed, n, &mix_heavy);
	world_run_oracle(&w, b);
	whole =
	    (struct vyre_plan_batch){b->n, b->items, b->exec, b->domain, b->client, b->flags, NULL};
	before = vyre_planner_arena(p)->reservations;
	if (vyre_planner_plan(p, &whole, &plan, NULL) || plan.stats.retries) {
		printf("seed %llu: the batch does not plan cleanly\n", (unsigned long long)seed);
		rc = -1;
	}
	reached = (uint32_t)(vyre_planner_arena(p)->reservations - before);
	for (uint32_t nth = 1; nth <= reached && rc == 0; nth++) {
		for (int sticky = 0; sticky < 2 && rc == 0; sticky++) {
			snprintf(what, sizeof(what), "seed %llu, reservation %u of %u failing%s",
				 (unsigned long long)seed, nth, reached,
				 sticky ? " and after" : "");
			vyre_planner_fail_reservation(p, nth, sticky);
			rc = world_run_planned(&w, b, p, 0, &vyre_cpu_backend, backend, NULL, what);
			vyre_planner_fail_reservation(p, 0, 0);
			if (rc == 0)
				rc = world_compare(&w, b, what);
			if (vyre_planner_arena(p)->high_water > vyre_planner_arena(p)->bytes) {
				printf("%s: the arena overran\n", what);
				rc = -1;
			}
			(*rounds)++;
		}
	}
	world_fini(&w);
	if (rc)
		printf("FAILED: seed %llu\n", (unsigned long long)seed);
	return rc;
}

int main(void)
{
	struct vyre_planner_config cfg;
	struct vyre_planner *p;
	struct vyre_backend_config bcfg = {
	    .max_heaps = WORLD_DOMAINS,
	    .max_items = MAX_BATCH,
	    .cpu_threads = 2,
	    .cpu_parallel_min_bytes = 1,
	};
	struct vyre_backend *backend;
	struct batch b;
	char why[128];
	uint64_t seeds = (uint64_t)SEEDS * test_scale(), rounds = 0;
	int rc = 0;

	vyre_planner_config_default(&cfg);
	cfg.max_items = MAX_BATCH;
	if (vyre_planner_create(&cfg, &p, NULL) || batch_alloc(&b, MAX_BATCH))
		return 1;
	if (vyre_cpu_backend.init(&backend, &bcfg, why, sizeof(why))) {
		printf("cpu backend: %s\n", why);
		return 1;
	}
	for (uint64_t seed = 0; seed < seeds && rc == 0; seed++)
		rc = run_faults(seed, p, backend, &b, &rounds);
	printf("%llu batches, %llu faulty runs\n", (unsigned long long)seeds,
	       (unsigned long long)rounds);
	vyre_cpu_backend.shutdown(backend);
	vyre_planner_destroy(p);
	batch_free(&b);
	return rc ? 1 : 0;
}
