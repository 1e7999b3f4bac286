/* SPDX-License-Identifier: MIT */
/*
 * vyre-bench - runs the benchmark suites of the table in bench/suites.c
 * (each defined with VYRE_BENCH_SUITE, bench/bench.h), prints one aligned
 * table and, with --json FILE, one JSON object per row (see
 * docs/vyre-bench.md). With --plot DIR it then draws figures from those rows
 * (bench/plot.h), or, with --from FILE, from rows saved by an earlier run,
 * without running anything.
 *
 * A suite returns 0 when it ran, or skipped with a message on stderr (no GPU,
 * no daemon); anything else is a failure and makes vyre-bench exit 1 after
 * the remaining suites ran.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "harness_clock.h"
#include "plot.h"
#include "suites.h"

static void usage(FILE *f)
{
	fputs("usage: vyre-bench [options] [SUITE...]   (default: every suite)\n"
	      "  --quick          small sizes and short runs (smoke tests)\n"
	      "  --seconds S      target time per measurement (default 1, --quick 0.05)\n"
	      "  --json FILE      also write one JSON object per result row to FILE\n"
	      "  --socket PATH    a running vyred for end-to-end suites (default: start one)\n"
	      "  --inflight N     pass --inflight N to the vyreds the peers, gpus and restart\n"
	      "                   suites start\n"
	      "  --loops N        pass --loops N to them\n"
	      "  --vyred-arg ARG  pass ARG to them too (repeatable, up to 8)\n"
	      "  --backend B      cpu: the peers, scan, gpus and restart suites use vyred\n"
	      "                   --backend cpu and no GPU peers even on a GPU machine\n"
	      "                   (default auto)\n"
	      "  --out DIR        a directory for extra files (peers: peers-openloop.json)\n"
	      "  --plot DIR       draw PNG figures of the rows with gnuplot into DIR (the rows\n"
	      "                   go to DIR/rows.json unless --json is given)\n"
	      "  --from FILE      with --plot: draw from FILE's rows (repeatable), run nothing\n"
	      "  --label TEXT     the machine named in the figures' titles (default: this one)\n"
	      "  --list           list the suites and exit\n"
	      "  -h, --help       this text\n"
	      "exit: 0 all suites ran, 1 a suite failed, 2 usage\n",
	      f);
}

static const struct vyre_bench_suite *find_suite(const char *name)
{
	for (const struct vyre_bench_suite *const *s = vyre_bench_suites; *s; s++)
		if (strcmp((*s)->name, name) == 0)
			return *s;
	return NULL;
}

/*
 * Draws the figures of the rows in @files into @dir: 0, or 1 when a file or a
 * figure failed. Rows saved elsewhere (@saved) are not this machine's: without
 * a @label the titles name the files.
 */
static int redraw(const char *dir, const char *const *files, unsigned n, const char *label,
		  int saved)
{
	struct vyre_bench_rows rows = {0};
	char names[320] = "rows of";
	int rc = 0;

	for (unsigned i = 0; i < n && rc == 0; i++) {
		const char *base = strrchr(files[i], '/');
		size_t len = strlen(names);

		rc = vyre_bench_rows_load(&rows, files[i]);
		snprintf(names + len, sizeof(names) - len, "%s %s", i ? "," : "",
			 base ? base + 1 : files[i]);
	}
	if (rc == 0)
		rc = vyre_bench_plot(dir, &rows, label || !saved ? label : names);
	vyre_bench_rows_free(&rows);
	return rc != 0;
}

static int run_suite(struct vyre_bench_ctx *ctx, const struct vyre_bench_suite *s)
{
	int rc = s->run(ctx);

	if (rc != 0)
		fprintf(stderr, "vyre-bench: suite %s failed (%d)\n", s->name, rc);
	return rc != 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"quick", no_argument, NULL, 'q'},
	    {"seconds", required_argument, NULL, 's'},
	    {"json", required_argument, NULL, 'j'},
	    {"socket", required_argument, NULL, 'S'},
	    {"inflight", required_argument, NULL, 'i'},
	    {"backend", required_argument, NULL, 'b'},
	    {"out", required_argument, NULL, 'o'},
	    {"list", no_argument, NULL, 'l'},
	    {"loops", required_argument, NULL, 'L'},
	    {"vyred-arg", required_argument, NULL, 'A'},
	    {"plot", required_argument, NULL, 'p'},
	    {"from", required_argument, NULL, 'f'},
	    {"label", required_argument, NULL, 'T'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct vyre_bench_ctx ctx = {.seconds = 0};
	const char *json_path = NULL, *plot_dir = NULL, *label = NULL, *from[16];
	unsigned n_from = 0;
	char rows_path[4096];
	int c, failed = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			ctx.quick = 1;
			break;
		case 's':
			ctx.seconds = strtod(optarg, &end);
			if (*end || !(ctx.seconds > 0 && ctx.seconds < 3600)) {
				fprintf(stderr, "vyre-bench: bad --seconds '%s'\n", optarg);
				return 2;
			}
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'S':
			ctx.socket = optarg;
			break;
		case 'i':
		case 'L': {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || optarg[0] == '-' || v == 0 || v > 1000000) {
				fprintf(stderr, "vyre-bench: bad --%s '%s'\n",
					c == 'i' ? "inflight" : "loops", optarg);
				return 2;
			}
			*(c == 'i' ? &ctx.inflight : &ctx.loops) = (unsigned)v;
			break;
		}
		case 'b':
			if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "auto") != 0) {
				fprintf(stderr, "vyre-bench: bad --backend '%s' (cpu or auto)\n",
					optarg);
				return 2;
			}
			ctx.cpu_only = strcmp(optarg, "cpu") == 0;
			break;
		case 'o':
			ctx.out_dir = optarg;
			break;
		case 'A':
			if (ctx.n_vyred_args == VYRE_BENCH_MAX_VYRED_ARGS) {
				fprintf(stderr, "vyre-bench: at most %u --vyred-arg\n",
					VYRE_BENCH_MAX_VYRED_ARGS);
				return 2;
			}
			ctx.vyred_args[ctx.n_vyred_args++] = optarg;
			break;
		case 'p':
			plot_dir = optarg;
			break;
		case 'f':
			if (n_from == sizeof(from) / sizeof(from[0])) {
				fprintf(stderr, "vyre-bench: at most %zu --from\n",
					sizeof(from) / sizeof(from[0]));
				return 2;
			}
			from[n_from++] = optarg;
			break;
		case 'T':
			label = optarg;
			break;
		case 'l':
			for (const struct vyre_bench_suite *const *s = vyre_bench_suites; *s; s++)
				printf("%-10s %s\n", (*s)->name, (*s)->help);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (int i = optind; i < argc; i++)
		if (!find_suite(argv[i])) {
			fprintf(stderr, "vyre-bench: no suite '%s' (try --list)\n", argv[i]);
			return 2;
		}
	if (n_from && (!plot_dir || optind < argc)) {
		fprintf(stderr, "vyre-bench: --from needs --plot DIR and runs no suites\n");
		return 2;
	}
	if (n_from)
		return redraw(plot_dir, from, n_from, label, 1);
	if (ctx.seconds == 0)
		ctx.seconds = ctx.quick ? 0.05 : 1.0;
	if (plot_dir && !json_path) {
		if (mkdir(plot_dir, 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "vyre-bench: %s: %s\n", plot_dir, strerror(errno));
			return 2;
		}
		if (snprintf(rows_path, sizeof(rows_path), "%s/rows.json", plot_dir) >=
		    (int)sizeof(rows_path)) {
			fprintf(stderr, "vyre-bench: --plot: directory name too long\n");
			return 2;
		}
		json_path = rows_path;
	}
	if (json_path) {
		ctx.json = fopen(json_path, "w");
		if (!ctx.json) {
			fprintf(stderr, "vyre-bench: %s: %s\n", json_path, strerror(errno));
			return 2;
		}
	}
	vyre_bench_clock_calibrate();
	printf("%-8s %-34s %-10s %16s %s\n", "suite", "name", "metric", "value", "unit");
	if (optind == argc)
		for (const struct vyre_bench_suite *const *s = vyre_bench_suites; *s; s++)
			failed |= run_suite(&ctx, *s);
	else
		for (int i = optind; i < argc; i++)
			failed |= run_suite(&ctx, find_suite(argv[i]));
	if (ctx.json && fclose(ctx.json) != 0) {
		fprintf(stderr, "vyre-bench: %s: %s\n", json_path, strerror(errno));
		failed = 1;
	}
	if (plot_dir && json_path && redraw(plot_dir, &json_path, 1, label, 0) != 0)
		failed = 1;
	return failed;
}
