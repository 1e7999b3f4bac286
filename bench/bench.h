/* SPDX-License-Identifier: MIT */
/*
 * bench/bench.h - how a benchmark suite plugs into vyre-bench.
 *
 * Each suite lives in its own file and defines itself with
 * VYRE_BENCH_SUITE(name, help, fn); the table of suites (bench/suites.c)
 * lists them, and vyre-bench runs those named on its command line (all by
 * default). A suite measures peers in the same run and
 * reports raw figures with vyre_bench_report(); ratios are reported as their
 * own rows (unit "x") so a reader never compares across runs.
 */
#ifndef VYRE_BENCH_H
#define VYRE_BENCH_H

#include <stdint.h>
#include <stdio.h>

#define VYRE_BENCH_MAX_VYRED_ARGS 8u

struct vyre_bench_ctx {
	int quick;	    /* --quick: small sizes, for smoke tests */
	double seconds;	    /* --seconds: target time per measurement */
	FILE *json;	    /* --json FILE: one JSON object per row, or NULL */
	const char *socket; /* --socket: a running vyred for end-to-end suites, or NULL */
	unsigned inflight;  /* --inflight: passed to the vyreds a suite starts; 0: not passed */
	unsigned loops;	    /* --loops: the same */
	/* --vyred-arg: more arguments for those vyreds, in order */
	const char *vyred_args[VYRE_BENCH_MAX_VYRED_ARGS];
	unsigned n_vyred_args;
	const char *out_dir; /* --out: a directory for a suite's extra files, or NULL */
	int cpu_only;	     /* --backend cpu: vyreds on the cpu backend, no GPU peers */
};

/* Print one row of the table (and one JSON line when --json is given); bench/bench.c. */
void vyre_bench_report(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
		       const char *metric, double value, const char *unit);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vyre_bench_now_ns(void);

typedef int (*vyre_bench_fn)(struct vyre_bench_ctx *ctx);

struct vyre_bench_suite {
	const char *name;
	const char *help;
	vyre_bench_fn run;
};

/*
 * Defines the suite vyre_bench_suite_ID; bench/suites.c lists it, so a suite
 * never calls up into vyre-bench to register.
 */
#define VYRE_BENCH_SUITE(id, help_text, fn)                                                        \
	extern const struct vyre_bench_suite vyre_bench_suite_##id;                                \
	const struct vyre_bench_suite vyre_bench_suite_##id = {#id, help_text, fn};

#endif /* VYRE_BENCH_H */
