/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_gp.h - writing a figure's gnuplot script (bench/plot_gp.c).
 */
#ifndef VYRE_BENCH_PLOT_GP_H
#define VYRE_BENCH_PLOT_GP_H

#include <stddef.h>
#include <stdio.h>

#include "plot_set.h"

/*
 * Opens DIR/FIG.gp and writes its preamble: a @width x @height PNG to
 * FIG.png, '?' as missing data, grid, and a multiplot of @panels side by
 * side titled "@title" over the machine label and @backend, a line each. NULL on error
 * (said on stderr).
 */
FILE *vyre_plot_script(const struct vyre_plot_ctx *pc, const char *fig, unsigned panels,
		       const char *title, const char *backend);
/* Closes the script; 0, or -1 after saying why. */
int vyre_plot_script_close(const struct vyre_plot_ctx *pc, const char *fig, FILE *gp);
/* Writes @s as a gnuplot double-quoted string (control characters dropped). */
void vyre_plot_str(FILE *gp, const char *s);
/* `set xtics (...)`: one tic at each distinct x of @set, labelled by @label(x). */
void vyre_plot_xtics(FILE *gp, const struct vyre_plot_set *set,
		     void (*label)(double x, char *out, size_t cap));

#endif /* VYRE_BENCH_PLOT_GP_H */
