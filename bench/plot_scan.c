/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_scan.c - the scan suite's figure, "scan": GB/s against item
 * size, one panel per literal set ("litN SIZE PEER" rows), one colour per
 * peer (vyre from host memory, from device buffers, Hyperscan); the single
 * whole-buffer scans ("single litN SIZE PEER") as large points at their
 * size, and the machine's copy limits ("limit h2d-copy", "limit hbm") as
 * horizontal lines. The base64 rows are not drawn.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_gp.h"
#include "plot_scan.h"

#define MAX_SETS 8u

struct scan_fig {
	struct vyre_plot_set set[MAX_SETS]; /* by pattern count */
	double patterns[MAX_SETS];
	unsigned n_sets;
	double h2d, hbm;
	char peers[8][128]; /* colour k + 1 for peers[k], the same in every panel */
	unsigned n_peers;
};

static struct vyre_plot_set *set_of(struct scan_fig *f, const char *lit)
{
	double n = strncmp(lit, "lit", 3) == 0 ? vyre_plot_count(lit + 3, '\0') : -1;
	unsigned i;

	if (n <= 0)
		return NULL;
	for (i = 0; i < f->n_sets && f->patterns[i] != n; i++)
		;
	if (i == f->n_sets) {
		if (i == MAX_SETS)
			return NULL;
		/* kept in pattern-count order: the panels read left to right */
		for (; i > 0 && f->patterns[i - 1] > n; i--) {
			f->patterns[i] = f->patterns[i - 1];
			f->set[i] = f->set[i - 1];
		}
		f->patterns[i] = n;
		memset(&f->set[i], 0, sizeof(f->set[i]));
		f->n_sets++;
	}
	return &f->set[i];
}

static void note_peer(struct scan_fig *f, const char *peer)
{
	for (unsigned k = 0; k < f->n_peers; k++)
		if (strcmp(f->peers[k], peer) == 0)
			return;
	if (f->n_peers < sizeof(f->peers) / sizeof(f->peers[0]))
		snprintf(f->peers[f->n_peers++], sizeof(f->peers[0]), "%s", peer);
}

static unsigned colour(const struct scan_fig *f, const char *title)
{
	for (unsigned k = 0; k < f->n_peers; k++)
		if (strncmp(title, f->peers[k], strlen(f->peers[k])) == 0 &&
		    (title[strlen(f->peers[k])] == '\0' || title[strlen(f->peers[k])] == ','))
			return k + 1;
	return f->n_peers + 1;
}

static int add_row(struct scan_fig *f, const struct vyre_bench_row *r)
{
	struct vyre_plot_words w;
	char peer[128];
	unsigned at;

	if (strcmp(r->name, "limit h2d-copy") == 0)
		f->h2d = r->value;
	if (strcmp(r->name, "limit hbm") == 0)
		f->hbm = r->value;
	if (vyre_plot_split(r->name, &w) || w.n < 3 || strchr(r->name, ':'))
		return 0;
	at = strcmp(w.w[0], "single") == 0;
	struct vyre_plot_set *set = set_of(f, w.w[at]);
	double bytes = w.n > at + 2 ? vyre_plot_bytes(w.w[at + 1]) : -1;

	if (!set || bytes <= 0)
		return 0;
	vyre_plot_join(&w, at + 2, w.n, peer, sizeof(peer));
	note_peer(f, peer);
	if (at)
		strncat(peer, ", whole buffer", sizeof(peer) - strlen(peer) - 1);
	return vyre_plot_put(set, peer, bytes, 1, r->value);
}

static void size_label(double x, char *out, size_t cap)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;

	while (u + 1 < sizeof(units) / sizeof(units[0]) && x >= 1024 && fmod(x, 1024) == 0) {
		x /= 1024;
		u++;
	}
	snprintf(out, cap, "%g%s", x, units[u]);
}

static const char *backend_of(const struct scan_fig *f)
{
	for (unsigned k = 0; k < f->n_peers; k++)
		if (strncmp(f->peers[k], "vyre-cpu", 8) == 0)
			return "vyre: producer processes through vyred on the cpu backend; "
			       "hyperscan: a thread per CPU";
	return "vyre: producer processes through vyred on the CUDA backend (dev: items in "
	       "device buffers); hyperscan: a thread per CPU";
}

static void draw(const struct scan_fig *f, FILE *gp)
{
	unsigned file = 0;

	fputs("set logscale xy\n"
	      "set xlabel 'item size'\n"
	      "set ylabel 'GB/s (10^9 input bytes/s)'\n"
	      "set key bottom right\n",
	      gp);
	for (unsigned p = 0; p < f->n_sets; p++) {
		const struct vyre_plot_set *set = &f->set[p];

		fprintf(gp, "set title '%g literal patterns'\n", f->patterns[p]);
		vyre_plot_xtics(gp, set, size_label);
		fputs("plot ", gp);
		for (size_t k = 0; k < set->n; k++) {
			const char *t = set->s[k].title;
			int whole = strstr(t, ", whole buffer") != NULL;

			fprintf(gp, "%s'scan.%zu.dat' using 1:2 with %s lc %u pt %u ps %s title ",
				k ? ", \\\n     " : "", file + k, whole ? "points" : "linespoints",
				colour(f, t), whole ? 9u : 7u, whole ? "2" : "0.8");
			vyre_plot_str(gp, t);
		}
		if (f->h2d > 0)
			fprintf(gp,
				", \\\n     %.10g with lines lc 'black' dt 3 title "
				"'host->device copy (limit)'",
				f->h2d);
		if (f->hbm > 0)
			fprintf(gp,
				", \\\n     %.10g with lines lc 'black' dt 4 title "
				"'device memory (limit)'",
				f->hbm);
		fputc('\n', gp);
		file += (unsigned)set->n;
	}
}

int vyre_plot_scan(const struct vyre_plot_ctx *pc)
{
	struct scan_fig *f = calloc(1, sizeof(*f));
	int rc = 0;

	if (!f)
		return -1;
	for (size_t i = 0; i < pc->rows->n && rc == 0; i++) {
		const struct vyre_bench_row *r = &pc->rows->v[i];

		if (strcmp(r->suite, "scan") == 0 && strcmp(r->metric, "GB/s") == 0 &&
		    strcmp(r->unit, "GB/s") == 0 && isfinite(r->value) && r->value > 0)
			rc = add_row(f, r);
	}
	if (rc == 0 && f->n_sets > 0) {
		FILE *gp = vyre_plot_script(
		    pc, "scan", f->n_sets,
		    "vyre-bench scan: literal matching, vyre against Hyperscan", backend_of(f));
		unsigned file = 0;

		rc = gp ? 1 : -1;
		if (gp) {
			draw(f, gp);
			for (unsigned p = 0; p < f->n_sets && rc == 1; p++) {
				if (vyre_plot_write_data(pc, "scan", &f->set[p], file))
					rc = -1;
				file += (unsigned)f->set[p].n;
			}
			if (vyre_plot_script_close(pc, "scan", gp))
				rc = -1;
		}
	}
	for (unsigned p = 0; p < f->n_sets; p++)
		vyre_plot_set_free(&f->set[p]);
	free(f);
	return rc < 0 ? -1 : rc;
}
