/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_gpus_count.h - the gpus suite's question to the CUDA driver
 * (bench/bench_gpus_count.c): which GPUs a vyred could drive.
 */
#ifndef VYRE_BENCH_GPUS_COUNT_H
#define VYRE_BENCH_GPUS_COUNT_H

#include <stddef.h>

/*
 * The devices `vyred --gpus all` would take (the CUDA backend's list,
 * gpu/cuda_device.h): how many, and the ordinals of the first @max in
 * @ordinals; @why names devices left out, if any. Asked in a forked child,
 * so this process stays free of CUDA for later suites, unless it has loaded
 * the driver already. 0 or -1 with @why when there are none or the driver
 * cannot say (no libcuda, a build without the CUDA backend).
 */
int vyre_bench_gpus_usable(int *ordinals, int max, char *why, size_t why_len);

#endif /* VYRE_BENCH_GPUS_COUNT_H */
