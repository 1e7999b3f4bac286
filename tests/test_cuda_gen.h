/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cuda_gen.h - random planned batches for the CUDA backend tests,
 * independent of the planner: items over a few shared buffers of one heap
 * (in-place ops, DFA tables that other items overwrite, invalid items,
 * unaligned and partially overlapping ranges, the byte ops over valid and
 * malformed counted buffers, decode -> map -> scan chains), and two plans: every item its
 * own group, or runs of mutually independent items grouped by
 * vyre_op_access. Launches fuse random runs of groups; some items are left
 * out of the order as a deduplicating planner would. Chains
 * (VYRE_EXEC_AFTER_PREV, docs/design.md 6.3) of random items, some failing
 * when they run, and on-chip handoff runs as vyred's planner marks them
 * (VYRE_EXEC_HANDOFF_*, 7.6): a decoder or BYTEMAP, BYTEMAPs, a BYTEMAP or
 * DFA_SCAN_COUNTED, through transient-like ranges that nothing else in the
 * batch touches, in one launch, each member in a later group.
 */
#ifndef VYRE_TEST_CUDA_GEN_H
#define VYRE_TEST_CUDA_GEN_H

#include <stdint.h>

#include "backend.h"

#define GEN_MAX_ITEMS 1024u
#define GEN_MAX_BUFS  16u
#define GEN_MAX_TRANS 64u

enum gen_plan {
	GEN_PLAN_SERIAL,  /* one group per item */
	GEN_PLAN_GROUPED, /* runs of independent items, shuffled inside each group */
};

struct gen_rng {
	uint64_t s;
};

uint64_t gen_next(struct gen_rng *r);
uint32_t gen_below(struct gen_rng *r, uint32_t n); /* uniform in [0, n), n > 0 */

struct gen_batch {
	struct vyre_exec_item items[GEN_MAX_ITEMS];
	struct vyre_work_item work[GEN_MAX_ITEMS]; /* handles (buffer index + 1) for hazards */
	uint32_t order[GEN_MAX_ITEMS];
	uint32_t group_end[GEN_MAX_ITEMS];
	uint32_t launch_end[GEN_MAX_ITEMS];
	struct vyre_exec_result results[GEN_MAX_ITEMS];
	struct vyre_exec_batch batch;
	uint32_t n_bufs;
	uint64_t buf_off[GEN_MAX_BUFS];
	uint32_t buf_bytes[GEN_MAX_BUFS];
	/* the handed-off (transient) ranges of heap 0: the CUDA backend never writes them */
	uint32_t n_trans;
	uint64_t trans_off[GEN_MAX_TRANS];
	uint32_t trans_bytes[GEN_MAX_TRANS];
};

/*
 * Fill @heap (page aligned, @heap_bytes >= 1 MiB) with fresh random buffers,
 * DFA tables and bytes, and @g with up to @max_items items and a valid plan.
 * Heap index 0 is the registered heap; a few items name heap 1 (never
 * registered). Results are poisoned so unwritten ones show.
 */
void gen_batch(struct gen_rng *r, uint8_t *heap, uint64_t heap_bytes, enum gen_plan plan,
	       uint32_t max_items, struct gen_batch *g);

/*
 * A small batch as vyred forms from several clients: 1..@max_items (at most
 * GEN_SMALL_MAX_ITEMS) items in one group of one launch, each a FILL, COPY,
 * ADD, XOR, MUL, SUM or MAX over a few words of a range of its own (in place
 * or not), so they are independent; now and then an item too big for a
 * doorbell, a NOP or a statically invalid one. Fresh random words in @heap.
 */
#define GEN_SMALL_MAX_ITEMS 64u
void gen_small_batch(struct gen_rng *r, uint8_t *heap, uint64_t heap_bytes, uint32_t max_items,
		     struct gen_batch *g);

/*
 * The expected outcome: vyre_exec_one over the order, in order, on @heap
 * (a copy of the heap the backend ran on), with the chain rule (an item
 * after a failed one of its chain: VYRE_E_CANCELED). The handed-off ranges
 * then get their bytes from before back: a backend that keeps a handoff on
 * chip leaves them so, and nothing else may look at them. Results of items
 * left out of the order keep the poison.
 */
void gen_oracle(uint8_t *heap, uint64_t heap_bytes, const struct gen_batch *g,
		struct vyre_exec_result *expect);

/* The same over several heaps: @views[h] is heap h, NULL base where not registered. */
void gen_oracle_heaps(const struct vyre_heap_view *views, uint32_t n_views,
		      const struct gen_batch *g, struct vyre_exec_result *expect);

/*
 * Move about a third of the operands in heap 0 to heap @dev, at the same
 * offsets: a second memory of the heap's size, like a device buffer (a heap
 * of its own). Offsets stay, so no new overlap: the plan stays valid.
 */
void gen_split_heaps(struct gen_rng *r, struct gen_batch *g, uint32_t dev);

/*
 * Compare results and heaps; 0 when identical, else -1 with the first
 * difference described in @msg.
 */
int gen_compare(const struct gen_batch *g, const struct vyre_exec_result *expect,
		const uint8_t *got_heap, const uint8_t *want_heap, uint64_t heap_bytes, char *msg,
		uint32_t msg_len);

/* A page-aligned MAP_SHARED memfd mapping of @bytes (what vyred gives a heap), or NULL. */
uint8_t *gen_heap_map(uint64_t bytes);
void gen_heap_unmap(uint8_t *heap, uint64_t bytes);

/*
 * 1 when the CUDA driver loads and sees a device; else 0 with the reason in
 * @why (a test then exits 77). A GPU that is present but fails later is a
 * failure, not a skip.
 */
int gen_gpu_present(char *why, uint32_t why_len);

/*
 * 0 when this build has the CUDA backend and the machine a GPU; else prints
 * why and returns 77, the skip status for the test's main.
 */
int gen_require_gpu(void);

/*
 * The fault tests' batch: 24 items (FILL, ADD, SUM over 4 KiB) of heap
 * @heap, each its own group, all in one launch that spans the grid, so a
 * stalled barrier or an illegal address hits it; results poisoned.
 */
void gen_device_batch(struct gen_batch *g, uint32_t heap);

/*
 * gen_gpu_present asked in a child process, so that the caller never
 * touches CUDA and every child it forks later starts clean.
 */
int gen_gpu_present_in_child(char *why, uint32_t why_len);

/*
 * gen_require_gpu for tests whose work runs in children: 0, or 77 after
 * saying why (no CUDA backend in this build, or no GPU, asked in a child).
 */
int gen_require_gpu_in_child(void);

/*
 * Run @fn(@arg) in a fresh child process, which starts with *@failures 0
 * and exits 1 if fn counted any there. Returns 0 when the child passed,
 * else 1 (after saying so).
 */
uint32_t gen_in_child(void (*fn)(int), int arg, uint32_t *failures);

/*
 * Submit @batch to slot 0 of @b (a CUDA backend with no other slot busy) and
 * reap it: 1 when it finished with status 0, 0 when @timeout_ns passed, else
 * submit's error or the slot's negative status.
 */
int gen_run_one(struct vyre_backend *b, const struct vyre_exec_batch *batch, int64_t timeout_ns);

/* VYRE_TEST_SCALE, at least 1. */
uint32_t gen_scale(void);

/* The op name for messages. */
const char *gen_op_name(uint32_t op);

#endif /* VYRE_TEST_CUDA_GEN_H */
