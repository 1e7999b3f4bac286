/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_stats.c - latency samples and their percentiles, medians
 * and paired ratios, and the latency rows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness_clock.h"
#include "harness_stats.h"

int vyre_bench_samples_init(struct vyre_bench_samples *s, size_t cap)
{
	s->n = 0;
	s->cap = cap;
	s->ticks = calloc(cap ? cap : 1, sizeof(*s->ticks));
	return s->ticks ? 0 : -ENOMEM;
}

void vyre_bench_samples_free(struct vyre_bench_samples *s)
{
	free(s->ticks);
	memset(s, 0, sizeof(*s));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double vyre_bench_quantile_ns_from(struct vyre_bench_samples *s, size_t from, double q)
{
	if (from >= s->n)
		return 0;
	size_t n = s->n - from;

	qsort(s->ticks + from, n, sizeof(*s->ticks), cmp_u64);
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);

	return vyre_bench_ticks_to_ns(s->ticks[from + (i < n ? i : n - 1)]);
}

double vyre_bench_quantile_ns(struct vyre_bench_samples *s, double q)
{
	return vyre_bench_quantile_ns_from(s, 0, q);
}

double vyre_bench_report_latency(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
				 struct vyre_bench_samples *s)
{
	double p50 = vyre_bench_quantile_ns(s, 0.50);

	vyre_bench_report(ctx, suite, name, "p50", p50, "ns");
	vyre_bench_report(ctx, suite, name, "p99", vyre_bench_quantile_ns(s, 0.99), "ns");
	vyre_bench_report(ctx, suite, name, "p999", vyre_bench_quantile_ns(s, 0.999), "ns");
	return p50;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double vyre_bench_median(double *v, unsigned n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

double vyre_bench_paired_ratio(const double *a, const double *b, unsigned n)
{
	double r[VYRE_BENCH_MAX_ROUNDS] = {0};

	if (n > VYRE_BENCH_MAX_ROUNDS)
		n = VYRE_BENCH_MAX_ROUNDS;
	for (unsigned i = 0; i < n; i++)
		r[i] = b[i] > 0 ? a[i] / b[i] : 0;
	return vyre_bench_median(r, n);
}
