/* SPDX-License-Identifier: MIT */
/*
 * The memory budget over a group's working set (docs/design.md 7.4): a
 * read-only operand (a byte range of a buffer that no item of the group
 * writes) shared by many items of a group counts once, so a thousand scans
 * of one 10 MB DFA table fit a 64 MB budget in one group; distinct tables
 * still split by budget, an operand an item writes is charged as before,
 * and distinct ranges of one buffer count apiece.
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

#define MAX   1024u
#define SCANS 1000u
#define MB    (1024u * 1024u)

struct tb {
	uint32_t n;
	struct vyre_work_item items[MAX];
	struct vyre_exec_item exec[MAX];
	uint32_t domain[MAX], client[MAX], flags[MAX];
};

static struct tb b;

/* Buffer @h of the one domain lies at h * 64 MiB of its heap. */
static uint64_t off_of(uint32_t h)
{
	return (uint64_t)h << 26;
}

/* Append an item reading @in (@in_bytes) and table @table (@table_bytes), writing @out. */
static uint32_t add(uint32_t op, uint32_t in, uint32_t in_bytes, uint32_t out, uint32_t out_bytes,
		    uint32_t table, uint32_t table_bytes)
{
	uint32_t k = b.n++;

	b.items[k] = (struct vyre_work_item){op, in, out, table};
	b.exec[k] = (struct vyre_exec_item){
	    .op = op,
	    .in_off = off_of(in),
	    .in_bytes = in_bytes,
	    .out_off = off_of(out),
	    .out_bytes = out_bytes,
	    .table_off = off_of(table),
	    .table_bytes = table_bytes,
	};
	b.domain[k] = 1;
	b.client[k] = k % 16;
	b.flags[k] = 0;
	return k;
}

static struct vyre_planner *planner_with(uint64_t budget)
{
	struct vyre_planner_config cfg;
	struct vyre_planner *p;

	vyre_planner_config_default(&cfg);
	cfg.max_items = MAX;
	cfg.budget_bytes = budget;
	assert_int_equal(vyre_planner_create(&cfg, &p, NULL), 0);
	return p;
}

static struct vyre_plan plan_of(struct vyre_planner *p)
{
	struct vyre_plan_batch v = {b.n, b.items, b.exec, b.domain, b.client, b.flags, NULL};
	struct vyre_plan plan;
	struct vyre_plan_error e;

	assert_int_equal(vyre_planner_plan(p, &v, &plan, &e), 0);
	assert_int_equal(plan.accepted, b.n);
	return plan;
}

/* Items per group of @plan: at most @most, and every item in one group. */
static void assert_groups_at_most(const struct vyre_plan *plan, uint32_t most)
{
	for (uint32_t g = 0, start = 0; g < plan->exec.n_groups; start = plan->exec.group_end[g++])
		assert_true(plan->exec.group_end[g] - start <= most);
}

static void test_shared_table_counts_once(void **state)
{
	struct vyre_planner *p = planner_with(64ull * MB);
	struct vyre_plan plan;
	(void)state;

	/* 1000 scans of their own 4 KiB inputs into their own words, one 10 MB table. */
	b.n = 0;
	for (uint32_t k = 0; k < SCANS; k++)
		add(k % 2 ? VYRE_OP_DFA_SCAN_COUNTED : VYRE_OP_DFA_SCAN, 1 + k, 4096, 2001 + k, 4,
		    5000, 10 * MB);
	plan = plan_of(p);
	assert_int_equal(plan.stats.executed, SCANS);
	assert_int_equal(plan.stats.groups, 1);
	assert_int_equal(plan.stats.barriers, 0);
	assert_int_equal(plan.stats.launches, 1);
	assert_int_equal(plan.stats.oversized, 0);
	assert_int_equal(plan.stats.peak_group_bytes, 10ull * MB + SCANS * (4096 + 4));
	vyre_planner_destroy(p);

	/* BYTEMAP's 256-byte table: 1000 maps of 64 bytes fit 128000 + 256 bytes. */
	p = planner_with(SCANS * 128 + 256);
	b.n = 0;
	for (uint32_t k = 0; k < SCANS; k++)
		add(VYRE_OP_BYTEMAP, 1 + k, 64, 2001 + k, 64, 5000, 256);
	plan = plan_of(p);
	assert_int_equal(plan.stats.groups, 1);
	assert_int_equal(plan.stats.peak_group_bytes, SCANS * 128 + 256);
	/* One byte less: the last map opens a second group, which counts the table again. */
	vyre_planner_destroy(p);
	p = planner_with(SCANS * 128 + 255);
	plan = plan_of(p);
	assert_int_equal(plan.stats.groups, 2);
	assert_int_equal(plan.exec.group_end[0], SCANS - 1);
	assert_int_equal(plan.stats.peak_group_bytes, (SCANS - 1) * 128 + 256);
	vyre_planner_destroy(p);
}

static void test_distinct_tables_split_by_budget(void **state)
{
	struct vyre_planner *p = planner_with(64ull * MB);
	const uint64_t item = 10ull * MB + 4096 + 4;
	struct vyre_plan plan;
	(void)state;

	/* Each scan has a 10 MB table of its own: six fit 64 MB, not seven. */
	b.n = 0;
	for (uint32_t k = 0; k < SCANS; k++)
		add(VYRE_OP_DFA_SCAN, 1 + k, 4096, 2001 + k, 4, 5000 + k, 10 * MB);
	plan = plan_of(p);
	assert_int_equal(plan.stats.groups, (SCANS + 5) / 6);
	assert_int_equal(plan.stats.barriers, (SCANS + 5) / 6 - 1);
	assert_int_equal(plan.stats.peak_group_bytes, 6 * item);
	assert_int_equal(plan.stats.oversized, 0);
	assert_groups_at_most(&plan, 6);

	/* Two tables alternating: each counts once per group. */
	b.n = 0;
	for (uint32_t k = 0; k < SCANS; k++)
		add(VYRE_OP_DFA_SCAN, 1 + k, 4096, 2001 + k, 4, 5000 + k % 2, 10 * MB);
	plan = plan_of(p);
	assert_int_equal(plan.stats.groups, 1);
	assert_int_equal(plan.stats.peak_group_bytes, 20ull * MB + SCANS * (4096 + 4));

	/* So do two ranges of one buffer (a table of 10 MB at 0 and one at 10 MB)... */
	for (uint32_t k = 0; k < SCANS; k++)
		b.exec[k].table_off = off_of(5000) + (k % 2) * 10ull * MB;
	for (uint32_t k = 0; k < SCANS; k++)
		b.items[k].param = 5000;
	plan = plan_of(p);
	assert_int_equal(plan.stats.groups, 1);
	assert_int_equal(plan.stats.peak_group_bytes, 20ull * MB + SCANS * (4096 + 4));

	/* ...but never as one: 7 ranges of 10 MB of one buffer do not fit 64 MB. */
	for (uint32_t k = 0; k < SCANS; k++)
		b.exec[k].table_off = off_of(5000) + (k % 7) * 10ull * MB;
	plan = plan_of(p);
	assert_true(plan.stats.groups > 1);
	assert_true(plan.stats.peak_group_bytes <= 64ull * MB);
	assert_int_equal(plan.stats.oversized, 0);
	vyre_planner_destroy(p);
}

static void test_written_operands_charged_per_item(void **state)
{
	struct vyre_planner *p = planner_with(64ull * MB);
	struct vyre_plan plan;
	(void)state;

	/* A fill of the table, the scans, a fill again: the scans share one group between. */
	b.n = 0;
	add(VYRE_OP_FILL, 0, 0, 5000, 10 * MB, 0, 0);
	for (uint32_t k = 0; k < SCANS; k++)
		add(VYRE_OP_DFA_SCAN, 1 + k, 4096, 2001 + k, 4, 5000, 10 * MB);
	add(VYRE_OP_FILL, 0, 0, 5000, 10 * MB, 0, 0);
	b.items[b.n - 1].param = b.exec[b.n - 1].param = 1; /* not a repeat of the first */
	plan = plan_of(p);
	assert_int_equal(plan.stats.groups, 3);
	assert_int_equal(plan.exec.group_end[0], 1);
	assert_int_equal(plan.exec.group_end[1], 1 + SCANS);
	assert_int_equal(plan.stats.peak_group_bytes, 10ull * MB + SCANS * (4096 + 4));

	/* In place, the input is written: its 40 MB count as input and output, 80 MB. */
	b.n = 0;
	add(VYRE_OP_ADD, 7, 40 * MB, 7, 40 * MB, 0, 0);
	plan = plan_of(p);
	assert_int_equal(plan.stats.oversized, 1);
	assert_int_equal(plan.stats.peak_group_bytes, 80ull * MB);

	/* A table that is also the scan's input is one operand: 40 MB + 4. */
	b.n = 0;
	add(VYRE_OP_DFA_SCAN, 7, 40 * MB, 8, 4, 7, 40 * MB);
	plan = plan_of(p);
	assert_int_equal(plan.stats.oversized, 0);
	assert_int_equal(plan.stats.peak_group_bytes, 40ull * MB + 4);

	/* Scans of an input shared with a copy: the input counts once, each output apiece. */
	b.n = 0;
	for (uint32_t k = 0; k < 6; k++)
		add(VYRE_OP_COPY, 7, 10 * MB, 100 + k, 10 * MB, 0, 0);
	plan = plan_of(p);
	assert_int_equal(plan.stats.groups, 2);
	assert_int_equal(plan.exec.group_end[0], 5);
	assert_int_equal(plan.stats.peak_group_bytes, 60ull * MB);
	vyre_planner_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shared_table_counts_once),
	    cmocka_unit_test(test_distinct_tables_split_by_budget),
	    cmocka_unit_test(test_written_operands_charged_per_item),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
