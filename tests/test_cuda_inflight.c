/* SPDX-License-Identifier: MIT */
/*
 * Several batches in flight on the CUDA backend (gpu/backend.h slots), in
 * persistent and launch mode:
 *   - every slot kept busy with random independent batches
 *     (tests/test_cuda_gen.h), random one-item batches and small batches of
 *     1..6 independent items in one group (IMMEDIATE when they fit a
 *     doorbell); each slot's batches touch only its own heap, as vyred
 *     guarantees for batches in different slots. Every result and every heap
 *     byte is compared with the sequential oracle (gen_oracle: vyre_exec_one
 *     in plan order; one-item batches: vyre_exec_sequential). Persistent
 *     mode also logs the latency of batches of 1..4 small items, IMMEDIATE
 *     vs the slab path;
 *   - a barrier stall (watchdog) in one slot while the others run: only that
 *     slot fails (VYRE_E_TIMEDOUT, its items VYRE_E_DEVICE), the others
 *     match the oracle and the backend goes on;
 *   - an illegal address in one slot while the others run: every slot is
 *     reported exactly once, the faulting one with VYRE_E_DEVICE, each other
 *     either matching the oracle or failed whole; the backend is unusable.
 * Every scenario runs in a fresh child process (CUDA state does not survive
 * fork, and a sticky error lasts as long as its process); every reap has a
 * timeout, and one that passes is a failure. Exits 77 without a GPU.
 * VYRE_TEST_SCALE multiplies the batches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_backend.h"
#include "test_cuda_gen.h"

#define SLOTS	     6u
#define UNREG_HEAP   SLOTS /* never registered: gen's heap-1 items name it */
#define HEAP_BYTES   (1u << 20)
#define REAP_TIMEOUT 20000000000ll
#define SHOW_FAILS   8u

static uint32_t failures;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		if (failures++ < SHOW_FAILS) {                                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

struct job {
	struct gen_batch g;
	struct vyre_exec_result expect[GEN_MAX_ITEMS];
	uint8_t *heap, *want;
	int busy, must_fail;
};

struct rig {
	struct vyre_backend *b;
	struct job *jobs;
	struct gen_rng rng;
	const char *mode;
};

static int rig_open(struct rig *r, enum vyre_cuda_mode mode, uint64_t seed)
{
	struct vyre_backend_config cfg = {.max_heaps = SLOTS + 1,
					  .max_items = GEN_MAX_ITEMS,
					  .max_inflight = SLOTS,
					  .cuda_mode = mode,
					  .device = 0};
	char why[512];

	memset(r, 0, sizeof(*r));
	r->mode = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	r->rng.s = seed;
	r->jobs = calloc(SLOTS, sizeof(*r->jobs));
	if (!r->jobs)
		return -1;
	for (uint32_t s = 0; s < SLOTS; s++) {
		r->jobs[s].heap = gen_heap_map(HEAP_BYTES);
		r->jobs[s].want = malloc(HEAP_BYTES);
		if (!r->jobs[s].heap || !r->jobs[s].want)
			return -1;
	}
	if (vyre_cuda_backend->init(&r->b, &cfg, why, sizeof(why)) != 0) {
		FAIL("%s: init: %s", r->mode, why);
		return -1;
	}
	printf("%s: %s\n", r->mode, vyre_cuda_describe(r->b));
	for (uint32_t s = 0; s < SLOTS; s++) {
		int err = vyre_cuda_backend->register_heap(r->b, s, r->jobs[s].heap, HEAP_BYTES);
		if (err) {
			FAIL("%s: register_heap %u: %d %s", r->mode, s, err,
			     vyre_cuda_last_error(r->b));
			return -1;
		}
	}
	return 0;
}

static void rig_close(struct rig *r)
{
	if (r->b)
		vyre_cuda_backend->shutdown(r->b);
	for (uint32_t s = 0; r->jobs && s < SLOTS; s++) {
		gen_heap_unmap(r->jobs[s].heap, HEAP_BYTES);
		free(r->jobs[s].want);
	}
	free(r->jobs);
}

static void plan_one(struct gen_batch *g, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		g->order[i] = i;
		g->results[i] = (struct vyre_exec_result){0x1111, 0, 0x2222};
	}
	g->group_end[0] = n;
	g->launch_end[0] = 1;
	g->batch.items = g->items;
	g->batch.n_items = n;
	g->batch.results = g->results;
	g->batch.plan = (struct vyre_exec_plan){g->order, n, g->group_end, 1, g->launch_end, 1};
}

/* One random small item over slot @s's heap, checked against vyre_exec_sequential. */
static void one_item(struct rig *r, uint32_t s)
{
	static const uint32_t ops[] = {VYRE_OP_FILL, VYRE_OP_COPY, VYRE_OP_ADD, VYRE_OP_XOR,
				       VYRE_OP_MUL,  VYRE_OP_SUM,  VYRE_OP_MAX};
	struct job *j = &r->jobs[s];
	struct gen_batch *g = &j->g;
	const uint32_t op = ops[gen_below(&r->rng, 7)];
	/* mostly small enough to travel inside a doorbell, sometimes not */
	const uint32_t words =
	    gen_below(&r->rng, 4) ? 1 + gen_below(&r->rng, 48) : 1 + gen_below(&r->rng, 4096);
	const int reduce = op == VYRE_OP_SUM || op == VYRE_OP_MAX;
	struct vyre_heap_view views[SLOTS + 1] = {{0}};

	for (uint32_t i = 0; i < 8192; i++)
		((uint32_t *)j->heap)[i] = (uint32_t)gen_next(&r->rng);
	g->items[0] = (struct vyre_exec_item){
	    .op = op,
	    .param = (uint32_t)gen_next(&r->rng),
	    .in_heap = s,
	    .out_heap = s,
	    .in_bytes = op == VYRE_OP_FILL ? 0 : 4 * words,
	    .out_bytes = reduce ? 4 : 4 * words,
	    .in_off = 4 * gen_below(&r->rng, 64),
	    .out_off = gen_below(&r->rng, 4) ? 16384 + 4 * gen_below(&r->rng, 64) : 0,
	};
	/* in place when out_off is 0: input and output equal */
	if (g->items[0].out_off == 0)
		g->items[0].out_off = g->items[0].in_off;
	plan_one(g, 1);
	memcpy(j->want, j->heap, HEAP_BYTES);
	views[s] = (struct vyre_heap_view){j->want, HEAP_BYTES};
	vyre_exec_sequential(views, g->items, 1, j->expect);
}

/* gen's heap 0 is slot @s's heap, its unregistered heap 1 is UNREG_HEAP. */
static void remap_heaps(struct gen_batch *g, uint32_t s)
{
	for (uint32_t i = 0; i < g->batch.n_items; i++) {
		struct vyre_exec_item *x = &g->items[i];

		x->in_heap = x->in_heap == 0 ? s : UNREG_HEAP;
		x->out_heap = x->out_heap == 0 ? s : UNREG_HEAP;
		x->table_heap = x->table_heap == 0 ? s : UNREG_HEAP;
	}
}

static void random_batch(struct rig *r, uint32_t s, uint32_t k)
{
	struct job *j = &r->jobs[s];

	if (k % 6 == 0) {
		one_item(r, s);
		return;
	}
	if (k % 6 == 3)
		gen_small_batch(&r->rng, j->heap, HEAP_BYTES, 6, &j->g);
	else
		gen_batch(&r->rng, j->heap, HEAP_BYTES, k % 2 ? GEN_PLAN_GROUPED : GEN_PLAN_SERIAL,
			  k % 11 ? 64 : GEN_MAX_ITEMS, &j->g);
	memcpy(j->want, j->heap, HEAP_BYTES);
	gen_oracle(j->want, HEAP_BYTES, &j->g, j->expect);
	remap_heaps(&j->g, s);
}

static int submit(struct rig *r, uint32_t s)
{
	int err = vyre_cuda_backend->submit(r->b, s, &r->jobs[s].g.batch);

	if (err) {
		FAIL("%s: submit slot %u: %d %s", r->mode, s, err, vyre_cuda_last_error(r->b));
		return err;
	}
	r->jobs[s].busy = 1;
	return 0;
}

/* Check slot @d's report; @fault: a device fault may have failed it whole. */
static void check_done(struct rig *r, const struct vyre_slot_done *d, int fault)
{
	struct job *j;
	char msg[512];

	if (d->slot >= SLOTS || !r->jobs[d->slot].busy) {
		FAIL("%s: reap reported slot %u, which is not busy", r->mode, d->slot);
		return;
	}
	j = &r->jobs[d->slot];
	j->busy = 0;
	if (j->must_fail || (fault && d->status != 0)) {
		const int want = j->must_fail == 2 ? VYRE_E_TIMEDOUT : VYRE_E_DEVICE;
		if (d->status != want && !(fault && d->status == VYRE_E_DEVICE))
			FAIL("%s: slot %u status %d, want %d", r->mode, d->slot, d->status, want);
		/* items the plan left out keep their poison */
		for (uint32_t k = 0; k < j->g.batch.plan.n_order; k++) {
			const uint32_t i = j->g.batch.plan.order[k];
			if (j->g.results[i].status != VYRE_E_DEVICE) {
				FAIL("%s: failed slot %u item %u status %d", r->mode, d->slot, i,
				     j->g.results[i].status);
				break;
			}
		}
		j->must_fail = 0;
		return;
	}
	if (d->status != 0) {
		FAIL("%s: slot %u status %d: %s", r->mode, d->slot, d->status,
		     vyre_cuda_last_error(r->b));
		return;
	}
	if (gen_compare(&j->g, j->expect, j->heap, j->want, HEAP_BYTES, msg, sizeof(msg)))
		FAIL("%s: slot %u (%u items, %u groups, %u launches): %s", r->mode, d->slot,
		     j->g.batch.n_items, j->g.batch.plan.n_groups, j->g.batch.plan.n_launches, msg);
}

/* Reap until no slot is busy; returns -1 when a reap timed out (a hang). */
static int reap_all(struct rig *r, int fault)
{
	struct vyre_slot_done done[SLOTS];

	for (;;) {
		uint32_t busy = 0;
		for (uint32_t s = 0; s < SLOTS; s++)
			busy += (uint32_t)r->jobs[s].busy;
		if (!busy)
			return 0;
		int n = vyre_cuda_backend->reap(r->b, done, SLOTS, REAP_TIMEOUT);
		if (n <= 0) {
			FAIL("%s: reap returned %d with %u slot(s) busy: %s", r->mode, n, busy,
			     vyre_cuda_last_error(r->b));
			return -1;
		}
		for (int i = 0; i < n; i++)
			check_done(r, &done[i], fault);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Small batches (4 ADD items of 256 words, one group) kept in flight in
 * @slots slots: batches per second, for the log. Each slot re-runs its own
 * batch, so only the first round is compared with the oracle.
 */
static double small_rate(struct rig *r, uint32_t slots, uint32_t total)
{
	struct vyre_slot_done done[SLOTS];
	uint32_t submitted = 0, reported = 0;
	double t0;

	for (uint32_t s = 0; s < slots; s++) {
		struct job *j = &r->jobs[s];
		struct vyre_heap_view views[SLOTS + 1] = {{0}};

		for (uint32_t i = 0; i < 4; i++)
			j->g.items[i] = (struct vyre_exec_item){.op = VYRE_OP_ADD,
								.param = i + 1,
								.in_heap = s,
								.out_heap = s,
								.in_bytes = 1024,
								.out_bytes = 1024,
								.in_off = 4096 * i,
								.out_off = 65536 + 4096 * i};
		plan_one(&j->g, 4);
		memcpy(j->want, j->heap, HEAP_BYTES);
		views[s] = (struct vyre_heap_view){j->want, HEAP_BYTES};
		vyre_exec_sequential(views, j->g.items, 4, j->expect);
	}
	t0 = now_s();
	while (reported < total) {
		for (uint32_t s = 0; s < slots && submitted < total; s++) {
			if (r->jobs[s].busy)
				continue;
			if (submit(r, s) != 0)
				return 0;
			submitted++;
		}
		int n = vyre_cuda_backend->reap(r->b, done, SLOTS, REAP_TIMEOUT);
		if (n <= 0) {
			FAIL("%s: reap returned %d: %s", r->mode, n, vyre_cuda_last_error(r->b));
			return 0;
		}
		for (int i = 0; i < n; i++) {
			if (reported + (uint32_t)i < slots)
				check_done(r, &done[i], 0);
			r->jobs[done[i].slot].busy = 0;
		}
		reported += (uint32_t)n;
	}
	return total / (now_s() - t0);
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Latency of batches of k = 1..4 independent ADD items (one group, as vyred
 * forms them from several clients; 16 words each, 10 for k = 4, whose 16
 * words would not fit a doorbell), submit -> reap, reaped without waiting as
 * vyred does: IMMEDIATE and the slab path alternate in blocks of 250, so
 * both come from the same seconds. For the log; the first batch of each path
 * is compared with the oracle.
 */
#define LAT_SAMPLES 2000u
static void small_latency(struct rig *r)
{
	static double lat[2][LAT_SAMPLES];
	struct job *j = &r->jobs[0];
	struct vyre_slot_done d;
	struct vyre_cuda_stats st0, st1;

	for (uint32_t k = 1; k <= 4; k++) {
		struct vyre_heap_view views[SLOTS + 1] = {{0}};
		const uint32_t words = k < 4 ? 16 : 10;
		uint32_t n[2] = {0, 0};

		for (uint32_t i = 0; i < k; i++)
			j->g.items[i] = (struct vyre_exec_item){.op = VYRE_OP_ADD,
								.param = i + 1,
								.in_heap = 0,
								.out_heap = 0,
								.in_bytes = 4 * words,
								.out_bytes = 4 * words,
								.in_off = 4096 * i,
								.out_off = 65536 + 4096 * i};
		plan_one(&j->g, k);
		memcpy(j->want, j->heap, HEAP_BYTES);
		views[0] = (struct vyre_heap_view){j->want, HEAP_BYTES};
		vyre_exec_sequential(views, j->g.items, k, j->expect);
		vyre_cuda_get_stats(r->b, &st0);
		for (uint32_t i = 0; i < 2 * LAT_SAMPLES; i++) {
			const uint32_t path = i / 250 % 2;
			int got = 0;

			vyre_cuda_set_immediate(r->b, path == 0);
			const double t0 = now_s();
			if (submit(r, 0) != 0)
				return;
			while (got == 0 && now_s() - t0 < 20.0)
				got = vyre_cuda_backend->reap(r->b, &d, 1, 0);
			lat[path][n[path]++] = now_s() - t0;
			if (got != 1) {
				FAIL("%s: %u-item batch: reap returned %d: %s", r->mode, k, got,
				     vyre_cuda_last_error(r->b));
				return;
			}
			if (i % 250 == 0 && i < 500)
				check_done(r, &d, 0);
			else if (d.status != 0)
				FAIL("%s: %u-item batch status %d", r->mode, k, d.status);
			j->busy = 0;
		}
		vyre_cuda_set_immediate(r->b, 1);
		vyre_cuda_get_stats(r->b, &st1);
		if (st1.immediates - st0.immediates != LAT_SAMPLES)
			FAIL("%s: %u-item batches: %llu of %u ran IMMEDIATE", r->mode, k,
			     (unsigned long long)(st1.immediates - st0.immediates), LAT_SAMPLES);
		qsort(lat[0], LAT_SAMPLES, sizeof(double), cmp_double);
		qsort(lat[1], LAT_SAMPLES, sizeof(double), cmp_double);
		printf(
		    "%s: %u-item batch (ADD x %u words each) submit->reap: IMMEDIATE median %.2f "
		    "us (p99 %.2f), slab median %.2f us (p99 %.2f)\n",
		    r->mode, k, words, 1e6 * lat[0][LAT_SAMPLES / 2],
		    1e6 * lat[0][LAT_SAMPLES * 99 / 100], 1e6 * lat[1][LAT_SAMPLES / 2],
		    1e6 * lat[1][LAT_SAMPLES * 99 / 100]);
	}
}

static void differential(int mode)
{
	const uint32_t total = 600 * gen_scale();
	struct vyre_slot_done done[SLOTS];
	struct vyre_cuda_stats st;
	uint64_t busy_at_reap = 0, reaps = 0;
	uint32_t submitted = 0, reported = 0;
	struct rig r;

	if (rig_open(&r, (enum vyre_cuda_mode)mode, 0x51075 + (uint64_t)mode) != 0) {
		failures++;
		rig_close(&r);
		return;
	}
	while (reported < total) {
		for (uint32_t s = 0; s < SLOTS && submitted < total; s++) {
			if (r.jobs[s].busy)
				continue;
			random_batch(&r, s, submitted);
			if (submit(&r, s) != 0)
				goto out;
			submitted++;
		}
		for (uint32_t s = 0; s < SLOTS; s++)
			busy_at_reap += (uint64_t)r.jobs[s].busy;
		reaps++;
		int n = vyre_cuda_backend->reap(r.b, done, SLOTS, REAP_TIMEOUT);
		if (n <= 0) {
			FAIL("%s: reap returned %d: %s", r.mode, n, vyre_cuda_last_error(r.b));
			goto out;
		}
		for (int i = 0; i < n; i++)
			check_done(&r, &done[i], 0);
		reported += (uint32_t)n;
	}
	if (!failures) {
		const double one = small_rate(&r, 1, 4000), all = small_rate(&r, SLOTS, 4000);
		printf(
		    "%s: small batches (4 items): %.0f/s in 1 slot, %.0f/s in %u slots (%.2fx)\n",
		    r.mode, one, all, SLOTS, one > 0 ? all / one : 0.0);
		if (mode == VYRE_CUDA_PERSISTENT)
			small_latency(&r);
	}
out:
	vyre_cuda_get_stats(r.b, &st);
	printf("%s: %u batches in %u slots, %.2f busy slots per reap on average; %llu launches "
	       "(%llu immediate), %llu kernel starts, %llu faults, %u failure(s)\n",
	       r.mode, reported, SLOTS, reaps ? (double)busy_at_reap / (double)reaps : 0.0,
	       (unsigned long long)st.launches, (unsigned long long)st.immediates,
	       (unsigned long long)st.kernel_starts, (unsigned long long)st.faults, failures);
	if (st.faults != 0)
		FAIL("%s: %llu faults", r.mode, (unsigned long long)st.faults);
	rig_close(&r);
}

/* Fill every slot, injecting @what into slot @victim's batch, and reap them all. */
static void fill_with_fault(struct rig *r, uint32_t what, uint32_t victim, uint32_t round)
{
	for (uint32_t s = 0; s < SLOTS; s++) {
		if (s == victim) {
			gen_device_batch(&r->jobs[s].g, s);
			r->jobs[s].must_fail = what == VYRE_CUDA_INJECT_STALL ? 2 : 1;
			if (vyre_cuda_inject(r->b, what) != 0)
				FAIL("%s: inject", r->mode);
		} else {
			random_batch(r, s, round * SLOTS + s + 1);
		}
		if (submit(r, s) != 0)
			return;
	}
	reap_all(r, what == VYRE_CUDA_INJECT_FAULT);
}

static void watchdog(int mode)
{
	struct vyre_cuda_stats st;
	struct rig r;

	if (rig_open(&r, (enum vyre_cuda_mode)mode, 0x3a7c + (uint64_t)mode) != 0) {
		failures++;
		rig_close(&r);
		return;
	}
	for (uint32_t round = 0; round < 3; round++)
		fill_with_fault(&r, VYRE_CUDA_INJECT_STALL, (round * 2 + 1) % SLOTS, round);
	vyre_cuda_get_stats(r.b, &st);
	if (st.watchdog_trips != 3 || !vyre_cuda_usable(r.b))
		FAIL("%s: %llu watchdog trips (want 3), usable %d", r.mode,
		     (unsigned long long)st.watchdog_trips, vyre_cuda_usable(r.b));
	/* and the backend goes on */
	for (uint32_t round = 3; round < 20; round++) {
		for (uint32_t s = 0; s < SLOTS; s++) {
			random_batch(&r, s, round * SLOTS + s);
			if (submit(&r, s) != 0)
				break;
		}
		if (reap_all(&r, 0) != 0)
			break;
	}
	printf("%s watchdog: 3 trips with %u slots in flight, then 17 full rounds: %u "
	       "failure(s)\n",
	       r.mode, SLOTS, failures);
	rig_close(&r);
}

static void device_fault(int mode)
{
	struct rig r;
	int err;

	if (rig_open(&r, (enum vyre_cuda_mode)mode, 0xfa17 + (uint64_t)mode) != 0) {
		failures++;
		rig_close(&r);
		return;
	}
	fill_with_fault(&r, VYRE_CUDA_INJECT_FAULT, 2, 0);
	if (vyre_cuda_usable(r.b))
		FAIL("%s: usable after an illegal address", r.mode);
	gen_device_batch(&r.jobs[0].g, 0);
	err = vyre_cuda_backend->submit(r.b, 0, &r.jobs[0].g.batch);
	if (err != VYRE_E_DEVICE)
		FAIL("%s: a submit after the fault returned %d", r.mode, err);
	printf("%s device fault with %u slots in flight: %u failure(s)\n", r.mode, SLOTS, failures);
	rig_close(&r); /* must not hang on the dead context */
}

int main(void)
{
	uint32_t bad = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* short limits so the faults show quickly; children inherit them */
	setenv("VYRE_CUDA_WATCHDOG_MS", "300", 1);
	const int skip = gen_require_gpu_in_child();

	if (skip)
		return skip;
	for (int mode = VYRE_CUDA_PERSISTENT; mode <= VYRE_CUDA_LAUNCH; mode++) {
		bad += gen_in_child(differential, mode, &failures);
		bad += gen_in_child(watchdog, mode, &failures);
		bad += gen_in_child(device_fault, mode, &failures);
	}
	printf("cuda inflight: %u scenario(s) failed\n", bad);
	return bad ? 1 : 0;
}
