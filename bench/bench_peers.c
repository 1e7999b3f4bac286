/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers.c - suite "peers": many producer processes with tiny
 * items, vyre against each process launching its own kernels, with and
 * without CUDA MPS (issue 10). Every producer is a process of its own with a
 * private vyre domain (or its own CUDA context) and its own buffers; the
 * item is an ADD over 16 words.
 *
 * Closed loop, N = 1, 2, 4, 8, 16, 32 producers (--quick: 1, 2, 4), each
 * submitting one item and waiting for its completion, for --seconds:
 *   vyre-persistent  through a vyred started with --backend cuda --mode persistent
 *   vyre-launch      the same with --mode launch
 *   self             cuLaunchKernel + cuStreamSynchronize in each process's
 *                    own context, no MPS
 *   mps              the same under an MPS control daemon the suite starts
 *                    (nvidia-cuda-mps-control -d) and stops
 * Rows: items/s of all producers together; p50/p99/p999 of submit -> done
 * seen by the producer, every item of every producer merged; for the vyre
 * rows, "vyred cpu": vyred's CPU time over the window per item completed in
 * it (harness.h); ratios of vyre against mps (and self) per N. Without a GPU (or with --backend
 * cpu) the vyre rows run on vyred --backend cpu ("vyre-cpu") and the ratios are against vyre-cpu's
 * own N = 1.
 *
 * Open loop: P = 16 producers (at most the largest N measured), arrivals of
 * each a Poisson process (exponential gaps), up to OPEN_SLOTS items of each
 * outstanding, at offered loads of 10 % .. 120 % of the same system's
 * closed-loop throughput at N = P measured just before; for vyre (persistent,
 * or cpu) and mps. Latency runs from each item's scheduled arrival, so a
 * producer that falls behind (all slots busy) counts the wait. The rows also
 * go to DIR/peers-openloop.json with --out DIR (vyre-bench --plot draws them).
 *
 * The suite forks every producer before any CUDA call in this process (CUDA
 * does not survive fork); when another suite already loaded the driver here
 * it says so and runs the vyre rows only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "bench_peers.h"
#include "bench_peers_gpu.h"
#include "harness_cpu.h"
#include "harness_procs.h"
#include "harness_vyred.h"

#define SUITE	   "peers"
#define MAX_PROCS  32u
#define OPEN_PROCS 16u
#define OPEN_SLOTS 32u /* items one open-loop producer may have outstanding */
#define ITEM_BYTES (VYRE_PEERS_WORDS * 4u)
#define HEAP_BYTES (1u << 20) /* each producer's private domain */
#define WAIT_NS	   (5ll * 1000000000ll)
#define READY_NS   (120ull * 1000000000ull) /* 32 CUDA contexts take a while */
#define GIVE_UP_NS (10ull * 1000000000ull)  /* longest stretch of a short window */
#define MIN_CLOSED 1000u
#define MIN_OPEN   200u
#define SPIN_NS	   30000u /* the last stretch of a wait for an arrival spins */

static const unsigned closed_counts[] = {1, 2, 4, 8, 16, 32};
static const double open_loads[] = {0.10, 0.25, 0.50, 0.75, 1.00, 1.20};
static const double quick_loads[] = {0.10, 0.50, 1.20};
#define N_COUNTS (sizeof(closed_counts) / sizeof(closed_counts[0]))
#define N_LOADS	 (sizeof(open_loads) / sizeof(open_loads[0]))

/* ---- latency histogram: 64 sub-buckets per power of two (1.6 % wide) -------- */

#define HIST_SUB  64u
#define HIST_BINS (40u * HIST_SUB)

struct hist {
	uint64_t n;
	uint32_t bin[HIST_BINS];
};

static void hist_add(struct hist *h, uint64_t ns)
{
	uint32_t i = (uint32_t)ns;

	if (ns >= HIST_SUB) {
		const unsigned e = 63u - (unsigned)__builtin_clzll(ns);

		i = (e - 5) * HIST_SUB + (uint32_t)((ns >> (e - 6)) & (HIST_SUB - 1));
	}
	h->bin[i < HIST_BINS ? i : HIST_BINS - 1]++;
	h->n++;
}

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

/* ---- what the producers share with the suite -------------------------------- */

struct line {
	_Alignas(64) uint64_t v;
};

struct proc {
	struct line done; /* items completed, read by the suite for its window */
	int failed;
	char why[192];
	struct hist h;
};

struct board {
	struct line ready, go, stop;
	struct line from_ns; /* items that start (open loop: end) before this are warm-up */
	struct proc p[MAX_PROCS];
};

enum peer_kind { PEER_VYRE, PEER_GPU };

/* l.name is the row prefix; l.socket is set for PEER_VYRE when its vyred starts */
struct peer {
	enum peer_kind kind;
	struct vyre_peers_load l;
};

struct vyre_peers_producer {
	struct board *b;
	unsigned id;
	const struct peer *pe;
	double rate_per_ns; /* open loop: this producer's arrival rate; 0: closed loop */
	char domain[VYRE_DOMAIN_NAME_MAX]; /* empty: a private domain */
};

static void fail(struct proc *me, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(me->why, sizeof(me->why), fmt, ap);
	va_end(ap);
	me->failed = 1;
}

static int stopping(const struct board *b)
{
	return __atomic_load_n(&b->stop.v, __ATOMIC_ACQUIRE) != 0;
}

int vyre_peers_fail(struct vyre_peers_producer *p, const char *fmt, ...)
{
	struct proc *me = &p->b->p[p->id];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(me->why, sizeof(me->why), fmt, ap);
	va_end(ap);
	me->failed = 1;
	return 1;
}

const char *vyre_peers_socket(const struct vyre_peers_producer *p)
{
	return p->pe->l.socket;
}

const char *vyre_peers_domain(const struct vyre_peers_producer *p)
{
	return p->domain[0] ? p->domain : NULL;
}

int vyre_peers_stopping(const struct vyre_peers_producer *p)
{
	return stopping(p->b);
}

/* Says it is ready and waits for go; 0 to start, -1 when the suite gave up. */
static int ready_then_go(struct board *b)
{
	__atomic_fetch_add(&b->ready.v, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&b->go.v, __ATOMIC_ACQUIRE))
		if (stopping(b))
			return -1;
		else
			nanosleep(&(struct timespec){0, 50000}, NULL);
	return 0;
}

int vyre_peers_go(struct vyre_peers_producer *p)
{
	return ready_then_go(p->b);
}

/*
 * 1 when an item is past the warm-up: in the closed loop one that started at
 * @t, in the open loop one that completed at @t (past the knee, every item
 * of the window arrived during the warm-up, and its latency is the figure).
 */
static int recorded(const struct board *b, uint64_t t0)
{
	return t0 >= __atomic_load_n(&b->from_ns.v, __ATOMIC_ACQUIRE);
}

static void count_done(struct proc *me)
{
	__atomic_store_n(&me->done.v, me->done.v + 1, __ATOMIC_RELEASE);
}

void vyre_peers_done(struct vyre_peers_producer *p, uint64_t items)
{
	struct proc *me = &p->b->p[p->id];

	__atomic_store_n(&me->done.v, me->done.v + items, __ATOMIC_RELEASE);
}

/* Exponential gap of a Poisson process of @rate_per_ns, from xorshift64 state @rng. */
static uint64_t poisson_gap(uint64_t *rng, double rate_per_ns)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	const double u = (double)(*rng >> 11) * 0x1p-53;

	return (uint64_t)(-log1p(-u) / rate_per_ns);
}

/*
 * Wait until CLOCK_MONOTONIC @t: sleep, then spin the last SPIN_NS, since an
 * oversleep would count as latency; spinning all the way would take the
 * CPUs of 16 producers from vyred (children sleep with 1 ns timer slack).
 */
static void wait_until(uint64_t t)
{
	uint64_t now = vyre_bench_now_ns();

	if (t > now + SPIN_NS) {
		const uint64_t ns = t - now - SPIN_NS;

		nanosleep(&(struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)},
			  NULL);
	}
	while (vyre_bench_now_ns() < t)
		;
}

/* ---- vyre producers --------------------------------------------------------- */

struct vyre_side {
	struct vyre_client *c;
	uint32_t in, out[OPEN_SLOTS];
	uint32_t *outp[OPEN_SLOTS];
};

static int vyre_side_open(struct vyre_side *v, const struct vyre_peers_producer *a, uint32_t slots,
			  struct proc *me)
{
	const struct vyre_connect_opts o = {.socket_path = a->pe->l.socket,
					    .domain = vyre_peers_domain(a),
					    .heap_bytes = HEAP_BYTES};
	int rc = vyre_connect(&o, &v->c);

	if (rc) {
		fail(me, "vyre_connect: %s", vyre_strerror(rc));
		return rc;
	}
	rc = vyre_buffer_alloc(v->c, ITEM_BYTES, 0, &v->in);
	for (uint32_t s = 0; s < slots && !rc; s++) {
		rc = vyre_buffer_alloc(v->c, ITEM_BYTES, 0, &v->out[s]);
		v->outp[s] = rc ? NULL : vyre_buffer_ptr(v->c, v->out[s], NULL);
	}
	uint32_t *in = rc ? NULL : vyre_buffer_ptr(v->c, v->in, NULL);

	if (rc || !in) {
		fail(me, "vyre_buffer_alloc: %s", vyre_strerror(rc ? rc : VYRE_E_PROTO));
		vyre_close(v->c);
		return rc ? rc : VYRE_E_PROTO;
	}
	for (uint32_t i = 0; i < VYRE_PEERS_WORDS; i++)
		in[i] = i;
	return 0;
}

/* Checks @cqe and the output of @param in @slot. */
static int vyre_side_check(struct vyre_side *v, const struct vyre_cqe *cqe, uint32_t slot,
			   uint32_t param, struct proc *me)
{
	if (cqe->status != 0) {
		fail(me, "item %u: CQE status %s", param, vyre_strerror(cqe->status));
		return -1;
	}
	for (uint32_t i = 0; i < VYRE_PEERS_WORDS; i++)
		if (v->outp[slot][i] != i + param) {
			fail(me, "item %u: word %u is %u, not %u", param, i, v->outp[slot][i],
			     i + param);
			return -1;
		}
	return 0;
}

static int vyre_closed(const struct vyre_peers_producer *a, struct proc *me)
{
	struct vyre_side v;
	struct vyre_cqe cqe;
	int rc = vyre_side_open(&v, a, 1, me);

	if (ready_then_go(a->b) || rc) {
		if (!rc)
			vyre_close(v.c);
		return rc ? 1 : 0;
	}
	for (uint32_t k = 1; rc == 0 && !stopping(a->b); k++) {
		const struct vyre_work_item it = {VYRE_OP_ADD, v.in, v.out[0], k};
		const uint64_t t0 = vyre_bench_now_ns();

		rc = vyre_submit(v.c, &it, k, 0);
		if (rc == 0)
			rc = vyre_wait(v.c, &cqe, 1, WAIT_NS);
		const uint64_t t1 = vyre_bench_now_ns();

		if (rc != 1) {
			fail(me, "item %u: %s", k, vyre_strerror(rc < 0 ? rc : VYRE_E_PROTO));
			break;
		}
		rc = vyre_side_check(&v, &cqe, 0, k, me);
		if (recorded(a->b, t0))
			hist_add(&me->h, t1 - t0);
		count_done(me);
	}
	vyre_close(v.c);
	return me->failed;
}

/*
 * Open loop through vyred: each arrival takes a free slot (its own output
 * buffer) and is submitted at once; CQEs are reaped while waiting for the
 * next arrival. With every slot busy, arrivals wait and are submitted late.
 */
static int vyre_open(const struct vyre_peers_producer *a, struct proc *me)
{
	struct vyre_side v;
	struct vyre_cqe cqes[OPEN_SLOTS];
	uint64_t arrival[OPEN_SLOTS], rng = 0x9e3779b97f4a7c15ull * (a->id + 1);
	uint32_t param[OPEN_SLOTS], free_slots[OPEN_SLOTS], n_free = OPEN_SLOTS, seq = 0;
	int rc = vyre_side_open(&v, a, OPEN_SLOTS, me);

	if (ready_then_go(a->b) || rc) {
		if (!rc)
			vyre_close(v.c);
		return rc ? 1 : 0;
	}
	for (uint32_t s = 0; s < OPEN_SLOTS; s++)
		free_slots[s] = s;
	uint64_t next = vyre_bench_now_ns() + poisson_gap(&rng, a->rate_per_ns);
	uint64_t drain_until = 0;

	while (!me->failed) {
		const int stop = stopping(a->b);
		uint64_t now = vyre_bench_now_ns();

		while (!stop && next <= now && n_free > 0) {
			const uint32_t s = free_slots[--n_free];
			const struct vyre_work_item it = {VYRE_OP_ADD, v.in, v.out[s], ++seq};

			arrival[s] = next;
			param[s] = seq;
			rc = vyre_submit(v.c, &it, s, 0);
			if (rc) {
				fail(me, "vyre_submit: %s", vyre_strerror(rc));
				break;
			}
			next += poisson_gap(&rng, a->rate_per_ns);
		}
		if (stop && n_free == OPEN_SLOTS)
			break;
		if (stop && !drain_until)
			drain_until = now + (uint64_t)WAIT_NS;
		if (drain_until && now > drain_until) {
			fail(me, "%u items never completed", OPEN_SLOTS - n_free);
			break;
		}
		int n;

		if (n_free == OPEN_SLOTS) {
			wait_until(next);
			continue;
		}
		/* nothing to submit before @next (or at all: every slot busy, or stopping) */
		n = vyre_wait(v.c, cqes, OPEN_SLOTS,
			      !stop && next > now && n_free > 0 ? (int64_t)(next - now) : WAIT_NS);
		if (n == VYRE_E_TIMEDOUT)
			continue;
		if (n < 0) {
			fail(me, "vyre_wait: %s", vyre_strerror(n));
			break;
		}
		now = vyre_bench_now_ns();
		for (int i = 0; i < n && !me->failed; i++) {
			const uint32_t s = (uint32_t)cqes[i].user_data;

			if (s >= OPEN_SLOTS || vyre_side_check(&v, &cqes[i], s, param[s], me))
				break;
			if (recorded(a->b, now))
				hist_add(&me->h, now - arrival[s]);
			free_slots[n_free++] = s;
			count_done(me);
		}
	}
	vyre_close(v.c);
	return me->failed;
}

/* ---- producers launching for themselves (own context; under MPS or not) ---- */

static int gpu_closed(const struct vyre_peers_producer *a, struct proc *me)
{
	struct vyre_peers_gpu *g;
	int rc = vyre_peers_gpu_open(&g, 1, me->why, sizeof(me->why));

	me->failed = rc != 0;
	if (ready_then_go(a->b) || rc) {
		vyre_peers_gpu_close(g);
		return me->failed;
	}
	for (uint32_t k = 1; !rc && !stopping(a->b); k++) {
		const uint64_t t0 = vyre_bench_now_ns();

		rc = vyre_peers_gpu_launch(g, 0, k);
		if (!rc)
			rc = vyre_peers_gpu_sync(g);
		const uint64_t t1 = vyre_bench_now_ns();

		if (!rc)
			rc = vyre_peers_gpu_check(g, 0, k);
		if (rc)
			break;
		if (recorded(a->b, t0))
			hist_add(&me->h, t1 - t0);
		count_done(me);
	}
	if (rc)
		fail(me, "%s", vyre_peers_gpu_error(g));
	vyre_peers_gpu_close(g);
	return me->failed;
}

/*
 * Open loop of a self-launching producer: each arrival is launched at once
 * on the process's stream (up to OPEN_SLOTS in flight, each writing its own
 * output slot); the stream runs them in order, so the oldest outstanding
 * item is the next to finish, seen by polling its output in mapped memory.
 */
static int gpu_open(const struct vyre_peers_producer *a, struct proc *me)
{
	struct vyre_peers_gpu *g;
	uint64_t arrival[OPEN_SLOTS], rng = 0x9e3779b97f4a7c15ull * (a->id + 1);
	uint32_t param[OPEN_SLOTS], head = 0, count = 0, seq = 0;
	int rc = vyre_peers_gpu_open(&g, OPEN_SLOTS, me->why, sizeof(me->why));

	me->failed = rc != 0;
	if (ready_then_go(a->b) || rc) {
		vyre_peers_gpu_close(g);
		return me->failed;
	}
	uint64_t next = vyre_bench_now_ns() + poisson_gap(&rng, a->rate_per_ns);
	uint64_t drain_until = 0;

	while (!rc) {
		const int stop = stopping(a->b);
		uint64_t now = vyre_bench_now_ns();

		while (!stop && next <= now && count < OPEN_SLOTS && !rc) {
			const uint32_t s = (head + count++) % OPEN_SLOTS;

			arrival[s] = next;
			param[s] = ++seq;
			rc = vyre_peers_gpu_launch(g, s, seq);
			next += poisson_gap(&rng, a->rate_per_ns);
		}
		if (rc || (stop && count == 0))
			break;
		if (stop && !drain_until)
			drain_until = now + (uint64_t)WAIT_NS;
		if (drain_until && now > drain_until) {
			snprintf(me->why, sizeof(me->why), "%u launches never finished", count);
			me->failed = 1;
			break;
		}
		if (count == 0) {
			wait_until(next);
			continue;
		}
		/* with every slot in flight there is nothing to do but wait: leave the CPU */
		if (count == OPEN_SLOTS && !vyre_peers_gpu_done(g, head, param[head]))
			sched_yield();
		while (count > 0 && vyre_peers_gpu_done(g, head, param[head])) {
			const uint64_t t = vyre_bench_now_ns();

			if (recorded(a->b, t))
				hist_add(&me->h, t - arrival[head]);
			rc = vyre_peers_gpu_check(g, head, param[head]);
			head = (head + 1) % OPEN_SLOTS;
			count--;
			count_done(me);
		}
	}
	if (!rc)
		rc = vyre_peers_gpu_sync(g);
	if (rc)
		fail(me, "%s", vyre_peers_gpu_error(g));
	vyre_peers_gpu_close(g);
	return me->failed;
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
		return a->rate_per_ns > 0 ? vyre_open(a, me) : vyre_closed(a, me);
	return a->rate_per_ns > 0 ? gpu_open(a, me) : gpu_closed(a, me);
}

/* ---- running one measurement ------------------------------------------------ */

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
static int measure(const struct vyre_bench_ctx *ctx, const struct peer *pe, unsigned procs,
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
	fflush(NULL); /* a child must never write out the parent's buffered output again */
	for (; spawned < procs; spawned++) {
		args[spawned] =
		    (struct vyre_peers_producer){b, spawned, pe, offered / procs / 1e9, ""};
		if (pe->l.domain)
			snprintf(args[spawned].domain, sizeof(args[spawned].domain), "%s%u",
				 pe->l.domain, spawned % (pe->l.domains ? pe->l.domains : 1));
		pids[spawned] = fork();
		if (pids[spawned] == 0)
			_exit(child_main(&args[spawned]));
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

	return measure(ctx, &pe, procs, 0, f);
}

/* ---- vyred and the MPS control daemon ---------------------------------------- */

/* vyred's own account of the run: its batches, slots and the time each stage took. */
static const char *const summary_lines[] = {"stopped after", "mean ns per batch", ": loop ",
					    "CPU: user", NULL};

/* vyred from @bin on a new temporary socket; @mode NULL for the cpu backend. */
static int vyred_start(struct vyre_bench_vyred *d, const char *bin, const char *mode,
		       const struct vyre_bench_vyred_opts *va)
{
	const char *args[5 + VYRE_BENCH_VYRED_OPTS_ARGS];
	unsigned n = 0;

	args[n++] = "--backend";
	args[n++] = mode ? "cuda" : "cpu";
	if (mode) {
		args[n++] = "--mode";
		args[n++] = mode;
	}
	n = vyre_bench_vyred_opts_args(va, args, n);
	args[n] = NULL;
	return vyre_bench_vyred_start(d, "peers", bin, args);
}

/* @name in a directory of $PATH, into @buf; NULL when there is none. */
static const char *find_in_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096];

	snprintf(dirs, sizeof(dirs), "%s", path && *path ? path : "/usr/bin:/bin");
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", d, name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* Runs @argv with @input on its stdin (NULL: none); its exit status, or -1. */
static int run_tool(const char *const *argv, const char *input)
{
	int fds[2];

	if (pipe(fds) != 0)
		return -1;
	fflush(NULL);
	const pid_t pid = fork();

	if (pid == 0) {
		if (dup2(fds[0], 0) < 0)
			_exit(126);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[0]);
	if (pid > 0 && input && write(fds[1], input, strlen(input)) != (ssize_t)strlen(input))
		fprintf(stderr, "peers: writing to %s: %s\n", argv[0], strerror(errno));
	close(fds[1]);
	return pid > 0 ? vyre_bench_reap(pid) : -1;
}

/* Removes the files in @dir, then @dir (MPS writes no subdirectories). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

/*
 * The CUDA MPS environment of the suite, in a temporary directory: `none`,
 * an empty pipe directory that keeps vyred and the "self" producers off any
 * MPS daemon the machine runs; `pipe` and `log` for the suite's own daemon.
 */
struct mps {
	char dir[64], none[80], pipe[80], log[80];
	char bin[PATH_MAX];
	int have, running;
};

static int mps_init(struct mps *m)
{
	snprintf(m->dir, sizeof(m->dir), "/tmp/vyre-bench-mps-XXXXXX");
	if (!mkdtemp(m->dir))
		return -1;
	snprintf(m->none, sizeof(m->none), "%s/none", m->dir);
	snprintf(m->pipe, sizeof(m->pipe), "%s/pipe", m->dir);
	snprintf(m->log, sizeof(m->log), "%s/log", m->dir);
	if (mkdir(m->none, 0700) || mkdir(m->pipe, 0700) || mkdir(m->log, 0700))
		return -1;
	m->have = find_in_path("nvidia-cuda-mps-control", m->bin, sizeof(m->bin)) != NULL;
	return setenv("CUDA_MPS_PIPE_DIRECTORY", m->none, 1) ||
	       setenv("CUDA_MPS_LOG_DIRECTORY", m->log, 1);
}

static int mps_start(struct mps *m)
{
	const char *const argv[] = {m->bin, "-d", NULL};

	if (setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe, 1) != 0)
		return -1;
	if (run_tool(argv, NULL) != 0) {
		fprintf(stderr, "peers: %s -d failed; its log:\n", m->bin);
		char log[128];

		snprintf(log, sizeof(log), "%s/control.log", m->log);
		vyre_bench_print_log(log, "peers", NULL);
		setenv("CUDA_MPS_PIPE_DIRECTORY", m->none, 1);
		return -1;
	}
	m->running = 1;
	fprintf(stderr, "peers: started %s -d (CUDA_MPS_PIPE_DIRECTORY=%s)\n", m->bin, m->pipe);
	return 0;
}

static void mps_stop(struct mps *m)
{
	const char *const argv[] = {m->bin, NULL};

	if (!m->running)
		return;
	if (run_tool(argv, "quit\n") != 0)
		fprintf(stderr, "peers: 'echo quit | %s' failed\n", m->bin);
	else
		fprintf(stderr, "peers: stopped the MPS control daemon (echo quit)\n");
	/* quit returns before the server has gone; a later context must not find it half gone */
	char control[96];

	snprintf(control, sizeof(control), "%s/control", m->pipe);
	for (int i = 0; i < 500 && access(control, F_OK) == 0; i++)
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	m->running = 0;
	setenv("CUDA_MPS_PIPE_DIRECTORY", m->none, 1);
}

static void mps_fini(struct mps *m, const char *old_pipe, const char *old_log)
{
	mps_stop(m);
	remove_dir(m->none);
	remove_dir(m->pipe);
	remove_dir(m->log);
	rmdir(m->dir);
	if (old_pipe)
		setenv("CUDA_MPS_PIPE_DIRECTORY", old_pipe, 1);
	else
		unsetenv("CUDA_MPS_PIPE_DIRECTORY");
	if (old_log)
		setenv("CUDA_MPS_LOG_DIRECTORY", old_log, 1);
	else
		unsetenv("CUDA_MPS_LOG_DIRECTORY");
}

/* ---- the GPU probe, in a child so this process never touches CUDA ------------ */

struct probe {
	int ok;
	char why[320];
};

static int probe_main(void *arg)
{
	struct probe *p = arg;

	p->ok = vyre_peers_gpu_probe(p->why, sizeof(p->why)) == 0;
	return 0;
}

/* 1 when a forked child could open device 0; else 0 and why. */
static int gpu_usable(char *why, size_t len)
{
	struct probe *p = vyre_bench_shared_alloc(sizeof(*p));
	int ok = 0;

	if (!p) {
		snprintf(why, len, "out of memory");
		return 0;
	}
	fflush(NULL);
	const pid_t pid = fork();

	if (pid == 0)
		_exit(probe_main(p));
	if (pid > 0 && vyre_bench_reap(pid) == 0) {
		ok = p->ok;
		snprintf(why, len, "%s", p->why);
	} else {
		snprintf(why, len, "the probe process failed");
	}
	vyre_bench_shared_free(p, sizeof(*p));
	return ok;
}

/* ---- the suite -------------------------------------------------------------- */

struct series {
	struct peer pe;
	const char *row; /* row prefix, with vyred's --inflight when passed */
	char row_buf[64];
	int ran[N_COUNTS];
	struct vyre_peers_figures closed[N_COUNTS];
	int open_ran[N_LOADS];
	struct vyre_peers_figures open[N_LOADS];
};

static unsigned n_counts(const struct vyre_bench_ctx *ctx)
{
	return ctx->quick ? 3 : (unsigned)N_COUNTS;
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

/* Closed loop of @s at every N; reports as it goes. -1 when one failed (the rest still run). */
static int closed_loop(struct vyre_bench_ctx *ctx, struct series *s)
{
	char name[96];
	int rc = 0;

	for (unsigned i = 0; i < n_counts(ctx); i++) {
		if (measure(ctx, &s->pe, closed_counts[i], 0, &s->closed[i])) {
			rc = -1;
			continue;
		}
		s->ran[i] = 1;
		snprintf(name, sizeof(name), "closed %s %up", s->row, closed_counts[i]);
		vyre_peers_report(ctx, SUITE, name, &s->closed[i]);
	}
	return rc;
}

/* The open loop's producer count: OPEN_PROCS, or the largest N the closed loop ran. */
static unsigned open_procs(const struct vyre_bench_ctx *ctx, unsigned *index)
{
	unsigned best = 0;

	for (unsigned i = 0; i < n_counts(ctx); i++)
		if (closed_counts[i] <= OPEN_PROCS)
			best = i;
	*index = best;
	return closed_counts[best];
}

static int open_loop(struct vyre_bench_ctx *ctx, struct series *s)
{
	const double *loads = ctx->quick ? quick_loads : open_loads;
	const unsigned n_loads = ctx->quick ? 3 : (unsigned)N_LOADS;
	unsigned ref;
	const unsigned procs = open_procs(ctx, &ref);
	char name[96];
	int rc = 0;

	if (!s->ran[ref]) {
		fprintf(stderr, "peers: %s open loop skipped: no closed-loop figure at %u\n",
			s->pe.l.name, procs);
		return -1;
	}
	for (unsigned i = 0; i < n_loads; i++) {
		const double offered = loads[i] * s->closed[ref].items;

		if (measure(ctx, &s->pe, procs, offered, &s->open[i])) {
			rc = -1;
			continue;
		}
		s->open_ran[i] = 1;
		snprintf(name, sizeof(name), "open %s %up %.0f%%", s->row, procs, loads[i] * 100);
		vyre_peers_report(ctx, SUITE, name, &s->open[i]);
	}
	return rc;
}

/* Rows "closed A:B Np": A's items/s and p50 over B's at each N both ran. */
static void ratios(struct vyre_bench_ctx *ctx, const struct series *a, const struct series *b)
{
	char name[96];

	for (unsigned i = 0; i < n_counts(ctx); i++) {
		if (!a->ran[i] || !b->ran[i] || b->closed[i].items <= 0 || b->closed[i].p50 <= 0)
			continue;
		snprintf(name, sizeof(name), "closed %s:%s %up", a->row, b->row, closed_counts[i]);
		vyre_bench_report(ctx, SUITE, name, "items/s",
				  a->closed[i].items / b->closed[i].items, "x");
		vyre_bench_report(ctx, SUITE, name, "p50", a->closed[i].p50 / b->closed[i].p50,
				  "x");
	}
}

/* Rows "closed A Np:1p": scaling against A's own single producer. */
static void self_ratios(struct vyre_bench_ctx *ctx, const struct series *a)
{
	char name[96];

	for (unsigned i = 1; i < n_counts(ctx) && a->ran[0]; i++) {
		if (!a->ran[i] || a->closed[0].items <= 0 || a->closed[0].p50 <= 0)
			continue;
		snprintf(name, sizeof(name), "closed %s %up:1p", a->row, closed_counts[i]);
		vyre_bench_report(ctx, SUITE, name, "items/s",
				  a->closed[i].items / a->closed[0].items, "x");
		vyre_bench_report(ctx, SUITE, name, "p50", a->closed[i].p50 / a->closed[0].p50,
				  "x");
	}
}

/*
 * The open-loop figures of @series, one row object per line as --json writes
 * them, into DIR/peers-openloop.json (vyre-bench --plot --from reads either).
 */
static int write_open_json(const struct vyre_bench_ctx *ctx, struct series *const *series,
			   unsigned n)
{
	const double *loads = ctx->quick ? quick_loads : open_loads;
	const unsigned n_loads = ctx->quick ? 3 : (unsigned)N_LOADS;
	char path[PATH_MAX];
	unsigned ref;
	const unsigned procs = open_procs(ctx, &ref);
	FILE *f;

	snprintf(path, sizeof(path), "%s/peers-openloop.json", ctx->out_dir);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "peers: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < n_loads; i++) {
			const struct vyre_peers_figures *o = &series[k]->open[i];
			const struct {
				const char *metric, *unit;
				double v;
			} rows[] = {{"offered", "items/s", o->offered},
				    {"items/s", "items/s", o->items},
				    {"p50", "ns", o->p50},
				    {"p99", "ns", o->p99},
				    {"p999", "ns", o->p999}};

			for (size_t r = 0;
			     series[k]->open_ran[i] && r < sizeof(rows) / sizeof(rows[0]); r++)
				fprintf(f,
					"{\"suite\":\"%s\",\"name\":\"open %s %up %.0f%%\","
					"\"metric\":\"%s\",\"value\":%.17g,\"unit\":\"%s\"}\n",
					SUITE, series[k]->row, procs, loads[i] * 100,
					rows[r].metric, rows[r].v, rows[r].unit);
		}
	if (fclose(f) != 0) {
		fprintf(stderr, "peers: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(stderr, "peers: open-loop rows written to %s\n", path);
	return 0;
}

/* A series of @kind; a vyre series gets its socket when its vyred starts. */
static void series_init(struct series *s, const char *name, enum peer_kind kind,
			const struct vyre_bench_vyred_opts *va)
{
	memset(s, 0, sizeof(*s));
	s->pe = (struct peer){kind, {.suite = SUITE, .name = name}};
	snprintf(s->row_buf, sizeof(s->row_buf), "%s%s", name, va ? va->tag : "");
	s->row = s->row_buf;
}

/*
 * vyred in @mode (NULL: cpu backend), @s's closed loop at every N, then its
 * open loop when @open.
 */
static int vyre_series(struct vyre_bench_ctx *ctx, const char *bin, const char *mode,
		       const struct vyre_bench_vyred_opts *va, int open, struct series *s)
{
	struct vyre_bench_vyred d = {0};
	int rc;

	if (vyred_start(&d, bin, mode, va))
		return -1;
	s->pe.l.socket = d.sock;
	s->pe.l.vyred = d.pid;
	rc = closed_loop(ctx, s);
	if (open)
		rc |= open_loop(ctx, s);
	vyre_bench_vyred_stop(&d, "peers", summary_lines);
	return rc;
}

static int peers_suite(struct vyre_bench_ctx *ctx)
{
	struct series vp, vl, self, mpss, vcpu;
	char bin[PATH_MAX], why[320];
	struct vyre_bench_vyred_opts va;
	int rc = 0;

	if (!vyre_bench_find_vyred(bin, sizeof(bin))) {
		fprintf(stderr, "peers: skipped: no vyred next to vyre-bench\n");
		return 0;
	}
	vyre_bench_vyred_opts(ctx, SUITE, bin, &va);
	series_init(&vcpu, "vyre-cpu", PEER_VYRE, &va);
	series_init(&vp, "vyre-persistent", PEER_VYRE, &va);
	series_init(&vl, "vyre-launch", PEER_VYRE, &va);
	series_init(&self, "self", PEER_GPU, NULL);
	series_init(&mpss, "mps", PEER_GPU, NULL);
	int gpu = 0;

	if (ctx->cpu_only)
		snprintf(why, sizeof(why), "--backend cpu");
	else if (vyre_bench_cuda_loaded())
		snprintf(why, sizeof(why),
			 "this vyre-bench already loaded the CUDA driver (an earlier suite), "
			 "and CUDA does not survive fork: run `vyre-bench peers` alone");
	else
		gpu = gpu_usable(why, sizeof(why));
	if (!gpu) {
		fprintf(stderr,
			"peers: no GPU peers (%s): vyre rows on vyred --backend cpu, ratios "
			"against vyre-cpu's own N = 1; the self-launch and MPS peers are skipped\n",
			why);
		rc = vyre_series(ctx, bin, NULL, &va, 1, &vcpu);
		self_ratios(ctx, &vcpu);
		struct series *const all[] = {&vcpu};

		if (ctx->out_dir)
			rc |= write_open_json(ctx, all, 1);
		return rc ? -1 : 0;
	}
	struct mps m = {0};
	const char *old_pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
	const char *old_log = getenv("CUDA_MPS_LOG_DIRECTORY");
	char old_pipe_buf[PATH_MAX], old_log_buf[PATH_MAX];

	snprintf(old_pipe_buf, sizeof(old_pipe_buf), "%s", old_pipe ? old_pipe : "");
	snprintf(old_log_buf, sizeof(old_log_buf), "%s", old_log ? old_log : "");
	if (mps_init(&m)) {
		fprintf(stderr, "peers: temporary MPS directories: %s\n", strerror(errno));
		mps_fini(&m, old_pipe ? old_pipe_buf : NULL, old_log ? old_log_buf : NULL);
		return -1;
	}
	rc |= vyre_series(ctx, bin, "persistent", &va, 1, &vp);
	rc |= vyre_series(ctx, bin, "launch", &va, 0, &vl);
	rc |= closed_loop(ctx, &self);
	if (!m.have) {
		fprintf(stderr, "peers: MPS peer skipped: no nvidia-cuda-mps-control in $PATH\n");
	} else if (mps_start(&m) == 0) {
		rc |= closed_loop(ctx, &mpss);
		rc |= open_loop(ctx, &mpss);
		mps_stop(&m);
	} else {
		rc = -1;
	}
	mps_fini(&m, old_pipe ? old_pipe_buf : NULL, old_log ? old_log_buf : NULL);
	ratios(ctx, &vp, &mpss);
	ratios(ctx, &vl, &mpss);
	ratios(ctx, &vp, &self);
	ratios(ctx, &vl, &self);
	struct series *const all[] = {&vp, &mpss};

	if (ctx->out_dir)
		rc |= write_open_json(ctx, all, 2);
	return rc ? -1 : 0;
}

VYRE_BENCH_SUITE(peers,
		 "N producer processes, tiny items: vyre vs own launches vs CUDA MPS; open loop",
		 peers_suite)
