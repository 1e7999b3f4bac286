/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_gpus.c - the gpus suite's figure, "gpus": one vyred on one GPU
 * against one on two, as pairs of bars: trivial items/s ("trivial N SYS
 * SIDE"), closed-loop items/s and p50 ("closed SYS SIDE Np"), each pair
 * labelled with its ratio. SIDE 2lanes (a one-GPU host: two GPUs of one
 * device) is labelled as such.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_gp.h"
#include "plot_gpus.h"

enum { TRIVIAL, CLOSED_ITEMS, CLOSED_P50, PANELS };

struct gpus_fig {
	struct vyre_plot_set panel[PANELS]; /* a series a pair of bars: x 0, columns 1 and 2 */
	char sys[128];
	int lanes; /* the two-GPU side is two lanes of one GPU */
};

static int add_row(struct gpus_fig *f, const struct vyre_bench_row *r)
{
	struct vyre_plot_words w;
	char pair[64];
	unsigned side_at, panel;

	if (vyre_plot_split(r->name, &w) || w.n < 4)
		return 0;
	if (strcmp(w.w[0], "trivial") == 0 && strcmp(r->metric, "items/s") == 0) {
		side_at = w.n - 1;
		panel = TRIVIAL;
		snprintf(pair, sizeof(pair), "%s items a batch", w.w[1]);
		vyre_plot_join(&w, 2, side_at, f->sys, sizeof(f->sys));
	} else if (strcmp(w.w[0], "closed") == 0 && vyre_plot_count(w.w[w.n - 1], 'p') > 0 &&
		   (strcmp(r->metric, "items/s") == 0 || strcmp(r->metric, "p50") == 0)) {
		side_at = w.n - 2;
		panel = strcmp(r->metric, "p50") == 0 ? CLOSED_P50 : CLOSED_ITEMS;
		snprintf(pair, sizeof(pair), "%g producers", vyre_plot_count(w.w[w.n - 1], 'p'));
		vyre_plot_join(&w, 1, side_at, f->sys, sizeof(f->sys));
	} else {
		return 0;
	}
	const char *side = w.w[side_at];
	unsigned col = strcmp(side, "1gpu") == 0 ? 1 : strcmp(side, "2gpu") == 0 ? 2 : 0;

	if (strcmp(side, "2lanes") == 0) {
		col = 2;
		f->lanes = 1;
	}
	if (!col)
		return 0;
	double v = strcmp(r->unit, "ns") == 0 ? r->value / 1000 : r->value;

	return vyre_plot_put(&f->panel[panel], pair, 0, col, v);
}

static int write_table(const struct vyre_plot_ctx *pc, unsigned k, const struct vyre_plot_set *set)
{
	char path[4096];
	int len = snprintf(path, sizeof(path), "%s/gpus.%u.dat", pc->dir, k);
	FILE *f = len > 0 && (size_t)len < sizeof(path) ? fopen(path, "w") : NULL;

	if (!f) {
		fprintf(stderr, "vyre-bench: plot: cannot write %s/gpus.%u.dat\n", pc->dir, k);
		return -1;
	}
	fputs("# pair  1gpu  2gpu\n", f);
	for (size_t i = 0; i < set->n; i++) {
		const double a = set->s[i].pt[0][1], b = set->s[i].pt[0][2];

		/* the label carries the ratio, the row the suite also reports */
		fprintf(f, "\"%s", set->s[i].title);
		if (a > 0 && b > 0)
			fprintf(f, ", 2:1 %.2fx", b / a);
		fputc('"', f);
		for (unsigned c = 1; c <= 2; c++) {
			const double v = set->s[i].pt[0][c];

			if (isfinite(v))
				fprintf(f, " %.10g", v);
			else
				fputs(" ?", f);
		}
		fputc('\n', f);
	}
	return fclose(f) == 0 ? 0 : -1;
}

static void draw(const struct gpus_fig *f, FILE *gp)
{
	static const char *const titles[] = {"trivial FILLs: items/s", "closed loop: items/s",
					     "closed loop: p50 latency"};
	static const char *const ylabels[] = {"items/s", "items/s",
					      "p50, submit to completion (us)"};
	const char *two = f->lanes ? "2 lanes of 1 GPU (--gpus A,A)" : "2 GPUs (--gpus A,B)";

	fputs("set style data histogram\n"
	      "set style histogram clustered gap 1\n"
	      "set style fill solid 0.75 border -1\n"
	      "set yrange [0:*]\n"
	      "set key below\n"
	      "set xtics nomirror\n"
	      "set grid noxtics ytics\n",
	      gp);
	for (unsigned p = 0; p < PANELS; p++) {
		if (!f->panel[p].n)
			continue;
		fprintf(gp, "set title '%s'\nset ylabel '%s'\nset format y '%s'\n", titles[p],
			ylabels[p], p == CLOSED_P50 ? "%g" : "%.1s%c");
		fprintf(gp,
			"plot 'gpus.%u.dat' using 2:xtic(1) lc 1 title '1 GPU (--gpus A)', "
			"'' using 3 lc 2 title ",
			p);
		vyre_plot_str(gp, two);
		fputc('\n', gp);
	}
}

int vyre_plot_gpus(const struct vyre_plot_ctx *pc)
{
	struct gpus_fig *f = calloc(1, sizeof(*f));
	unsigned panels = 0;
	int rc = 0;

	if (!f)
		return -1;
	for (size_t i = 0; i < pc->rows->n && rc == 0; i++) {
		const struct vyre_bench_row *r = &pc->rows->v[i];

		if (strcmp(r->suite, "gpus") == 0 && strcmp(r->unit, "x") != 0 &&
		    isfinite(r->value))
			rc = add_row(f, r);
	}
	for (unsigned p = 0; p < PANELS; p++)
		panels += f->panel[p].n > 0;
	if (rc == 0 && panels) {
		char backend[192];

		snprintf(backend, sizeof(backend), "%s: %s", f->sys,
			 strncmp(f->sys, "vyre-cpu", 8) == 0
			     ? "CPU backend instances standing in for GPUs"
			     : "one vyred on the CUDA backend");
		FILE *gp = vyre_plot_script(pc, "gpus", panels,
					    "vyre-bench gpus: one GPU against two, 4 named domains",
					    backend);

		rc = gp ? 1 : -1;
		if (gp) {
			draw(f, gp);
			if (vyre_plot_script_close(pc, "gpus", gp))
				rc = -1;
		}
		for (unsigned p = 0; p < PANELS && rc == 1; p++)
			if (f->panel[p].n && write_table(pc, p, &f->panel[p]))
				rc = -1;
	}
	for (unsigned p = 0; p < PANELS; p++)
		vyre_plot_set_free(&f->panel[p]);
	free(f);
	return rc < 0 ? -1 : rc;
}
