/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_vyre.c - the "peers" suite's vyre producers: a client of
 * the vyred under test each, in a private domain (or a named one), in a
 * closed loop or an open loop of Poisson arrivals.
 */
#include <stdint.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "bench_peers_board.h"
#include "bench_peers_gpu.h"
#include "bench_peers_vyre.h"

#define ITEM_BYTES (VYRE_PEERS_WORDS * 4u)
#define HEAP_BYTES (1u << 20) /* each producer's private domain */

struct vyre_side {
	struct vyre_client *c;
	uint32_t in, out[OPEN_SLOTS];
	uint32_t *outp[OPEN_SLOTS];
};

static int vyre_side_open(struct vyre_side *v, const struct vyre_peers_producer *a, uint32_t slots,
			  struct proc *me)
{
	const struct vyre_connect_opts o = {
	    .socket_path = a->pe->l.socket, .domain = peers_domain(a), .heap_bytes = HEAP_BYTES};
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

int vyre_peers_vyre_closed(const struct vyre_peers_producer *a, struct proc *me)
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
int vyre_peers_vyre_open(const struct vyre_peers_producer *a, struct proc *me)
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
