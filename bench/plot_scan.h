/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_scan.h - the scan suite's figure: GB/s against item size,
 * vyre and Hyperscan (bench/plot_scan.c).
 */
#ifndef VYRE_BENCH_PLOT_SCAN_H
#define VYRE_BENCH_PLOT_SCAN_H

struct vyre_plot_ctx;

/*
 * Writes the script and data of the figure and returns 1, or 0 when the
 * rows it needs are not there, or -1 after saying why.
 */
int vyre_plot_scan(const struct vyre_plot_ctx *pc);

#endif /* VYRE_BENCH_PLOT_SCAN_H */
