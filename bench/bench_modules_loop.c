/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_loop.c - a producer of the "modules" suite: its side
 * (bench_modules_side.h), then the closed loop or the open loop as the
 * peers suite runs them (docs/vyre-bench.md "peers"), through the peers'
 * board (bench_peers_board.h): warm-up, window, latency histogram.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "bench_modules_client.h"
#include "bench_modules_gpu.h"
#include "bench_modules_loop.h"
#include "bench_modules_side.h"
#include "bench_peers_board.h"

#define CANARY 0xa5

_Static_assert(OPEN_SLOTS <= VYRE_MODULES_SLOTS, "a side has a slot for every open-loop item");

/* Item @seq into @slot: a sampled item's output is overwritten first, so a stale one fails. */
static int start(struct vyre_modules_side *s, uint32_t slot, uint32_t seq)
{
	if (vyre_modules_sampled(seq))
		memset(s->out[slot], CANARY, s->op->out_bytes);
	return s->ops->submit(s, slot, vyre_modules_param(s->op, seq), seq);
}

/* 0 when the completed item @d is right (its output and result too when sampled); else fails @me.
 */
static int check(struct vyre_modules_side *s, const struct vyre_modules_done *d, struct proc *me)
{
	const uint32_t seq = d->slot < OPEN_SLOTS ? s->seq[d->slot] : 0;
	char why[160];

	if (d->slot >= OPEN_SLOTS) {
		fail(me, "a completion of slot %u, which holds no item", d->slot);
		return -1;
	}
	if (d->rc != 0 && !vyre_modules_sampled(seq)) {
		fail(me, "%s item %u: rc %d", s->op->name, seq, d->rc);
		return -1;
	}
	if (vyre_modules_sampled(seq) &&
	    vyre_modules_check(s->op, s->in, s->table, s->bytes, vyre_modules_param(s->op, seq),
			       d->rc, s->out[d->slot], d->result, why, sizeof(why))) {
		fail(me, "item %u: %s", seq, why);
		return -1;
	}
	return 0;
}

static void closed_loop(const struct vyre_peers_producer *a, struct vyre_modules_side *s,
			struct proc *me)
{
	struct vyre_modules_done d;

	for (uint32_t seq = 1; !stopping(a->b); seq++) {
		const uint64_t t0 = vyre_bench_now_ns();
		int n = start(s, 0, seq);

		if (n == 0)
			n = s->ops->reap(s, &d, 1, WAIT_NS);
		const uint64_t t1 = vyre_bench_now_ns();

		if (n != 1) {
			fail(me, "item %u: %s", seq, n == 0 ? "not done after 5 s" : s->why);
			return;
		}
		if (check(s, &d, me))
			return;
		if (recorded(a->b, t0))
			hist_add(&me->h, t1 - t0);
		count_done(me);
	}
}

/*
 * Arrivals of a Poisson process; each takes a free slot and starts at
 * once; with every slot busy it waits and starts late (its latency runs
 * from its arrival). Completions are reaped until the next arrival.
 */
static void open_loop(const struct vyre_peers_producer *a, struct vyre_modules_side *s,
		      struct proc *me)
{
	struct vyre_modules_done done[OPEN_SLOTS];
	uint64_t arrival[OPEN_SLOTS], rng = 0x9e3779b97f4a7c15ull * (a->id + 1);
	uint32_t idle[OPEN_SLOTS], n_idle = OPEN_SLOTS, seq = 0;
	uint64_t next = vyre_bench_now_ns() + poisson_gap(&rng, a->rate_per_ns);

	for (uint32_t i = 0; i < OPEN_SLOTS; i++)
		idle[i] = OPEN_SLOTS - 1 - i;
	while (!me->failed) {
		const int stop = stopping(a->b);
		uint64_t now = vyre_bench_now_ns();

		for (; !stop && n_idle && next <= now; next += poisson_gap(&rng, a->rate_per_ns)) {
			const uint32_t slot = idle[--n_idle];

			arrival[slot] = next;
			if (start(s, slot, ++seq)) {
				fail(me, "item %u: %s", seq, s->why);
				return;
			}
		}
		if (n_idle == OPEN_SLOTS) {
			if (stop)
				return;
			wait_until(next);
			continue;
		}
		/* until the next arrival; with every slot busy, or once stopping, until one is done
		 */
		const int64_t wait =
		    !stop && n_idle && next > now ? (int64_t)(next - now) : WAIT_NS;
		const int n = s->ops->reap(s, done, OPEN_SLOTS, wait);

		if (n < 0 || (n == 0 && wait == WAIT_NS)) {
			fail(me, "%s", n ? s->why : "no item done in 5 s");
			return;
		}
		now = vyre_bench_now_ns();
		for (int i = 0; i < n; i++) {
			if (check(s, &done[i], me))
				return;
			if (recorded(a->b, now))
				hist_add(&me->h, now - arrival[done[i].slot]);
			idle[n_idle++] = done[i].slot;
			count_done(me);
		}
	}
}

int vyre_modules_run(struct vyre_peers_producer *p, const void *arg)
{
	const struct vyre_modules_load *l = arg;
	struct proc *me = &p->b->p[p->id];
	struct vyre_modules_side *s;
	const int open = p->rate_per_ns > 0;
	const uint64_t seed = 0x6d6f64756c6573ull ^ ((uint64_t)p->id << 32) ^ l->op;

	const uint32_t slots = open ? OPEN_SLOTS : 1;

	if (l->gpu ? vyre_modules_gpu_open(&s, l, slots, seed, me->why, sizeof(me->why))
		   : vyre_modules_client_open(&s, p, l, slots, seed, me->why, sizeof(me->why)))
		me->failed = 1;
	if (ready_then_go(p->b) || me->failed) {
		if (!me->failed)
			s->ops->close(s);
		return me->failed;
	}
	if (open)
		open_loop(p, s, me);
	else
		closed_loop(p, s, me);
	s->ops->close(s);
	return me->failed;
}
