/* SPDX-License-Identifier: MIT */
/*
 * The "cuda" suite: the CUDA backend against its floors and baselines, all
 * in one run on one GPU.
 *
 *   floors     a bare cuLaunchKernel + cuStreamSynchronize of an empty
 *              kernel; a mapped-memory doorbell round trip to a resident
 *              kernel (latency p50/p99/p999)
 *   latency    one small item (ADD over 16 words) submitted to the backend
 *              and reaped to completion, persistent and launch modes
 *   throughput items/s for batches of 1..65536 trivial items (FILL of one
 *              word each, all independent) and of a DFA mix (1 in 4 items a
 *              DFA_SCAN of 64 bytes, the rest ADD over 16 words): persistent,
 *              launch, one cuLaunchKernel per item, one CUDA graph per batch
 *              (capture + instantiate + run; and replay alone); ratios
 *   e2e        with vyred next to vyre-bench: producer submit -> CQE seen by
 *              the producer, through vyred --backend cuda in both modes, and
 *              in persistent mode again with vyred's loop and the producer
 *              pinned to CPUs of different cores (vyred --cpu); each item
 *              back to back, and (the "random gaps" rows) after a random
 *              0-4 us pause
 *
 * Without nvcc at build time, or without a GPU, it says so and skips.
 */
#include <stdio.h>

#include "bench.h"

#ifdef VYRE_HAVE_CUDA
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cuda_e2e.h"
#include "cuda_backend.h"
#include "cuda_peers.h"
#include "harness_clock.h"
#include "harness_procs.h"
#include "harness_stats.h"
#include "vyre/vyre.h"

#define SUITE	   "cuda"
#define MAX_ITEMS  65536u
#define HEAP_BYTES (16u << 20)
#define OUT_BASE   (1u << 20) /* outputs: 64 bytes per item from here */
#define IN_OFF	   4096u      /* the shared 64-byte input */
#define TABLE_OFF  8192u      /* the shared 4-state DFA table */
#define POLL_NS	   30000000000ll

enum shape { SHAPE_TRIVIAL, SHAPE_DFA_MIX };

struct workload {
	struct vyre_exec_item items[MAX_ITEMS];
	struct vyre_exec_result results[MAX_ITEMS];
	uint32_t order[MAX_ITEMS];
	uint32_t group_end[1], launch_end[1];
	struct vyre_exec_batch batch;
};

static const uint32_t trivial_sizes[] = {1, 16, 256, 4096, 65536};
static const uint32_t dfa_sizes[] = {256, 4096, 65536};
#define N_TRIVIAL (sizeof(trivial_sizes) / sizeof(trivial_sizes[0]))
#define N_DFA	  (sizeof(dfa_sizes) / sizeof(dfa_sizes[0]))

/* items/s of each method, by [shape][size index] */
struct figures {
	double persistent[2][N_TRIVIAL], launch[2][N_TRIVIAL], per_item[2][N_TRIVIAL],
	    graph[2][N_TRIVIAL], replay[2][N_TRIVIAL];
	/* of a batch's submit -> reap, the share submit (lowering, posting) takes on the host */
	double submit_share[2][2][N_TRIVIAL];
};

static void write_heap(uint8_t *heap)
{
	uint32_t *w = (uint32_t *)(heap + TABLE_OFF);

	for (uint32_t i = 0; i < 16; i++)
		((uint32_t *)(heap + IN_OFF))[i] = 0x61626364u + i * 0x01010101u;
	/* 4 states, start 0, accepting 3; next = (state + byte) % 4 */
	w[0] = 4;
	w[1] = 0;
	w[2] = 1u << 3;
	for (uint32_t s = 0; s < 4; s++)
		for (uint32_t b = 0; b < 256; b++)
			w[3 + s * 256 + b] = (s + b) % 4;
}

/* @n independent items of @shape in one group and one launch. */
static void build(struct workload *w, enum shape shape, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct vyre_exec_item *it = &w->items[i];
		const uint64_t out = OUT_BASE + 64 * (uint64_t)i;

		if (shape == SHAPE_TRIVIAL)
			*it = (struct vyre_exec_item){
			    .op = VYRE_OP_FILL, .param = i, .out_off = out, .out_bytes = 4};
		else if (i % 4 == 0)
			*it = (struct vyre_exec_item){.op = VYRE_OP_DFA_SCAN,
						      .in_off = IN_OFF,
						      .in_bytes = 64,
						      .out_off = out,
						      .out_bytes = 4,
						      .table_off = TABLE_OFF,
						      .table_bytes = 4 * (3 + 4 * 256)};
		else
			*it = (struct vyre_exec_item){.op = VYRE_OP_ADD,
						      .param = i,
						      .in_off = IN_OFF,
						      .in_bytes = 64,
						      .out_off = out,
						      .out_bytes = 64};
		w->order[i] = i;
	}
	w->group_end[0] = n;
	w->launch_end[0] = 1;
	w->batch = (struct vyre_exec_batch){
	    w->items, n, {w->order, n, w->group_end, 1, w->launch_end, 1}, w->results};
}

static int enough(const struct vyre_bench_ctx *ctx, uint32_t reps, uint64_t t0)
{
	const double spent = (double)(vyre_bench_now_ns() - t0) / 1e9;

	return reps >= 2 && (spent >= ctx->seconds || reps >= 100000);
}

static const char *shape_name(enum shape s)
{
	return s == SHAPE_TRIVIAL ? "trivial" : "dfa-mix";
}

/* ---- peers ----------------------------------------------------------------- */

static int floors(struct vyre_bench_ctx *ctx, struct vyre_cuda_peers *p)
{
	const uint32_t n = ctx->quick ? 2000 : 20000;
	struct vyre_bench_samples s;
	uint64_t *ns = calloc(n, sizeof(*ns)), t;
	int err = ns ? vyre_bench_samples_init(&s, n) : -ENOMEM;

	if (err) {
		free(ns);
		return err;
	}
	for (uint32_t i = 0; i < 200 && !err; i++)
		err = vyre_cuda_peer_empty(p, &t);
	for (uint32_t i = 0; i < n && !err; i++) {
		err = vyre_cuda_peer_empty(p, &t);
		ns[i] = t;
	}
	/* samples are in ticks; the peers measure ns, so scale back */
	for (uint32_t i = 0; i < n && !err; i++)
		vyre_bench_sample(&s,
				  (uint64_t)((double)ns[i] / vyre_bench_ticks_to_ns(1000) * 1000));
	if (!err)
		vyre_bench_report_latency(ctx, SUITE, "floor: empty launch+sync", &s);
	s.n = 0;
	if (!err)
		err = vyre_cuda_peer_pingpong(p, n, ns);
	for (uint32_t i = 0; i < n && !err; i++)
		vyre_bench_sample(&s,
				  (uint64_t)((double)ns[i] / vyre_bench_ticks_to_ns(1000) * 1000));
	if (!err)
		vyre_bench_report_latency(ctx, SUITE, "floor: mapped doorbell rtt", &s);
	vyre_bench_samples_free(&s);
	free(ns);
	if (err)
		fprintf(stderr, "cuda: floors: %s\n", vyre_cuda_peers_error(p));
	return err;
}

static int peer_throughput(struct vyre_bench_ctx *ctx, struct vyre_cuda_peers *p,
			   struct workload *w, struct figures *f)
{
	uint64_t heap_bytes;

	write_heap(vyre_cuda_peers_heap(p, &heap_bytes));
	for (int shape = SHAPE_TRIVIAL; shape <= SHAPE_DFA_MIX; shape++) {
		const uint32_t *sizes = shape == SHAPE_TRIVIAL ? trivial_sizes : dfa_sizes;
		const uint32_t count = shape == SHAPE_TRIVIAL ? N_TRIVIAL : N_DFA;

		for (uint32_t k = 0; k < count; k++) {
			const uint32_t n = ctx->quick && sizes[k] > 4096 ? 4096 : sizes[k];
			uint64_t total = 0, build_ns, run_ns, replay_ns, graph_ns = 0,
				 replay_all = 0;
			uint32_t reps = 0, replays = 0;
			int err = 0;

			build(w, (enum shape)shape, n);
			for (uint64_t t0 = vyre_bench_now_ns(); !err && !enough(ctx, reps, t0);
			     reps++) {
				uint64_t ns;
				err = vyre_cuda_peer_per_item(p, &w->batch, &ns);
				total += ns;
			}
			f->per_item[shape][k] = err ? 0 : (double)n * reps / ((double)total / 1e9);
			reps = 0;
			for (uint64_t t0 = vyre_bench_now_ns(); !err && !enough(ctx, reps, t0);
			     reps++) {
				err = vyre_cuda_peer_graph(p, &w->batch, 4, &build_ns, &run_ns,
							   &replay_ns);
				graph_ns += build_ns + run_ns;
				replay_all += replay_ns;
				replays += 4;
			}
			if (err) {
				fprintf(stderr, "cuda: %s %u peers: %s\n",
					shape_name((enum shape)shape), n, vyre_cuda_peers_error(p));
				return err;
			}
			f->graph[shape][k] = (double)n * reps / ((double)graph_ns / 1e9);
			f->replay[shape][k] = (double)n * replays / ((double)replay_all / 1e9);
		}
	}
	return 0;
}

/* ---- the backend ----------------------------------------------------------- */

/* One batch, submit -> reap; @submit_ns (may be NULL) gains the time submit took. */
static int run_batch(struct vyre_backend *b, struct workload *w, uint64_t *submit_ns)
{
	struct vyre_slot_done done;
	const uint64_t t0 = submit_ns ? vyre_bench_now_ns() : 0;
	int err = vyre_cuda_backend->submit(b, 0, &w->batch);

	if (submit_ns)
		*submit_ns += vyre_bench_now_ns() - t0;
	if (!err)
		err = vyre_cuda_backend->reap(b, &done, 1, POLL_NS);
	if (err < 0)
		return err;
	return err == 0 ? VYRE_E_TIMEDOUT : done.status;
}

/*
 * One small item (ADD over 16 words), submit -> reap done. Persistent mode
 * alternates IMMEDIATE launches with the slab path in blocks of samples, so
 * both rows come from the same minutes of the same machine.
 */
static int one_item(struct vyre_bench_ctx *ctx, struct vyre_backend *b, struct workload *w,
		    enum vyre_cuda_mode mode)
{
	const uint32_t n_lat = ctx->quick ? 2000 : 20000;
	const uint32_t kinds = mode == VYRE_CUDA_PERSISTENT ? 2 : 1;
	static const char *const names[2][2] = {{"1 item persistent", "1 item persistent slab"},
						{"1 item launch", ""}};
	struct vyre_bench_samples s[2];
	int err = vyre_bench_samples_init(&s[0], n_lat);

	if (err)
		return err;
	if (kinds == 2 && (err = vyre_bench_samples_init(&s[1], n_lat)) != 0) {
		vyre_bench_samples_free(&s[0]);
		return err;
	}
	build(w, SHAPE_DFA_MIX, 2);
	w->batch.items = &w->items[1];
	w->order[0] = 0;
	w->batch.n_items = w->batch.plan.n_order = w->group_end[0] = 1;
	for (uint32_t i = 0; i < 200 && !err; i++)
		err = run_batch(b, w, NULL);
	/* blocks of 500 samples, so one path does not disturb the other's next sample */
	for (uint32_t i = 0; i < n_lat * kinds && !err; i++) {
		const uint32_t k = i / 500 % kinds;

		vyre_cuda_set_immediate(b, k == 0);
		const uint64_t t0 = vyre_bench_ticks();
		err = run_batch(b, w, NULL);
		vyre_bench_sample(&s[k], vyre_bench_ticks() - t0);
	}
	vyre_cuda_set_immediate(b, 1);
	for (uint32_t k = 0; k < kinds; k++) {
		if (!err)
			vyre_bench_report_latency(ctx, SUITE,
						  names[mode != VYRE_CUDA_PERSISTENT][k], &s[k]);
		vyre_bench_samples_free(&s[k]);
	}
	return err;
}

static int backend_mode(struct vyre_bench_ctx *ctx, enum vyre_cuda_mode mode, uint8_t *heap,
			struct workload *w, struct figures *f)
{
	const char *mname = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	const struct vyre_backend_config cfg = {
	    .max_heaps = 1, .max_items = MAX_ITEMS, .cuda_mode = mode, .device = 0};
	struct vyre_backend *b;
	char why[512];
	int err = vyre_cuda_backend->init(&b, &cfg, why, sizeof(why));

	if (err) {
		fprintf(stderr, "cuda: %s init: %s\n", mname, why);
		return err;
	}
	fprintf(stderr, "cuda: %s\n", vyre_cuda_describe(b));
	err = vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES);
	if (!err)
		err = one_item(ctx, b, w, mode);
	for (int shape = SHAPE_TRIVIAL; shape <= SHAPE_DFA_MIX && !err; shape++) {
		const uint32_t *sizes = shape == SHAPE_TRIVIAL ? trivial_sizes : dfa_sizes;
		const uint32_t count = shape == SHAPE_TRIVIAL ? N_TRIVIAL : N_DFA;

		for (uint32_t k = 0; k < count && !err; k++) {
			const uint32_t n = ctx->quick && sizes[k] > 4096 ? 4096 : sizes[k];
			uint32_t reps = 0;
			uint64_t t0, submit_ns = 0;

			build(w, (enum shape)shape, n);
			err = run_batch(b, w, NULL); /* warm: grows the slab if needed */
			for (t0 = vyre_bench_now_ns(); !err && !enough(ctx, reps, t0); reps++)
				err = run_batch(b, w, &submit_ns);
			const uint64_t took = vyre_bench_now_ns() - t0;
			const double rate = (double)n * reps / ((double)took / 1e9);

			f->submit_share[mode == VYRE_CUDA_PERSISTENT ? 0 : 1][shape][k] =
			    took ? (double)submit_ns / (double)took : 0;
			if (mode == VYRE_CUDA_PERSISTENT)
				f->persistent[shape][k] = rate;
			else
				f->launch[shape][k] = rate;
		}
	}
	if (err)
		fprintf(stderr, "cuda: %s: %s\n", mname, vyre_cuda_last_error(b));
	vyre_cuda_backend->unregister_heap(b, 0);
	vyre_cuda_backend->shutdown(b);
	return err;
}

static void report_throughput(struct vyre_bench_ctx *ctx, const struct figures *f, int quick)
{
	char name[64];

	for (int shape = SHAPE_TRIVIAL; shape <= SHAPE_DFA_MIX; shape++) {
		const uint32_t *sizes = shape == SHAPE_TRIVIAL ? trivial_sizes : dfa_sizes;
		const uint32_t count = shape == SHAPE_TRIVIAL ? N_TRIVIAL : N_DFA;

		for (uint32_t k = 0; k < count; k++) {
			const uint32_t n = quick && sizes[k] > 4096 ? 4096 : sizes[k];
			const char *sh = shape_name((enum shape)shape);
			const struct {
				const char *what;
				double v;
			} rows[] = {{"persistent", f->persistent[shape][k]},
				    {"launch", f->launch[shape][k]},
				    {"launch per item", f->per_item[shape][k]},
				    {"graph build+run", f->graph[shape][k]},
				    {"graph replay", f->replay[shape][k]}};

			for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
				snprintf(name, sizeof(name), "%s %u %s", sh, n, rows[r].what);
				vyre_bench_report(ctx, SUITE, name, "items/s", rows[r].v,
						  "items/s");
			}
			for (int m = 0; m < 2; m++) {
				snprintf(name, sizeof(name), "%s %u %s submit share", sh, n,
					 m == 0 ? "persistent" : "launch");
				vyre_bench_report(ctx, SUITE, name, "fraction",
						  f->submit_share[m][shape][k], "x");
			}
			if (f->per_item[shape][k] > 0) {
				snprintf(name, sizeof(name), "%s %u persistent/per-item", sh, n);
				vyre_bench_report(ctx, SUITE, name, "ratio",
						  f->persistent[shape][k] / f->per_item[shape][k],
						  "x");
			}
			if (f->graph[shape][k] > 0) {
				snprintf(name, sizeof(name), "%s %u persistent/graph", sh, n);
				vyre_bench_report(ctx, SUITE, name, "ratio",
						  f->persistent[shape][k] / f->graph[shape][k],
						  "x");
			}
		}
	}
}

static int run_cuda(struct vyre_bench_ctx *ctx)
{
	struct workload *w = malloc(sizeof(*w));
	struct figures *f = calloc(1, sizeof(*f));
	uint8_t *heap = vyre_bench_shared_alloc(HEAP_BYTES);
	struct vyre_cuda_peers *p;
	char why[512];
	int err;

	if (!vyre_cuda_backend) {
		fprintf(stderr, "cuda: skipped: %s\n", vyre_cuda_unavailable);
		free(w);
		free(f);
		vyre_bench_shared_free(heap, HEAP_BYTES);
		return 0;
	}
	err = w && f && heap ? 0 : -ENOMEM;
	if (!err)
		err = vyre_cuda_peers_open(&p, 0, HEAP_BYTES, MAX_ITEMS, why, sizeof(why));
	if (err) {
		/* no driver or no device is a skip; a GPU that fails is a failure */
		const int skip = err == VYRE_E_DEVICE &&
				 (strstr(why, "libcuda") || strstr(why, "no CUDA device") ||
				  strstr(why, "CUDA_ERROR_NO_DEVICE"));
		fprintf(stderr, "cuda: %s: %s\n", skip ? "skipped" : "failed",
			err == -ENOMEM ? "out of memory" : why);
		free(w);
		free(f);
		vyre_bench_shared_free(heap, HEAP_BYTES);
		return skip ? 0 : -1;
	}
	vyre_bench_clock_calibrate();
	err = floors(ctx, p);
	if (!err)
		err = peer_throughput(ctx, p, w, f);
	vyre_cuda_peers_close(p);
	write_heap(heap);
	if (!err)
		err = backend_mode(ctx, VYRE_CUDA_PERSISTENT, heap, w, f);
	if (!err)
		err = backend_mode(ctx, VYRE_CUDA_LAUNCH, heap, w, f);
	if (!err) {
		report_throughput(ctx, f, ctx->quick);
		err = vyre_bench_cuda_e2e(ctx, "persistent", 0);
	}
	if (!err)
		err = vyre_bench_cuda_e2e(ctx, "persistent", 1);
	if (!err)
		err = vyre_bench_cuda_e2e(ctx, "launch", 0);
	free(w);
	free(f);
	vyre_bench_shared_free(heap, HEAP_BYTES);
	return err ? -1 : 0;
}
#else
static int run_cuda(struct vyre_bench_ctx *ctx)
{
	(void)ctx;
	fprintf(stderr, "cuda: skipped: built without nvcc, so without the CUDA backend\n");
	return 0;
}
#endif

VYRE_BENCH_SUITE(
    cuda, "CUDA backend: launch floors, 1-item latency, items/s vs per-item launches and graphs",
    run_cuda)
