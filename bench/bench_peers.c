/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers.c - suite "peers": many producer processes with tiny
 * items, vyre against each process launching its own kernels, with and
 * without CUDA MPS (issue 10). Every producer is a process of its own with a
 * private vyre domain (or its own CUDA context) and its own buffers; the
 * item is an ADD over 16 words.
 *
 * Closed loop, N = 1, 2, 4, 8, 16, 32 producers (--quick: 1, 2, 4), each
 * submitting one item and waiting for its completion, for --seconds:
 *   vyre-persistent  through a vyred started with --backend cuda --mode persistent
 *   vyre-launch      the same with --mode launch
 *   self             cuLaunchKernel + cuStreamSynchronize in each process's
 *                    own context, no MPS
 *   mps              the same under an MPS control daemon the suite starts
 *                    (nvidia-cuda-mps-control -d) and stops
 * Rows: items/s of all producers together; p50/p99/p999 of submit -> done
 * seen by the producer, every item of every producer merged; for the vyre
 * rows, "vyred cpu": vyred's CPU time over the window per item completed in
 * it (harness_cpu.h); ratios of vyre against mps (and self) per N. Without a GPU (or with --backend
 * cpu) the vyre rows run on vyred --backend cpu ("vyre-cpu") and the ratios are against vyre-cpu's
 * own N = 1.
 *
 * Open loop: P = 16 producers (at most the largest N measured), arrivals of
 * each a Poisson process (exponential gaps), up to OPEN_SLOTS items of each
 * outstanding, at offered loads of 10 % .. 120 % of the same system's
 * closed-loop throughput at N = P measured just before; for vyre (persistent,
 * or cpu) and mps. Latency runs from each item's scheduled arrival, so a
 * producer that falls behind (all slots busy) counts the wait. The rows also
 * go to DIR/peers-openloop.json with --out DIR (vyre-bench --plot draws them).
 *
 * VYRE_BENCH_PEERS_N=16[,32...] measures only those closed-loop counts;
 * VYRE_BENCH_PEERS_ONLY=closed runs vyre-persistent and mps closed loops
 * alone (no open loop, no launch or self series): a quick look at one row.
 *
 * The suite forks every producer before any CUDA call in this process (CUDA
 * does not survive fork); when another suite already loaded the driver here
 * it says so and runs the vyre rows only.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_peers_board.h"
#include "bench_peers_gpu.h"
#include "bench_peers_measure.h"
#include "bench_peers_mps.h"
#include "harness_procs.h"
#include "harness_vyred.h"

#define SUITE	   "peers"
#define OPEN_PROCS 16u

static const unsigned closed_counts[] = {1, 2, 4, 8, 16, 32};
static const double open_loads[] = {0.10, 0.25, 0.50, 0.75, 1.00, 1.20};
static const double quick_loads[] = {0.10, 0.50, 1.20};
#define N_COUNTS (sizeof(closed_counts) / sizeof(closed_counts[0]))
#define N_LOADS	 (sizeof(open_loads) / sizeof(open_loads[0]))

/* vyred's own account of the run: its batches, slots and the time each stage took. */
static const char *const summary_lines[] = {"stopped after", "mean ns per batch", ": loop ",
					    "CPU: user", NULL};

/* vyred from @bin on a new temporary socket; @mode NULL for the cpu backend. */
static int vyred_start(struct vyre_bench_vyred *d, const char *bin, const char *mode,
		       const struct vyre_bench_vyred_opts *va)
{
	const char *args[5 + VYRE_BENCH_VYRED_OPTS_ARGS];
	unsigned n = 0;

	args[n++] = "--backend";
	args[n++] = mode ? "cuda" : "cpu";
	if (mode) {
		args[n++] = "--mode";
		args[n++] = mode;
	}
	n = vyre_bench_vyred_opts_args(va, args, n);
	args[n] = NULL;
	return vyre_bench_vyred_start(d, "peers", bin, args);
}

/* ---- the suite -------------------------------------------------------------- */

struct series {
	struct peer pe;
	const char *row; /* row prefix, with vyred's --inflight when passed */
	char row_buf[64];
	int ran[N_COUNTS];
	struct vyre_peers_figures closed[N_COUNTS];
	int open_ran[N_LOADS];
	struct vyre_peers_figures open[N_LOADS];
};

static unsigned n_counts(const struct vyre_bench_ctx *ctx)
{
	return ctx->quick ? 3 : (unsigned)N_COUNTS;
}

/* Whether VYRE_BENCH_PEERS_N (a comma list of producer counts) names @n; unset: every count. */
static int count_wanted(unsigned n)
{
	const char *e = getenv("VYRE_BENCH_PEERS_N");

	while (e && *e) {
		char *end;
		unsigned long v = strtoul(e, &end, 10);

		if (end == e)
			return 0;
		if (v == n)
			return 1;
		e = *end == ',' ? end + 1 : end;
	}
	return e == NULL;
}

static int closed_only(void)
{
	const char *e = getenv("VYRE_BENCH_PEERS_ONLY");

	return e && strcmp(e, "closed") == 0;
}

/* Closed loop of @s at every N; reports as it goes. -1 when one failed (the rest still run). */
static int closed_loop(struct vyre_bench_ctx *ctx, struct series *s)
{
	char name[96];
	int rc = 0;

	for (unsigned i = 0; i < n_counts(ctx); i++) {
		if (!count_wanted(closed_counts[i]))
			continue;
		if (vyre_peers_measure_peer(ctx, &s->pe, closed_counts[i], 0, &s->closed[i])) {
			rc = -1;
			continue;
		}
		s->ran[i] = 1;
		snprintf(name, sizeof(name), "closed %s %up", s->row, closed_counts[i]);
		vyre_peers_report(ctx, SUITE, name, &s->closed[i]);
	}
	return rc;
}

/* The open loop's producer count: OPEN_PROCS, or the largest N the closed loop ran. */
static unsigned open_procs(const struct vyre_bench_ctx *ctx, unsigned *index)
{
	unsigned best = 0;

	for (unsigned i = 0; i < n_counts(ctx); i++)
		if (closed_counts[i] <= OPEN_PROCS)
			best = i;
	*index = best;
	return closed_counts[best];
}

static int open_loop(struct vyre_bench_ctx *ctx, struct series *s)
{
	const double *loads = ctx->quick ? quick_loads : open_loads;
	const unsigned n_loads = ctx->quick ? 3 : (unsigned)N_LOADS;
	unsigned ref;
	const unsigned procs = open_procs(ctx, &ref);
	char name[96];
	int rc = 0;

	if (closed_only())
		return 0;
	if (!s->ran[ref]) {
		fprintf(stderr, "peers: %s open loop skipped: no closed-loop figure at %u\n",
			s->pe.l.name, procs);
		return -1;
	}
	for (unsigned i = 0; i < n_loads; i++) {
		const double offered = loads[i] * s->closed[ref].items;

		if (vyre_peers_measure_peer(ctx, &s->pe, procs, offered, &s->open[i])) {
			rc = -1;
			continue;
		}
		s->open_ran[i] = 1;
		snprintf(name, sizeof(name), "open %s %up %.0f%%", s->row, procs, loads[i] * 100);
		vyre_peers_report(ctx, SUITE, name, &s->open[i]);
	}
	return rc;
}

/* Rows "closed A:B Np": A's items/s and p50 over B's at each N both ran. */
static void ratios(struct vyre_bench_ctx *ctx, const struct series *a, const struct series *b)
{
	char name[96];

	for (unsigned i = 0; i < n_counts(ctx); i++) {
		if (!a->ran[i] || !b->ran[i])
			continue;
		snprintf(name, sizeof(name), "closed %s:%s %up", a->row, b->row, closed_counts[i]);
		vyre_peers_report_ratio(ctx, SUITE, name, &a->closed[i], &b->closed[i]);
	}
}

/* Rows "closed A Np:1p": scaling against A's own single producer. */
static void self_ratios(struct vyre_bench_ctx *ctx, const struct series *a)
{
	char name[96];

	for (unsigned i = 1; i < n_counts(ctx) && a->ran[0]; i++) {
		if (!a->ran[i])
			continue;
		snprintf(name, sizeof(name), "closed %s %up:1p", a->row, closed_counts[i]);
		vyre_peers_report_ratio(ctx, SUITE, name, &a->closed[i], &a->closed[0]);
	}
}

/*
 * The open-loop figures of @series, one row object per line as --json writes
 * them, into DIR/peers-openloop.json (vyre-bench --plot --from reads either).
 */
static int write_open_json(const struct vyre_bench_ctx *ctx, struct series *const *series,
			   unsigned n)
{
	const double *loads = ctx->quick ? quick_loads : open_loads;
	const unsigned n_loads = ctx->quick ? 3 : (unsigned)N_LOADS;
	char path[PATH_MAX];
	unsigned ref;
	const unsigned procs = open_procs(ctx, &ref);
	FILE *f;

	snprintf(path, sizeof(path), "%s/peers-openloop.json", ctx->out_dir);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "peers: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < n_loads; i++) {
			const struct vyre_peers_figures *o = &series[k]->open[i];
			const struct {
				const char *metric, *unit;
				double v;
			} rows[] = {{"offered", "items/s", o->offered},
				    {"items/s", "items/s", o->items},
				    {"p50", "ns", o->p50},
				    {"p99", "ns", o->p99},
				    {"p999", "ns", o->p999}};

			for (size_t r = 0;
			     series[k]->open_ran[i] && r < sizeof(rows) / sizeof(rows[0]); r++)
				fprintf(f,
					"{\"suite\":\"%s\",\"name\":\"open %s %up %.0f%%\","
					"\"metric\":\"%s\",\"value\":%.17g,\"unit\":\"%s\"}\n",
					SUITE, series[k]->row, procs, loads[i] * 100,
					rows[r].metric, rows[r].v, rows[r].unit);
		}
	if (fclose(f) != 0) {
		fprintf(stderr, "peers: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(stderr, "peers: open-loop rows written to %s\n", path);
	return 0;
}

/* A series of @kind; a vyre series gets its socket when its vyred starts. */
static void series_init(struct series *s, const char *name, enum peer_kind kind,
			const struct vyre_bench_vyred_opts *va)
{
	memset(s, 0, sizeof(*s));
	s->pe = (struct peer){kind, {.suite = SUITE, .name = name}};
	snprintf(s->row_buf, sizeof(s->row_buf), "%s%s", name, va ? va->tag : "");
	s->row = s->row_buf;
}

/*
 * vyred in @mode (NULL: cpu backend), @s's closed loop at every N, then its
 * open loop when @open.
 */
static int vyre_series(struct vyre_bench_ctx *ctx, const char *bin, const char *mode,
		       const struct vyre_bench_vyred_opts *va, int open, struct series *s)
{
	struct vyre_bench_vyred d = {0};
	int rc;

	if (vyred_start(&d, bin, mode, va))
		return -1;
	s->pe.l.socket = d.sock;
	s->pe.l.vyred = d.pid;
	rc = closed_loop(ctx, s);
	if (open)
		rc |= open_loop(ctx, s);
	vyre_bench_vyred_stop(&d, "peers", summary_lines);
	return rc;
}

static int peers_suite(struct vyre_bench_ctx *ctx)
{
	struct series vp, vl, self, mpss, vcpu;
	char bin[PATH_MAX], why[320];
	struct vyre_bench_vyred_opts va;
	int rc = 0;

	if (!vyre_bench_find_vyred(bin, sizeof(bin))) {
		fprintf(stderr, "peers: skipped: no vyred next to vyre-bench\n");
		return 0;
	}
	vyre_bench_vyred_opts(ctx, SUITE, bin, &va);
	series_init(&vcpu, "vyre-cpu", PEER_VYRE, &va);
	series_init(&vp, "vyre-persistent", PEER_VYRE, &va);
	series_init(&vl, "vyre-launch", PEER_VYRE, &va);
	series_init(&self, "self", PEER_GPU, NULL);
	series_init(&mpss, "mps", PEER_GPU, NULL);
	int gpu = 0;

	if (ctx->cpu_only)
		snprintf(why, sizeof(why), "--backend cpu");
	else if (vyre_bench_cuda_loaded())
		snprintf(why, sizeof(why),
			 "this vyre-bench already loaded the CUDA driver (an earlier suite), "
			 "and CUDA does not survive fork: run `vyre-bench peers` alone");
	else
		/* in a child, so this process never touches CUDA */
		gpu = vyre_bench_probe_child(vyre_peers_gpu_probe, why, sizeof(why));
	if (!gpu) {
		fprintf(stderr,
			"peers: no GPU peers (%s): vyre rows on vyred --backend cpu, ratios "
			"against vyre-cpu's own N = 1; the self-launch and MPS peers are skipped\n",
			why);
		rc = vyre_series(ctx, bin, NULL, &va, 1, &vcpu);
		self_ratios(ctx, &vcpu);
		struct series *const all[] = {&vcpu};

		if (ctx->out_dir)
			rc |= write_open_json(ctx, all, 1);
		return rc ? -1 : 0;
	}
	struct vyre_peers_mps m = {0};

	if (vyre_peers_mps_enter(&m, SUITE)) {
		vyre_peers_mps_leave(&m);
		return -1;
	}
	rc |= vyre_series(ctx, bin, "persistent", &va, 1, &vp);
	if (!closed_only()) {
		rc |= vyre_series(ctx, bin, "launch", &va, 0, &vl);
		rc |= closed_loop(ctx, &self);
	}
	if (!m.have) {
		fprintf(stderr, "peers: MPS peer skipped: no nvidia-cuda-mps-control in $PATH\n");
	} else if (vyre_peers_mps_start(&m) == 0) {
		rc |= closed_loop(ctx, &mpss);
		rc |= open_loop(ctx, &mpss);
		vyre_peers_mps_stop(&m);
	} else {
		rc = -1;
	}
	vyre_peers_mps_leave(&m);
	ratios(ctx, &vp, &mpss);
	ratios(ctx, &vl, &mpss);
	ratios(ctx, &vp, &self);
	ratios(ctx, &vl, &self);
	struct series *const all[] = {&vp, &mpss};

	if (ctx->out_dir)
		rc |= write_open_json(ctx, all, 2);
	return rc ? -1 : 0;
}

VYRE_BENCH_SUITE(peers,
		 "N producer processes, tiny items: vyre vs own launches vs CUDA MPS; open loop",
		 peers_suite)
