/* SPDX-License-Identifier: MIT */
/*
 * bench/suites.c - the one list of suites: each is defined in its own file
 * with VYRE_BENCH_SUITE (bench/bench.h) and named here, above them, so that
 * vyre-bench reads the list and no suite calls up to register itself. A new
 * suite adds its line here, in name order.
 */
#include <stddef.h>

#include "suites.h"

extern const struct vyre_bench_suite vyre_bench_suite_cuda, vyre_bench_suite_dfa,
    vyre_bench_suite_dfacompile, vyre_bench_suite_e2e, vyre_bench_suite_flood,
    vyre_bench_suite_gpus, vyre_bench_suite_lower, vyre_bench_suite_modules, vyre_bench_suite_peers,
    vyre_bench_suite_planner, vyre_bench_suite_priority, vyre_bench_suite_probes,
    vyre_bench_suite_restart, vyre_bench_suite_ring, vyre_bench_suite_scan, vyre_bench_suite_wake;

const struct vyre_bench_suite *const vyre_bench_suites[] = {
    &vyre_bench_suite_cuda,
    &vyre_bench_suite_dfa,
    &vyre_bench_suite_dfacompile,
    &vyre_bench_suite_e2e,
    &vyre_bench_suite_flood,
    &vyre_bench_suite_gpus,
    &vyre_bench_suite_lower,
    &vyre_bench_suite_modules,
    &vyre_bench_suite_peers,
    &vyre_bench_suite_planner,
    &vyre_bench_suite_priority,
    &vyre_bench_suite_probes,
    &vyre_bench_suite_restart,
    &vyre_bench_suite_ring,
    &vyre_bench_suite_scan,
    &vyre_bench_suite_wake,
    NULL,
};
