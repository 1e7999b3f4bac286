/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_probes.c - suite "probes": what vyred's USDT probes cost.
 *
 * End-to-end CPU-backend throughput (one producer process submitting
 * batches of independent ADD items and reaping as it goes) against
 *   out       a vyred built with VYRE_PROBES=0 (every probe compiled out)
 *   untraced  the normal vyred, probes compiled in, nothing attached
 *   traced    the same vyred with vyre-top attached (all 11 probes live)
 * in one run, interleaved in fifteen rounds whose order rotates, so the
 * machine's noise hits every peer alike. Reports the median items/s of each
 * and the median over rounds of untraced/out and traced/out (issue 5
 * targets: >= 0.99 and >= 0.90), and beside each peer's items/s the
 * median "vyred cpu": the ns of CPU its vyred spent an item over a
 * measurement (harness_cpu.h; with vyre-top attached, what the probes cost it).
 * Both daemons run on the harness's consumer CPU and the producer on a
 * producer CPU.
 *
 * The binaries are found next to vyre-bench: vyred, noprobes/vyred (built
 * by `make` through tests/telemetry.mk) and vyre-top. Tracing needs root;
 * without it the traced peer is skipped and says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "harness_cpu.h"
#include "harness_procs.h"
#include "harness_stats.h"
#include "harness_vyred.h"

#define SUITE	     "probes"
#define BATCH	     64u
#define OUTS	     64u /* distinct outputs, so a batch's items are independent */
#define WAIT_NS	     (5ll * 1000000000ll)
#define START_TRIES  1000 /* 10 ms apart */
#define MAX_ROUNDS   15u
#define BUFFER_BYTES 64u

enum peer { PEER_OUT, PEER_UNTRACED, PEER_TRACED, N_PEERS };
static const char *const peer_names[N_PEERS] = {"out", "untraced", "traced"};

struct paths {
	char vyred[PATH_MAX];
	char vyred_out[PATH_MAX];
	char top[PATH_MAX];
};

static void sleep_ns(long ns)
{
	nanosleep(&(struct timespec){ns / 1000000000l, ns % 1000000000l}, NULL);
}

static int find_binaries(struct paths *p)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = '\0';
	const char *dir = dirname(self);
	if ((size_t)snprintf(p->vyred, sizeof(p->vyred), "%s/vyred", dir) >= sizeof(p->vyred) ||
	    (size_t)snprintf(p->vyred_out, sizeof(p->vyred_out), "%s/noprobes/vyred", dir) >=
		sizeof(p->vyred_out) ||
	    (size_t)snprintf(p->top, sizeof(p->top), "%s/vyre-top", dir) >= sizeof(p->top))
		return -1;
	return 0;
}

/* Start vyre-top on @target (output discarded) and wait until it has attached. */
static pid_t top_start(const char *bin, const struct vyre_bench_vyred *target)
{
	char log[128], pid[16], line[256];

	snprintf(log, sizeof(log), "%s/top.log", target->dir);
	snprintf(pid, sizeof(pid), "%d", (int)target->pid);
	fflush(NULL);
	pid_t p = fork();
	if (p < 0)
		return -1;
	if (p == 0) {
		int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
		int err = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (out >= 0)
			dup2(out, 1);
		if (err >= 0)
			dup2(err, 2);
		execl(bin, bin, "-p", pid, "-b", "--json", "-d", "1", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < START_TRIES; i++) {
		FILE *f = fopen(log, "r");
		int attached = 0;

		while (f && fgets(line, sizeof(line), f))
			attached |= strstr(line, "attached to pid") != NULL;
		if (f)
			fclose(f);
		if (attached)
			return p;
		if (waitpid(p, NULL, WNOHANG) == p)
			break;
		sleep_ns(10000000);
	}
	fprintf(stderr, "probes: vyre-top did not attach (see %s)\n", log);
	kill(p, SIGTERM);
	vyre_bench_reap(p);
	return -1;
}

static void top_stop(pid_t p, const struct vyre_bench_vyred *target)
{
	char log[128];

	kill(p, SIGTERM);
	vyre_bench_reap(p);
	snprintf(log, sizeof(log), "%s/top.log", target->dir);
	unlink(log);
}

struct line {
	_Alignas(64) uint64_t v;
};

struct shared {
	struct line go, stop, ready, completed, failed;
};

struct producer_arg {
	const char *socket;
	struct shared *sh;
};

static int reap_some(struct vyre_client *c, uint64_t *completed, int64_t wait_ns)
{
	struct vyre_cqe cqes[BATCH * 4];
	int n = wait_ns ? vyre_wait(c, cqes, BATCH * 4, wait_ns) : vyre_reap(c, cqes, BATCH * 4);

	if (n == VYRE_E_TIMEDOUT)
		return 0;
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		if (cqes[i].status != 0)
			return VYRE_E_PROTO;
	*completed += (uint64_t)n;
	return n;
}

static int producer_main(void *arg)
{
	const struct producer_arg *a = arg;
	struct shared *sh = a->sh;
	struct vyre_connect_opts o = {.socket_path = a->socket};
	struct vyre_client *c;
	struct vyre_work_item its[BATCH];
	uint64_t uds[BATCH], submitted = 0, completed = 0, seq = 0;
	uint32_t in, out[OUTS];
	int rc = vyre_connect(&o, &c);

	if (rc)
		return 1;
	rc = vyre_buffer_alloc(c, BUFFER_BYTES, 0, &in);
	for (uint32_t i = 0; rc == 0 && i < OUTS; i++)
		rc = vyre_buffer_alloc(c, BUFFER_BYTES, 0, &out[i]);
	if (rc) {
		vyre_close(c);
		return 1;
	}
	__atomic_fetch_add(&sh->ready.v, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&sh->go.v, __ATOMIC_ACQUIRE))
		sleep_ns(100000);
	while (rc >= 0 && !__atomic_load_n(&sh->stop.v, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < BATCH; i++) {
			its[i] = (struct vyre_work_item){VYRE_OP_ADD, in, out[(seq + i) % OUTS],
							 (uint32_t)(seq + i)};
			uds[i] = seq + i;
		}
		rc = vyre_submit_batch(c, its, uds, BATCH);
		if (rc > 0) {
			submitted += (uint64_t)rc;
			seq += (uint64_t)rc;
		}
		if (rc >= 0)
			rc = reap_some(c, &completed, rc == 0 ? 1000000 : 0);
		__atomic_store_n(&sh->completed.v, completed, __ATOMIC_RELAXED);
	}
	while (rc >= 0 && completed < submitted)
		rc = reap_some(c, &completed, WAIT_NS) > 0 ? 0 : -1;
	vyre_close(c);
	if (rc < 0)
		__atomic_store_n(&sh->failed.v, 1, __ATOMIC_RELAXED);
	return rc < 0;
}

/*
 * Items/s of one producer process against the vyred @d over ctx->seconds,
 * and *@cpu, the ns of CPU that vyred spent an item over them.
 */
static int throughput(struct vyre_bench_ctx *ctx, const struct vyre_bench_vyred *d,
		      double *items_per_s, double *cpu)
{
	struct shared *sh = vyre_bench_shared_alloc(sizeof(*sh));
	struct producer_arg arg = {d->sock, sh};
	struct vyre_bench_cpu window;
	int rc = 0;

	*cpu = -1;
	if (!sh)
		return -1;
	pid_t p = vyre_bench_spawn(vyre_bench_producer_cpu(0), producer_main, &arg);
	if (p < 0) {
		vyre_bench_shared_free(sh, sizeof(*sh));
		return -1;
	}
	uint64_t t0 = vyre_bench_now_ns();

	while (!__atomic_load_n(&sh->ready.v, __ATOMIC_ACQUIRE) &&
	       vyre_bench_now_ns() - t0 < (uint64_t)WAIT_NS)
		sleep_ns(1000000);
	__atomic_store_n(&sh->go.v, 1, __ATOMIC_RELEASE);
	vyre_bench_cpu_start(&window, d->pid);
	uint64_t start = vyre_bench_now_ns();
	uint64_t first = __atomic_load_n(&sh->completed.v, __ATOMIC_RELAXED);

	sleep_ns((long)(ctx->seconds * 1e9));
	uint64_t end = vyre_bench_now_ns();
	uint64_t done = __atomic_load_n(&sh->completed.v, __ATOMIC_RELAXED) - first;

	*cpu = vyre_bench_cpu_per_item(vyre_bench_cpu_ns(&window), done);
	__atomic_store_n(&sh->stop.v, 1, __ATOMIC_RELEASE);
	if (vyre_bench_reap(p) != 0 || __atomic_load_n(&sh->failed.v, __ATOMIC_RELAXED) ||
	    done == 0)
		rc = -1;
	*items_per_s = (double)done * 1e9 / (double)(end - start);
	vyre_bench_shared_free(sh, sizeof(*sh));
	return rc;
}

/* One measurement of @peer: the traced peer attaches vyre-top to the probes daemon first. */
static int measure(struct vyre_bench_ctx *ctx, enum peer peer, const struct vyre_bench_vyred *out,
		   const struct vyre_bench_vyred *in, const struct paths *p, double *items_per_s,
		   double *cpu)
{
	if (peer == PEER_OUT)
		return throughput(ctx, out, items_per_s, cpu);
	if (peer == PEER_UNTRACED)
		return throughput(ctx, in, items_per_s, cpu);
	pid_t top = top_start(p->top, in);
	if (top < 0)
		return -1;
	int rc = throughput(ctx, in, items_per_s, cpu);
	top_stop(top, in);
	return rc;
}

static int can_trace(const struct paths *p)
{
	char cmd[PATH_MAX + 32];

	if (geteuid() != 0 || access(p->top, X_OK) != 0)
		return 0;
	snprintf(cmd, sizeof(cmd), "'%s' --check >/dev/null 2>&1", p->top);
	return system(cmd) == 0;
}

static int probes_suite(struct vyre_bench_ctx *ctx)
{
	struct paths p;
	struct vyre_bench_vyred out = {.pid = -1}, in = {.pid = -1};
	double v[N_PEERS][MAX_ROUNDS], cpu[N_PEERS][MAX_ROUNDS];
	unsigned rounds = ctx->quick ? 1 : MAX_ROUNDS;
	int rc = -1;

	if (find_binaries(&p) != 0 || access(p.vyred, X_OK) != 0 ||
	    access(p.vyred_out, X_OK) != 0) {
		fprintf(stderr,
			"probes: needs vyred and noprobes/vyred next to vyre-bench (make)\n");
		return -1;
	}
	int peers = can_trace(&p) ? N_PEERS : PEER_TRACED;
	if (peers < N_PEERS)
		fprintf(stderr, "probes: vyre-top cannot attach here (needs root and BPF): "
				"the traced peer is skipped\n");
	/* vyred on the consumer's CPU, as the harness gives it: away from the producer */
	const char *const cpu_backend[] = {"--backend", "cpu", NULL};

	if (vyre_bench_vyred_start_on(&out, SUITE, p.vyred_out, cpu_backend,
				      vyre_bench_consumer_cpu()) != 0 ||
	    vyre_bench_vyred_start_on(&in, SUITE, p.vyred, cpu_backend,
				      vyre_bench_consumer_cpu()) != 0)
		goto done;
	/* One unrecorded pass first, so no peer pays for faulting in the heaps. */
	for (int k = 0; k < peers; k++) {
		double warm, warm_cpu;
		if (measure(ctx, (enum peer)k, &out, &in, &p, &warm, &warm_cpu) != 0) {
			fprintf(stderr, "probes: %s warm-up failed\n", peer_names[k]);
			goto done;
		}
	}
	for (unsigned r = 0; r < rounds; r++) {
		for (int k = 0; k < peers; k++) {
			enum peer peer = (enum peer)((r + (unsigned)k) % (unsigned)peers);
			if (measure(ctx, peer, &out, &in, &p, &v[peer][r], &cpu[peer][r]) != 0) {
				fprintf(stderr, "probes: %s measurement failed\n",
					peer_names[peer]);
				goto done;
			}
		}
	}
	char name[32];
	for (int k = 0; k < peers; k++) {
		double sorted[MAX_ROUNDS];
		memcpy(sorted, v[k], rounds * sizeof(double));
		snprintf(name, sizeof(name), "cpu/%s", peer_names[k]);
		vyre_bench_report(ctx, SUITE, name, "items/s", vyre_bench_median(sorted, rounds),
				  "items/s");
		memcpy(sorted, cpu[k], rounds * sizeof(double));
		/* every round measured, or none (a vyred whose CPU cannot be read) */
		vyre_bench_report_vyred_cpu(ctx, SUITE, name, vyre_bench_median(sorted, rounds));
	}
	/* Ratios per round (peers measured back to back), then their median. */
	vyre_bench_report(ctx, SUITE, "cpu/untraced_vs_out", "ratio",
			  vyre_bench_paired_ratio(v[PEER_UNTRACED], v[PEER_OUT], rounds), "x");
	if (peers == N_PEERS)
		vyre_bench_report(ctx, SUITE, "cpu/traced_vs_out", "ratio",
				  vyre_bench_paired_ratio(v[PEER_TRACED], v[PEER_OUT], rounds),
				  "x");
	rc = 0;
done:
	vyre_bench_vyred_stop(&in, SUITE, NULL);
	vyre_bench_vyred_stop(&out, SUITE, NULL);
	return rc;
}

VYRE_BENCH_SUITE(probes,
		 "USDT probe cost: e2e CPU throughput with probes compiled out, untraced, traced "
		 "by vyre-top",
		 probes_suite)
