/* SPDX-License-Identifier: MIT */
/*
 * test_disjoint_budget - what vyred's own plan of a disjoint batch
 * (tools/vyred/disjoint.c) charges against the group budget: every item's
 * input and output, and a table read by many items once, as the planner
 * charges it (docs/design.md 7). Also the cases that must still go to the
 * planner: a table some item writes, a table alone over the budget, and
 * tables counted again after the stamps wrap.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../gpu/ops.h"
#include "../tools/vyred/disjoint.h"
#include "vyre/vyre.h"

#define TEST_NAME "test_disjoint_budget"
#include "test_check.h"

#define N      300u
#define TABLE  (1u << 20)
#define ITEM   4096u
#define BUDGET (16ull << 20)

static struct vyre_work_item items[N + 1];
static struct vyre_exec_item exec[N + 1];
static int32_t status[N + 1];
static uint32_t flags[N + 1];
static uint32_t order[N + 1];

/* Item @i: a DFA_SCAN of input 1 + i into output 1000 + i with table @table. */
static void scan(uint32_t i, uint32_t table)
{
	items[i] = (struct vyre_work_item){VYRE_OP_DFA_SCAN, 1 + i, 1000 + i, table};
	exec[i] = (struct vyre_exec_item){
	    .op = VYRE_OP_DFA_SCAN, .in_bytes = ITEM, .out_bytes = 4, .table_bytes = TABLE};
	status[i] = 0;
	flags[i] = 0;
}

/* A FILL whose word equals handle @word: a param, not a table, never charged as one. */
static void fill(uint32_t i, uint32_t word)
{
	items[i] = (struct vyre_work_item){VYRE_OP_FILL, 0, 1000 + i, word};
	exec[i] = (struct vyre_exec_item){.op = VYRE_OP_FILL, .out_bytes = ITEM};
	status[i] = 0;
	flags[i] = 0;
}

static int64_t run(struct vyre_disjoint *t, uint32_t n, uint64_t budget)
{
	return vyre_disjoint_order(t, n, items, exec, status, flags, budget, order);
}

int main(void)
{
	struct vyre_disjoint t;

	if (vyre_disjoint_init(&t, 4096) != 0) {
		fprintf(stderr, "test_disjoint_budget: out of memory\n");
		return 1;
	}
	/* 300 scans of one 1 MiB table: 300 MiB charged per item, 2.2 MiB once */
	for (uint32_t i = 0; i < N; i++)
		scan(i, 3000);
	int64_t k = run(&t, N, BUDGET);
	CHECK(k == N, "one shared table: %lld items planned, want %u", (long long)k, N);
	for (uint32_t i = 0; k == N && i < N; i++)
		CHECK(order[i] == i, "order[%u] = %u", i, order[i]);

	/* the same again: a new batch charges its table again (and still fits) */
	k = run(&t, N, BUDGET);
	CHECK(k == N, "second batch: %lld", (long long)k);

	/* sixteen tables of 1 MiB and 300 items of 4 KiB: over 16 MiB */
	for (uint32_t i = 0; i < N; i++)
		scan(i, 3000 + i % 16);
	k = run(&t, N, BUDGET);
	CHECK(k == -1, "16 tables over the budget: %lld, want -1", (long long)k);
	/* fourteen fit */
	for (uint32_t i = 0; i < N; i++)
		scan(i, 3000 + i % 14);
	k = run(&t, N, BUDGET);
	CHECK(k == N, "14 tables: %lld, want %u", (long long)k, N);

	/* one table alone over the budget */
	for (uint32_t i = 0; i < N; i++)
		scan(i, 3000);
	k = run(&t, N, TABLE - 1);
	CHECK(k == -1, "table over the budget: %lld", (long long)k);

	/* a table that an item of the batch writes: the planner must order them */
	fill(N, 0);
	items[N].output_handle = 3000;
	k = run(&t, N + 1, BUDGET);
	CHECK(k == -1, "written table: %lld", (long long)k);

	/* a FILL's word equal to the table's handle is no table and no hazard */
	fill(N, 3000);
	k = run(&t, N + 1, BUDGET);
	CHECK(k == N + 1, "FILL of the table's number: %lld", (long long)k);

	/* invalid items are left out and charge nothing */
	for (uint32_t i = 0; i < N; i++)
		scan(i, 3000 + i);
	for (uint32_t i = 0; i < N; i++)
		status[i] = i % 20 ? VYRE_E_INVAL : 0;
	k = run(&t, N, BUDGET);
	CHECK(k == N / 20, "invalid items: %lld, want %u", (long long)k, N / 20);

	/* the stamp wraps: every slot is cleared, the table is charged again */
	for (uint32_t i = 0; i < N; i++)
		scan(i, 3000);
	t.stamp = UINT32_MAX - 1;
	k = run(&t, N, BUDGET);
	CHECK(k == N && t.stamp == UINT32_MAX, "before the wrap: %lld", (long long)k);
	k = run(&t, N, TABLE + N * (ITEM + 4ull) - 1);
	CHECK(k == -1, "after the wrap the table is charged: %lld", (long long)k);
	k = run(&t, N, TABLE + N * (ITEM + 4ull));
	CHECK(k == N, "after the wrap, exactly the budget: %lld", (long long)k);

	vyre_disjoint_fini(&t);
	if (test_failures)
		return 1;
	printf("test_disjoint_budget: ok\n");
	return 0;
}
