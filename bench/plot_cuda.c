/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_cuda.c - the cuda suite's throughput figure, "batch": items/s
 * against items a batch, one panel per workload (trivial FILLs, the DFA mix)
 * and one line per way of running a batch ("SHAPE N MODE" items/s rows:
 * persistent, launch, launch per item, graph build+run, graph replay).
 */
#include <math.h>
#include <string.h>

#include "plot_cuda.h"
#include "plot_gp.h"

static void batch_label(double x, char *out, size_t cap)
{
	if (x >= 1024 && fmod(x, 1024) == 0)
		snprintf(out, cap, "%gk", x / 1024);
	else
		snprintf(out, cap, "%g", x);
}

int vyre_plot_batch(const struct vyre_plot_ctx *pc)
{
	static const char *const shapes[] = {"trivial", "dfa-mix"};
	static const char *const titles[] = {"trivial: one-word FILLs, all independent",
					     "DFA mix: 1 in 4 a 64-byte DFA_SCAN, the rest ADDs"};
	struct vyre_plot_set set[2] = {{0}};
	struct vyre_plot_words w;
	char mode[128];
	unsigned panels = 0, file = 0;
	int rc = 0;

	for (size_t i = 0; i < pc->rows->n && rc == 0; i++) {
		const struct vyre_bench_row *r = &pc->rows->v[i];
		double n;

		if (strcmp(r->suite, "cuda") != 0 || strcmp(r->metric, "items/s") != 0 ||
		    strcmp(r->unit, "items/s") != 0 || !isfinite(r->value) ||
		    vyre_plot_split(r->name, &w) || w.n < 3 ||
		    (n = vyre_plot_count(w.w[1], '\0')) <= 0)
			continue;
		for (unsigned s = 0; s < 2; s++)
			if (strcmp(w.w[0], shapes[s]) == 0) {
				vyre_plot_join(&w, 2, w.n, mode, sizeof(mode));
				rc = vyre_plot_put(&set[s], mode, n, 1, r->value);
			}
	}
	for (unsigned s = 0; s < 2; s++)
		panels += set[s].n > 0;
	FILE *gp = rc || !panels
		       ? NULL
		       : vyre_plot_script(pc, "batch", panels,
					  "vyre-bench cuda: throughput against batch size",
					  "the CUDA backend alone (no vyred)");

	if (gp) {
		fputs("set logscale xy\n"
		      "set format y '%.0s%c'\n"
		      "set xlabel 'items a batch'\n"
		      "set ylabel 'items/s'\n"
		      "set key bottom right\n",
		      gp);
		for (unsigned s = 0; s < 2; s++) {
			if (!set[s].n)
				continue;
			fprintf(gp, "set title '%s'\n", titles[s]);
			vyre_plot_xtics(gp, &set[s], batch_label);
			fputs("plot ", gp);
			for (size_t k = 0; k < set[s].n; k++) {
				fprintf(gp,
					"%s'batch.%zu.dat' using 1:2 with linespoints lc %zu pt 7 "
					"title ",
					k ? ", \\\n     " : "", file + k, k + 1);
				vyre_plot_str(gp, set[s].s[k].title);
			}
			fputc('\n', gp);
			rc = rc ? rc : vyre_plot_write_data(pc, "batch", &set[s], file);
			file += (unsigned)set[s].n;
		}
		rc = vyre_plot_script_close(pc, "batch", gp) || rc ? -1 : 1;
	} else if (panels) {
		rc = -1;
	}
	vyre_plot_set_free(&set[0]);
	vyre_plot_set_free(&set[1]);
	return rc;
}
