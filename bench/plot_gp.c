/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_gp.c - the gnuplot scripts the figures write: one preamble for
 * all (PNG terminal, missing data, a row of panels under one title naming
 * the machine and backend), string quoting and tics at the measured x values.
 * Scripts use names relative to DIR and gnuplot runs there, so a directory
 * of figures can be moved and redrawn with `gnuplot NAME.gp`.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_gp.h"

void vyre_plot_str(FILE *gp, const char *s)
{
	fputc('"', gp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\n')
			fputs("\\n", gp);
		else if (c == '"' || c == '\\')
			fprintf(gp, "\\%c", c);
		else if (c >= 0x20)
			fputc(c, gp);
	}
	fputc('"', gp);
}

FILE *vyre_plot_script(const struct vyre_plot_ctx *pc, const char *fig, unsigned panels,
		       const char *title, const char *backend)
{
	char path[4096], heading[512];
	const unsigned width = panels > 1 ? 120 + 560 * panels : 900, height = 620;
	int len = snprintf(path, sizeof(path), "%s/%s.gp", pc->dir, fig);
	FILE *gp;

	if (len < 0 || (size_t)len >= sizeof(path) || !(gp = fopen(path, "w"))) {
		fprintf(stderr, "vyre-bench: plot: %s/%s.gp: %s\n", pc->dir, fig,
			len < 0 || (size_t)len >= sizeof(path) ? strerror(ENAMETOOLONG)
							       : strerror(errno));
		return NULL;
	}
	fprintf(gp,
		"# vyre-bench --plot: %s.png from vyre-bench's JSON rows (docs/vyre-bench.md).\n"
		"# Redraw with `gnuplot %s.gp` in this directory; the data is in %s.*.dat.\n"
		"if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
		"\tset terminal pngcairo size %u,%u noenhanced font \",10\"\n"
		"} else {\n"
		"\tset terminal png size %u,%u noenhanced\n"
		"}\n"
		"set output '%s.png'\n"
		"set datafile missing '?'\n"
		"set grid\n"
		"set key top left opaque box\n",
		fig, fig, fig, width, height, width, height, fig);
	snprintf(heading, sizeof(heading), "%s\n%s\n%s", title, pc->label, backend);
	fprintf(gp, "set multiplot layout 1,%u title ", panels ? panels : 1);
	vyre_plot_str(gp, heading);
	fputc('\n', gp);
	return gp;
}

int vyre_plot_script_close(const struct vyre_plot_ctx *pc, const char *fig, FILE *gp)
{
	fputs("unset multiplot\n", gp);
	if (ferror(gp) | (fclose(gp) != 0)) {
		fprintf(stderr, "vyre-bench: plot: %s/%s.gp: write failed\n", pc->dir, fig);
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

void vyre_plot_xtics(FILE *gp, const struct vyre_plot_set *set,
		     void (*label)(double x, char *out, size_t cap))
{
	size_t n = 0, total = 0;
	double *xs;
	char text[48];

	for (size_t k = 0; k < set->n; k++)
		total += set->s[k].n;
	xs = total ? calloc(total, sizeof(*xs)) : NULL;
	if (!xs)
		return; /* gnuplot's own tics, then */
	for (size_t k = 0; k < set->n; k++)
		for (size_t i = 0; i < set->s[k].n; i++)
			xs[n++] = set->s[k].pt[i][0];
	qsort(xs, n, sizeof(*xs), cmp_double);
	fputs("set xtics (", gp);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && xs[i] == xs[i - 1])
			continue;
		label(xs[i], text, sizeof(text));
		fprintf(gp, "%s", i ? ", " : "");
		vyre_plot_str(gp, text);
		fprintf(gp, " %.10g", xs[i]);
	}
	fputs(")\n", gp);
	free(xs);
}
