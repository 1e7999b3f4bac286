/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_gpus.h - the gpus suite's figure: one GPU against two
 * (bench/plot_gpus.c).
 */
#ifndef VYRE_BENCH_PLOT_GPUS_H
#define VYRE_BENCH_PLOT_GPUS_H

struct vyre_plot_ctx;

/*
 * Writes the script and data of the figure and returns 1, or 0 when the
 * rows it needs are not there, or -1 after saying why.
 */
int vyre_plot_gpus(const struct vyre_plot_ctx *pc);

#endif /* VYRE_BENCH_PLOT_GPUS_H */
