/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules.c - suite "modules" (issue 25): each example op
 * module (examples/ops: crc32c, hash64, histogram, dot) through vyred
 * against the same device function compiled into the producer's own kernel
 * and launched per item under CUDA MPS, by forked producer processes as
 * the peers suite runs them (bench/bench_peers.c).
 *
 * Items of 4 KiB and 64 KiB input (dot: the input is x, its table y of
 * the same size). Closed loop at N = 1, 4, 16 producers (--quick: 1, 4),
 * for each op and size:
 *   vyre-persistent  a vyred started with --backend cuda --mode persistent
 *                    --ops-dir DIR, DIR a temporary copy of the examples'
 *                    module directories from the build (bench_modules_dir.h);
 *                    each producer looks the op up by name (vyre_op_lookup)
 *   mps              each producer its own CUDA context under an MPS daemon
 *                    the suite starts, one launch of one block of 1024
 *                    threads an item (bench/bench_modules_peer.cu),
 *                    cuStreamSynchronize
 * Open loop (4 KiB items): P = 16 producers (the largest N measured, up to
 * 16) of Poisson arrivals at the peers suite's loads of each system's own
 * closed-loop items/s at N = P. Operands live in host memory on both sides
 * (vyre's heap; the peer's pinned mapped memory), each producer's own,
 * filled with seeded random bytes; every item's rc, and the output and
 * result of the first 16 items and one in 64 after, are checked against
 * the module's host function: a wrong one fails the suite.
 *
 * Rows "OP SIZE closed SYSTEM Np" and "OP SIZE open SYSTEM Pp LOAD%" as the
 * peers suite's (items/s, p50/p99/p999, vyred cpu), and ratios "OP SIZE
 * closed vyre-persistent:mps Np". Without a GPU (or with --backend cpu)
 * the vyre rows run on vyred --backend cpu ("vyre-cpu"), the MPS peer is
 * skipped, and the ratios are vyre-cpu's against its own N = 1.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_modules_dir.h"
#include "bench_modules_gpu.h"
#include "bench_modules_loop.h"
#include "bench_modules_ops.h"
#include "bench_modules_side.h"
#include "bench_peers_board.h"
#include "bench_peers_measure.h"
#include "bench_peers_mps.h"
#include "harness_procs.h"
#include "harness_vyred.h"

#define SUITE	   "modules"
#define OPEN_PROCS 16u
#define OPEN_BYTES 4096u

static const unsigned closed_counts[] = {1, 4, 16};
static const double open_loads[] = {0.10, 0.25, 0.50, 0.75, 1.00, 1.20};
static const double quick_loads[] = {0.10, 0.50, 1.20};
static const uint32_t sizes[] = {4096, 65536};
#define N_COUNTS (sizeof(closed_counts) / sizeof(closed_counts[0]))
#define N_SIZES	 (sizeof(sizes) / sizeof(sizes[0]))

/* vyred's account of the run; the pool timing line counts the module batches in the doorbell */
static const char *const summary_lines[] = {"stopped after", "--ops-dir", "CPU: user",
					    "pool timing", NULL};

/* One op at one size on one system. */
struct series {
	struct peer pe;
	struct vyre_modules_load load;
	char label[32];	 /* "crc32c 4KiB" */
	const char *sys; /* row's system name */
	int ran[N_COUNTS];
	struct vyre_peers_figures closed[N_COUNTS];
};

/* One system: every op at every size. */
struct system {
	char name[64];
	struct series s[VYRE_MODULES_OPS][N_SIZES];
};

static unsigned n_counts(const struct vyre_bench_ctx *ctx)
{
	return ctx->quick ? 2 : (unsigned)N_COUNTS;
}

static void system_init(struct system *sys, const char *name, const char *tag, int gpu)
{
	memset(sys, 0, sizeof(*sys));
	snprintf(sys->name, sizeof(sys->name), "%s%s", name, tag);
	for (unsigned o = 0; o < VYRE_MODULES_OPS; o++)
		for (unsigned z = 0; z < N_SIZES; z++) {
			struct series *s = &sys->s[o][z];

			s->load = (struct vyre_modules_load){o, sizes[z], gpu};
			snprintf(s->label, sizeof(s->label), "%s %uKiB", vyre_modules_ops[o].name,
				 sizes[z] / 1024);
			s->sys = sys->name;
			s->pe = (struct peer){gpu ? PEER_GPU : PEER_VYRE,
					      {.suite = SUITE,
					       .name = s->label,
					       .run = vyre_modules_run,
					       .arg = &s->load}};
		}
}

/* One measurement of @s by @procs producers (@offered items/s, 0: closed loop), rows @name. */
static int measure(struct vyre_bench_ctx *ctx, const struct series *s, unsigned procs,
		   double offered, const char *name, struct vyre_peers_figures *f)
{
	if (vyre_peers_measure_peer(ctx, &s->pe, procs, offered, f))
		return -1;
	vyre_peers_report(ctx, SUITE, name, f);
	return 0;
}

static int closed_loop(struct vyre_bench_ctx *ctx, struct series *s)
{
	char name[96];
	int rc = 0;

	for (unsigned i = 0; i < n_counts(ctx); i++) {
		snprintf(name, sizeof(name), "%s closed %s %up", s->label, s->sys,
			 closed_counts[i]);
		s->ran[i] = measure(ctx, s, closed_counts[i], 0, name, &s->closed[i]) == 0;
		rc |= s->ran[i] ? 0 : -1;
	}
	return rc;
}

/* Open loop at the largest N measured up to OPEN_PROCS, loads of that N's closed-loop items/s. */
static int open_loop(struct vyre_bench_ctx *ctx, struct series *s)
{
	const double *loads = ctx->quick ? quick_loads : open_loads;
	const unsigned n_loads = ctx->quick ? 3 : (unsigned)(sizeof(open_loads) / sizeof(*loads));
	unsigned ref = 0;
	char name[96];
	int rc = 0;

	for (unsigned i = 0; i < n_counts(ctx); i++)
		if (closed_counts[i] <= OPEN_PROCS)
			ref = i;
	if (!s->ran[ref]) {
		fprintf(stderr, "%s: %s %s open loop skipped: no closed-loop figure at %u\n", SUITE,
			s->label, s->sys, closed_counts[ref]);
		return -1;
	}
	for (unsigned i = 0; i < n_loads; i++) {
		struct vyre_peers_figures f;

		snprintf(name, sizeof(name), "%s open %s %up %.0f%%", s->label, s->sys,
			 closed_counts[ref], loads[i] * 100);
		rc |=
		    measure(ctx, s, closed_counts[ref], loads[i] * s->closed[ref].items, name, &f);
	}
	return rc;
}

/* VYRE_BENCH_MODULES_ONLY=OP: that example's rows alone, for a short run on a GPU lease. */
static int op_wanted(unsigned o)
{
	const char *only = getenv("VYRE_BENCH_MODULES_ONLY");

	return !only || !*only || strcmp(only, vyre_modules_ops[o].name) == 0;
}

/* Every op and size of @sys: the closed loop, then (4 KiB) the open loop. */
static int run_system(struct vyre_bench_ctx *ctx, struct system *sys)
{
	int rc = 0;

	for (unsigned o = 0; o < VYRE_MODULES_OPS; o++)
		for (unsigned z = 0; z < N_SIZES && op_wanted(o); z++) {
			rc |= closed_loop(ctx, &sys->s[o][z]);
			if (sizes[z] == OPEN_BYTES)
				rc |= open_loop(ctx, &sys->s[o][z]);
		}
	return rc;
}

/* vyred (@gpu: cuda persistent, else cpu) with the staged modules, then @sys's rows. */
static int vyre_system(struct vyre_bench_ctx *ctx, const char *bin, int gpu, const char *ops_dir,
		       const struct vyre_bench_vyred_opts *va, struct system *sys)
{
	const char *args[8 + VYRE_BENCH_VYRED_OPTS_ARGS];
	struct vyre_bench_vyred d = {0};
	unsigned n = 0;
	int rc;

	args[n++] = "--backend";
	args[n++] = gpu ? "cuda" : "cpu";
	if (gpu) {
		args[n++] = "--mode";
		args[n++] = "persistent";
	}
	args[n++] = "--ops-dir";
	args[n++] = ops_dir;
	n = vyre_bench_vyred_opts_args(va, args, n);
	args[n] = NULL;
	if (vyre_bench_vyred_start(&d, SUITE, bin, args))
		return -1;
	for (unsigned o = 0; o < VYRE_MODULES_OPS; o++)
		for (unsigned z = 0; z < N_SIZES; z++) {
			sys->s[o][z].pe.l.socket = d.sock;
			sys->s[o][z].pe.l.vyred = d.pid;
		}
	rc = run_system(ctx, sys);
	vyre_bench_vyred_stop(&d, SUITE, summary_lines);
	return rc;
}

/* Rows "OP SIZE closed A:B Np" (items/s and p50), or with @b NULL "OP SIZE closed A Np:1p". */
static void ratios(struct vyre_bench_ctx *ctx, const struct system *a, const struct system *b)
{
	char name[160];

	for (unsigned o = 0; o < VYRE_MODULES_OPS; o++)
		for (unsigned z = 0; z < N_SIZES; z++)
			for (unsigned i = b ? 0 : 1; i < n_counts(ctx); i++) {
				const struct series *sa = &a->s[o][z];
				const struct series *sb = b ? &b->s[o][z] : sa;
				const unsigned j = b ? i : 0;

				if (!sa->ran[i] || !sb->ran[j])
					continue;
				if (b)
					snprintf(name, sizeof(name), "%s closed %s:%s %up",
						 sa->label, a->name, b->name, closed_counts[i]);
				else
					snprintf(name, sizeof(name), "%s closed %s %up:1p",
						 sa->label, a->name, closed_counts[i]);
				vyre_peers_report_ratio(ctx, SUITE, name, &sa->closed[i],
							&sb->closed[j]);
			}
}

/* 1 when the GPU peers can run here; else 0 and why. */
static int gpu_usable(const struct vyre_bench_ctx *ctx, char *why, size_t len)
{
	if (ctx->cpu_only) {
		snprintf(why, len, "--backend cpu");
		return 0;
	}
	if (vyre_bench_cuda_loaded()) {
		snprintf(why, len,
			 "this vyre-bench already loaded the CUDA driver (an earlier suite), and "
			 "CUDA does not survive fork: run `vyre-bench modules` alone");
		return 0;
	}
	/* in a child, so this process never touches CUDA before it forks the producers */
	return vyre_bench_probe_child(vyre_modules_gpu_probe, why, len);
}

static int modules_suite(struct vyre_bench_ctx *ctx)
{
	static struct system vyre, mps;
	struct vyre_bench_vyred_opts va;
	struct vyre_modules_dir dir;
	char bin[PATH_MAX], why[PATH_MAX + 64];
	int rc;

	if (!vyre_bench_find_vyred(bin, sizeof(bin))) {
		fprintf(stderr, "%s: skipped: no vyred next to vyre-bench\n", SUITE);
		return 0;
	}
	if (!vyre_bench_vyred_has_flag(bin, "--ops-dir")) {
		fprintf(stderr, "%s: skipped: %s has no --ops-dir\n", SUITE, bin);
		return 0;
	}
	const int gpu = gpu_usable(ctx, why, sizeof(why));

	if (vyre_modules_dir_stage(&dir, !gpu, why, sizeof(why))) {
		fprintf(stderr, "%s: the example modules: %s\n", SUITE, why);
		return -1;
	}
	if (dir.stand_in)
		fprintf(stderr,
			"%s: %s has no PTX (a build without nvcc): a stand-in for vyred "
			"--backend cpu, which runs the host functions\n",
			SUITE, dir.src);
	vyre_bench_vyred_opts(ctx, SUITE, bin, &va);
	if (!gpu) {
		fprintf(stderr,
			"%s: no GPU peers (%s): vyre rows on vyred --backend cpu, ratios against "
			"vyre-cpu's own N = 1; the MPS peer is skipped\n",
			SUITE, why);
		system_init(&vyre, "vyre-cpu", va.tag, 0);
		rc = vyre_system(ctx, bin, 0, dir.path, &va, &vyre);
		ratios(ctx, &vyre, NULL);
		vyre_modules_dir_remove(&dir);
		return rc ? -1 : 0;
	}
	struct vyre_peers_mps m = {0};

	system_init(&vyre, "vyre-persistent", va.tag, 0);
	system_init(&mps, "mps", "", 1);
	/* an empty CUDA_MPS_PIPE_DIRECTORY keeps vyred off any MPS daemon of the machine */
	if (vyre_peers_mps_enter(&m, SUITE)) {
		vyre_peers_mps_leave(&m);
		vyre_modules_dir_remove(&dir);
		return -1;
	}
	rc = vyre_system(ctx, bin, 1, dir.path, &va, &vyre);
	if (!m.have) {
		fprintf(stderr, "%s: MPS peer skipped: no nvidia-cuda-mps-control in $PATH\n",
			SUITE);
	} else if (vyre_peers_mps_start(&m) == 0) {
		rc |= run_system(ctx, &mps);
		vyre_peers_mps_stop(&m);
	} else {
		rc = -1;
	}
	vyre_peers_mps_leave(&m);
	vyre_modules_dir_remove(&dir);
	ratios(ctx, &vyre, &mps);
	return rc ? -1 : 0;
}

VYRE_BENCH_SUITE(modules,
		 "example op modules through vyred vs the same device function in each "
		 "process's own kernel under CUDA MPS; closed and open loop",
		 modules_suite)
