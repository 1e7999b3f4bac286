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

#include <stddef.h>
#include <stdio.h>

/* One row of `vyre-bench --json` output; value is NAN when the row says null. */
struct vyre_bench_row {
	char suite[32], name[128], metric[32], unit[16];
	double value;
};

struct vyre_bench_rows {
	struct vyre_bench_row *v;
	size_t n, cap;
};

/*
 * Appends the rows of @path (one JSON object a line; blank lines skipped).
 * 0, or -errno (unreadable, no memory) / -EINVAL (a malformed line, printed
 * to stderr with its number).
 */
int vyre_bench_rows_load(struct vyre_bench_rows *rows, const char *path);
void vyre_bench_rows_free(struct vyre_bench_rows *rows);

/*
 * Draws every figure whose rows are in @rows into @dir (made when missing),
 * titled with @label (the machine; NULL: this machine's CPU and GPU).
 * Without gnuplot in $PATH it says so and writes only the scripts and data.
 * 0, or -1 after saying on stderr what failed.
 */
int vyre_bench_plot(const char *dir, const struct vyre_bench_rows *rows, const char *label);

/* ---- for the figures (bench/plot_*.c) ---- */

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

/* What every figure gets. */
struct vyre_plot_ctx {
	const char *dir;
	const char *label;
	const struct vyre_bench_rows *rows;
};

/*
 * Writes DIR/FIG.K.dat for series K of @set (points in x order, a missing
 * value as '?'), K from @first on; 0 or -errno.
 */
int vyre_plot_write_data(const struct vyre_plot_ctx *pc, const char *fig,
			 const struct vyre_plot_set *set, unsigned first);

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

/*
 * The figures. Each writes its script and data and returns 1, or 0 when the
 * rows it needs are not there, or -1 after saying why.
 */
int vyre_plot_openloop(const struct vyre_plot_ctx *pc);
int vyre_plot_closed(const struct vyre_plot_ctx *pc);
int vyre_plot_batch(const struct vyre_plot_ctx *pc);
int vyre_plot_scan(const struct vyre_plot_ctx *pc);
int vyre_plot_gpus(const struct vyre_plot_ctx *pc);

/* This machine: "GPU model (xN), CPU model, N CPUs" into @out. */
void vyre_plot_machine(char *out, size_t cap);

#endif /* VYRE_BENCH_PLOT_H */
