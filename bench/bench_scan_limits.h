/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_limits.h - the "scan" suite's physical-limit rows (bench/
 * bench_scan_limits.c): CUDA copies in a forked child.
 */
#ifndef VYRE_BENCH_SCAN_LIMITS_H
#define VYRE_BENCH_SCAN_LIMITS_H

#include "bench.h"

/* The "limit" rows where there is a GPU; their absence fails nothing. */
int vyre_scan_limits_rows(struct vyre_bench_ctx *ctx);

#endif /* VYRE_BENCH_SCAN_LIMITS_H */
