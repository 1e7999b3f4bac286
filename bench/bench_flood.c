/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_flood.c - suite "flood": what a client flooding its SQ costs
 * the other clients of the same vyred (issue 6).
 *
 * Two victim processes measure submit -> CQE latency one item at a time
 * (vyre_submit, vyre_wait) while a flooder process runs in one of three modes:
 *   alone     the flooder is idle: the victims' baseline
 *   stalled   the flooder fills its SQ and never reaps: its CQ fills, vyred
 *             stops taking its items (back-pressure, VYRE_E_AGAIN) and must
 *             serve the victims as if it were not there
 *   reaping   the flooder submits batches of 4 KiB items and reaps as fast as
 *             it can: vyred is saturated and shares batches between clients
 * The modes alternate in rounds (alone, stalled, reaping, ...) so a noisy
 * machine slows all of them alike; each mode's victims' latency is reported
 * pooled over the rounds, and the p99 ratios to "alone" as the median of the
 * per-round ratios. The flooder's items/s and back-pressure rate are
 * reported too, and beside the victims' rows of each mode and the
 * flooder's, "vyred cpu": the ns of CPU vyred spent over that mode's phases
 * per item of them, the victims' completed and the flooder's submitted (the
 * flooder's row is the reaping victims' figure; harness_cpu.h). Without
 * --socket the suite starts its own vyred (the binary next to vyre-bench,
 * --backend cpu); with it, the vyred's pid comes from SO_PEERCRED.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "harness_client.h"
#include "harness_clock.h"
#include "harness_cpu.h"
#include "harness_procs.h"
#include "harness_stats.h"
#include "harness_vyred.h"

#define VICTIMS	     2u
#define MODES	     3u
#define ROUNDS	     5u
#define QUICK_ROUNDS 2u
#define SAMPLES	     (1u << 16) /* per victim and mode */
#define FLOOD_BATCH  256u
#define FLOOD_BYTES  4096u
#define VICTIM_BYTES 64u
#define WAIT_NS	     (5ll * 1000000000ll)
#define STOP	     ((uint32_t)MODES)

enum mode { ALONE, STALLED, REAPING };

static const char *const mode_name[MODES] = {"alone", "stalled", "reaping"};

struct line {
	_Alignas(64) uint64_t v;
};

/* Shared with the children: the parent sets phase/measuring, children report. */
struct board {
	struct line mode;      /* enum mode, or STOP */
	struct line measuring; /* victims record samples while set */
	struct line ready;
	struct line flood_items;
	struct line flood_again;
	struct line flood_idle;	  /* the flooder has drained and is idle */
	struct line victim_items; /* completed while measuring, past the SAMPLES kept too */
	struct line failed;
	struct line parked[VICTIMS]; /* the victim saw measuring cleared and records nothing */
	struct line n[VICTIMS][MODES];
	uint64_t ticks[VICTIMS][MODES][SAMPLES];
};

struct child_arg {
	const char *socket;
	struct board *b;
	unsigned id;
};

static void pause_us(long us)
{
	nanosleep(&(struct timespec){0, us * 1000}, NULL);
}

static int victim_main(void *arg)
{
	const struct child_arg *a = arg;
	struct board *b = a->b;
	struct vyre_connect_opts o = {.socket_path = a->socket};
	struct vyre_client *c;
	uint32_t in, out;
	struct vyre_cqe cqe;

	if (vyre_bench_client_open(&o, VICTIM_BYTES, &c, &in, &out))
		return 1;
	__atomic_fetch_add(&b->ready.v, 1, __ATOMIC_ACQ_REL);
	for (uint64_t k = 1;; k++) {
		uint64_t mode = __atomic_load_n(&b->mode.v, __ATOMIC_ACQUIRE);

		if (mode == STOP)
			break;
		if (!__atomic_load_n(&b->measuring.v, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&b->parked[a->id].v, 1, __ATOMIC_RELEASE);
			pause_us(100);
			continue;
		}
		__atomic_store_n(&b->parked[a->id].v, 0, __ATOMIC_RELEASE);
		struct vyre_work_item it = {VYRE_OP_ADD, in, out, (uint32_t)k};
		uint64_t t0 = vyre_bench_ticks();
		int rc = vyre_submit(c, &it, k, 0);

		if (rc == 0)
			rc = vyre_wait(c, &cqe, 1, WAIT_NS);
		uint64_t dt = vyre_bench_ticks() - t0;

		if (rc != 1 || cqe.user_data != k || cqe.status != 0) {
			__atomic_store_n(&b->failed.v, 1, __ATOMIC_RELEASE);
			break;
		}
		__atomic_fetch_add(&b->victim_items.v, 1, __ATOMIC_RELAXED);
		uint64_t i = b->n[a->id][mode].v;

		if (i < SAMPLES) {
			b->ticks[a->id][mode][i] = dt;
			__atomic_store_n(&b->n[a->id][mode].v, i + 1, __ATOMIC_RELEASE);
		}
	}
	vyre_close(c);
	return 0;
}

/* Reaps what is ready; returns the count or a negative error. */
static int flood_reap(struct vyre_client *c, uint64_t *outstanding, int64_t wait_ns)
{
	struct vyre_cqe cqes[FLOOD_BATCH];
	int n =
	    wait_ns ? vyre_wait(c, cqes, FLOOD_BATCH, wait_ns) : vyre_reap(c, cqes, FLOOD_BATCH);

	if (n == VYRE_E_TIMEDOUT)
		return 0;
	if (n > 0)
		*outstanding -= (uint64_t)n;
	return n;
}

static int flooder_main(void *arg)
{
	const struct child_arg *a = arg;
	struct board *b = a->b;
	struct vyre_connect_opts o = {.socket_path = a->socket};
	struct vyre_client *c;
	struct vyre_work_item its[FLOOD_BATCH];
	uint64_t seq = 0, outstanding = 0;
	uint32_t in, out;

	if (vyre_bench_client_open(&o, FLOOD_BYTES, &c, &in, &out))
		return 1;
	__atomic_fetch_add(&b->ready.v, 1, __ATOMIC_ACQ_REL);
	for (;;) {
		uint64_t mode = __atomic_load_n(&b->mode.v, __ATOMIC_ACQUIRE);
		int rc = 0;

		if (mode == STOP)
			break;
		if (mode == ALONE) {
			/* idle: drain what is in flight, then say so */
			while (outstanding && rc >= 0)
				rc = flood_reap(c, &outstanding, 1000000);
			__atomic_store_n(&b->flood_idle.v, 1, __ATOMIC_RELEASE);
			pause_us(200);
		} else {
			__atomic_store_n(&b->flood_idle.v, 0, __ATOMIC_RELEASE);
			for (uint32_t i = 0; i < FLOOD_BATCH; i++)
				its[i] = (struct vyre_work_item){VYRE_OP_ADD, in, out,
								 (uint32_t)(seq + i)};
			rc = vyre_submit_batch(c, its, NULL, FLOOD_BATCH);
			if (rc > 0) {
				seq += (uint64_t)rc;
				outstanding += (uint64_t)rc;
				__atomic_fetch_add(&b->flood_items.v, (uint64_t)rc,
						   __ATOMIC_RELAXED);
			} else if (rc == 0) {
				__atomic_fetch_add(&b->flood_again.v, 1, __ATOMIC_RELAXED);
				if (mode == STALLED)
					pause_us(50);
			}
			if (rc >= 0 && mode == REAPING)
				rc = flood_reap(c, &outstanding, rc == 0 ? 1000000 : 0);
		}
		if (rc < 0) {
			__atomic_store_n(&b->failed.v, 1, __ATOMIC_RELEASE);
			break;
		}
	}
	vyre_close(c);
	return 0;
}

/*
 * Once every victim is parked, moves the round's samples of @mode into @pool
 * and empties the victims' arrays for the next round; returns the round's
 * p99 (ns), or 0 without samples.
 */
static double collect(struct board *b, enum mode mode, struct vyre_bench_samples *pool)
{
	size_t from = pool->n;

	for (unsigned v = 0; v < VICTIMS; v++) {
		for (int i = 0; i < 5000 && !__atomic_load_n(&b->parked[v].v, __ATOMIC_ACQUIRE);
		     i++)
			pause_us(1000);
		uint64_t n = __atomic_load_n(&b->n[v][mode].v, __ATOMIC_ACQUIRE);

		for (uint64_t i = 0; i < n; i++)
			vyre_bench_sample(pool, b->ticks[v][mode][i]);
		__atomic_store_n(&b->n[v][mode].v, 0, __ATOMIC_RELEASE);
	}
	return pool->n > from ? vyre_bench_quantile_ns_from(pool, from, 0.99) : 0;
}

/* The rounds, vyred @vyred's CPU over each mode's phases into @cpu. */
static int run_rounds(struct vyre_bench_ctx *ctx, struct board *b, pid_t vyred, double *flood_s,
		      struct vyre_bench_cpu_sum cpu[MODES])
{
	unsigned rounds = ctx->quick ? QUICK_ROUNDS : ROUNDS;
	double p99[MODES][ROUNDS];
	struct vyre_bench_samples pool[MODES];
	uint64_t phase_ns = (uint64_t)(ctx->seconds * 1e9 / rounds);
	int rc = 0;

	for (unsigned m = 0; m < MODES; m++)
		if (vyre_bench_samples_init(&pool[m], (size_t)VICTIMS * SAMPLES * rounds))
			return -1;
	*flood_s = 0;
	for (unsigned m = 0; m < MODES; m++)
		cpu[m] = (struct vyre_bench_cpu_sum){0, 0};
	for (unsigned r = 0; r < rounds && !rc; r++)
		for (unsigned m = 0; m < MODES && !rc; m++) {
			struct vyre_bench_cpu window;

			__atomic_store_n(&b->mode.v, m, __ATOMIC_RELEASE);
			/* "alone" starts once the flooder has drained; the others once it ramps up
			 */
			for (int i = 0; i < 5000 && m == ALONE &&
					!__atomic_load_n(&b->flood_idle.v, __ATOMIC_ACQUIRE);
			     i++)
				pause_us(1000);
			if (m != ALONE)
				pause_us(20000);
			vyre_bench_cpu_start(&window, vyred);
			const uint64_t items0 =
			    __atomic_load_n(&b->flood_items.v, __ATOMIC_RELAXED) +
			    __atomic_load_n(&b->victim_items.v, __ATOMIC_RELAXED);
			uint64_t t0 = vyre_bench_now_ns();

			__atomic_store_n(&b->measuring.v, 1, __ATOMIC_RELEASE);
			while (vyre_bench_now_ns() - t0 < phase_ns)
				pause_us(1000);
			const uint64_t t1 = vyre_bench_now_ns();
			const uint64_t items =
			    __atomic_load_n(&b->flood_items.v, __ATOMIC_RELAXED) +
			    __atomic_load_n(&b->victim_items.v, __ATOMIC_RELAXED) - items0;

			vyre_bench_cpu_add(&cpu[m], &window, items);
			__atomic_store_n(&b->measuring.v, 0, __ATOMIC_RELEASE);
			if (m == REAPING)
				*flood_s += (double)(t1 - t0) / 1e9;
			p99[m][r] = collect(b, (enum mode)m, &pool[m]);
			rc = __atomic_load_n(&b->failed.v, __ATOMIC_ACQUIRE) ? -1 : 0;
		}
	for (unsigned m = 0; m < MODES && !rc; m++) {
		char name[48];

		snprintf(name, sizeof(name), "victim_%s", mode_name[m]);
		vyre_bench_report_latency(ctx, "flood", name, &pool[m]);
		vyre_bench_report_vyred_cpu(ctx, "flood", name,
					    vyre_bench_cpu_sum_per_item(&cpu[m]));
	}
	if (!rc) {
		vyre_bench_report(ctx, "flood", "victim_p99_stalled_vs_alone", "ratio",
				  vyre_bench_paired_ratio(p99[STALLED], p99[ALONE], rounds), "x");
		vyre_bench_report(ctx, "flood", "victim_p99_reaping_vs_alone", "ratio",
				  vyre_bench_paired_ratio(p99[REAPING], p99[ALONE], rounds), "x");
	}
	for (unsigned m = 0; m < MODES; m++)
		vyre_bench_samples_free(&pool[m]);
	return rc;
}

static int run_against(struct vyre_bench_ctx *ctx, const char *socket, pid_t vyred)
{
	struct vyre_bench_cpu_sum cpu[MODES];
	struct board *b = vyre_bench_shared_alloc(sizeof(*b));
	struct child_arg args[VICTIMS + 1];
	pid_t pids[VICTIMS + 1];
	unsigned spawned = 0;
	double flood_s = 0;
	int rc = 0;

	if (!b)
		return -1;
	for (; spawned < VICTIMS + 1; spawned++) {
		args[spawned] = (struct child_arg){socket, b, spawned};
		/* unpinned: vyred is not pinned either, and on a 2-core machine pinning
		 * would stack the flooder on a victim's CPU */
		pids[spawned] = vyre_bench_spawn(-1, spawned < VICTIMS ? victim_main : flooder_main,
						 &args[spawned]);
		if (pids[spawned] < 0)
			break;
	}
	uint64_t t0 = vyre_bench_now_ns();

	while (__atomic_load_n(&b->ready.v, __ATOMIC_ACQUIRE) < spawned &&
	       vyre_bench_now_ns() - t0 < (uint64_t)WAIT_NS)
		pause_us(1000);
	if (spawned != VICTIMS + 1 || __atomic_load_n(&b->ready.v, __ATOMIC_ACQUIRE) != spawned)
		rc = -1;
	if (!rc)
		rc = run_rounds(ctx, b, vyred, &flood_s, cpu);
	__atomic_store_n(&b->mode.v, STOP, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < spawned; i++)
		if (vyre_bench_reap(pids[i]) != 0)
			rc = -1;
	if (!rc && flood_s > 0) {
		vyre_bench_report(ctx, "flood", "flooder", "items/s",
				  (double)b->flood_items.v / flood_s, "items/s");
		vyre_bench_report(ctx, "flood", "flooder", "again", (double)b->flood_again.v,
				  "count");
		vyre_bench_report_vyred_cpu(ctx, "flood", "flooder",
					    vyre_bench_cpu_sum_per_item(&cpu[REAPING]));
	}
	if (rc)
		fprintf(stderr, "flood: a victim or the flooder failed\n");
	vyre_bench_shared_free(b, sizeof(*b));
	return rc;
}

static int flood_suite(struct vyre_bench_ctx *ctx)
{
	struct vyre_bench_vyred d = {.pid = -1};
	char bin[PATH_MAX];
	int rc;

	vyre_bench_clock_calibrate();
	if (ctx->socket)
		return run_against(ctx, ctx->socket, vyre_bench_socket_pid(ctx->socket));
	if (!vyre_bench_find_vyred(bin, sizeof(bin))) {
		fprintf(stderr, "flood: skipped: no vyred next to vyre-bench and no --socket\n");
		return 0;
	}
	if (vyre_bench_vyred_start(&d, "flood", bin,
				   (const char *const[]){"--backend", "cpu", NULL}))
		return -1;
	rc = run_against(ctx, d.sock, d.pid);
	vyre_bench_vyred_stop(&d, "flood", NULL);
	return rc;
}

VYRE_BENCH_SUITE(flood, "victims' submit -> CQE latency with a client flooding its SQ", flood_suite)
