/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_run.c - one row of the scan suite, whichever peer: the
 * workers (threads or processes) report on a shared board, and the suite
 * waits for all to be ready, lets them warm up and measures a window.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "harness_cpu.h"
#include "bench_scan_run.h"

#define READY_NS (30ull * 1000000000ull)

static void sleep_ns(uint64_t ns)
{
	nanosleep(&(struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)}, NULL);
}

void vyre_scan_fail(struct worker *me, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(me->why, sizeof(me->why), fmt, ap);
	va_end(ap);
	__atomic_store_n(&me->failed, 1, __ATOMIC_RELEASE);
}

int vyre_scan_stopping(const struct board *b)
{
	return __atomic_load_n(&b->stop, __ATOMIC_ACQUIRE) != 0;
}

/* Says it is ready and waits for go; 0 to start, -1 when the suite gave up. */
int vyre_scan_ready_then_go(struct board *b, struct worker *me)
{
	__atomic_store_n(&me->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&b->go, __ATOMIC_ACQUIRE))
		if (vyre_scan_stopping(b))
			return -1;
		else
			sleep_ns(50000);
	return 0;
}

/* Items [*first, *first + *n) are worker @id's: an even split. */
void vyre_scan_share(const struct job *j, unsigned id, uint32_t *first, uint32_t *n)
{
	*first = (uint32_t)((uint64_t)j->n_items * id / j->workers);
	*n = (uint32_t)((uint64_t)j->n_items * (id + 1) / j->workers) - *first;
}

/* Item @k of a worker's cyclic walk over its @n items is done with @count matches. */
void vyre_scan_item_done(struct worker *me, uint64_t k, uint32_t n, uint32_t bytes, uint64_t count)
{
	if (k < n) {
		me->pass_count += count;
		if (++me->pass_seen == n)
			__atomic_store_n(&me->pass_done, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&me->items, me->items + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&me->bytes, me->bytes + bytes, __ATOMIC_RELEASE);
}

struct totals {
	uint64_t bytes, items;
	unsigned ready, passed, failed;
};

static struct totals totals(const struct board *b, unsigned workers)
{
	struct totals t = {0};

	for (unsigned i = 0; i < workers; i++) {
		const struct worker *w = &b->w[i];

		t.bytes += __atomic_load_n(&w->bytes, __ATOMIC_ACQUIRE);
		t.items += __atomic_load_n(&w->items, __ATOMIC_ACQUIRE);
		t.ready += __atomic_load_n(&w->ready, __ATOMIC_ACQUIRE);
		t.passed += __atomic_load_n(&w->pass_done, __ATOMIC_ACQUIRE);
		t.failed += __atomic_load_n(&w->failed, __ATOMIC_ACQUIRE);
	}
	return t;
}

/*
 * Runs the row whose @workers are starting on @b: once all are ready, go;
 * the warm-up lasts until every worker has been through its share once (the
 * pass that gives the count; pages fault in, spin budgets adapt), and at
 * least a fifth of --seconds; then the window of --seconds (longer until
 * each worker has completed an item, on average). All of it within
 * ROW_CAP_NS. Sets stop; the caller joins the workers.
 */
int vyre_scan_run_window(const struct vyre_bench_ctx *ctx, struct board *b, unsigned workers,
			 const char *row, pid_t vyred, struct figures *f)
{
	const uint64_t t_spawn = vyre_bench_now_ns();
	struct totals t = totals(b, workers);

	while (t.ready < workers && !t.failed && vyre_bench_now_ns() - t_spawn < READY_NS) {
		sleep_ns(1000000);
		t = totals(b, workers);
	}
	if (t.ready < workers || t.failed) {
		__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
		if (!t.failed)
			fprintf(stderr, "scan: %s: %u of %u workers ready after %llu s\n", row,
				t.ready, workers, (unsigned long long)(READY_NS / 1000000000u));
		return -1;
	}
	const uint64_t warm_ns = (uint64_t)(ctx->seconds / 5 > 0.02 ? ctx->seconds / 5 * 1e9 : 2e7);
	const uint64_t window_ns = (uint64_t)(ctx->seconds * 1e9);
	const uint64_t t0 = vyre_bench_now_ns();

	__atomic_store_n(&b->go, 1, __ATOMIC_RELEASE);
	while (!t.failed && vyre_bench_now_ns() - t0 < ROW_CAP_NS &&
	       (t.passed < workers || vyre_bench_now_ns() - t0 < warm_ns)) {
		sleep_ns(1000000);
		t = totals(b, workers);
	}
	const struct totals before = t;
	struct vyre_bench_cpu cpu;

	vyre_bench_cpu_start(&cpu, vyred);
	const uint64_t start = vyre_bench_now_ns();
	uint64_t end = start;

	while (!t.failed && end - t0 < ROW_CAP_NS &&
	       (end - start < window_ns || t.items - before.items < workers)) {
		sleep_ns(1000000);
		t = totals(b, workers);
		end = vyre_bench_now_ns();
	}
	const double cpu_ns = vyre_bench_cpu_ns(&cpu);

	__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
	if (t.failed)
		return -1;
	if (t.items == before.items) {
		fprintf(stderr, "scan: %s: no item completed in %.1f s\n", row,
			(double)(end - start) / 1e9);
		return -1;
	}
	f->gbps = (double)(t.bytes - before.bytes) / (double)(end - start);
	f->vyred_cpu = vyre_bench_cpu_per_item(cpu_ns, t.items - before.items);
	f->counted = t.passed == workers;
	f->matches = 0;
	for (unsigned i = 0; f->counted && i < workers; i++)
		f->matches += b->w[i].pass_count; /* final: passes end before the window starts */
	if (!f->counted)
		fprintf(stderr,
			"scan: %s: the first pass over the items did not end within %llu s: "
			"no count\n",
			row, (unsigned long long)(ROW_CAP_NS / 1000000000u));
	return 0;
}

/* Prints the first failed worker's reason; 1 when one failed. */
int vyre_scan_report_failed(const struct board *b, unsigned workers, const char *row)
{
	for (unsigned i = 0; i < workers; i++)
		if (b->w[i].failed) {
			fprintf(stderr, "scan: %s: worker %u of %u: %s\n", row, i, workers,
				b->w[i].why);
			return 1;
		}
	return 0;
}
