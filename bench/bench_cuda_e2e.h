/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_cuda_e2e.h - the "cuda" suite's end-to-end rows through vyred
 * (bench/bench_cuda_e2e.c).
 */
#ifndef VYRE_BENCH_CUDA_E2E_H
#define VYRE_BENCH_CUDA_E2E_H

#include "bench.h"

/*
 * vyred --backend cuda --mode @mname and one producer; with @pinned, vyred's
 * loop and the producer each on a CPU of their own (pick_cpus).
 */
int vyre_bench_cuda_e2e(struct vyre_bench_ctx *ctx, const char *mname, int pinned);

#endif /* VYRE_BENCH_CUDA_E2E_H */
