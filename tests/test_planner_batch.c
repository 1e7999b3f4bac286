/* SPDX-License-Identifier: MIT */
/*
 * The batch planner on small batches whose plans are known: dependencies,
 * dedupe across clients and domains, fences, invalid items, the limits that
 * make it plan a shorter prefix, the progress guarantee, configuration
 * errors, and the CPU backend's handling of plans.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../planner/planner.h"

#define MAX 64u

struct tb {
	uint32_t n;
	struct vyre_work_item items[MAX];
	struct vyre_exec_item exec[MAX];
	uint32_t domain[MAX], client[MAX], flags[MAX];
	struct vyre_exec_result results[MAX];
};

static struct tb b;

static void reset(void)
{
	memset(&b, 0, sizeof(b));
}

/* Append an item of domain 1, client 1, touching 64-byte buffers. */
static uint32_t add(uint32_t op, uint32_t in, uint32_t out, uint32_t param)
{
	uint32_t k = b.n++;

	b.items[k] = (struct vyre_work_item){op, in, out, param};
	b.exec[k] = (struct vyre_exec_item){.op = op, .param = param};
	b.exec[k].in_bytes = in ? 64 : 0;
	b.exec[k].out_bytes = out ? 64 : 0;
	b.exec[k].table_bytes = (vyre_op_operands(op) & VYRE_OPERAND_TABLE) ? 256 : 0;
	b.domain[k] = 1;
	b.client[k] = 1;
	return k;
}

static struct vyre_plan_batch view(void)
{
	return (struct vyre_plan_batch){b.n, b.items, b.exec, b.domain, b.client, b.flags, NULL};
}

static struct vyre_planner *planner_with(uint32_t max_items, uint32_t max_clients,
					 uint32_t max_groups, uint32_t max_stages, uint64_t budget)
{
	struct vyre_planner_config cfg;
	struct vyre_planner *p;

	vyre_planner_config_default(&cfg);
	cfg.max_items = max_items;
	cfg.max_clients = max_clients;
	cfg.max_groups = max_groups;
	cfg.max_stages = max_stages;
	cfg.budget_bytes = budget;
	assert_int_equal(vyre_planner_create(&cfg, &p, NULL), 0);
	return p;
}

static struct vyre_planner *planner(void)
{
	return planner_with(MAX, MAX, MAX, MAX, 1u << 20);
}

static struct vyre_plan plan_of(struct vyre_planner *p)
{
	struct vyre_plan_batch v = view();
	struct vyre_plan plan;
	struct vyre_plan_error e;

	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	return plan;
}

/* Group of item k in the plan, or -1. */
static int group_of(const struct vyre_plan *p, uint32_t k)
{
	uint32_t g = 0;

	for (uint32_t pos = 0; pos < p->exec.n_order; pos++) {
		while (pos >= p->exec.group_end[g])
			g++;
		if (p->exec.order[pos] == k)
			return (int)g;
	}
	return -1;
}

static void test_dependencies(void **state)
{
	struct vyre_planner *p = planner();
	struct vyre_plan plan;
	(void)state;

	reset();
	add(VYRE_OP_FILL, 0, 1, 1);
	add(VYRE_OP_FILL, 0, 2, 1);
	add(VYRE_OP_FILL, 0, 3, 1);
	plan = plan_of(p);
	assert_int_equal(plan.exec.n_groups, 1);
	assert_int_equal(plan.stats.barriers, 0);
	assert_int_equal(plan.stats.dependencies, 0);
	assert_int_equal(plan.exec.n_launches, 1);

	/*
	 * RAW chain: three layers, fused into one launch. No transient buffer, so
	 * nothing is kept on chip (docs/design.md 7.6).
	 */
	reset();
	add(VYRE_OP_FILL, 0, 1, 1);
	add(VYRE_OP_COPY, 1, 2, 0);
	add(VYRE_OP_COPY, 2, 3, 0);
	plan = plan_of(p);
	assert_int_equal(plan.stats.layers, 3);
	assert_int_equal(plan.exec.n_groups, 3);
	assert_int_equal(plan.stats.barriers, 2);
	assert_int_equal(plan.exec.n_launches, 1);
	assert_int_equal(plan.stats.launches_avoided, 2);
	assert_int_equal(plan.stats.bytes_avoided, 0);

	/* WAR: the fill waits for the reader; WAW: the second fill waits for the first. */
	reset();
	add(VYRE_OP_SUM, 1, 2, 0);
	add(VYRE_OP_FILL, 0, 1, 5);
	add(VYRE_OP_FILL, 0, 1, 6);
	plan = plan_of(p);
	assert_int_equal(group_of(&plan, 0), 0);
	assert_int_equal(group_of(&plan, 1), 1);
	assert_int_equal(group_of(&plan, 2), 2);

	/* Readers of one buffer share a group; the DFA table is a read. */
	reset();
	add(VYRE_OP_SUM, 1, 2, 0);
	add(VYRE_OP_MAX, 1, 3, 0);
	add(VYRE_OP_DFA_SCAN, 4, 5, 1);
	add(VYRE_OP_COPY, 1, 6, 0);
	add(VYRE_OP_FILL, 0, 1, 0);
	plan = plan_of(p);
	assert_int_equal(plan.exec.n_groups, 2);
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(group_of(&plan, k), 0);
	assert_int_equal(group_of(&plan, 4), 1);

	/* In place: an item depends on the writer before it once, and orders the next. */
	reset();
	add(VYRE_OP_FILL, 0, 1, 1);
	add(VYRE_OP_ADD, 1, 1, 1);
	add(VYRE_OP_ADD, 1, 1, 1);
	plan = plan_of(p);
	assert_int_equal(plan.stats.deduped, 0);
	assert_int_equal(plan.exec.n_groups, 3);
	assert_int_equal(plan.stats.dependencies, 2);

	/* Domains scope handles: the same handle of another domain is another buffer. */
	reset();
	add(VYRE_OP_FILL, 0, 1, 1);
	add(VYRE_OP_SUM, 1, 2, 0);
	b.domain[1] = 2;
	add(VYRE_OP_FILL, 0, 1, 1);
	b.domain[2] = 2;
	plan = plan_of(p);
	assert_int_equal(group_of(&plan, 0), 0);
	assert_int_equal(group_of(&plan, 1), 0);
	assert_int_equal(group_of(&plan, 2), 1);
	assert_int_equal(plan.stats.deduped, 0);
	vyre_planner_destroy(p);
}

/*
 * The byte ops (docs/design.md 6.1) in whole plans: a BYTEMAP or
 * DFA_SCAN_COUNTED table is a read, so its writers before and after give
 * RAW and WAR edges; a decoder in place is never satisfied by its own
 * earlier copy, out of place it is.
 */
static void test_byte_ops(void **state)
{
	struct vyre_planner *p = planner();
	struct vyre_plan plan;
	(void)state;

	/*
	 * RAW: the map waits for the table's writer; WAR: the next writer waits
	 * for the map (and WAW for the first writer)
	 */
	reset();
	add(VYRE_OP_FILL, 0, 9, 0x41);
	add(VYRE_OP_BYTEMAP, 1, 2, 9);
	add(VYRE_OP_HEX_DECODE, 3, 9, 0);
	plan = plan_of(p);
	assert_int_equal(plan.exec.n_groups, 3);
	assert_int_equal(plan.stats.dependencies, 3);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(group_of(&plan, k), (int)k);

	/* the same for the counted scan's table; readers of the table share a group */
	reset();
	add(VYRE_OP_BASE64_DECODE, 1, 9, 0);
	add(VYRE_OP_DFA_SCAN_COUNTED, 2, 3, 9);
	add(VYRE_OP_BYTEMAP, 4, 5, 9);
	add(VYRE_OP_DFA_SCAN, 9, 6, 7);
	add(VYRE_OP_FILL, 0, 9, 0);
	plan = plan_of(p);
	assert_int_equal(plan.exec.n_groups, 3);
	assert_int_equal(group_of(&plan, 0), 0);
	for (uint32_t k = 1; k < 4; k++)
		assert_int_equal(group_of(&plan, k), 1);
	assert_int_equal(group_of(&plan, 4), 2);

	/* a decode -> map -> scan chain is three layers, one launch */
	reset();
	add(VYRE_OP_BASE64_DECODE, 1, 2, 0);
	add(VYRE_OP_BYTEMAP, 2, 3, 4);
	add(VYRE_OP_DFA_SCAN_COUNTED, 3, 5, 6);
	plan = plan_of(p);
	assert_int_equal(plan.stats.layers, 3);
	assert_int_equal(plan.exec.n_groups, 3);
	assert_int_equal(plan.exec.n_launches, 1);

	/* in place: each repeat runs, after the one before it */
	reset();
	add(VYRE_OP_BASE64_DECODE, 1, 1, 0);
	add(VYRE_OP_BASE64_DECODE, 1, 1, 0);
	add(VYRE_OP_HEX_DECODE, 2, 2, 0);
	add(VYRE_OP_HEX_DECODE, 2, 2, 0);
	add(VYRE_OP_BYTEMAP, 3, 3, 4);
	add(VYRE_OP_BYTEMAP, 3, 3, 4);
	add(VYRE_OP_BYTEMAP, 5, 6, 6); /* the table is the output */
	add(VYRE_OP_BYTEMAP, 5, 6, 6);
	plan = plan_of(p);
	assert_int_equal(plan.stats.deduped, 0);
	assert_int_equal(plan.exec.n_order, 8);
	for (uint32_t k = 0; k < 8; k += 2) {
		assert_int_equal(plan.dedup_from[k + 1], VYRE_PLAN_NONE);
		assert_true(group_of(&plan, k) < group_of(&plan, k + 1));
	}

	/* out of place the repeat is satisfied, until its input is rewritten */
	reset();
	add(VYRE_OP_BASE64_DECODE, 1, 2, 0);
	add(VYRE_OP_BASE64_DECODE, 1, 2, 0);
	add(VYRE_OP_HEX_DECODE, 7, 1, 0);
	add(VYRE_OP_BASE64_DECODE, 1, 2, 0);
	plan = plan_of(p);
	assert_int_equal(plan.dedup_from[1], 0);
	assert_int_equal(plan.dedup_from[3], VYRE_PLAN_NONE);
	assert_int_equal(plan.stats.deduped, 1);
	vyre_planner_destroy(p);
}

static void test_dedupe_across_clients(void **state)
{
	struct vyre_planner *p = planner();
	struct vyre_plan_batch v;
	struct vyre_plan plan;
	(void)state;

	reset();
	for (uint32_t c = 0; c < 3; c++) {
		uint32_t k = add(VYRE_OP_DFA_SCAN, 5, 6, 7);

		b.client[k] = 40 + c;
	}
	add(VYRE_OP_COPY, 6, 8, 0);
	b.client[3] = 41;
	plan = plan_of(p);
	assert_int_equal(plan.stats.deduped, 2);
	assert_int_equal(plan.dedup_from[0], VYRE_PLAN_NONE);
	assert_int_equal(plan.dedup_from[1], 0);
	assert_int_equal(plan.dedup_from[2], 0);
	assert_int_equal(plan.dedup_from[3], VYRE_PLAN_NONE);
	assert_int_equal(plan.exec.n_order, 2);
	/* The report names the clients: 41 and 42 repeat what 40 emitted. */
	assert_int_equal(plan.n_cross_arm, 2);
	assert_int_equal(plan.stats.cross_arm_redundant, 2);
	assert_int_equal(plan.cross_arm[0].early_client, 40);
	assert_int_equal(plan.cross_arm[0].late_client, 41);
	assert_int_equal(plan.cross_arm[0].late_op_index, 0);
	assert_int_equal(plan.cross_arm[1].late_client, 42);
	assert_int_equal(plan.cross_arm[1].domain, 1);

	/* Tables are emptied by generation: hundreds of plans later the answers are the same. */
	for (uint32_t round = 0; round < 600; round++) {
		struct vyre_plan again = plan_of(p);

		assert_int_equal(again.stats.deduped, 2);
		assert_int_equal(again.n_cross_arm, 2);
		assert_int_equal(again.exec.n_order, 2);
	}
	plan = plan_of(p);

	/* Completion copies the source's status and result. */
	b.results[0] = (struct vyre_exec_result){.status = 0, .result = 77};
	b.results[3] = (struct vyre_exec_result){.status = 0, .result = 0};
	v = view();
	vyre_plan_complete(&plan, &v, b.results);
	assert_int_equal(b.results[1].result, 77);
	assert_int_equal(b.results[2].result, 77);

	/* NODEDUPE runs but may be a source; FENCE runs too. */
	reset();
	add(VYRE_OP_COPY, 1, 2, 0);
	add(VYRE_OP_COPY, 1, 2, 0);
	b.flags[1] = VYRE_SQE_NODEDUPE;
	add(VYRE_OP_COPY, 1, 2, 0);
	add(VYRE_OP_COPY, 1, 2, 0);
	b.flags[3] = VYRE_SQE_FENCE;
	plan = plan_of(p);
	assert_int_equal(plan.dedup_from[1], VYRE_PLAN_NONE);
	assert_int_equal(plan.dedup_from[2], 1);
	assert_int_equal(plan.dedup_from[3], VYRE_PLAN_NONE);
	assert_int_equal(plan.stats.deduped, 1);

	/* An intervening write to the table breaks the match; the next repeat matches anew. */
	reset();
	add(VYRE_OP_DFA_SCAN, 5, 6, 7);
	add(VYRE_OP_XOR, 7, 7, 0);
	add(VYRE_OP_DFA_SCAN, 5, 6, 7);
	add(VYRE_OP_DFA_SCAN, 5, 6, 7);
	plan = plan_of(p);
	assert_int_equal(plan.dedup_from[2], VYRE_PLAN_NONE);
	assert_int_equal(plan.dedup_from[3], 2);
	vyre_planner_destroy(p);
}

static void test_fences_and_invalid_items(void **state)
{
	struct vyre_planner *p = planner();
	struct vyre_plan_batch v;
	struct vyre_plan plan;
	(void)state;

	reset();
	add(VYRE_OP_FILL, 0, 1, 1);
	add(VYRE_OP_FILL, 0, 2, 1);
	add(VYRE_OP_FILL, 0, 3, 1);
	b.client[1] = 9;
	b.flags[2] = VYRE_SQE_FENCE;
	add(VYRE_OP_FILL, 0, 4, 1);
	b.client[3] = 9;
	plan = plan_of(p);
	/* The fence waits for its own client's item, not for client 9's. */
	assert_int_equal(group_of(&plan, 0), 0);
	assert_int_equal(group_of(&plan, 1), 0);
	assert_int_equal(group_of(&plan, 2), 1);
	assert_int_equal(group_of(&plan, 3), 0);
	/* Its group starts a launch, so earlier completions can be posted first. */
	assert_int_equal(plan.exec.n_launches, 2);
	assert_int_equal(plan.exec.launch_end[0], 1);

	reset();
	add(VYRE_OP_FILL, 0, 1, 1);
	add(42, 1, 1, 1);
	b.flags[1] = VYRE_PLAN_F_INVALID;
	add(VYRE_OP_COPY, 1, 2, 0);
	plan = plan_of(p);
	assert_int_equal(plan.stats.invalid, 1);
	assert_int_equal(plan.exec.n_order, 2);
	assert_int_equal(group_of(&plan, 1), -1);
	b.results[1].status = 0;
	v = view();
	vyre_plan_complete(&plan, &v, b.results);
	assert_int_equal(b.results[1].status, VYRE_E_INVAL);
	vyre_planner_destroy(p);
}

static void assert_capacity_message(const struct vyre_plan_error *e, const char *needle)
{
	char msg[512];

	vyre_plan_error_format(e, msg, sizeof(msg));
	if (!strstr(msg, needle) || !strstr(msg, "Fix: "))
		fail_msg("unexpected message: %s", msg);
}

static void test_limits_plan_a_prefix(void **state)
{
	struct vyre_planner *p;
	struct vyre_plan_batch v;
	struct vyre_plan plan;
	struct vyre_plan_error e;
	(void)state;

	reset();
	for (uint32_t k = 0; k < 10; k++)
		add(VYRE_OP_FILL, 0, 1 + k, 1);
	p = planner_with(4, MAX, MAX, MAX, 1u << 20);
	plan = plan_of(p);
	assert_int_equal(plan.accepted, 4);
	assert_int_equal(plan.stats.items_in, 10);
	assert_int_equal(plan.stats.retries, 0);
	vyre_planner_destroy(p);

	/* Six dependent layers, two allowed: exactly the first two items fit. */
	reset();
	add(VYRE_OP_FILL, 0, 1, 1);
	for (uint32_t k = 1; k < 6; k++)
		add(VYRE_OP_COPY, k, k + 1, 0);
	p = planner_with(MAX, MAX, 2, MAX, 1u << 20);
	v = view();
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, 2);
	assert_int_equal(plan.stats.retries, 1);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_CAPACITY);
	assert_capacity_message(&e, "needs 6 barrier groups per plan but is configured for 2");
	vyre_planner_destroy(p);

	/* Three clients, two allowed: the plan stops before the third client's first item. */
	reset();
	for (uint32_t k = 0; k < 6; k++) {
		add(VYRE_OP_FILL, 0, 1 + k, 1);
		b.client[k] = k < 4 ? k % 2 : 2;
	}
	p = planner_with(MAX, 2, MAX, MAX, 1u << 20);
	v = view();
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, 4);
	assert_capacity_message(&e, "clients");
	vyre_planner_destroy(p);

	/* The memory budget splits a layer into stages; one stage allowed. */
	reset();
	for (uint32_t k = 0; k < 4; k++)
		add(VYRE_OP_COPY, 10 + k, 20 + k, 0);
	p = planner_with(MAX, MAX, MAX, 1, 256);
	v = view();
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, 2);
	assert_int_equal(plan.exec.n_groups, 1);
	vyre_planner_destroy(p);

	/* Stages that do not fit one launch's budget stay separate launches. */
	p = planner_with(MAX, MAX, MAX, MAX, 256);
	plan = plan_of(p);
	assert_int_equal(plan.accepted, 4);
	assert_int_equal(plan.exec.n_groups, 2);
	assert_int_equal(plan.exec.n_launches, 2);
	assert_int_equal(plan.stats.peak_group_bytes, 256);

	/* An item larger than the whole budget still runs: alone, counted as oversized. */
	b.exec[1].in_bytes = 4096;
	plan = plan_of(p);
	assert_int_equal(plan.stats.oversized, 1);
	assert_int_equal(plan.exec.n_groups, 3);
	assert_int_equal(group_of(&plan, 1), 1);
	vyre_planner_destroy(p);
}

/*
 * Thousands of handles found by index, then one hashed: the hash map must
 * make room for every id at once (it once doubled a single time and then
 * probed a full table forever).
 */
static void test_direct_handles_then_hashed(void **state)
{
	enum { N = 3000 };
	struct vyre_work_item *items = calloc(N + 2, sizeof(*items));
	uint32_t *domain = calloc(N + 2, sizeof(*domain));
	struct vyre_planner_config cfg;
	struct vyre_planner *p;
	struct vyre_plan plan;
	struct vyre_plan_batch v = {N + 2, items, NULL, domain, NULL, NULL, NULL};
	(void)state;

	assert_non_null(items);
	assert_non_null(domain);
	for (uint32_t k = 0; k < N; k++) {
		items[k] = (struct vyre_work_item){VYRE_OP_FILL, 0, 1 + k, 1};
		domain[k] = 1;
	}
	/* a handle beyond the table is hashed; then it is copied onto item 0's output */
	items[N] = (struct vyre_work_item){VYRE_OP_FILL, 0, 5000, 1};
	items[N + 1] = (struct vyre_work_item){VYRE_OP_COPY, 5000, 1, 0};
	domain[N] = domain[N + 1] = 1;
	vyre_planner_config_default(&cfg);
	cfg.max_items = cfg.max_groups = cfg.max_stages = N + 2;
	cfg.direct_handles = 4097;
	assert_int_equal(vyre_planner_create(&cfg, &p, NULL), 0);
	assert_int_equal(vyre_planner_plan(p, &v, &plan, NULL), 0);
	assert_int_equal(plan.accepted, N + 2);
	assert_int_equal(plan.exec.n_groups, 2);
	assert_int_equal(plan.exec.order[N + 1], N + 1);
	vyre_planner_destroy(p);
	free(items);
	free(domain);
}

static void assert_same_plan(const struct vyre_plan *x, const struct vyre_plan *y)
{
	assert_int_equal(x->accepted, y->accepted);
	assert_int_equal(x->exec.n_order, y->exec.n_order);
	assert_int_equal(x->exec.n_groups, y->exec.n_groups);
	assert_int_equal(x->exec.n_launches, y->exec.n_launches);
	assert_memory_equal(x->exec.order, y->exec.order, x->exec.n_order * sizeof(uint32_t));
	assert_memory_equal(x->exec.group_end, y->exec.group_end,
			    x->exec.n_groups * sizeof(uint32_t));
	assert_memory_equal(x->exec.launch_end, y->exec.launch_end,
			    x->exec.n_launches * sizeof(uint32_t));
	assert_memory_equal(x->dedup_from, y->dedup_from, x->accepted * sizeof(uint32_t));
	assert_int_equal(x->stats.dependencies, y->stats.dependencies);
	assert_int_equal(x->stats.layers, y->stats.layers);
	assert_int_equal(x->stats.deduped, y->stats.deduped);
}

/*
 * The direct table's ways (one per value of a domain's two low bits) over
 * seven domains, so that 1 and 5, 3 and 7 contend for a way, and handles
 * that alias an index (mask 7 over 6 indices): batch after batch on one
 * planner (ids of earlier batches stay in the table), the plans must be
 * those of a planner that hashes every handle.
 */
static void test_direct_ways_as_hashed(void **state)
{
	enum { N = 96, BATCHES = 200 };
	struct vyre_work_item items[N];
	uint32_t domain[N];
	struct vyre_planner_config cfg;
	struct vyre_planner *direct, *hashed;
	uint64_t seed = 12345;
	(void)state;

	vyre_planner_config_default(&cfg);
	cfg.max_items = N;
	cfg.direct_handles = 6;
	assert_int_equal(vyre_planner_create(&cfg, &direct, NULL), 0);
	cfg.direct_handles = 0;
	assert_int_equal(vyre_planner_create(&cfg, &hashed, NULL), 0);
	for (uint32_t batch = 0; batch < BATCHES; batch++) {
		const uint32_t n = 1 + batch % N;
		struct vyre_plan_batch v = {n, items, NULL, domain, NULL, NULL, NULL};
		struct vyre_plan pd, ph;

		for (uint32_t k = 0; k < n; k++) {
			static const uint32_t ops[] = {VYRE_OP_FILL, VYRE_OP_COPY, VYRE_OP_ADD};
			uint32_t r;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			r = (uint32_t)(seed >> 33);
			items[k] = (struct vyre_work_item){ops[r % 3], 1 + (r >> 2) % 12,
							   1 + (r >> 6) % 12, (r >> 10) % 3};
			domain[k] = 1 + (r >> 12) % 7;
		}
		assert_int_equal(vyre_planner_plan(direct, &v, &pd, NULL), 0);
		assert_int_equal(vyre_planner_plan(hashed, &v, &ph, NULL), 0);
		assert_same_plan(&pd, &ph);
	}
	vyre_planner_destroy(direct);
	vyre_planner_destroy(hashed);
}

static void test_progress_when_the_arena_fails(void **state)
{
	struct vyre_planner *p = planner();
	struct vyre_plan_batch v;
	struct vyre_plan plan;
	struct vyre_plan_error e;
	(void)state;

	reset();
	for (uint32_t k = 0; k < 8; k++)
		add(VYRE_OP_FILL, 0, 1 + k, 1);
	v = view();
	vyre_planner_fail_reservation(p, 1, 1);
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, 1);
	assert_int_equal(plan.exec.n_order, 1);
	assert_int_equal(plan.exec.order[0], 0);
	assert_int_equal(plan.exec.n_groups, 1);
	assert_int_equal(plan.exec.n_launches, 1);
	assert_int_equal(plan.dedup_from[0], VYRE_PLAN_NONE);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_RESERVE);
	/* An invalid lone item gets an empty plan. */
	b.flags[0] = VYRE_PLAN_F_INVALID;
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, 1);
	assert_int_equal(plan.exec.n_order, 0);
	assert_int_equal(plan.stats.invalid, 1);
	vyre_planner_fail_reservation(p, 0, 0);
	b.flags[0] = 0;

	/* One failure (the batch's arrays): the planner halves the batch and plans again. */
	vyre_planner_fail_reservation(p, 1, 0);
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, 4);
	assert_int_equal(plan.stats.retries, 1);

	/* Empty batches and missing arrays. */
	v.n = 0;
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, 0);
	assert_int_equal(plan.exec.n_order, 0);
	v = view();
	v.domain = NULL;
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), VYRE_E_INVAL);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_ARGUMENT);
	assert_capacity_message(&e, "domain ids");
	vyre_planner_destroy(p);
}

static void test_arena_sizing(void **state)
{
	struct vyre_planner_config cfg;
	struct vyre_planner *p;
	static struct vyre_work_item items[4096];
	static uint32_t domain[4096], client[4096], flags[4096];
	struct vyre_plan_batch v = {4096, items, NULL, domain, client, flags, NULL};
	struct vyre_plan plan;
	struct vyre_plan_error e;
	(void)state;

	/* The worst batch the arena is sized for: every item a new client, fences, chains. */
	for (uint32_t k = 0; k < 4096; k++) {
		items[k] = (struct vyre_work_item){VYRE_OP_DFA_SCAN, 1 + k % 7, 1 + (k * 5) % 11,
						   1 + (k * 3) % 13};
		domain[k] = 1;
		client[k] = k;
		flags[k] = k % 3 ? 0 : VYRE_SQE_FENCE;
	}
	vyre_planner_config_default(&cfg);
	cfg.max_clients = 4096;
	assert_int_equal(vyre_planner_create(&cfg, &p, &e), 0);
	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, 4096);
	assert_int_equal(plan.stats.retries, 0);
	assert_true(plan.stats.arena_used <= plan.stats.arena_bytes);
	assert_int_equal(plan.stats.arena_bytes, vyre_planner_arena_bytes(&cfg));
	vyre_planner_destroy(p);

	/* A smaller arena plans shorter prefixes, never zero items. */
	cfg.arena_bytes = vyre_planner_arena_bytes(&cfg) / 3 * 2;
	assert_int_equal(vyre_planner_create(&cfg, &p, &e), 0);
	for (uint32_t done = 0; done < 4096;) {
		struct vyre_plan_batch rest = {4096 - done,   items + done, NULL, domain + done,
					       client + done, flags + done, NULL};

		assert_int_equal(vyre_planner_plan(p, &rest, &plan, &e), 0);
		assert_true(plan.accepted >= 1);
		assert_true(done > 0 || plan.accepted < 4096);
		done += plan.accepted;
	}
	vyre_planner_destroy(p);
	/* Below the tables for max_items plus one item, the planner refuses to start. */
	cfg.arena_bytes = vyre_planner_arena_bytes(&cfg) / 10;
	assert_int_equal(vyre_planner_create(&cfg, &p, &e), VYRE_E_INVAL);
	assert_string_equal(e.field, "arena_bytes");
}

static void assert_config_error(struct vyre_planner_config *cfg, const char *field)
{
	struct vyre_planner *p = (struct vyre_planner *)&p;
	struct vyre_plan_error e;
	char msg[512];

	assert_int_equal(vyre_planner_create(cfg, &p, &e), VYRE_E_INVAL);
	assert_null(p);
	assert_int_equal(e.kind, VYRE_PLAN_ERR_CONFIG);
	assert_string_equal(e.field, field);
	vyre_plan_error_format(&e, msg, sizeof(msg));
	assert_non_null(strstr(msg, "Fix: "));
	vyre_planner_config_default(cfg);
}

static void test_config_errors(void **state)
{
	struct vyre_planner_config cfg;
	(void)state;

	vyre_planner_config_default(&cfg);
	cfg.max_items = 0;
	assert_config_error(&cfg, "max_items");
	cfg.max_items = (1u << 24) + 1;
	assert_config_error(&cfg, "max_items");
	cfg.max_clients = 0;
	assert_config_error(&cfg, "max_clients");
	cfg.max_groups = 0;
	assert_config_error(&cfg, "max_groups");
	cfg.max_stages = 0;
	assert_config_error(&cfg, "max_stages");
	cfg.budget_bytes = 0;
	assert_config_error(&cfg, "budget_bytes");
	cfg.resident_bytes = cfg.budget_bytes;
	assert_config_error(&cfg, "resident_bytes");
	cfg.arena_bytes = 64;
	assert_config_error(&cfg, "arena_bytes");
}

/* ------------------------------------------------------------ the CPU backend */

/* Run @eb in slot 0 and wait for it. */
static void run_slot0(struct vyre_backend *be, const struct vyre_exec_batch *eb)
{
	struct vyre_slot_done done = {.slot = 7, .status = 5};

	assert_int_equal(vyre_cpu_backend.submit(be, 0, eb), 0);
	assert_int_equal(vyre_cpu_backend.reap(be, &done, 1, -1), 1);
	assert_int_equal(done.slot, 0);
	assert_int_equal(done.status, 0);
}

static void test_cpu_backend_rejects_bad_plans(void **state)
{
	struct vyre_backend_config cfg = {.max_heaps = 1, .max_items = 8, .cpu_threads = 2};
	struct vyre_backend *be;
	static uint8_t heap[256];
	struct vyre_exec_item x = {.op = VYRE_OP_FILL, .param = 9, .out_bytes = 16};
	struct vyre_exec_result r = {.status = 5};
	uint32_t order[] = {0}, bad_order[] = {1}, group_end[] = {1}, short_end[] = {0};
	char why[128];
	(void)state;

	assert_int_equal(vyre_cpu_backend.init(&be, &cfg, why, sizeof(why)), 0);
	assert_int_equal(vyre_cpu_backend.register_heap(be, 0, heap, sizeof(heap)), 0);
	assert_int_equal(vyre_cpu_backend.register_heap(be, 1, heap, sizeof(heap)), VYRE_E_INVAL);
	struct vyre_exec_batch eb = {&x, 1, {bad_order, 1, group_end, 1, group_end, 1}, &r};
	assert_int_equal(vyre_cpu_backend.submit(be, 0, &eb), VYRE_E_INVAL);
	eb.plan.order = order;
	eb.plan.group_end = short_end;
	assert_int_equal(vyre_cpu_backend.submit(be, 0, &eb), VYRE_E_INVAL);
	eb.plan.group_end = group_end;
	/* max_inflight 0 means one slot. */
	assert_int_equal(vyre_cpu_backend.submit(be, 1, &eb), VYRE_E_INVAL);
	assert_int_equal(r.status, 5);
	assert_int_equal(heap[0], 0);
	/* Refused submits started nothing: the slot stays idle and nothing is reported. */
	assert_int_equal(vyre_cpu_backend.reap(be, &(struct vyre_slot_done){0}, 1, -1), 0);
	run_slot0(be, &eb);
	assert_int_equal(r.status, 0);
	assert_int_equal(heap[0], 9);
	/* An unregistered heap completes the item with VYRE_E_INVAL. */
	assert_int_equal(vyre_cpu_backend.unregister_heap(be, 0), 0);
	run_slot0(be, &eb);
	assert_int_equal(r.status, VYRE_E_INVAL);
	vyre_cpu_backend.shutdown(be);

	cfg.max_heaps = 0;
	assert_int_equal(vyre_cpu_backend.init(&be, &cfg, why, sizeof(why)), VYRE_E_INVAL);
	assert_non_null(strstr(why, "max_heaps"));
}

/* One wide group of large items, shared by the worker threads, equals the oracle. */
static void test_cpu_backend_parallel_group(void **state)
{
	enum { ITEMS = 48, WORDS = 4096 };
	struct vyre_backend_config cfg = {.max_heaps = 1, .max_items = ITEMS, .cpu_threads = 4};
	struct vyre_backend *be;
	static uint8_t heap[2][ITEMS * 2 * WORDS * 4];
	static struct vyre_exec_item x[ITEMS];
	static struct vyre_exec_result r[ITEMS], want[ITEMS];
	static uint32_t order[ITEMS];
	uint32_t group_end[] = {ITEMS};
	struct vyre_heap_view oracle_view = {heap[1], sizeof(heap[1])};
	char why[128];
	(void)state;

	for (uint32_t i = 0; i < sizeof(heap[0]); i++)
		heap[0][i] = heap[1][i] = (uint8_t)(i * 7 + i / 5);
	for (uint32_t k = 0; k < ITEMS; k++) {
		uint64_t base = (uint64_t)k * 2 * WORDS * 4;

		x[k] = (struct vyre_exec_item){.op = VYRE_OP_ADD + k % 5,
					       .param = k,
					       .in_bytes = WORDS * 4,
					       .out_bytes = WORDS * 4,
					       .in_off = base,
					       .out_off = base + WORDS * 4};
		order[k] = ITEMS - 1 - k;
	}
	vyre_exec_sequential(&oracle_view, x, ITEMS, want);
	assert_int_equal(vyre_cpu_backend.init(&be, &cfg, why, sizeof(why)), 0);
	assert_int_equal(vyre_cpu_backend.register_heap(be, 0, heap[0], sizeof(heap[0])), 0);
	struct vyre_exec_batch eb = {x, ITEMS, {order, ITEMS, group_end, 1, group_end, 1}, r};
	for (int round = 0; round < 20; round++)
		run_slot0(be, &eb);
	assert_memory_equal(heap[0], heap[1], sizeof(heap[0]));
	assert_memory_equal(r, want, sizeof(r));
	vyre_cpu_backend.shutdown(be);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dependencies),
	    cmocka_unit_test(test_byte_ops),
	    cmocka_unit_test(test_dedupe_across_clients),
	    cmocka_unit_test(test_fences_and_invalid_items),
	    cmocka_unit_test(test_limits_plan_a_prefix),
	    cmocka_unit_test(test_direct_handles_then_hashed),
	    cmocka_unit_test(test_direct_ways_as_hashed),
	    cmocka_unit_test(test_progress_when_the_arena_fails),
	    cmocka_unit_test(test_arena_sizing),
	    cmocka_unit_test(test_config_errors),
	    cmocka_unit_test(test_cpu_backend_rejects_bad_plans),
	    cmocka_unit_test(test_cpu_backend_parallel_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
