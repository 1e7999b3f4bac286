/* SPDX-License-Identifier: MIT */
/*
 * Differential test: seeded random batches with heavy hazards (few buffers
 * shared by many items, in-place ops, repeats before and after intervening
 * writes, DFA tables rewritten between scans, fences, NODEDUPE, invalid
 * items, two domains whose handles alias, byte ops over valid and malformed
 * counted buffers and decode -> map -> scan chains) are planned, executed on the CPU
 * backend's worker threads with deduplicated results copied, and compared
 * with the sequential oracle: buffers, statuses and results must be equal.
 * Every plan is also checked for the planner's promises (groups free of
 * hazards, fences after their client's items, dedupe only where allowed,
 * chains in order). A fifth of the batches are chains, many through a
 * transient buffer that the planner hands over on chip (docs/design.md 7.6)
 * and the CPU backend keeps in its scratch, some failing as they run: the
 * oracle cancels the rest of such a chain (docs/design.md 6.3). A third of
 * the batches name byte ranges of their buffers (docs/design.md 6.6) that
 * overlap, abut and miss each other, with the hazards per range (7.2).
 *
 * VYRE_TEST_SCALE=N runs N times as many batches; VYRE_TEST_SEED=S replays
 * the one batch a failure printed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test_planner_world.h"

#define BATCHES	  10000u
#define MAX_BATCH 96u

/* Items with byte ranges (VYRE_SQE_RANGE) over every batch. */
static uint64_t ranged_items;

/* Outcomes of the byte ops in the oracle: each must both succeed and fail. */
static uint32_t byte_ok[VYRE_OP_COUNT], byte_inval[VYRE_OP_COUNT];

static void tally_byte_ops(const struct batch *b)
{
	for (uint32_t k = 0; k < b->n; k++) {
		const uint32_t op = b->exec[k].op;

		if (op >= VYRE_OP_BASE64_DECODE && op < VYRE_OP_COUNT)
			(b->expect[k].status == 0 ? byte_ok : byte_inval)[op]++;
	}
}

struct setup {
	const char *name;
	struct vyre_planner *planner;
	uint64_t group_budget; /* budget_bytes - resident_bytes */
};

static int run_seed(uint64_t seed, struct setup *setups, uint32_t n_setups,
		    struct vyre_backend *backend, struct batch *b, struct planned_run *stats)
{
	struct world w;
	char what[96];
	uint64_t rng = seed;
	uint32_t n = 1 + (uint32_t)(splitmix64(&rng) % MAX_BATCH);
	const uint64_t roll = splitmix64(&rng) % 5;
	const struct batch_mix *mix = roll == 0	  ? &mix_light
				      : roll == 1 ? &mix_chains
				      : roll == 2 ? &mix_tables
						  : &mix_heavy;
	struct setup *s = &setups[seed % n_setups];
	/* a third of the batches name byte ranges of their buffers (docs/design.md 6.6) */
	struct batch_mix ranged = *mix;
	int rc;

	if (splitmix64(&rng) % 3 == 0) {
		ranged.range_pct = 60;
		mix = &ranged;
	}
	/* a quarter of the batches scan for reports, mostly continuing streams (6.8) */
	if (splitmix64(&rng) % 4 == 0) {
		ranged.report_pct = 30;
		mix = &ranged;
	}
	world_init(&w, seed);
	batch_generate(b, &w, seed, n, mix);
	for (uint32_t k = 0; k < n; k++)
		ranged_items += (b->flags[k] & VYRE_SQE_RANGE) != 0;
	world_run_oracle(&w, b);
	tally_byte_ops(b);
	snprintf(what, sizeof(what), "seed %llu (%s planner, %u items)", (unsigned long long)seed,
		 s->name, n);
	rc = world_run_planned(&w, b, s->planner, s->group_budget, &vyre_cpu_backend, backend,
			       stats, what);
	if (rc == 0)
		rc = world_compare(&w, b, what);
	world_fini(&w);
	if (rc)
		printf("FAILED: replay with VYRE_TEST_SEED=%llu\n", (unsigned long long)seed);
	return rc;
}

int main(void)
{
	struct vyre_planner_config def, tight, shared;
	struct setup setups[4] = {
	    {"default", NULL, 0}, {"tight", NULL, 0}, {"no-report", NULL, 0}, {"shared", NULL, 0}};
	struct vyre_backend_config bcfg = {
	    .max_heaps = WORLD_DOMAINS,
	    .max_items = 4096,
	    .cpu_threads = 2,
	    .cpu_parallel_min_bytes = 1,
	};
	struct vyre_backend *backend;
	struct planned_run stats = {0};
	struct batch b;
	char why[128];
	const char *replay = getenv("VYRE_TEST_SEED");
	uint64_t batches = (uint64_t)BATCHES * test_scale(), first = 0;
	int rc = 0;

	vyre_planner_config_default(&def);
	def.handoff_bytes = 1u << 20;
	/*
	 * Handles looked up by index (vyred's setup), where the world's handles
	 * share indices within and across domains: the direct table, its
	 * hashed fallback and their mix must give the plans' outcomes exactly.
	 */
	def.direct_handles = 5;
	tight = def;
	tight.direct_handles = 0;
	tight.handoff_bytes = 8;
	tight.max_items = 24;
	tight.max_clients = 3;
	tight.max_groups = 4;
	tight.max_stages = 6;
	tight.budget_bytes = 2048 + 64;
	tight.resident_bytes = 64;
	/* a budget of one or two DFA tables and some buffers: groups share tables (7.4) */
	shared = def;
	shared.budget_bytes = 4096;
	shared.direct_handles = 1u << 12;
	if (vyre_planner_create(&def, &setups[0].planner, NULL) ||
	    vyre_planner_create(&tight, &setups[1].planner, NULL) ||
	    vyre_planner_create(&shared, &setups[3].planner, NULL))
		return 1;
	setups[0].group_budget = def.budget_bytes - def.resident_bytes;
	setups[1].group_budget = tight.budget_bytes - tight.resident_bytes;
	setups[3].group_budget = shared.budget_bytes - shared.resident_bytes;
	def.cross_arm_report = 0;
	def.max_items = MAX_BATCH / 2;
	def.direct_handles = 0;
	setups[2].group_budget = def.budget_bytes - def.resident_bytes;
	if (vyre_planner_create(&def, &setups[2].planner, NULL) || batch_alloc(&b, MAX_BATCH))
		return 1;
	if (vyre_cpu_backend.init(&backend, &bcfg, why, sizeof(why))) {
		printf("cpu backend: %s\n", why);
		return 1;
	}
	if (replay) {
		first = strtoull(replay, NULL, 10);
		batches = 1;
	}
	for (uint64_t seed = first; seed < first + batches && rc == 0; seed++)
		rc = run_seed(seed, setups, 4, backend, &b, &stats);

	printf("%llu batches, %u plans (%u shorter than offered, %u retries, %u first chains "
	       "one by one), %u items deduplicated, %u groups (%u with parallel items, %u within "
	       "the budget by shared operands), %u launches, %u links kept on chip\n",
	       (unsigned long long)batches, stats.plans, stats.shrunk, stats.retries, stats.serial,
	       stats.deduped, stats.groups, stats.parallel, stats.shared, stats.launches,
	       stats.handoffs);
	printf("%llu items with byte ranges\n", (unsigned long long)ranged_items);
	if (rc == 0 && !replay &&
	    (!stats.deduped || !stats.shrunk || !stats.parallel || !stats.handoffs ||
	     !stats.serial || !stats.shared || !ranged_items)) {
		printf("the batches did not exercise dedupe, prefixes, parallel groups, chains, "
		       "handoffs and shared operands\n");
		rc = 1;
	}
	for (uint32_t op = VYRE_OP_BASE64_DECODE; op < VYRE_OP_COUNT; op++) {
		printf("op %u: %u ok, %u E_INVAL\n", op, byte_ok[op], byte_inval[op]);
		if (rc == 0 && !replay && (!byte_ok[op] || !byte_inval[op])) {
			printf("op %u did not both succeed and fail\n", op);
			rc = 1;
		}
	}
	vyre_cpu_backend.shutdown(backend);
	for (uint32_t i = 0; i < 4; i++)
		vyre_planner_destroy(setups[i].planner);
	batch_free(&b);
	return rc ? 1 : 0;
}
