/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_cuda.h - the cuda suite's figure: items/s against batch
 * size (bench/plot_cuda.c).
 */
#ifndef VYRE_BENCH_PLOT_CUDA_H
#define VYRE_BENCH_PLOT_CUDA_H

struct vyre_plot_ctx;

/*
 * Writes the script and data of the figure and returns 1, or 0 when the
 * rows it needs are not there, or -1 after saying why.
 */
int vyre_plot_batch(const struct vyre_plot_ctx *pc);

#endif /* VYRE_BENCH_PLOT_CUDA_H */
