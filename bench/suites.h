/* SPDX-License-Identifier: MIT */
/*
 * bench/suites.h - the table of the suites vyre-bench runs (bench/suites.c).
 */
#ifndef VYRE_BENCH_SUITES_H
#define VYRE_BENCH_SUITES_H

#include "bench.h"

/* Every suite, sorted by name (the order of runs and --list), NULL-terminated. */
extern const struct vyre_bench_suite *const vyre_bench_suites[];

#endif /* VYRE_BENCH_SUITES_H */
