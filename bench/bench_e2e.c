/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_e2e.c - suite "e2e": producer processes against a running
 * vyred with the CPU backend, through the public client API (docs/design.md 11).
 *
 *   cpu/latency       submit one item, vyre_wait for its CQE: submit -> CQE
 *                     seen by the producer, back to back (vyred stays awake)
 *   cpu/latency_spin  the same, reaping by spinning on vyre_reap
 *   cpu/latency_idle  the same after 1 ms of silence each time, so vyred has
 *                     gone to sleep in io_uring and must be woken
 *   cpu/Np            items/s with N producer processes, each submitting
 *                     batches of ADD items and reaping as it goes
 * and beside each, "vyred cpu": the ns of CPU vyred spent over that
 * measurement per item completed in it (harness_cpu.h vyre_bench_cpu_*; the
 * vyred given by --socket is found by SO_PEERCRED).
 * Without --socket the suite starts its own vyred (the binary next to
 * vyre-bench, --backend cpu) on a temporary socket and stops it afterwards.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "harness_client.h"
#include "harness_clock.h"
#include "harness_cpu.h"
#include "harness_procs.h"
#include "harness_stats.h"
#include "harness_vyred.h"

#define BATCH	      64u
#define MAX_PRODUCERS 8u
#define MAX_SAMPLES   (1u << 18)
#define WAIT_NS	      (5ll * 1000000000ll)
#define IDLE_GAP_NS   1000000
#define BUFFER_BYTES  64u
#define MIN_ITEMS     1000u

struct client {
	struct vyre_client *c;
	uint32_t in, out;
};

static int client_open(const char *socket, struct client *cl)
{
	const struct vyre_connect_opts o = {.socket_path = socket};

	return vyre_bench_client_open(&o, BUFFER_BYTES, &cl->c, &cl->in, &cl->out);
}

/* Waits for the CQE of @user_data; spinning on vyre_reap when @spin. */
static int await_one(struct client *cl, uint64_t user_data, int spin)
{
	struct vyre_cqe cqe;
	int n;

	do
		n = spin ? vyre_reap(cl->c, &cqe, 1) : vyre_wait(cl->c, &cqe, 1, WAIT_NS);
	while (n == 0);
	if (n < 0)
		return n;
	return cqe.user_data == user_data && cqe.status == 0 ? 0 : VYRE_E_PROTO;
}

enum latency_kind { LAT_WAIT, LAT_SPIN, LAT_IDLE };

/* Latency samples into @s; *@cpu: vyred @vyred's CPU ns an item over them (-1: not measured). */
static int measure_latency(struct vyre_bench_ctx *ctx, const char *socket, pid_t vyred,
			   enum latency_kind kind, struct vyre_bench_samples *s, double *cpu)
{
	struct client cl;
	struct vyre_bench_cpu window;
	int rc = client_open(socket, &cl);
	uint64_t start = vyre_bench_now_ns();
	uint32_t min = ctx->quick ? 20 : 200;

	*cpu = -1;
	if (rc)
		return rc;
	vyre_bench_cpu_start(&window, vyred);
	for (uint64_t k = 1; rc == 0 && s->n < s->cap; k++) {
		struct vyre_work_item it = {VYRE_OP_ADD, cl.in, cl.out, (uint32_t)k};

		if (kind == LAT_IDLE)
			nanosleep(&(struct timespec){0, IDLE_GAP_NS}, NULL);
		uint64_t t0 = vyre_bench_ticks();

		rc = vyre_submit(cl.c, &it, k, 0);
		if (rc == 0)
			rc = await_one(&cl, k, kind == LAT_SPIN);
		vyre_bench_sample(s, vyre_bench_ticks() - t0);
		if (s->n >= min && (double)(vyre_bench_now_ns() - start) >= ctx->seconds * 1e9)
			break;
	}
	*cpu = vyre_bench_cpu_per_item(vyre_bench_cpu_ns(&window), s->n);
	vyre_close(cl.c);
	return rc;
}

struct line {
	_Alignas(64) uint64_t v;
};

struct shared {
	struct line go, stop, ready;
	struct line completed[MAX_PRODUCERS];
};

/* Exit codes of a throughput producer. */
enum {
	PRODUCER_NO_CONNECT = 1,
	PRODUCER_FAILED = 2, /* a submit or reap error, or a CQE with an error status */
	PRODUCER_DRAIN_TIMEOUT = 3,
};

struct producer_arg {
	const char *socket;
	struct shared *sh;
	unsigned id;
};

/* Reaps what is ready (waiting up to @wait_ns for the first); counts and checks it. */
static int reap_some(struct client *cl, struct line *completed, int64_t wait_ns)
{
	struct vyre_cqe cqes[BATCH * 4];
	int n = wait_ns ? vyre_wait(cl->c, cqes, BATCH * 4, wait_ns)
			: vyre_reap(cl->c, cqes, BATCH * 4);

	if (n == VYRE_E_TIMEDOUT)
		return 0;
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		if (cqes[i].status != 0)
			return VYRE_E_PROTO;
	__atomic_fetch_add(&completed->v, (uint64_t)n, __ATOMIC_RELAXED);
	return n;
}

static int producer_main(void *arg)
{
	const struct producer_arg *a = arg;
	struct shared *sh = a->sh;
	struct line *completed = &sh->completed[a->id];
	struct vyre_work_item its[BATCH];
	uint64_t uds[BATCH], submitted = 0, seq = 0;
	struct client cl;

	if (client_open(a->socket, &cl))
		return PRODUCER_NO_CONNECT;
	__atomic_fetch_add(&sh->ready.v, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&sh->go.v, __ATOMIC_ACQUIRE))
		nanosleep(&(struct timespec){0, 100000}, NULL);
	int rc = 0;

	while (rc >= 0 && !__atomic_load_n(&sh->stop.v, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < BATCH; i++, seq++) {
			/* the param varies so no two items are identical (nothing to dedupe) */
			its[i] = (struct vyre_work_item){VYRE_OP_ADD, cl.in, cl.out, (uint32_t)seq};
			uds[i] = seq;
		}
		rc = vyre_submit_batch(cl.c, its, uds, BATCH);
		if (rc > 0) {
			submitted += (uint64_t)rc;
			seq -= BATCH - (uint64_t)rc;
		}
		if (rc >= 0)
			rc = reap_some(&cl, completed, rc == 0 ? 1000000 : 0);
	}
	if (rc < 0) {
		vyre_close(cl.c);
		return PRODUCER_FAILED;
	}
	/* drain what is in flight so vyred sees a clean exit */
	while (rc >= 0 && __atomic_load_n(&completed->v, __ATOMIC_RELAXED) < submitted)
		rc = reap_some(&cl, completed, WAIT_NS) > 0 ? 0 : -1;
	vyre_close(cl.c);
	return rc < 0 ? PRODUCER_DRAIN_TIMEOUT : 0;
}

/* *@cpu as measure_latency's, over the window of the items counted. */
static int measure_throughput(struct vyre_bench_ctx *ctx, const char *socket, pid_t vyred,
			      unsigned producers, double *items_per_s, double *cpu)
{
	struct shared *sh = vyre_bench_shared_alloc(sizeof(*sh));
	struct producer_arg args[MAX_PRODUCERS];
	pid_t pids[MAX_PRODUCERS];
	unsigned spawned = 0;
	int rc = 0;

	*cpu = -1;
	if (!sh)
		return -1;
	for (; spawned < producers; spawned++) {
		args[spawned] = (struct producer_arg){socket, sh, spawned};
		pids[spawned] = vyre_bench_spawn((int)spawned, producer_main, &args[spawned]);
		if (pids[spawned] < 0)
			break;
	}
	uint64_t t0 = vyre_bench_now_ns();

	while (__atomic_load_n(&sh->ready.v, __ATOMIC_ACQUIRE) < spawned &&
	       vyre_bench_now_ns() - t0 < (uint64_t)WAIT_NS)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	struct vyre_bench_cpu window;

	vyre_bench_cpu_start(&window, vyred);
	__atomic_store_n(&sh->go.v, 1, __ATOMIC_RELEASE);
	uint64_t start = vyre_bench_now_ns(), end = start, sum = 0;

	/* a loaded machine may starve a short window: insist on a minimum */
	while (end - start < (uint64_t)WAIT_NS &&
	       ((double)(end - start) < ctx->seconds * 1e9 || sum < MIN_ITEMS)) {
		nanosleep(&(struct timespec){0, 1000000}, NULL);
		end = vyre_bench_now_ns();
		sum = 0;
		for (unsigned i = 0; i < spawned; i++)
			sum += __atomic_load_n(&sh->completed[i].v, __ATOMIC_RELAXED);
	}
	*cpu = vyre_bench_cpu_per_item(vyre_bench_cpu_ns(&window), sum);
	__atomic_store_n(&sh->stop.v, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < spawned; i++) {
		int status = vyre_bench_reap(pids[i]);

		if (status != 0) {
			fprintf(stderr, "e2e: producer %u exited %d (%s)\n", i, status,
				status == PRODUCER_NO_CONNECT ? "could not connect"
				: status == PRODUCER_DRAIN_TIMEOUT
				    ? "its last CQEs never came"
				    : "submit/reap error or a failed item");
			rc = -1;
		}
	}
	*items_per_s = (double)sum * 1e9 / (double)(end - start);
	if (spawned != producers || sum < MIN_ITEMS)
		rc = -1;
	vyre_bench_shared_free(sh, sizeof(*sh));
	return rc;
}

static int run_against(struct vyre_bench_ctx *ctx, const char *socket, pid_t vyred)
{
	static const char *const lat_names[] = {"cpu/latency", "cpu/latency_spin",
						"cpu/latency_idle"};
	static const unsigned producer_counts[] = {1, 3};
	struct vyre_bench_samples s;
	char name[32];
	double items, cpu;

	for (int k = LAT_WAIT; k <= LAT_IDLE; k++) {
		if (vyre_bench_samples_init(&s, MAX_SAMPLES))
			return -1;
		int rc = measure_latency(ctx, socket, vyred, (enum latency_kind)k, &s, &cpu);

		if (rc == 0) {
			vyre_bench_report_latency(ctx, "e2e", lat_names[k], &s);
			vyre_bench_report_vyred_cpu(ctx, "e2e", lat_names[k], cpu);
		}
		vyre_bench_samples_free(&s);
		if (rc) {
			fprintf(stderr, "e2e: %s: %s\n", lat_names[k], vyre_strerror(rc));
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(producer_counts) / sizeof(producer_counts[0]); i++) {
		snprintf(name, sizeof(name), "cpu/%up", producer_counts[i]);
		if (measure_throughput(ctx, socket, vyred, producer_counts[i], &items, &cpu)) {
			fprintf(stderr, "e2e: %s throughput failed\n", name);
			return -1;
		}
		vyre_bench_report(ctx, "e2e", name, "items/s", items, "items/s");
		vyre_bench_report_vyred_cpu(ctx, "e2e", name, cpu);
	}
	return 0;
}

static int e2e_suite(struct vyre_bench_ctx *ctx)
{
	struct vyre_bench_vyred d = {.pid = -1};
	char bin[PATH_MAX];
	int rc;

	if (ctx->socket) {
		const pid_t vyred = vyre_bench_socket_pid(ctx->socket);

		if (vyred < 0)
			fprintf(stderr,
				"e2e: the pid of the vyred on %s is unknown: no vyred cpu rows\n",
				ctx->socket);
		return run_against(ctx, ctx->socket, vyred);
	}
	if (!vyre_bench_find_vyred(bin, sizeof(bin))) {
		fprintf(stderr, "e2e: skipped: no vyred next to vyre-bench and no --socket\n");
		return 0;
	}
	if (vyre_bench_vyred_start(&d, "e2e", bin, (const char *const[]){"--backend", "cpu", NULL}))
		return -1;
	rc = run_against(ctx, d.sock, d.pid);
	vyre_bench_vyred_stop(&d, "e2e", NULL);
	return rc;
}

VYRE_BENCH_SUITE(e2e, "producer submit -> CQE through vyred (cpu backend): latency and items/s",
		 e2e_suite)
