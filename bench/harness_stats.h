/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_stats.h - latency samples, percentiles, medians and paired
 * ratios (bench/harness_stats.c).
 */
#ifndef VYRE_BENCH_HARNESS_STATS_H
#define VYRE_BENCH_HARNESS_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

/* Latency samples in ticks; percentiles in ns. */
struct vyre_bench_samples {
	uint64_t *ticks;
	size_t n, cap;
};

int vyre_bench_samples_init(struct vyre_bench_samples *s, size_t cap);
void vyre_bench_samples_free(struct vyre_bench_samples *s);

static inline void vyre_bench_sample(struct vyre_bench_samples *s, uint64_t ticks)
{
	if (s->n < s->cap)
		s->ticks[s->n++] = ticks;
}

/* Sorts the samples and returns the @q quantile (0..1) in ns; 0 when empty. */
double vyre_bench_quantile_ns(struct vyre_bench_samples *s, double q);

/* The same over the samples from index @from on (sorting only those). */
double vyre_bench_quantile_ns_from(struct vyre_bench_samples *s, size_t from, double q);

/* Most rounds a suite may split a measurement into (vyre_bench_paired_ratio). */
#define VYRE_BENCH_MAX_ROUNDS 64u

/* Median of @n values (sorts them in place); 0 when n is 0. */
double vyre_bench_median(double *v, unsigned n);

/*
 * Median over rounds of a[i] / b[i] (n <= VYRE_BENCH_MAX_ROUNDS). a[i] and
 * b[i] were measured back to back, so load from a noisy neighbour or a vCPU
 * moved by the hypervisor slows both: the ratio survives what the absolute
 * figures do not.
 */
double vyre_bench_paired_ratio(const double *a, const double *b, unsigned n);

/* Reports p50, p99 and p999 (ns) as three rows; returns the p50. */
double vyre_bench_report_latency(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
				 struct vyre_bench_samples *s);

#endif /* VYRE_BENCH_HARNESS_STATS_H */
