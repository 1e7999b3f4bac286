/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_clock.h - a cheap cross-process clock (bench/
 * harness_clock.c).
 */
#ifndef VYRE_BENCH_HARNESS_CLOCK_H
#define VYRE_BENCH_HARNESS_CLOCK_H

#include <stdint.h>

/*
 * vyre_bench_ticks - a timestamp comparable across processes and CPUs (the
 * invariant TSC on x86, CLOCK_MONOTONIC elsewhere); vyre_bench_ticks_to_ns
 * converts a difference. Calibrated once, before any fork.
 */
uint64_t vyre_bench_ticks(void);
double vyre_bench_ticks_to_ns(uint64_t ticks);
void vyre_bench_clock_calibrate(void);

#endif /* VYRE_BENCH_HARNESS_CLOCK_H */
