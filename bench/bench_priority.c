/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_priority.c - suite "priority": what priority classes buy a
 * latency-critical producer beside bulk ones (docs/design.md 8.9, issue 14).
 *
 * A closed-loop producer submits one trivial item at a time and measures
 * submit -> CQE; K flooder processes submit open-loop batches of
 * FLOOD_BATCH trivial items, keeping their SQs full. Phases alternate in
 * rounds: "alone" (the flooders drained and idle) and "flooded". The whole
 * is run three times, each with its own vyred: "classes" (vyred --loops 1
 * --priority-max 1, the producer in class 1, the flooders in 0: what drain
 * does within one loop), "one_class" (--loops 1, everyone in class 0, the
 * behaviour without priorities) and "classes_loops2" (as "classes" with
 * --loops 2: placement puts the producer on a loop of its own). Rows:
 * the producer's p50/p99/p999 alone and flooded in each, the p99 ratio
 * flooded / alone (the median of per-round ratios; the target is 1.5x with
 * classes) and the flood's items/s. Beside the producer's rows and the
 * flood's, "vyred cpu": the ns of CPU vyred spent over the phases of that
 * kind per item of them (the flood's and the producer's alike, so the
 * flooded producer's row and the flood's are one figure; harness_cpu.h).
 */
#include <limits.h>
#include <stdio.h>
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

#define FLOODERS       2u
#define FLOOD_BATCH    1024u
#define FLOOD_SQ       4096u
#define ROUNDS	       4u
#define QUICK_ROUNDS   2u
#define SAMPLES	       (1u << 17) /* per phase, over the rounds */
#define ITEM_BYTES     64u
#define WAIT_NS	       (5ll * 1000000000ll)
#define SETTLE_US      20000
#define READY_TRIES    5000
#define PHASES	       2u
#define PHASE_STOP     PHASES
#define PRODUCER_CLASS 1u

enum phase { ALONE, FLOODED };

struct line {
	_Alignas(64) uint64_t v;
};

struct board {
	struct line phase;     /* enum phase, or PHASE_STOP */
	struct line measuring; /* the producer records while set */
	struct line ready;
	struct line failed;
	struct line why;	    /* the first failure: its error and who had it (fail()) */
	struct line parked;	    /* the producer saw measuring cleared and records nothing */
	struct line idle[FLOODERS]; /* the flooder drained and is idle */
	struct line flood_items;
	struct line producer_items; /* completed while measuring, past the SAMPLES kept too */
	struct line n[PHASES];
	uint64_t ticks[PHASES][SAMPLES];
};

struct child {
	const char *socket;
	struct board *b;
	uint32_t priority;
	unsigned id;
};

static void pause_us(long us)
{
	nanosleep(&(struct timespec){0, us * 1000}, NULL);
}

static uint64_t load(struct line *l)
{
	return __atomic_load_n(&l->v, __ATOMIC_ACQUIRE);
}

static void store(struct line *l, uint64_t v)
{
	__atomic_store_n(&l->v, v, __ATOMIC_RELEASE);
}

/* The first failure wins: @who is 0 for the producer, 1 + its index for a flooder. */
static void fail(struct board *b, uint32_t who, int err)
{
	uint64_t none = 0;

	__atomic_compare_exchange_n(&b->why.v, &none, (uint64_t)who << 32 | (uint32_t)err, 0,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	store(&b->failed, 1);
}

static int producer_main(void *arg)
{
	const struct child *a = arg;
	struct board *b = a->b;
	struct vyre_connect_opts o = {.socket_path = a->socket, .priority = a->priority};
	struct vyre_client *c;
	uint32_t in, out;
	struct vyre_cqe cqe;

	if (vyre_bench_client_open(&o, ITEM_BYTES, &c, &in, &out))
		return 1;
	__atomic_fetch_add(&b->ready.v, 1, __ATOMIC_ACQ_REL);
	for (uint64_t k = 1;; k++) {
		const uint64_t phase = load(&b->phase);

		if (phase == PHASE_STOP)
			break;
		if (!load(&b->measuring)) {
			store(&b->parked, 1);
			pause_us(100);
			continue;
		}
		store(&b->parked, 0);
		struct vyre_work_item it = {VYRE_OP_ADD, in, out, (uint32_t)k};
		const uint64_t t0 = vyre_bench_ticks();
		int rc = vyre_submit(c, &it, k, 0);

		if (rc == 0)
			rc = vyre_wait(c, &cqe, 1, WAIT_NS);
		const uint64_t dt = vyre_bench_ticks() - t0;

		if (rc != 1 || cqe.user_data != k || cqe.status != 0) {
			fail(b, 0, rc != 1 ? rc : cqe.status ? cqe.status : VYRE_E_PROTO);
			break;
		}
		store(&b->producer_items, b->producer_items.v + 1);
		const uint64_t i = b->n[phase].v;

		if (i < SAMPLES) {
			b->ticks[phase][i] = dt;
			store(&b->n[phase], i + 1);
		}
	}
	vyre_close(c);
	return 0;
}

/* Open loop: as many batches as the SQ takes, then what completed, never waiting long. */
static int flooder_main(void *arg)
{
	const struct child *a = arg;
	struct board *b = a->b;
	struct vyre_connect_opts o = {
	    .socket_path = a->socket, .sq_entries = FLOOD_SQ, .cq_entries = FLOOD_SQ};
	static struct vyre_work_item its[FLOOD_BATCH];
	static struct vyre_cqe cqes[FLOOD_SQ];
	struct vyre_client *c;
	uint64_t outstanding = 0;

	if (vyre_connect(&o, &c))
		return 1;
	for (uint32_t i = 0; i < FLOOD_BATCH; i++)
		its[i] = (struct vyre_work_item){VYRE_OP_NOP, 0, 0, i};
	__atomic_fetch_add(&b->ready.v, 1, __ATOMIC_ACQ_REL);
	int rc = 0;

	while (rc >= 0) {
		const uint64_t phase = load(&b->phase);

		if (phase == PHASE_STOP)
			break;
		int sent = 0;

		if (phase == FLOODED) {
			store(&b->idle[a->id], 0);
			sent = vyre_submit_batch(c, its, NULL, FLOOD_BATCH);
			if (sent < 0) {
				rc = sent;
				break;
			}
			outstanding += (uint64_t)sent;
			__atomic_fetch_add(&b->flood_items.v, (uint64_t)sent, __ATOMIC_RELAXED);
		}
		if (!outstanding) {
			store(&b->idle[a->id], phase == ALONE);
			pause_us(200);
			continue;
		}
		rc = sent ? vyre_reap(c, cqes, FLOOD_SQ) : vyre_wait(c, cqes, FLOOD_SQ, 1000000);
		if (rc == VYRE_E_TIMEDOUT)
			rc = 0;
		for (int k = 0, n = rc; k < n; k++)
			if (cqes[k].status != 0)
				rc = cqes[k].status;
		if (rc > 0)
			outstanding -= (uint64_t)rc;
	}
	if (load(&b->phase) != PHASE_STOP)
		fail(b, a->id + 1, rc < 0 ? rc : VYRE_E_PROTO);
	vyre_close(c);
	return 0;
}

static int wait_for(struct line *l, uint64_t want)
{
	for (int i = 0; i < READY_TRIES && load(l) != want; i++)
		pause_us(1000);
	return load(l) == want ? 0 : -1;
}

/*
 * Rounds of alone / flooded; fills @pool per phase, @p99 per round and phase,
 * the flood's items and seconds over the flooded phases, and @cpu per phase:
 * vyred @vyred's over the phases' items, the producer's completed and the
 * flood's submitted (as its items/s counts them).
 */
static int rounds(struct vyre_bench_ctx *ctx, struct board *b, unsigned n, pid_t vyred,
		  struct vyre_bench_samples *pool, double p99[PHASES][ROUNDS], double *flood_s,
		  uint64_t *flood_items, struct vyre_bench_cpu_sum cpu[PHASES])
{
	const uint64_t phase_ns = (uint64_t)(ctx->seconds * 1e9 / (2.0 * n * PHASES));

	*flood_s = 0;
	*flood_items = 0;
	for (unsigned p = 0; p < PHASES; p++)
		cpu[p] = (struct vyre_bench_cpu_sum){0, 0};
	for (unsigned r = 0; r < n; r++)
		for (unsigned p = 0; p < PHASES; p++) {
			struct vyre_bench_cpu window;

			/* the flood's rate counts from the phase's start, its ramp included */
			const uint64_t before = load(&b->flood_items), start = vyre_bench_now_ns();

			store(&b->phase, p);
			for (unsigned f = 0; p == ALONE && f < FLOODERS; f++)
				if (wait_for(&b->idle[f], 1) != 0)
					return -1;
			/*
			 * a flooded phase is measured once the flood runs: a slow machine (a
			 * sanitizer build on 2 loaded CPUs) may not schedule a flooder for a
			 * whole short phase
			 */
			for (int i = 0;
			     p == FLOODED && i < READY_TRIES && load(&b->flood_items) == before;
			     i++)
				pause_us(1000);
			pause_us(SETTLE_US);
			vyre_bench_cpu_start(&window, vyred);
			const uint64_t items0 = load(&b->flood_items), t0 = vyre_bench_now_ns();
			const uint64_t mine0 = load(&b->producer_items);

			store(&b->measuring, 1);
			/*
			 * and past its length until an item completed in it (at most READY_TRIES
			 * ms more), so that vyred's CPU an item has items to divide by: on a
			 * sanitizer build on 2 loaded CPUs a short phase may see none
			 */
			for (int extra = 0; !load(&b->failed);) {
				const uint64_t done_now =
				    load(&b->producer_items) - mine0 +
				    (p == FLOODED ? load(&b->flood_items) - items0 : 0);
				const int over = vyre_bench_now_ns() - t0 >= phase_ns;

				if (over && (done_now > 0 || extra >= READY_TRIES))
					break;
				extra += over;
				pause_us(1000);
			}
			const uint64_t flood = load(&b->flood_items) - items0,
				       t1 = vyre_bench_now_ns();
			const uint64_t mine = load(&b->producer_items) - mine0;

			vyre_bench_cpu_add(&cpu[p], &window, mine + (p == FLOODED ? flood : 0));
			if (p == FLOODED) {
				*flood_s += (double)(t1 - start) / 1e9;
				*flood_items += flood + (items0 - before);
			}
			store(&b->parked, 0);
			store(&b->measuring, 0);
			if (wait_for(&b->parked, 1) != 0)
				return -1;
			const size_t from = pool[p].n;
			const uint64_t got = load(&b->n[p]);

			for (uint64_t i = 0; i < got; i++)
				vyre_bench_sample(&pool[p], b->ticks[p][i]);
			store(&b->n[p], 0);
			p99[p][r] = pool[p].n > from
					? vyre_bench_quantile_ns_from(&pool[p], from, 0.99)
					: 0;
			if (load(&b->failed))
				return -1;
		}
	return 0;
}

/*
 * One vyred of @loops loops, one producer of class @priority, FLOODERS
 * flooders; rows named after @config.
 */
static int run_config(struct vyre_bench_ctx *ctx, const char *bin, const char *config,
		      uint32_t priority, const char *loops)
{
	const unsigned n = ctx->quick ? QUICK_ROUNDS : ROUNDS;
	struct vyre_bench_vyred_opts vo;
	const char *args[8 + VYRE_BENCH_VYRED_OPTS_ARGS];
	unsigned na = 0;
	struct vyre_bench_vyred d = {0};
	struct board *b = vyre_bench_shared_alloc(sizeof(*b));
	struct vyre_bench_samples pool[PHASES] = {0};
	double p99[PHASES][ROUNDS], flood_s = 0;
	uint64_t flood_items = 0;
	struct vyre_bench_cpu_sum cpu[PHASES];
	struct child kids[1 + FLOODERS];
	pid_t pids[1 + FLOODERS];
	unsigned spawned = 0;
	int rc = -1;

	if (!b)
		return -1;
	vyre_bench_vyred_opts(ctx, "priority", bin, &vo);
	if (ctx->cpu_only) {
		args[na++] = "--backend";
		args[na++] = "cpu";
	}
	args[na++] = "--loops";
	args[na++] = loops;
	args[na++] = "--priority-max";
	args[na++] = priority ? "1" : "0";
	na = vyre_bench_vyred_opts_args(&vo, args, na);
	args[na] = NULL;
	if (vyre_bench_vyred_start(&d, "priority", bin, args) != 0) {
		vyre_bench_shared_free(b, sizeof(*b));
		return -1;
	}
	for (; spawned < 1 + FLOODERS; spawned++) {
		kids[spawned] = (struct child){d.sock, b, spawned ? 0 : priority, spawned - 1};
		pids[spawned] =
		    vyre_bench_spawn(-1, spawned ? flooder_main : producer_main, &kids[spawned]);
		if (pids[spawned] < 0)
			break;
	}
	if (spawned == 1 + FLOODERS && wait_for(&b->ready, spawned) == 0 &&
	    vyre_bench_samples_init(&pool[ALONE], SAMPLES * (size_t)n) == 0 &&
	    vyre_bench_samples_init(&pool[FLOODED], SAMPLES * (size_t)n) == 0)
		rc = rounds(ctx, b, n, d.pid, pool, p99, &flood_s, &flood_items, cpu);
	store(&b->phase, PHASE_STOP);
	for (unsigned i = 0; i < spawned; i++)
		if (vyre_bench_reap(pids[i]) != 0)
			rc = -1;
	vyre_bench_vyred_stop(&d, "priority", NULL);
	if (rc == 0) {
		const double cpu_alone = vyre_bench_cpu_sum_per_item(&cpu[ALONE]);
		const double cpu_flooded = vyre_bench_cpu_sum_per_item(&cpu[FLOODED]);
		char name[64];

		snprintf(name, sizeof(name), "%s_producer_alone", config);
		vyre_bench_report_latency(ctx, "priority", name, &pool[ALONE]);
		vyre_bench_report_vyred_cpu(ctx, "priority", name, cpu_alone);
		snprintf(name, sizeof(name), "%s_producer_flooded", config);
		vyre_bench_report_latency(ctx, "priority", name, &pool[FLOODED]);
		vyre_bench_report_vyred_cpu(ctx, "priority", name, cpu_flooded);
		snprintf(name, sizeof(name), "%s_p99_flooded_vs_alone", config);
		vyre_bench_report(ctx, "priority", name, "ratio",
				  vyre_bench_paired_ratio(p99[FLOODED], p99[ALONE], n), "x");
		snprintf(name, sizeof(name), "%s_flood", config);
		vyre_bench_report(ctx, "priority", name, "items/s",
				  flood_s > 0 ? (double)flood_items / flood_s : 0, "items/s");
		vyre_bench_report_vyred_cpu(ctx, "priority", name, cpu_flooded);
	} else {
		const uint64_t why = load(&b->why);

		fprintf(stderr, "priority: %s: %s %u failed: %s\n", config,
			why >> 32 ? "flooder" : "the producer", (unsigned)(why >> 32),
			vyre_strerror((int)(int32_t)(uint32_t)why));
	}
	for (unsigned p = 0; p < PHASES; p++)
		vyre_bench_samples_free(&pool[p]);
	vyre_bench_shared_free(b, sizeof(*b));
	return rc;
}

static int priority_suite(struct vyre_bench_ctx *ctx)
{
	char bin[PATH_MAX];

	if (ctx->socket) {
		fprintf(stderr, "priority: skipped: it starts its own vyreds (no --socket)\n");
		return 0;
	}
	if (!vyre_bench_find_vyred(bin, sizeof(bin)) ||
	    !vyre_bench_vyred_has_flag(bin, "--priority-max")) {
		fprintf(stderr, "priority: skipped: no vyred with --priority-max next to "
				"vyre-bench\n");
		return 0;
	}
	vyre_bench_clock_calibrate();
	if (run_config(ctx, bin, "classes", PRODUCER_CLASS, "1") != 0 ||
	    run_config(ctx, bin, "one_class", 0, "1") != 0)
		return -1;
	return run_config(ctx, bin, "classes_loops2", PRODUCER_CLASS, "2");
}

VYRE_BENCH_SUITE(priority,
		 "a class-1 producer's submit -> CQE latency alone and beside class-0 flooders, "
		 "with classes and without in one loop, and with classes over two loops",
		 priority_suite)
