/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_board.h - what the "peers" suite's producer processes
 * share with the measurement that forks them (bench/bench_peers_measure.c):
 * the board in shared memory (ready, go, stop, the warm-up's end; each
 * producer's count, failure and latency histogram), and the helpers of a
 * producer's hot loop, inline here since the build has no LTO.
 */
#ifndef VYRE_BENCH_PEERS_BOARD_H
#define VYRE_BENCH_PEERS_BOARD_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "bench_peers_load.h"

#define MAX_PROCS  32u
#define OPEN_SLOTS 32u /* items one open-loop producer may have outstanding */
#define WAIT_NS	   (5ll * 1000000000ll)
#define SPIN_NS	   30000u /* the last stretch of a wait for an arrival spins */

/* ---- latency histogram: 64 sub-buckets per power of two (1.6 % wide) -------- */

#define HIST_SUB  64u
#define HIST_BINS (40u * HIST_SUB)

struct hist {
	uint64_t n;
	uint32_t bin[HIST_BINS];
};

static inline void hist_add(struct hist *h, uint64_t ns)
{
	uint32_t i = (uint32_t)ns;

	if (ns >= HIST_SUB) {
		const unsigned e = 63u - (unsigned)__builtin_clzll(ns);

		i = (e - 5) * HIST_SUB + (uint32_t)((ns >> (e - 6)) & (HIST_SUB - 1));
	}
	h->bin[i < HIST_BINS ? i : HIST_BINS - 1]++;
	h->n++;
}

/* ---- the board ------------------------------------------------------------- */

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

/* Records why this producer failed. */
static inline void vfail(struct proc *me, const char *fmt, va_list ap)
{
	vsnprintf(me->why, sizeof(me->why), fmt, ap);
	me->failed = 1;
}

__attribute__((format(printf, 2, 3))) static inline void fail(struct proc *me, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(me, fmt, ap);
	va_end(ap);
}

static inline int stopping(const struct board *b)
{
	return __atomic_load_n(&b->stop.v, __ATOMIC_ACQUIRE) != 0;
}

/* Says it is ready and waits for go; 0 to start, -1 when the suite gave up. */
static inline int ready_then_go(struct board *b)
{
	__atomic_fetch_add(&b->ready.v, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&b->go.v, __ATOMIC_ACQUIRE))
		if (stopping(b))
			return -1;
		else
			nanosleep(&(struct timespec){0, 50000}, NULL);
	return 0;
}

/*
 * 1 when an item is past the warm-up: in the closed loop one that started at
 * @t, in the open loop one that completed at @t (past the knee, every item
 * of the window arrived during the warm-up, and its latency is the figure).
 */
static inline int recorded(const struct board *b, uint64_t t0)
{
	return t0 >= __atomic_load_n(&b->from_ns.v, __ATOMIC_ACQUIRE);
}

static inline void count_done(struct proc *me)
{
	__atomic_store_n(&me->done.v, me->done.v + 1, __ATOMIC_RELEASE);
}

/* This producer's domain; NULL: a private one. */
static inline const char *peers_domain(const struct vyre_peers_producer *p)
{
	return p->domain[0] ? p->domain : NULL;
}

/* Exponential gap of a Poisson process of @rate_per_ns, from xorshift64 state @rng. */
static inline uint64_t poisson_gap(uint64_t *rng, double rate_per_ns)
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
static inline void wait_until(uint64_t t)
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

#endif /* VYRE_BENCH_PEERS_BOARD_H */
