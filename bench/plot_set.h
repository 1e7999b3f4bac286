/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_set.h - what a figure is made of (bench/plot_set.c): the
 * words of a row's name, the series of points it becomes, and their data
 * files.
 */
#ifndef VYRE_BENCH_PLOT_SET_H
#define VYRE_BENCH_PLOT_SET_H

#include <stddef.h>

#include "plot_rows.h"

/* What every figure gets. */
struct vyre_plot_ctx {
	const char *dir;
	const char *label;
	const struct vyre_bench_rows *rows;
};

/* A name split at spaces: at most VYRE_PLOT_WORDS words of up to 47 bytes. */
#define VYRE_PLOT_WORDS 16u
struct vyre_plot_words {
	char w[VYRE_PLOT_WORDS][48];
	unsigned n;
};

/* Splits @name; -1 when it has too many or too long words. */
int vyre_plot_split(const char *name, struct vyre_plot_words *out);
/* Words [@from, @to) joined with spaces into @out (truncated to @cap). */
void vyre_plot_join(const struct vyre_plot_words *w, unsigned from, unsigned to, char *out,
		    size_t cap);
/* "16p" -> 16 (@suffix 'p'), "120%" -> 120 ('%'), "4096" -> 4096 ('\0'); -1 when not. */
double vyre_plot_count(const char *word, char suffix);
/* "4KiB" -> 4096 (B, KiB, MiB, GiB, TiB); -1 when not. */
double vyre_plot_bytes(const char *word);

/*
 * Series of points, each x plus VYRE_PLOT_COLS - 1 values (NAN: missing),
 * one data file each; points with the same x are one point.
 */
#define VYRE_PLOT_COLS 6u
struct vyre_plot_series {
	char title[128];
	double (*pt)[VYRE_PLOT_COLS];
	size_t n, cap;
};

struct vyre_plot_set {
	struct vyre_plot_series *s;
	size_t n, cap;
};

/* Sets column @col (1..) of the point at @x of series @title (made on first use). 0 or -ENOMEM. */
int vyre_plot_put(struct vyre_plot_set *set, const char *title, double x, unsigned col, double v);
void vyre_plot_set_free(struct vyre_plot_set *set);
/* Orders the series by title, so figures do not depend on the rows' order. */
void vyre_plot_set_sort(struct vyre_plot_set *set);

/*
 * Writes DIR/FIG.K.dat for series K of @set (points in x order, a missing
 * value as '?'), K from @first on; 0 or -errno.
 */
int vyre_plot_write_data(const struct vyre_plot_ctx *pc, const char *fig,
			 const struct vyre_plot_set *set, unsigned first);

#endif /* VYRE_BENCH_PLOT_SET_H */
