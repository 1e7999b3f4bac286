/* SPDX-License-Identifier: MIT */
/*
 * libvyre: reaping completions, sleeping for them on the CQ doorbell, and
 * the eventfd for epoll loops.
 */
#include <sched.h>
#include <sys/eventfd.h>

#include "client.h"

/* How often a sleeping vyre_wait looks at the socket, so a dead vyred is noticed. */
#define LIVENESS_SLICE_NS 50000000ll
/*
 * Past SPIN_YIELD_NS the spin yields its CPU at every look, so a long one
 * costs the machine little; sleeping instead would cost vyred's loop a
 * futex wake-up for every CQE, the dearest thing it does per item.
 */
#define SPIN_MAX_NS 200000u
#define SPIN_MIN_NS 1000u
/*
 * A spin yields the CPU SPIN_YIELD_FIRST_NS into a wait, then at each
 * doubling of the time waited (2, 4, 8, 16 ... us). With more spinning
 * producers than cores (and vyred's loops beside them), a spinner that never
 * yields keeps a producer whose CQE has come, or a loop, off a core for a
 * whole time slice (closed loop, 16 producers, 16 CPUs: p999 0.6-0.8 ms).
 * Yielding at every look past a fixed threshold fixed that for short waits
 * but not for long ones: under EEVDF each yield moves the yielder's deadline
 * back, so a producer that yielded dozens of times in a 16 us wait sat
 * behind the others once its CQE came. Doubling gives a handful of yields a
 * wait of any length (bench/RESULTS.md, "the closed loop's tail"). On an
 * idle core a yield returns at once.
 */
#define SPIN_YIELD_FIRST_NS 2000u
/*
 * Empty vyre_reap calls between looks at the socket: a client that only
 * submits and reaps learns that vyred died (one poll() per 1024 empty
 * reaps costs well under a nanosecond a call).
 */
#define REAP_LIVENESS_EVERY 1024u

int vyre_reap(struct vyre_client *c, struct vyre_cqe *out, uint32_t max)
{
	if (!c || (!out && max))
		return VYRE_E_INVAL;
	if (max == 0)
		return 0;
	if (max > (uint32_t)INT32_MAX)
		max = (uint32_t)INT32_MAX;
	int n = vyre_cq_reap(&c->cq, out, max);

	if (n > 0) {
		/* CQ space freed: a vyred that slept because our CQ was full drains again. */
		vyre_sq_kick(&c->sq);
		return n;
	}
	if (n == 0 && (vyre_client_closed(c) ||
		       (++c->empty_reaps % REAP_LIVENESS_EVERY == 0 && vyre_client_gone(c))))
		return vyre_client_reconnect_auto(c, 0) ? vyre_cq_reap(&c->cq, out, max)
							: VYRE_E_DISCONNECTED;
	return n;
}

/* Spins up to c->spin_ns (or until @until) for a CQE. */
static int spin_reap(struct vyre_client *c, struct vyre_cqe *out, uint32_t max, uint64_t start,
		     uint64_t until)
{
	uint64_t stop = start + c->spin_ns < until ? start + c->spin_ns : until;
	uint64_t yield_after = SPIN_YIELD_FIRST_NS;

	for (;;) {
		int n = vyre_reap(c, out, max);
		uint64_t now;

		if (n != 0 || (now = vyre_now_ns()) >= stop)
			return n;
		if (now - start >= yield_after) {
			sched_yield();
			yield_after *= 2;
		}
		/* a pause is ~140 cycles on recent Xeons: look at the CQ after each */
		for (int i = 0; i < 64 && vyre_cq_ready(&c->cq) == 0; i++)
			vyre_cpu_relax();
	}
}

/*
 * The spin budget follows how long completions take: one that came within
 * SPIN_MAX_NS would have been caught by spinning, so the budget doubles; a
 * longer wait halves it.
 */
static void adapt_spin(struct vyre_client *c, uint64_t waited_ns)
{
	if (waited_ns <= SPIN_MAX_NS)
		c->spin_ns = c->spin_ns * 2 > SPIN_MAX_NS ? SPIN_MAX_NS
			     : c->spin_ns < SPIN_MIN_NS	  ? SPIN_MIN_NS
							  : c->spin_ns * 2;
	else if (c->spin_ns > SPIN_MIN_NS)
		c->spin_ns /= 2;
}

static int wait_until(struct vyre_client *c, struct vyre_cqe *out, uint32_t max, uint64_t start,
		      uint64_t until)
{
	struct vyre_region_header *h = c->region.hdr;
	int n = spin_reap(c, out, max, start, until);

	while (n == 0) {
		uint64_t now = vyre_now_ns();

		if (now >= until)
			return VYRE_E_TIMEDOUT;
		uint64_t slice = until - now;

		if (slice > (uint64_t)LIVENESS_SLICE_NS)
			slice = (uint64_t)LIVENESS_SLICE_NS;
		uint32_t seen;
		int rc = 0;

		if (vyre_sleep_prepare(&h->cq_need_wakeup, &h->cq_doorbell, VYRE_CQ_WAKE_FUTEX,
				       &seen) &&
		    vyre_cq_ready(&c->cq) == 0 && !vyre_client_closed(c))
			rc = vyre_futex_wait(&h->cq_doorbell, seen, (int64_t)slice);
		vyre_sleep_finish(&h->cq_need_wakeup, VYRE_CQ_WAKE_FUTEX);
		n = vyre_reap(c, out, max);
		if (n == 0 && rc == VYRE_E_TIMEDOUT && vyre_client_gone(c))
			return VYRE_E_DISCONNECTED;
	}
	if (n > 0)
		adapt_spin(c, vyre_now_ns() - start);
	return n;
}

int vyre_wait(struct vyre_client *c, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns)
{
	uint64_t start = vyre_now_ns();
	uint64_t until = timeout_ns < 0 ? UINT64_MAX : start + (uint64_t)timeout_ns;

	if (!c || !out || max == 0)
		return VYRE_E_INVAL;
	for (;;) {
		int n = wait_until(c, out, max, start, until);
		uint64_t now = vyre_now_ns();

		/* with VYRE_CONNECT_RECONNECT a dead vyred is waited out, within the timeout */
		if (n != VYRE_E_DISCONNECTED || !(c->flags & VYRE_CONNECT_RECONNECT))
			return n;
		if (!vyre_client_reconnect_auto(
			c, until == UINT64_MAX ? -1 : (int64_t)(until > now ? until - now : 0)))
			return VYRE_E_DISCONNECTED;
	}
}

int vyre_event_fd(struct vyre_client *c)
{
	if (!c)
		return VYRE_E_INVAL;
	if (!c->event_armed) {
		struct vyre_region_header *h = c->region.hdr;
		/* Before arming: a vyred killed from now on is seen through the eventfd. */
		int rc = vyre_client_watch_start(c);

		if (rc != 0)
			return rc;
		/* Armed for good: vyred writes the eventfd on every flush from now on. */
		uint32_t seen;

		vyre_sleep_prepare(&h->cq_need_wakeup, &h->cq_doorbell, VYRE_CQ_WAKE_EVENTFD,
				   &seen);
		c->event_armed = 1;
		if (vyre_cq_ready(&c->cq) || vyre_client_closed(c))
			eventfd_write(c->event_fd, 1); /* EAGAIN: already readable */
	}
	return c->event_fd;
}
