/* SPDX-License-Identifier: MIT */
/*
 * vyre-top - watch a running vyred through its USDT probes.
 *
 * Loads bpf/vyre.bpf.c, attaches it to one vyred and shows what the daemon
 * does: items, dedupe, launches and what fusion saved, latency percentiles,
 * arena and queue pressure, and one row per client. Interactive by default;
 * -b prints plain-text snapshots and --json one JSON object per refresh;
 * --openmetrics prints one Prometheus exposition and --listen serves it.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "top/top.h"

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vyre-top [-p PID | --socket PATH] [-d SECONDS] [-n N] [-b] [--json]\n"
		"                [--sort KEY] [--slow-us US] [--openmetrics | --listen HOST:PORT]\n"
		"\n"
		"Attach to a running vyred's USDT probes and show what it does.\n"
		"\n"
		"  -p, --pid PID       the vyred to watch\n"
		"      --socket PATH   find vyred by the socket it listens on\n"
		"                      (default: $VYRE_SOCKET, else %s)\n"
		"  -d, --delay SECONDS refresh interval (default 1)\n"
		"  -n, --iterations N  exit after N refreshes (default: never)\n"
		"  -b, --batch         plain-text snapshots on stdout instead of the screen\n"
		"  -j, --json          one JSON object per refresh on stdout (implies -b)\n"
		"      --sort KEY      client order: items/s, items, queue, errors, pid\n"
		"      --slow-us US    report batches whose slowest item took at least US\n"
		"                      microseconds (default 10000)\n"
		"      --openmetrics   print one OpenMetrics exposition after -d seconds, exit\n"
		"      --listen HOST:PORT\n"
		"                      serve the metrics at http://HOST:PORT/metrics (loopback\n"
		"                      addresses only; port 0 picks one), refreshed every -d\n"
		"      --check         only check that the BPF program loads here; exit 0 if so\n"
		"  -h, --help          this text\n"
		"\n"
		"Keys: h help, s sort, p pause, q quit.\n"
		"Needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN); counting starts at attach.\n",
		VYRE_DEFAULT_SOCKET);
}

static int parse_sort(const char *s, enum top_sort *out)
{
	for (int i = 0; i < TOP_SORT_COUNT; i++) {
		if (strcmp(s, top_sort_name((enum top_sort)i)) == 0) {
			*out = (enum top_sort)i;
			return 0;
		}
	}
	return -1;
}

static int parse_positive(const char *s, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0.0) || v > max)
		return -1;
	*out = v;
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_seconds(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (!stop_requested && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int target_gone(pid_t pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

static int run_batch(struct top_state *st, const struct top_options *o, int json)
{
	for (long i = 0; !stop_requested && (o->iterations == 0 || i < o->iterations); i++) {
		sleep_seconds(o->delay_s);
		if (stop_requested)
			break;
		int err = top_state_refresh(st, o->sort);
		if (err) {
			fprintf(stderr, "vyre-top: reading the BPF maps failed: %s\n",
				strerror(-err));
			return 1;
		}
		if (json)
			top_print_json(stdout, &st->view, realtime_ns());
		else
			top_print_text(stdout, &st->view);
		fflush(stdout);
		if (target_gone(o->pid)) {
			fprintf(stderr, "vyre-top: pid %d exited\n", (int)o->pid);
			return 2;
		}
	}
	return 0;
}

static int run_openmetrics(struct top_state *st, const struct top_options *o)
{
	sleep_seconds(o->delay_s);
	int err = top_state_refresh(st, o->sort);
	if (err) {
		fprintf(stderr, "vyre-top: reading the BPF maps failed: %s\n", strerror(-err));
		return 1;
	}
	top_print_metrics(stdout, &st->view, 1);
	return fflush(stdout) == 0 ? 0 : 1;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Refresh every -d seconds and answer scrapes in between, until a signal or vyred exits. */
static int run_listen(struct top_state *st, const struct top_options *o, struct top_http *h)
{
	int err = top_state_refresh(st, o->sort);
	fprintf(stderr, "vyre-top: serving http://%s/metrics\n", top_http_address(h));
	while (!err && !stop_requested) {
		err = top_http_serve(h, monotonic_ns() + (uint64_t)(o->delay_s * 1e9), &st->view,
				     &stop_requested);
		if (err || stop_requested)
			break;
		err = top_state_refresh(st, o->sort);
		if (!err && target_gone(o->pid)) {
			fprintf(stderr, "vyre-top: pid %d exited\n", (int)o->pid);
			return 2;
		}
	}
	if (err) {
		fprintf(stderr, "vyre-top: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"pid", required_argument, NULL, 'p'},
	    {"socket", required_argument, NULL, 'S'},
	    {"delay", required_argument, NULL, 'd'},
	    {"iterations", required_argument, NULL, 'n'},
	    {"batch", no_argument, NULL, 'b'},
	    {"json", no_argument, NULL, 'j'},
	    {"sort", required_argument, NULL, 'o'},
	    {"slow-us", required_argument, NULL, 'w'},
	    {"check", no_argument, NULL, 'c'},
	    {"openmetrics", no_argument, NULL, 'M'},
	    {"listen", required_argument, NULL, 'L'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct top_options o = {.delay_s = 1.0, .slow_ns = 10000000u, .sort = TOP_SORT_RATE};
	const char *socket_path = getenv("VYRE_SOCKET");
	const char *listen_at = NULL;
	int batch = 0, json = 0, check = 0, openmetrics = 0, c;
	double v;
	while ((c = getopt_long(argc, argv, "p:d:n:bjh", longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_positive(optarg, 4194304.0, &v) != 0 || v != (double)(pid_t)v) {
				fprintf(stderr, "vyre-top: bad pid '%s'\n", optarg);
				return 2;
			}
			o.pid = (pid_t)v;
			break;
		case 'S':
			socket_path = optarg;
			break;
		case 'd':
			if (parse_positive(optarg, 3600.0, &o.delay_s) != 0 || o.delay_s < 0.01) {
				fprintf(stderr, "vyre-top: -d wants seconds in [0.01, 3600]\n");
				return 2;
			}
			break;
		case 'n':
			if (parse_positive(optarg, 1e9, &v) != 0 || v != (double)(long)v) {
				fprintf(stderr, "vyre-top: -n wants a positive count\n");
				return 2;
			}
			o.iterations = (long)v;
			break;
		case 'b':
			batch = 1;
			break;
		case 'j':
			json = batch = 1;
			break;
		case 'o':
			if (parse_sort(optarg, &o.sort) != 0) {
				fprintf(stderr, "vyre-top: unknown sort key '%s'\n", optarg);
				return 2;
			}
			break;
		case 'w':
			if (parse_positive(optarg, 1.8e13, &v) != 0) {
				fprintf(stderr, "vyre-top: --slow-us wants a positive number\n");
				return 2;
			}
			o.slow_ns = (uint64_t)(v * 1000.0);
			break;
		case 'c':
			check = 1;
			break;
		case 'M':
			openmetrics = 1;
			break;
		case 'L':
			listen_at = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || openmetrics + (listen_at != NULL) + batch > 1) {
		usage(stderr);
		return 2;
	}
	char why[512];
	if (check) {
		if (top_bpf_usable(why, sizeof(why)) != 0) {
			printf("vyre-top: %s\n", why);
			return 1;
		}
		printf("vyre-top: can load its BPF program and attach uprobes\n");
		return 0;
	}
	if (top_check_privilege(why, sizeof(why)) != 0) {
		fprintf(stderr, "vyre-top: %s\n", why);
		return 1;
	}
	if (o.pid == 0) {
		const char *path = socket_path && *socket_path ? socket_path : VYRE_DEFAULT_SOCKET;
		if (top_find_socket_owner(path, &o.pid, why, sizeof(why)) != 0) {
			fprintf(stderr, "vyre-top: %s\n", why);
			return 1;
		}
	}
	struct top_http *http = NULL;
	if (listen_at && top_http_open(&http, listen_at, why, sizeof(why)) != 0) {
		fprintf(stderr, "vyre-top: %s\n", why);
		return 1;
	}
	struct top_session *s;
	if (top_session_open(&s, o.pid, o.slow_ns, why, sizeof(why)) != 0) {
		fprintf(stderr, "vyre-top: %s\n", why);
		top_http_close(http);
		return 1;
	}
	struct top_state st;
	int err = top_state_init(&st, s, o.pid);
	if (err) {
		fprintf(stderr, "vyre-top: reading the BPF maps failed: %s\n", strerror(-err));
		top_session_close(s);
		top_http_close(http);
		return 1;
	}
	struct sigaction sa = {.sa_handler = on_stop};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int status;
	if (batch || openmetrics || http) {
		uint32_t total, n = top_session_probes(s, &total);
		fprintf(stderr, "vyre-top: attached to pid %d, %u of %u probes\n", (int)o.pid, n,
			total);
	}
	if (openmetrics) {
		status = run_openmetrics(&st, &o);
	} else if (http) {
		status = run_listen(&st, &o, http);
	} else if (batch) {
		status = run_batch(&st, &o, json);
	} else {
		status = top_ui_run(&st, &o);
	}
	top_state_free(&st);
	top_session_close(s);
	top_http_close(http);
	return status;
}
