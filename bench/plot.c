/* SPDX-License-Identifier: MIT */
/*
 * bench/plot.c - vyre-bench --plot DIR: writes the script and data of each
 * figure whose rows are there, then runs gnuplot on each script in DIR.
 * Without gnuplot the figures are skipped with a message and no failure:
 * the rows are the record, the pictures a convenience.
 */
#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot.h"
#include "plot_cuda.h"
#include "plot_gpus.h"
#include "plot_label.h"
#include "plot_peers.h"
#include "plot_scan.h"
#include "plot_set.h"

static const struct figure {
	const char *name, *what;
	int (*draw)(const struct vyre_plot_ctx *pc);
} figures[] = {
    {"openloop", "peers open loop: latency against offered load", vyre_plot_openloop},
    {"closed", "peers/e2e closed loop: items/s and latency against producers", vyre_plot_closed},
    {"batch", "cuda: items/s against batch size", vyre_plot_batch},
    {"scan", "scan: GB/s against item size, vyre and Hyperscan", vyre_plot_scan},
    {"gpus", "gpus: one GPU against two", vyre_plot_gpus},
};
#define N_FIGURES (sizeof(figures) / sizeof(figures[0]))

/* gnuplot's path from $PATH into @out; 0, or -1 when there is none. */
static int find_gnuplot(char *out, size_t cap)
{
	const char *path = getenv("PATH");

	while (path && *path) {
		size_t len = strcspn(path, ":");
		int n = snprintf(out, cap, "%.*s/gnuplot", (int)len, path);

		if (len > 0 && n > 0 && (size_t)n < cap && access(out, X_OK) == 0)
			return 0;
		path += len + (path[len] == ':');
	}
	return -1;
}

/* Runs `gnuplot FIG.gp` in @dir; 0 when it exited 0 and FIG.png is there. */
static int run_gnuplot(const char *gnuplot, const char *dir, const char *fig)
{
	char script[64], png[PATH_MAX];
	struct stat st;
	int status;

	snprintf(script, sizeof(script), "%s.gp", fig);
	if (snprintf(png, sizeof(png), "%s/%s.png", dir, fig) >= (int)sizeof(png))
		return -1;
	unlink(png); /* a stale figure must not pass for a new one */
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (chdir(dir) == 0)
			execl(gnuplot, "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(png, &st) != 0)
		return -1;
	return 0;
}

int vyre_bench_plot(const char *dir, const struct vyre_bench_rows *rows, const char *label)
{
	char machine[320], gnuplot[PATH_MAX];
	const struct vyre_plot_ctx pc = {
	    .dir = dir, .rows = rows, .label = label ? label : machine};
	int drawn[N_FIGURES], n_drawn = 0, failed = 0;

	if (!label)
		vyre_plot_machine(machine, sizeof(machine));
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "vyre-bench: plot: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < N_FIGURES; i++) {
		int rc = figures[i].draw(&pc);

		drawn[i] = rc == 1;
		n_drawn += rc == 1;
		if (rc < 0) {
			fprintf(stderr,
				"vyre-bench: plot: %s: could not write its script or data\n",
				figures[i].name);
			failed = 1;
		}
	}
	if (n_drawn == 0) {
		fprintf(stderr, "vyre-bench: plot: no rows for any figure (%zu rows read)\n",
			rows->n);
		return failed ? -1 : 0;
	}
	if (find_gnuplot(gnuplot, sizeof(gnuplot)) != 0) {
		fprintf(stderr,
			"vyre-bench: plot: gnuplot is missing (apt-get install gnuplot-nox): no "
			"figures drawn; their scripts and data are in %s\n",
			dir);
		return failed ? -1 : 0;
	}
	for (size_t i = 0; i < N_FIGURES; i++) {
		if (!drawn[i])
			continue;
		if (run_gnuplot(gnuplot, dir, figures[i].name) == 0) {
			fprintf(stderr, "vyre-bench: plot: %s/%s.png (%s)\n", dir, figures[i].name,
				figures[i].what);
		} else {
			fprintf(stderr, "vyre-bench: plot: gnuplot failed on %s/%s.gp\n", dir,
				figures[i].name);
			failed = 1;
		}
	}
	return failed ? -1 : 0;
}
