/* SPDX-License-Identifier: MIT */
/*
 * test_disjoint_budget - what vyred's own plan of a disjoint batch
 * (tools/vyred/disjoint.c) charges against the group budget: every item's
 * input and output, and a table read by many items once, as the planner
 * charges it (docs/design.md 7). Also the cases that must still go to the
 * planner: a table some item writes, a table alone over the budget, and
 * tables counted again after the stamps wrap. Then random batches (shared
 * handles, unknown slots, chains, ranges, streams, failed items) against
 * the two-pass check vyred made before the resolve stage did it item by
 * item (reference_order): the same verdict and the same order.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../gpu/ops.h"
#include "../tools/vyred/disjoint.h"
#include "test_rand.h"
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

/*
 * The check as two passes over the whole batch, the writes first and then
 * every read against them (vyred's until session 16): the oracle of the
 * one-pass check.
 */
static uint32_t ref_mark[4097], ref_counted[4097], ref_stamp;

static uint32_t ref_slot(uint32_t handle)
{
	const uint32_t s = handle & VYRE_HANDLE_SLOT_MASK;

	return s < 4097 ? s : 0;
}

static int64_t reference_order(uint32_t n, uint64_t budget, uint32_t *out)
{
	static uint32_t writer[4097];
	uint64_t bytes = 0;
	uint32_t k = 0;

	ref_stamp++;
	for (uint32_t i = 0; i < n; i++) {
		if (status[i] != 0)
			continue;
		if ((flags[i] & (VYRE_SQE_CHAIN | VYRE_SQE_RANGE)) || exec[i].aux_bytes)
			return -1;
		const int mask = vyre_op_operands(items[i].op_handle);
		const uint32_t t = ref_slot(items[i].param);

		bytes += (uint64_t)exec[i].in_bytes + exec[i].out_bytes;
		if (mask <= 0 || !(mask & VYRE_OPERAND_TABLE) || t == 0)
			bytes += exec[i].table_bytes;
		else if (ref_counted[t] != ref_stamp) {
			ref_counted[t] = ref_stamp;
			bytes += exec[i].table_bytes;
		}
		if (mask <= 0 || !(mask & VYRE_OPERAND_OUT))
			continue;
		const uint32_t s = ref_slot(items[i].output_handle);

		if (s == 0 || ref_mark[s] == ref_stamp)
			return -1;
		ref_mark[s] = ref_stamp;
		writer[s] = i;
	}
	if (bytes > budget)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		if (status[i] != 0)
			continue;
		const int mask = vyre_op_operands(items[i].op_handle);
		const uint32_t in = ref_slot(items[i].input_handle), t = ref_slot(items[i].param);

		if (mask > 0 && (mask & VYRE_OPERAND_IN) &&
		    (in == 0 || (ref_mark[in] == ref_stamp && writer[in] != i)))
			return -1;
		if (mask > 0 && (mask & VYRE_OPERAND_TABLE) &&
		    (t == 0 || (ref_mark[t] == ref_stamp && writer[t] != i)))
			return -1;
		out[k++] = i;
	}
	return k;
}

/* A handle of a small pool (so that items share them), now and then 0 or an unknown slot. */
static uint32_t rand_handle(uint64_t *rng, uint32_t pool)
{
	const uint32_t v = (uint32_t)splitmix64(rng);

	if (v % 64 == 0)
		return 0;
	if (v % 64 == 1)
		return 5000 + (v >> 8) % 8; /* past the table: cannot be told */
	return (v >> 8) % 4 << VYRE_HANDLE_SLOT_BITS | (1 + (v >> 12) % pool);
}

/* Random batches: the one-pass check gives the two-pass check's verdict and order. */
static void random_batches(struct vyre_disjoint *t)
{
	static const uint32_t ops[] = {VYRE_OP_NOP,	VYRE_OP_FILL,	    VYRE_OP_COPY,
				       VYRE_OP_ADD,	VYRE_OP_SUM,	    VYRE_OP_DFA_SCAN,
				       VYRE_OP_BYTEMAP, VYRE_OP_DFA_REPORT, VYRE_OP_BASE64_DECODE};
	static uint32_t ref[N + 1];
	uint64_t rng = 23;
	uint32_t planned = 0;

	for (uint32_t round = 0; round < 20000; round++) {
		const uint64_t v = splitmix64(&rng);
		/* a large pool makes most batches disjoint, a small one makes hazards */
		const uint32_t pool = (v % 4 == 0) ? 8 : 4000;
		const uint32_t n = 1 + (uint32_t)((v >> 8) % ((v >> 16) % 2 ? 32 : N));

		for (uint32_t i = 0; i < n; i++) {
			const uint64_t w = splitmix64(&rng);
			const uint32_t op = ops[w % (sizeof(ops) / sizeof(ops[0]))];

			items[i] = (struct vyre_work_item){op, rand_handle(&rng, pool),
							   rand_handle(&rng, pool),
							   rand_handle(&rng, pool)};
			exec[i] = (struct vyre_exec_item){
			    .op = op,
			    .in_bytes = (uint32_t)(w >> 8) % 4096,
			    .out_bytes = (uint32_t)(w >> 20) % 4096,
			    .table_bytes = (w >> 32) % 4 ? 0 : (uint32_t)(w >> 34) % (1u << 20),
			    .aux_bytes = (w >> 40) % 128 == 0 ? 16 : 0,
			};
			status[i] = (w >> 48) % 10 == 0 ? VYRE_E_INVAL : 0;
			flags[i] = (w >> 52) % 1000 == 0   ? VYRE_SQE_CHAIN
				   : (w >> 52) % 1000 == 1 ? VYRE_SQE_RANGE
							   : 0;
		}
		const uint64_t budget = (v >> 32) % 3 ? UINT64_MAX : (v >> 32) % (64ull << 20);
		const int64_t want = reference_order(n, budget, ref);
		const int64_t got =
		    vyre_disjoint_order(t, n, items, exec, status, flags, budget, order);

		CHECK(got == want, "random batch %u: %lld, the two passes %lld", round,
		      (long long)got, (long long)want);
		for (int64_t i = 0; got == want && i < got; i++)
			CHECK(order[i] == ref[i], "random batch %u: order[%lld] %u, want %u", round,
			      (long long)i, order[i], ref[i]);
		planned += got >= 0;
		if (test_failures)
			return;
	}
	/* both verdicts came often enough to mean something */
	CHECK(planned > 1000 && planned < 19000, "random batches: %u of 20000 disjoint", planned);
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

	random_batches(&t);
	vyre_disjoint_fini(&t);
	if (test_failures)
		return 1;
	printf("test_disjoint_budget: ok\n");
	return 0;
}
