/* SPDX-License-Identifier: MIT */
/*
 * bench/plot.h - vyre-bench --plot DIR: figures drawn with gnuplot from the
 * JSON rows vyre-bench writes (docs/vyre-bench.md, "Figures"). The rows are
 * the record; a figure is a convenience, drawn only when its rows are there.
 * Each figure leaves NAME.gp and its NAME.*.dat files in DIR beside
 * NAME.png, so it can be redrawn or restyled by hand.
 */
#ifndef VYRE_BENCH_PLOT_H
#define VYRE_BENCH_PLOT_H

#include "plot_rows.h"

/*
 * Draws every figure whose rows are in @rows into @dir (made when missing),
 * titled with @label (the machine; NULL: this machine's CPU and GPU).
 * Without gnuplot in $PATH it says so and writes only the scripts and data.
 * 0, or -1 after saying on stderr what failed.
 */
int vyre_bench_plot(const char *dir, const struct vyre_bench_rows *rows, const char *label);

#endif /* VYRE_BENCH_PLOT_H */
