/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_self.c - the "peers" suite's producers that launch for
 * themselves, each in its own CUDA context (bench/bench_peers_gpu.h), under
 * MPS or not: the "self" and "mps" peers.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "bench_peers_board.h"
#include "bench_peers_gpu.h"
#include "bench_peers_self.h"

int vyre_peers_self_closed(const struct vyre_peers_producer *a, struct proc *me)
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
int vyre_peers_self_open(const struct vyre_peers_producer *a, struct proc *me)
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
