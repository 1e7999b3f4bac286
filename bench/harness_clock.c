/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_clock.c - a cheap clock comparable across processes and
 * CPUs: the invariant TSC on x86, calibrated against CLOCK_MONOTONIC once,
 * before any fork.
 */
#include <stdint.h>

#include "bench.h"
#include "harness_clock.h"

static double ns_per_tick = 1.0;

#if defined(__x86_64__) || defined(__i386__)
uint64_t vyre_bench_ticks(void)
{
	return __builtin_ia32_rdtsc();
}

void vyre_bench_clock_calibrate(void)
{
	uint64_t t0 = vyre_bench_now_ns(), c0 = vyre_bench_ticks(), t1, c1;

	do {
		t1 = vyre_bench_now_ns();
	} while (t1 - t0 < 20000000);
	c1 = vyre_bench_ticks();
	ns_per_tick = c1 > c0 ? (double)(t1 - t0) / (double)(c1 - c0) : 1.0;
}
#else
uint64_t vyre_bench_ticks(void)
{
	return vyre_bench_now_ns();
}

void vyre_bench_clock_calibrate(void)
{
	ns_per_tick = 1.0;
}
#endif

double vyre_bench_ticks_to_ns(uint64_t ticks)
{
	return (double)ticks * ns_per_tick;
}
