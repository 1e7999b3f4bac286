/* SPDX-License-Identifier: MIT */
/*
 * vyre-bench suite "lower": the CUDA lowering's host cost an item
 * (gpu/cuda_lower.h), no GPU needed. A batch of 4096 trivial items (FILL of
 * one word, each into its own 256-byte buffer of one heap, as vyred's heap
 * places them) planned as vyred's disjoint planner plans it (one group, one
 * launch, batch order) is measured, filled into a 64-byte aligned slab of
 * host memory (the pinned slab in vyred) and its results written back from
 * the order slots, over and over for --seconds: ns an item of each step and
 * of the three together (issue 23, docs/fastpath.md). Also a batch of 4096
 * ADDs of 16 words, the trivial batch planned one item a group, and 4096
 * DFA_SCANs of 4 KiB device buffers (a heap each, as vyred's device
 * buffers are) with one trusted 728-state table (the scan suite's lit100)
 * into 4-byte heap outputs, to watch the lowering's other paths.
 */
#include <stdio.h>

#include "bench.h"

#ifdef VYRE_HAVE_CUDA
#include <stdlib.h>
#include <string.h>

#include "cuda_lower.h"
#include "vyre/vyre.h"

#define SUITE	  "lower"
#define N_ITEMS	  4096u
#define HEAP	  1u
#define DFA_TABLE (N_ITEMS + 2u) /* the DFA rows' table; heaps 2.. are their inputs */
#define N_HEAPS	  (N_ITEMS + 3u)
#define DFA_BYTES 4096u
#define BUF	  256u /* vyred's heap gives every buffer 256 bytes at least (ring/heap.h) */
#define ADD_WORDS 16u

struct lower_bench {
	struct vyre_exec_item items[N_ITEMS];
	struct vyre_exec_result results[N_ITEMS];
	uint32_t order[N_ITEMS], group_end[N_ITEMS], launch_end[1];
	uint32_t cls[N_ITEMS], order_slot[N_ITEMS];
	struct vyre_cuda_item_state st[N_ITEMS];
	struct vyre_cuda_launch launches[N_ITEMS];
	struct vyre_cuda_heap heaps[N_HEAPS];
	struct vyre_exec_batch batch;
	uint8_t *slab;
	size_t slab_bytes;
};

enum lower_kind { LOWER_FILL, LOWER_ADD, LOWER_FILL_GROUPS, LOWER_DFA };

static void make_batch(struct lower_bench *lb, enum lower_kind kind)
{
	const uint32_t bytes = kind == LOWER_ADD ? 4u * ADD_WORDS : 4u;

	memset(lb->items, 0, sizeof(lb->items));
	for (uint32_t i = 0; i < N_ITEMS; i++) {
		struct vyre_exec_item *it = &lb->items[i];

		it->op = kind == LOWER_ADD ? VYRE_OP_ADD : VYRE_OP_FILL;
		it->param = i;
		it->out_heap = HEAP;
		it->out_off = (uint64_t)i * BUF;
		it->out_bytes = bytes;
		if (kind == LOWER_ADD) {
			it->in_heap = HEAP;
			it->in_off = (uint64_t)(N_ITEMS + i) * BUF;
			it->in_bytes = bytes;
		}
		if (kind == LOWER_DFA) {
			it->op = VYRE_OP_DFA_SCAN;
			it->param = 0;
			it->in_heap = 2 + i;
			it->in_bytes = DFA_BYTES;
			it->table_heap = DFA_TABLE;
			it->table_bytes = (uint32_t)vyre_dfa_table_bytes(728);
			it->flags = VYRE_EXEC_TABLE_TRUSTED;
		}
		lb->order[i] = i;
		lb->group_end[i] = i + 1;
	}
	const uint32_t groups = kind == LOWER_FILL_GROUPS ? N_ITEMS : 1u;

	lb->group_end[0] = groups == 1 ? N_ITEMS : 1u;
	lb->launch_end[0] = groups;
	lb->heaps[0] = (struct vyre_cuda_heap){0, 0, 0, 0};
	lb->heaps[HEAP] = (struct vyre_cuda_heap){0x7f0000000000ull, 2ull * N_ITEMS * BUF, 1, 0};
	for (uint32_t h = 2; h < N_HEAPS; h++)
		lb->heaps[h] = (struct vyre_cuda_heap){0x7e0000000000ull + ((uint64_t)h << 21),
						       h == DFA_TABLE ? 1u << 21 : DFA_BYTES, 0, 1};
	lb->batch = (struct vyre_exec_batch){
	    .items = lb->items,
	    .n_items = N_ITEMS,
	    .plan = {lb->order, N_ITEMS, lb->group_end, groups, lb->launch_end, 1},
	    .results = lb->results,
	};
}

/* One lowering of the batch: ns of measure, fill and results added to @ns. */
static int lower_once(struct lower_bench *lb, uint64_t ns[3])
{
	struct vyre_cuda_layout lay;
	uint64_t t0 = vyre_bench_now_ns();
	int err =
	    vyre_cuda_lower_measure(&lb->batch, lb->heaps, N_HEAPS, 132, lb->cls, lb->st, &lay);
	if (err)
		return err;
	uint64_t t1 = vyre_bench_now_ns();

	if (lay.bytes > lb->slab_bytes) {
		free(lb->slab);
		lb->slab = aligned_alloc(4096, (size_t)lay.bytes);
		if (!lb->slab)
			return VYRE_E_NOMEM;
		memset(lb->slab, 0, (size_t)lay.bytes);
		lb->slab_bytes = (size_t)lay.bytes;
	}
	vyre_cuda_lower_fill(&lb->batch, lb->heaps, lb->cls, lb->st, &lay, lb->slab, 132,
			     lb->order_slot, lb->launches);
	uint64_t t2 = vyre_bench_now_ns();

	vyre_cuda_lower_results(&lb->batch, lb->order_slot,
				(const struct vyre_mk_result *)(lb->slab + lay.results_off));
	uint64_t t3 = vyre_bench_now_ns();

	ns[0] += t1 - t0;
	ns[1] += t2 - t1;
	ns[2] += t3 - t2;
	return 0;
}

static int measure_kind(struct vyre_bench_ctx *ctx, struct lower_bench *lb, enum lower_kind kind,
			const char *name)
{
	static const char *const step[3] = {"measure", "fill", "results"};
	const double seconds = ctx->seconds > 0 ? ctx->seconds : (ctx->quick ? 0.05 : 1.0);
	uint64_t ns[3] = {0, 0, 0}, batches = 0;
	char row[96];
	int err;

	make_batch(lb, kind);
	for (int warm = 0; warm < 16; warm++) {
		uint64_t skip[3] = {0, 0, 0};

		if ((err = lower_once(lb, skip)) != 0)
			return err;
	}
	const uint64_t end = vyre_bench_now_ns() + (uint64_t)(seconds * 1e9);

	do {
		if ((err = lower_once(lb, ns)) != 0)
			return err;
		batches++;
	} while (vyre_bench_now_ns() < end);
	const double items = (double)batches * N_ITEMS;

	for (int s = 0; s < 3; s++) {
		snprintf(row, sizeof(row), "%s %s", name, step[s]);
		vyre_bench_report(ctx, SUITE, row, "ns/item", (double)ns[s] / items, "ns/item");
	}
	snprintf(row, sizeof(row), "%s", name);
	vyre_bench_report(ctx, SUITE, row, "ns/item", (double)(ns[0] + ns[1] + ns[2]) / items,
			  "ns/item");
	return 0;
}

static int run_lower(struct vyre_bench_ctx *ctx)
{
	/* the items 64-byte aligned, as vyred's (tools/vyred/pipeline.c): calloc's large
	 * blocks start 16 bytes into a page */
	const size_t bytes = (sizeof(struct lower_bench) + 63) / 64 * 64;
	struct lower_bench *lb = aligned_alloc(64, bytes);
	int err;

	if (!lb)
		return -1;
	memset(lb, 0, bytes);
	err = measure_kind(ctx, lb, LOWER_FILL, "fill 4096");
	if (!err)
		err = measure_kind(ctx, lb, LOWER_ADD, "add16 4096");
	if (!err)
		err = measure_kind(ctx, lb, LOWER_FILL_GROUPS, "fill 4096 groups");
	if (!err)
		err = measure_kind(ctx, lb, LOWER_DFA, "dfa 4096");
	if (err)
		fprintf(stderr, "lower: the lowering failed: %s\n", vyre_strerror(err));
	free(lb->slab);
	free(lb);
	return err ? -1 : 0;
}
#else
static int run_lower(struct vyre_bench_ctx *ctx)
{
	(void)ctx;
	fprintf(stderr, "lower: built without the CUDA backend (no nvcc): nothing to measure\n");
	return 0;
}
#endif

VYRE_BENCH_SUITE(lower, "the CUDA lowering's host cost an item (no GPU): ns/item", run_lower)
