/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_measure.c - one measurement of the "peers" suite's producer
 * processes: forks them, runs the warm-up and the window, reaps them and
 * merges their latencies; the calls a workload of another suite makes from
 * its producers; the rows of a measurement.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_peers_board.h"
#include "bench_peers_measure.h"
#include "bench_peers_self.h"
#include "bench_peers_vyre.h"
#include "harness_cpu.h"
#include "harness_procs.h"

#define READY_NS   (120ull * 1000000000ull) /* 32 CUDA contexts take a while */
#define GIVE_UP_NS (10ull * 1000000000ull)  /* longest stretch of a short window */
#define MIN_CLOSED 1000u
#define MIN_OPEN   200u

static void hist_merge(struct hist *into, const struct hist *h)
{
	for (uint32_t i = 0; i < HIST_BINS; i++)
		into->bin[i] += h->bin[i];
	into->n += h->n;
}

/* The middle of the bin holding the @q quantile, in ns; 0 when empty. */
static double hist_quantile(const struct hist *h, double q)
{
	const uint64_t rank = (uint64_t)(q * (double)(h->n ? h->n - 1 : 0) + 0.5);
	uint64_t seen = 0;

	if (h->n == 0)
		return 0;
	for (uint32_t i = 0; i < HIST_BINS; i++) {
		seen += h->bin[i];
		if (seen <= rank)
			continue;
		if (i < HIST_SUB)
			return i;
		const unsigned shift = i / HIST_SUB - 1;
		const double lo = (double)((uint64_t)(HIST_SUB + i % HIST_SUB) << shift);

		return lo + (double)(1ull << shift) / 2;
	}
	return 0;
}

int vyre_peers_fail(struct vyre_peers_producer *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(&p->b->p[p->id], fmt, ap);
	va_end(ap);
	return 1;
}

const char *vyre_peers_socket(const struct vyre_peers_producer *p)
{
	return p->pe->l.socket;
}

const char *vyre_peers_domain(const struct vyre_peers_producer *p)
{
	return peers_domain(p);
}

int vyre_peers_stopping(const struct vyre_peers_producer *p)
{
	return stopping(p->b);
}

int vyre_peers_go(struct vyre_peers_producer *p)
{
	return ready_then_go(p->b);
}

void vyre_peers_done(struct vyre_peers_producer *p, uint64_t items)
{
	struct proc *me = &p->b->p[p->id];

	__atomic_store_n(&me->done.v, me->done.v + items, __ATOMIC_RELEASE);
}

static int child_main(void *arg)
{
	struct vyre_peers_producer *a = arg;
	struct proc *me = &a->b->p[a->id];

	/* the default 50 us of slack would make every sleep for an arrival late */
	if (prctl(PR_SET_TIMERSLACK, 1ul, 0ul, 0ul, 0ul) != 0) {
		fail(me, "prctl(PR_SET_TIMERSLACK): %s", strerror(errno));
		return 1;
	}

	if (a->pe->l.run)
		return a->pe->l.run((struct vyre_peers_producer *)a, a->pe->l.arg);
	if (a->pe->kind == PEER_VYRE)
		return a->rate_per_ns > 0 ? vyre_peers_vyre_open(a, me)
					  : vyre_peers_vyre_closed(a, me);
	return a->rate_per_ns > 0 ? vyre_peers_self_open(a, me) : vyre_peers_self_closed(a, me);
}

static uint64_t total_done(struct board *b, unsigned procs)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < procs; i++)
		sum += __atomic_load_n(&b->p[i].done.v, __ATOMIC_ACQUIRE);
	return sum;
}

static int any_failed(struct board *b, unsigned procs)
{
	for (unsigned i = 0; i < procs; i++)
		if (__atomic_load_n(&b->p[i].failed, __ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

/*
 * @procs producers of @pe, closed loop (@offered 0) or open loop at @offered
 * items/s in all: a warm-up (a fifth of --seconds, at least 20 ms: vyred's
 * and libvyre's spin budgets adapt, pages fault in), then --seconds
 * (stretched until @min items completed, at most GIVE_UP_NS). Producers are
 * not pinned: there are more of them than CPUs, and vyred's threads need
 * CPUs too.
 */
int vyre_peers_measure_peer(const struct vyre_bench_ctx *ctx, const struct peer *pe, unsigned procs,
			    double offered, struct vyre_peers_figures *f)
{
	struct board *b = vyre_bench_shared_alloc(sizeof(*b));
	struct vyre_peers_producer args[MAX_PROCS];
	pid_t pids[MAX_PROCS];
	unsigned spawned = 0;
	const uint64_t min = offered > 0 ? MIN_OPEN : MIN_CLOSED;
	int rc = 0;

	if (procs > MAX_PROCS) {
		fprintf(stderr, "%s: %s: at most %u producers, not %u\n", pe->l.suite, pe->l.name,
			MAX_PROCS, procs);
		return -1;
	}
	if (!b)
		return -1;
	for (; spawned < procs; spawned++) {
		args[spawned] =
		    (struct vyre_peers_producer){b, spawned, pe, offered / procs / 1e9, ""};
		if (pe->l.domain)
			snprintf(args[spawned].domain, sizeof(args[spawned].domain), "%s%u",
				 pe->l.domain, spawned % (pe->l.domains ? pe->l.domains : 1));
		/* unpinned: there are more producers than CPUs, and vyred needs CPUs too */
		pids[spawned] = vyre_bench_spawn(-1, child_main, &args[spawned]);
		if (pids[spawned] < 0)
			break;
	}
	const uint64_t t_spawn = vyre_bench_now_ns();

	while (__atomic_load_n(&b->ready.v, __ATOMIC_ACQUIRE) < spawned &&
	       vyre_bench_now_ns() - t_spawn < READY_NS)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	const int started = spawned == procs && !any_failed(b, procs) &&
			    __atomic_load_n(&b->ready.v, __ATOMIC_ACQUIRE) == procs;
	const double warm_s = ctx->seconds / 5 > 0.02 ? ctx->seconds / 5 : 0.02;
	uint64_t start = 0, end = 0, done = 0, before = 0;
	struct vyre_bench_cpu cpu = {0};
	double cpu_ns = -1;

	__atomic_store_n(&b->from_ns.v, UINT64_MAX, __ATOMIC_RELEASE);
	if (started) {
		__atomic_store_n(&b->go.v, 1, __ATOMIC_RELEASE);
		const uint64_t warm_ns = (uint64_t)(warm_s * 1e9);

		nanosleep(&(struct timespec){(time_t)(warm_ns / 1000000000u),
					     (long)(warm_ns % 1000000000u)},
			  NULL);
		vyre_bench_cpu_start(&cpu, pe->kind == PEER_VYRE ? pe->l.vyred : 0);
		start = end = vyre_bench_now_ns();
		before = total_done(b, procs);
		__atomic_store_n(&b->from_ns.v, start, __ATOMIC_RELEASE);
		while (!any_failed(b, procs) && end - start < GIVE_UP_NS &&
		       ((double)(end - start) < ctx->seconds * 1e9 || done < min)) {
			nanosleep(&(struct timespec){0, 1000000}, NULL);
			end = vyre_bench_now_ns();
			done = total_done(b, procs) - before;
		}
		cpu_ns = vyre_bench_cpu_ns(&cpu);
	}
	__atomic_store_n(&b->stop.v, 1, __ATOMIC_RELEASE);
	struct hist *all = calloc(1, sizeof(*all));

	for (unsigned i = 0; i < spawned; i++) {
		const int status = vyre_bench_reap(pids[i]);

		if (status != 0 || b->p[i].failed) {
			if (rc == 0)
				fprintf(stderr, "%s: %s producer %u of %u: %s\n", pe->l.suite,
					pe->l.name, i, procs,
					b->p[i].failed ? b->p[i].why : "died from a signal");
			rc = -1;
		}
		if (all)
			hist_merge(all, &b->p[i].h);
	}
	if (!started && rc == 0) {
		fprintf(stderr, "%s: %s: %u of %u producers ready after %llu s\n", pe->l.suite,
			pe->l.name, (unsigned)b->ready.v, procs,
			(unsigned long long)(READY_NS / 1000000000u));
		rc = -1;
	}
	if (rc == 0 && done < min) {
		fprintf(stderr, "%s: %s: only %llu items in %.1f s\n", pe->l.suite, pe->l.name,
			(unsigned long long)done, (double)(end - start) / 1e9);
		rc = -1;
	}
	if (!all)
		rc = -1;
	if (rc == 0)
		*f =
		    (struct vyre_peers_figures){.items = (double)done * 1e9 / (double)(end - start),
						.offered = offered,
						.p50 = hist_quantile(all, 0.50),
						.p99 = hist_quantile(all, 0.99),
						.p999 = hist_quantile(all, 0.999),
						.vyred_cpu = vyre_bench_cpu_per_item(cpu_ns, done)};
	free(all);
	vyre_bench_shared_free(b, sizeof(*b));
	return rc;
}

int vyre_peers_measure(const struct vyre_bench_ctx *ctx, const struct vyre_peers_load *l,
		       unsigned procs, struct vyre_peers_figures *f)
{
	const struct peer pe = {PEER_VYRE, *l};

	return vyre_peers_measure_peer(ctx, &pe, procs, 0, f);
}

void vyre_peers_report_ratio(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
			     const struct vyre_peers_figures *f,
			     const struct vyre_peers_figures *base)
{
	if (base->items <= 0 || base->p50 <= 0)
		return;
	vyre_bench_report(ctx, suite, name, "items/s", f->items / base->items, "x");
	vyre_bench_report(ctx, suite, name, "p50", f->p50 / base->p50, "x");
}

void vyre_peers_report(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
		       const struct vyre_peers_figures *f)
{
	if (f->offered > 0)
		vyre_bench_report(ctx, suite, name, "offered", f->offered, "items/s");
	vyre_bench_report(ctx, suite, name, "items/s", f->items, "items/s");
	vyre_bench_report(ctx, suite, name, "p50", f->p50, "ns");
	vyre_bench_report(ctx, suite, name, "p99", f->p99, "ns");
	vyre_bench_report(ctx, suite, name, "p999", f->p999, "ns");
	vyre_bench_report_vyred_cpu(ctx, suite, name, f->vyred_cpu);
}
