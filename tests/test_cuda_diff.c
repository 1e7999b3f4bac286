/* SPDX-License-Identifier: MIT */
/*
 * Differential test of the CUDA backend: thousands of seeded random planned
 * batches (tests/test_cuda_gen.h) in persistent and in launch mode, each
 * compared item by item and byte by byte with the sequential oracle. The
 * heap is a MAP_SHARED memfd registered with the backend, as vyred does it.
 * Between plan kinds the heap is unregistered and registered again, which
 * stops and restarts the persistent kernel.
 *
 * A sixth of the batches are one item and a sixth 1..6 small independent
 * items in one group, so persistent mode's IMMEDIATE launches (the items
 * inside their doorbell) are compared too.
 *
 * Then the same with device buffers (run_device_buffers): operands spread
 * over the heap and a device buffer of the heap's size.
 *
 * Exits 77 where no GPU is present. VYRE_TEST_SCALE multiplies the batches
 * (default 1000 per mode and plan); VYRE_CUDA_DIFF_BATCHES sets the count
 * per mode and plan outright (small runs under compute-sanitizer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "test_cuda_gen.h"

#define HEAP_BYTES   (1u << 20)
#define POLL_TIMEOUT 30000000000ll /* a batch that takes longer is a hang */
#define SHOW_FAILS   5u

struct totals {
	uint32_t batches, items, launches_in_batches, failures;
};

static int run_mode(enum vyre_cuda_mode mode, uint32_t per_plan, struct totals *t)
{
	const char *mode_name = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	struct vyre_backend_config cfg = {
	    .max_heaps = 2, .max_items = GEN_MAX_ITEMS, .cuda_mode = mode, .device = 0};
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct gen_rng rng = {0xc0da + (uint64_t)mode};
	struct vyre_backend *b = NULL;
	struct vyre_cuda_stats stats;
	char why[512], msg[512];
	uint32_t fails = 0, n = 0;
	int err;

	err = heap && want && g && expect ? 0 : VYRE_E_NOMEM;
	if (!err)
		err = vyre_cuda_backend->init(&b, &cfg, why, sizeof(why));
	if (err) {
		printf("FAIL %s: init: %s\n", mode_name, err == VYRE_E_NOMEM ? "no memory" : why);
		t->failures++;
		free(expect);
		free(g);
		free(want);
		gen_heap_unmap(heap, HEAP_BYTES);
		return -1;
	}
	printf("%s: %s\n", mode_name, vyre_cuda_describe(b));
	for (int plan = GEN_PLAN_SERIAL; plan <= GEN_PLAN_GROUPED; plan++) {
		err = vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES);
		if (err) {
			printf("FAIL %s: register_heap: %d %s\n", mode_name, err,
			       vyre_cuda_last_error(b));
			fails++;
			break;
		}
		for (uint32_t i = 0; i < per_plan; i++, n++) {
			/* one item, or a few small ones: persistent mode runs them IMMEDIATE */
			if (i % 6 == 3)
				gen_small_batch(&rng, heap, HEAP_BYTES, 6, g);
			else
				gen_batch(&rng, heap, HEAP_BYTES, (enum gen_plan)plan,
					  i % 6 == 0 ? 1
					  : i % 10   ? 64
						     : GEN_MAX_ITEMS,
					  g);
			memcpy(want, heap, HEAP_BYTES);
			gen_oracle(want, HEAP_BYTES, g, expect);
			int done = gen_run_one(b, &g->batch, POLL_TIMEOUT);
			t->batches++;
			t->items += g->batch.plan.n_order;
			t->launches_in_batches += g->batch.plan.n_launches;
			if (done != 1) {
				printf("FAIL %s batch %u: submit/reap %d (%s)\n", mode_name, n,
				       done, vyre_cuda_last_error(b));
				fails++;
				if (done == 0)
					break; /* hung: the rest would only pile up */
				continue;
			}
			if (gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg)) != 0) {
				if (fails < SHOW_FAILS)
					printf("FAIL %s batch %u (%s plan, %u items, %u groups, %u "
					       "launches): %s\n",
					       mode_name, n,
					       plan == GEN_PLAN_SERIAL ? "serial" : "grouped",
					       g->batch.n_items, g->batch.plan.n_groups,
					       g->batch.plan.n_launches, msg);
				fails++;
			}
		}
		if (vyre_cuda_backend->unregister_heap(b, 0) != 0) {
			printf("FAIL %s: unregister_heap\n", mode_name);
			fails++;
		}
	}
	vyre_cuda_get_stats(b, &stats);
	printf("%s: %u batches, %u failed; %llu device launches (%llu immediate, %llu on pool "
	       "teams, %llu on pollers' blocks), %llu kernel starts, %llu B to device, %llu B "
	       "back, %llu faults\n",
	       mode_name, n, fails, (unsigned long long)stats.launches,
	       (unsigned long long)stats.immediates, (unsigned long long)stats.pool_launches,
	       (unsigned long long)stats.pool_self, (unsigned long long)stats.kernel_starts,
	       (unsigned long long)stats.bytes_to_device,
	       (unsigned long long)stats.bytes_from_device, (unsigned long long)stats.faults);
	if (stats.faults != 0 || stats.bytes_to_device == 0 || stats.bytes_from_device == 0) {
		printf("FAIL %s: unexpected counters\n", mode_name);
		fails++;
	}
	if ((mode == VYRE_CUDA_PERSISTENT) != (stats.immediates > 0)) {
		printf("FAIL %s: %llu immediate launches\n", mode_name,
		       (unsigned long long)stats.immediates);
		fails++;
	}
	if (mode == VYRE_CUDA_PERSISTENT && stats.kernel_starts != 2) {
		/* one start per registration period: nothing else may restart it */
		printf("FAIL %s: %llu kernel starts, want 2\n", mode_name,
		       (unsigned long long)stats.kernel_starts);
		fails++;
	}
	vyre_cuda_backend->shutdown(b);
	t->failures += fails;
	free(expect);
	free(g);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
	return fails ? -1 : 0;
}

/* One COPY of the whole heap size from heap @from to heap @to, run and reaped. */
static int copy_heap(struct vyre_backend *b, uint32_t from, uint32_t to)
{
	struct vyre_exec_item it = {.op = VYRE_OP_COPY,
				    .in_heap = from,
				    .out_heap = to,
				    .in_bytes = HEAP_BYTES,
				    .out_bytes = HEAP_BYTES};
	struct vyre_exec_result r = {0};
	uint32_t order = 0, group_end = 1, launch_end = 1;
	const struct vyre_exec_batch batch = {
	    &it, 1, {&order, 1, &group_end, 1, &launch_end, 1}, &r};
	int done = gen_run_one(b, &batch, POLL_TIMEOUT);

	return done == 1 && r.status == 0 ? 0 : -1;
}

/*
 * Device buffers (docs/design.md section 6.2): heap 2 is a device buffer
 * of the heap's size, heap 3 a host staging heap its contents travel
 * through (COPY items: a device buffer has no host mapping). Random batches
 * whose operands are spread over the heap and the device buffer
 * (gen_split_heaps) against the oracle over both; an allocation the GPU
 * cannot hold is VYRE_E_NOMEM; free_device releases it.
 */
static int run_device_buffers(enum vyre_cuda_mode mode, uint32_t batches, struct totals *t)
{
	const char *mode_name = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	struct vyre_backend_config cfg = {
	    .max_heaps = 4, .max_items = GEN_MAX_ITEMS, .cuda_mode = mode, .device = 0};
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *stage = gen_heap_map(HEAP_BYTES);
	uint8_t *want = malloc(HEAP_BYTES), *want_dev = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct gen_rng rng = {0xdef1ce + (uint64_t)mode};
	struct vyre_backend *b = NULL;
	char why[512], msg[512];
	uint32_t fails = 0;
	int err = heap && stage && want && want_dev && g && expect ? 0 : VYRE_E_NOMEM;

	if (!err)
		err = vyre_cuda_backend->init(&b, &cfg, why, sizeof(why));
	if (!err)
		err = vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES);
	if (!err)
		err = vyre_cuda_backend->register_heap(b, 3, stage, HEAP_BYTES);
	if (!err)
		err = vyre_cuda_backend->alloc_device(b, 2, HEAP_BYTES, why, sizeof(why));
	if (err) {
		printf("FAIL %s device buffers: set-up: %d %s\n", mode_name, err, why);
		fails++;
		goto out;
	}
	if (vyre_cuda_backend->alloc_device(b, 1, 1ull << 50, why, sizeof(why)) != VYRE_E_NOMEM ||
	    vyre_cuda_backend->free_device(b, 1) != VYRE_E_INVAL) {
		printf("FAIL %s: a device buffer larger than the GPU is not VYRE_E_NOMEM\n",
		       mode_name);
		fails++;
	}
	printf("%s: too big a device buffer: %s\n", mode_name, why);
	for (uint32_t n = 0; n < batches && fails < SHOW_FAILS; n++) {
		gen_batch(&rng, heap, HEAP_BYTES, n % 2 ? GEN_PLAN_GROUPED : GEN_PLAN_SERIAL,
			  n % 6 == 0 ? 1 : 64, g);
		gen_split_heaps(&rng, g, 2);
		/* the device buffer starts as the heap with a few bytes changed */
		memcpy(stage, heap, HEAP_BYTES);
		for (uint32_t i = 0; i < 64; i++)
			stage[gen_below(&rng, HEAP_BYTES)] ^= (uint8_t)(1 + gen_below(&rng, 255));
		memcpy(want_dev, stage, HEAP_BYTES);
		memcpy(want, heap, HEAP_BYTES);
		if (copy_heap(b, 3, 2) != 0) {
			printf("FAIL %s device batch %u: COPY into the device buffer\n", mode_name,
			       n);
			fails++;
			break;
		}
		const struct vyre_heap_view views[4] = {
		    {want, HEAP_BYTES}, {NULL, 0}, {want_dev, HEAP_BYTES}, {stage, HEAP_BYTES}};

		gen_oracle_heaps(views, 4, g, expect);
		int done = gen_run_one(b, &g->batch, POLL_TIMEOUT);

		t->batches++;
		t->items += g->batch.plan.n_order;
		if (done != 1 || copy_heap(b, 2, 3) != 0) {
			printf("FAIL %s device batch %u: submit/reap %d (%s)\n", mode_name, n, done,
			       vyre_cuda_last_error(b));
			fails++;
			break;
		}
		if (gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg)) != 0) {
			printf("FAIL %s device batch %u: %s\n", mode_name, n, msg);
			fails++;
		} else if (memcmp(stage, want_dev, HEAP_BYTES) != 0) {
			printf("FAIL %s device batch %u: the device buffer differs from the "
			       "oracle\n",
			       mode_name, n);
			fails++;
		}
	}
	if (vyre_cuda_backend->free_device(b, 2) != 0 ||
	    vyre_cuda_backend->free_device(b, 2) != VYRE_E_INVAL) {
		printf("FAIL %s: free_device\n", mode_name);
		fails++;
	}
out:
	if (b)
		vyre_cuda_backend->shutdown(b);
	printf("%s device buffers: %u failed\n", mode_name, fails);
	t->failures += fails;
	free(expect);
	free(g);
	free(want_dev);
	free(want);
	gen_heap_unmap(stage, HEAP_BYTES);
	gen_heap_unmap(heap, HEAP_BYTES);
	return fails ? -1 : 0;
}

int main(void)
{
	const char *batches = getenv("VYRE_CUDA_DIFF_BATCHES");
	const uint32_t per_plan =
	    batches && atoi(batches) > 0 ? (uint32_t)atoi(batches) : 1000 * gen_scale();
	struct totals t = {0};

	setvbuf(stdout, NULL, _IOLBF, 0);
	const int skip = gen_require_gpu();

	if (skip)
		return skip;
	run_mode(VYRE_CUDA_PERSISTENT, per_plan, &t);
	run_mode(VYRE_CUDA_LAUNCH, per_plan, &t);
	run_device_buffers(VYRE_CUDA_PERSISTENT, per_plan / 2 + 1, &t);
	run_device_buffers(VYRE_CUDA_LAUNCH, per_plan / 2 + 1, &t);
	printf("cuda diff: %u batches (%u items, %u plan launches), %u failed\n", t.batches,
	       t.items, t.launches_in_batches, t.failures);
	return t.failures ? 1 : 0;
}
