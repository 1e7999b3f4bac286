/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_peers.c - the peers suite's figures (docs/vyre-bench.md,
 * "peers"):
 *
 *   openloop   latency from arrival (p50 solid, p99 dashed, p999 dotted)
 *              against offered load, and achieved against offered items/s,
 *              one colour per system ("open SYS Pp LOAD%" rows)
 *   closed     items/s and p50/p99 against the number of producer
 *              processes ("closed SYS Np" rows; the e2e suite's "cpu/Np"
 *              items/s beside them)
 */
#include <math.h>
#include <string.h>

#include "plot_gp.h"
#include "plot_peers.h"

/* "vyre-cpu" systems ran on vyred's cpu backend, every other vyre on a GPU. */
static const char *backend_of(const struct vyre_plot_set *set, char *out, size_t cap)
{
	int cpu = 0, self = 0, mps = 0;

	for (size_t k = 0; k < set->n; k++) {
		const char *t = set->s[k].title;

		cpu |= strncmp(t, "vyre-cpu", 8) == 0 || strncmp(t, "e2e", 3) == 0;
		self |= strncmp(t, "self", 4) == 0;
		mps |= strncmp(t, "mps", 3) == 0;
	}
	snprintf(out, cap, "vyred on the %s backend%s%s", cpu ? "cpu" : "CUDA",
		 self ? "; self: each process its own cuLaunchKernel per item" : "",
		 mps ? "; mps: own launches under CUDA MPS" : "");
	return out;
}

static int has_values(const struct vyre_plot_series *s, unsigned col)
{
	for (size_t i = 0; i < s->n; i++)
		if (isfinite(s->pt[i][col]))
			return 1;
	return 0;
}

static unsigned metric_col(const char *metric, const char *const *metrics, unsigned n)
{
	for (unsigned c = 0; c < n; c++)
		if (strcmp(metric, metrics[c]) == 0)
			return c + 1;
	return 0;
}

/* ns rows are drawn in us. */
static double shown(const struct vyre_bench_row *r)
{
	return strcmp(r->unit, "ns") == 0 ? r->value / 1000 : r->value;
}

static int finish(const struct vyre_plot_ctx *pc, const char *fig, FILE *gp,
		  struct vyre_plot_set *set)
{
	int rc = vyre_plot_script_close(pc, fig, gp);

	if (rc == 0)
		rc = vyre_plot_write_data(pc, fig, set, 0) ? -1 : 1;
	vyre_plot_set_free(set);
	return rc;
}

int vyre_plot_openloop(const struct vyre_plot_ctx *pc)
{
	static const char *const metrics[] = {"offered", "items/s", "p50", "p99", "p999"};
	static const char *const pcts[] = {"p50", "p99", "p999"};
	struct vyre_plot_set set = {0};
	struct vyre_plot_words w;
	char sys[128], backend[192];

	for (size_t i = 0; i < pc->rows->n; i++) {
		const struct vyre_bench_row *r = &pc->rows->v[i];
		unsigned col = metric_col(r->metric, metrics, 5);
		double load;

		if (strcmp(r->suite, "peers") != 0 || !col || !isfinite(r->value) ||
		    vyre_plot_split(r->name, &w) || w.n < 4 || strcmp(w.w[0], "open") != 0 ||
		    (load = vyre_plot_count(w.w[w.n - 1], '%')) < 0)
			continue;
		vyre_plot_join(&w, 1, w.n - 1, sys, sizeof(sys));
		if (vyre_plot_put(&set, sys, load, col, shown(r))) {
			vyre_plot_set_free(&set);
			return -1;
		}
	}
	if (set.n == 0)
		return 0;
	vyre_plot_set_sort(&set);
	FILE *gp = vyre_plot_script(
	    pc, "openloop", 2, "vyre-bench peers: open loop (Poisson arrivals from P producers)",
	    backend_of(&set, backend, sizeof(backend)));

	if (!gp) {
		vyre_plot_set_free(&set);
		return -1;
	}
	fputs("set logscale xy\n"
	      "set format x '%.0s%c'\n"
	      "set xlabel 'offered load (items/s)'\n"
	      "set ylabel 'latency from arrival to completion (us)'\n"
	      "set title 'latency: p50 solid, p99 dashed, p999 dotted'\n"
	      "plot ",
	      gp);
	for (size_t k = 0; k < set.n; k++)
		for (unsigned p = 0; p < 3; p++) {
			char title[160];

			snprintf(title, sizeof(title), "%s %s", set.s[k].title, pcts[p]);
			fprintf(
			    gp,
			    "%s'openloop.%zu.dat' using 2:%u with linespoints lc %zu dt %u pt 7 "
			    "ps 0.7 title ",
			    k || p ? ", \\\n     " : "", k, 4 + p, k + 1, p + 1);
			vyre_plot_str(gp, title);
		}
	fputs("\nset format y '%.0s%c'\n"
	      "set ylabel 'achieved (items/s)'\n"
	      "set title 'throughput (labels: offered load, % of the closed-loop rate)'\n"
	      "plot x with lines lc 'gray' dt 2 title 'achieved = offered'",
	      gp);
	for (size_t k = 0; k < set.n; k++) {
		fprintf(gp,
			", \\\n     'openloop.%zu.dat' using 2:3 with linespoints lc %zu pt 7 "
			"ps 0.7 title ",
			k, k + 1);
		vyre_plot_str(gp, set.s[k].title);
		fprintf(gp,
			", \\\n     'openloop.%zu.dat' using 2:3:(sprintf('%%g%%%%', $1)) with "
			"labels offset 0,0.8 font ',8' tc lt %zu notitle",
			k, k + 1);
	}
	fputc('\n', gp);
	return finish(pc, "openloop", gp, &set);
}

/* The e2e suite's "cpu/Np" rows: items/s of N producer processes through one vyred. */
static int put_e2e(struct vyre_plot_set *set, const struct vyre_bench_row *r)
{
	double n;

	if (strncmp(r->name, "cpu/", 4) != 0 || strcmp(r->metric, "items/s") != 0 ||
	    (n = vyre_plot_count(r->name + 4, 'p')) <= 0)
		return 0;
	return vyre_plot_put(set, "e2e suite: vyre-cpu, batches of 64", n, 1, r->value);
}

static void producers_label(double x, char *out, size_t cap)
{
	snprintf(out, cap, "%g", x);
}

int vyre_plot_closed(const struct vyre_plot_ctx *pc)
{
	static const char *const metrics[] = {"items/s", "p50", "p99"};
	struct vyre_plot_set set = {0};
	struct vyre_plot_words w;
	char sys[128], backend[192];
	int err = 0;

	for (size_t i = 0; i < pc->rows->n && !err; i++) {
		const struct vyre_bench_row *r = &pc->rows->v[i];
		unsigned col = metric_col(r->metric, metrics, 3);
		double n;

		if (!isfinite(r->value) || strcmp(r->unit, "x") == 0)
			continue;
		if (strcmp(r->suite, "e2e") == 0) {
			err = put_e2e(&set, r);
			continue;
		}
		if (strcmp(r->suite, "peers") != 0 || !col || vyre_plot_split(r->name, &w) ||
		    w.n < 3 || strcmp(w.w[0], "closed") != 0 ||
		    (n = vyre_plot_count(w.w[w.n - 1], 'p')) <= 0)
			continue;
		vyre_plot_join(&w, 1, w.n - 1, sys, sizeof(sys));
		if (!strchr(sys, ':'))
			err = vyre_plot_put(&set, sys, n, col, shown(r));
	}
	if (err || set.n == 0) {
		vyre_plot_set_free(&set);
		return err ? -1 : 0;
	}
	vyre_plot_set_sort(&set);
	unsigned latency = 0; /* series with latency rows: the e2e suite's have none */

	for (size_t k = 0; k < set.n; k++)
		latency += has_values(&set.s[k], 2);
	FILE *gp = vyre_plot_script(
	    pc, "closed", latency ? 2 : 1,
	    "vyre-bench peers: closed loop (each producer submits one item and waits)",
	    backend_of(&set, backend, sizeof(backend)));

	if (!gp) {
		vyre_plot_set_free(&set);
		return -1;
	}
	fputs("set logscale xy 2\n"
	      "set logscale y 10\n"
	      "set format y '%.0s%c'\n"
	      "set xlabel 'producer processes'\n"
	      "set ylabel 'items/s (all producers)'\n"
	      "set title 'throughput'\n",
	      gp);
	vyre_plot_xtics(gp, &set, producers_label);
	fputs("plot ", gp);
	for (size_t k = 0; k < set.n; k++) {
		fprintf(gp, "%s'closed.%zu.dat' using 1:2 with linespoints lc %zu pt 7 title ",
			k ? ", \\\n     " : "", k, k + 1);
		vyre_plot_str(gp, set.s[k].title);
	}
	fputs("\n", gp);
	if (latency)
		fputs("set format y '%g'\n"
		      "set ylabel 'latency, submit to completion (us)'\n"
		      "set title 'latency: p50 solid, p99 dashed'\n"
		      "plot ",
		      gp);
	unsigned drawn = 0;

	for (size_t k = 0; k < set.n; k++)
		for (unsigned c = 3; c <= 4; c++) {
			char title[160];

			if (!has_values(&set.s[k], c - 1))
				continue;
			snprintf(title, sizeof(title), "%s %s", set.s[k].title,
				 c == 3 ? "p50" : "p99");
			fprintf(gp,
				"%s'closed.%zu.dat' using 1:%u with linespoints lc %zu dt %u pt 7 "
				"title ",
				drawn++ ? ", \\\n     " : "", k, c, k + 1, c - 2);
			vyre_plot_str(gp, title);
		}
	if (drawn)
		fputc('\n', gp);
	return finish(pc, "closed", gp, &set);
}
