/* SPDX-License-Identifier: MIT */
/*
 * Connection lifecycle. A connection is freed only when no io_uring
 * operation names it any more and no batch in flight holds its items:
 * closing cancels the operations, the last completion (or its last batch's)
 * releases the region, the descriptors and the slot. A connection that
 * closes while batches of its run leaves its domain when the last one
 * completes, so the heap stays mapped (and registered with the backend)
 * until then; its batches that finished and were held for an earlier one
 * (complete.c) no longer count.
 */
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conns.h"
#include "daemon.h"
#include "domains.h"
#include "log.h"
#include "priority.h"
#include "regions.h"
#include "route.h"
#include "trace.h"
#include "uring.h"
#include "worker_link.h"

void vyre_conn_arm_poll(struct vyre_daemon *d, struct vyre_conn *c)
{
	if (c->poll_armed)
		return;
	vyre_uring_poll(&d->ring, c->sock, VYRE_IO_POLL, c->slot);
	c->poll_armed = 1;
	c->pending_ops++;
}

void vyre_conn_write_eventfd(struct vyre_daemon *d, struct vyre_conn *c)
{
	static const uint64_t one = 1;

	if (c->event_fd < 0)
		return;
	/*
	 * At most one write in flight (a client that saturates its eventfd must
	 * not pile them up). That one may already have landed and been read,
	 * so another follows when it completes.
	 */
	if (c->efd_write_armed) {
		c->efd_write_again = 1;
		return;
	}
	vyre_uring_write(&d->ring, c->event_fd, &one, sizeof(one), VYRE_IO_EFD_WRITE, c->slot);
	c->efd_write_armed = 1;
	c->pending_ops++;
}

/* Cancel the io_uring operations that name @c; each completes (conn_op_done). */
static void cancel_ops(struct vyre_daemon *d, struct vyre_conn *c)
{
	/* Issue queued eventfd writes first: one that completes at once is not cancelled. */
	io_uring_submit(&d->ring);
	if (c->poll_armed)
		vyre_uring_cancel(&d->ring, VYRE_IO_POLL, c->slot);
	if (c->waiter_armed)
		vyre_uring_cancel(&d->ring, VYRE_IO_WAIT, c->slot);
	/* Still pending only if the client saturated its eventfd: cancel it. */
	if (c->efd_write_armed)
		vyre_uring_cancel(&d->ring, VYRE_IO_EFD_WRITE, c->slot);
	io_uring_submit(&d->ring);
}

int vyre_conn_activate(struct vyre_daemon *d, struct vyre_conn *c, uint32_t sq, uint32_t cq,
		       struct vyre_domain *dom, int event_fd)
{
	int rc = vyre_region_create(sq, cq, c->id, dom->id, &c->region);

	if (rc != 0)
		return rc;
	rc = vyre_conn_start(d, c, dom, event_fd);
	if (rc != 0)
		vyre_region_unmap(&c->region);
	return rc;
}

int vyre_conn_start(struct vyre_daemon *d, struct vyre_conn *c, struct vyre_domain *dom,
		    int event_fd)
{
	c->sq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->sq_efd < 0)
		return VYRE_E_NOMEM;
	c->domain = dom;
	c->event_fd = event_fd;
	vyre_sq_consumer_init(&c->sq, &c->region);
	/* wake_fd -1: the client's eventfd is written through io_uring, never blocking us. */
	vyre_cq_producer_init(&c->cq, &c->region, -1);
	c->inflight = 0;
	c->batches = 0;
	c->n_held = 0;
	c->state = VYRE_CONN_ACTIVE;
	c->active_pos = d->n_active;
	d->active[d->n_active++] = c->slot;
	d->n_resumable += c->resumable != 0;
	vyre_region_id_set(d, c, VYRE_REGION_LIVE);
	vyre_classes_join(&d->classes, c->priority);
	vyre_trace_connect(d, c);
	return 0;
}

static void conn_free(struct vyre_daemon *d, struct vyre_conn *c)
{
	uint32_t slot = c->slot;

	vyre_route_release(d, c);
	if (c->region.hdr)
		vyre_region_id_set(d, c, VYRE_REGION_FREE);
	if (c->sock >= 0) {
		close(c->sock);
		vyre_link_gone(c->link_route, c->id);
	}
	if (c->region.hdr)
		vyre_region_unmap(&c->region);
	if (c->event_fd >= 0)
		close(c->event_fd);
	if (c->sq_efd >= 0)
		close(c->sq_efd);
	memset(c, 0, sizeof(*c));
	c->slot = slot;
	c->sock = c->event_fd = c->sq_efd = c->region.fd = -1;
	c->state = VYRE_CONN_FREE;
}

void vyre_conn_close(struct vyre_daemon *d, struct vyre_conn *c, int reason)
{
	if (c->state == VYRE_CONN_FREE || c->state == VYRE_CONN_CLOSING)
		return;
	if (c->state == VYRE_CONN_ACTIVE) {
		struct vyre_region_header *h = c->region.hdr;

		vyre_trace_disconnect(c, reason);
		if (reason == VYRE_E_PROTO)
			vyre_trace_error(c->id, c->pid, reason);

		vyre_log("client %u (pid %d uid %u) leaves domain %u: %s, %llu items completed",
			 c->id, (int)c->pid, (unsigned)c->uid, c->domain->id,
			 c->drop_why ? c->drop_why
			 : reason    ? vyre_strerror(reason)
				     : "disconnected",
			 (unsigned long long)c->items_done);
		c->drop_why = NULL;
		/* Tell a client that still maps the region, and wake it if it sleeps. */
		__atomic_store_n(&h->closed, (uint32_t)(reason ? -reason : -VYRE_E_DISCONNECTED),
				 __ATOMIC_RELEASE);
		__atomic_fetch_add(&h->cq_doorbell, 1, __ATOMIC_SEQ_CST);
		vyre_futex_wake(&h->cq_doorbell);
		if (__atomic_load_n(&h->cq_need_wakeup, __ATOMIC_ACQUIRE) & VYRE_CQ_WAKE_EVENTFD)
			vyre_conn_write_eventfd(d, c);
		/* held batches are over: their CQEs are not published now */
		c->batches -= c->n_held;
		c->n_held = 0;
		if (!c->batches) {
			vyre_domain_leave(d, c->domain);
			c->domain = NULL;
		}
		if (c->has_deferred) {
			c->has_deferred = 0;
			d->n_deferred--;
		}
		d->n_resumable -= c->resumable != 0;
		/* its batch may still write the heap: no resume takes the region until conn_free */
		vyre_region_id_set(d, c, VYRE_REGION_CLOSING);
		/* the last active slot takes this one's place */
		const uint32_t last = d->active[--d->n_active];
		d->active[c->active_pos] = last;
		d->conns[last].active_pos = c->active_pos;
		vyre_classes_leave(&d->classes, c->priority);
	}
	c->state = VYRE_CONN_CLOSING;
	/* The peer sees the hang-up now, not when the cancellations come back. */
	shutdown(c->sock, SHUT_RDWR);
	cancel_ops(d, c);
	if (c->pending_ops == 0 && !c->batches)
		conn_free(d, c);
}

void vyre_conn_op_done(struct vyre_daemon *d, struct vyre_conn *c)
{
	c->pending_ops--;
	if (c->state == VYRE_CONN_CLOSING && c->pending_ops == 0 && !c->batches)
		conn_free(d, c);
}

void vyre_conn_handed_off(struct vyre_daemon *d, struct vyre_conn *c)
{
	/* the socket and the route travel with the client */
	c->sock = -1;
	c->routed = c->route = 0;
	c->state = VYRE_CONN_CLOSING;
	if (c->pending_ops == 0)
		conn_free(d, c);
}

void vyre_conn_batch_done(struct vyre_daemon *d, struct vyre_conn *c)
{
	if (--c->batches)
		return;
	if (c->domain) {
		vyre_domain_leave(d, c->domain);
		c->domain = NULL;
	}
	if (c->state == VYRE_CONN_CLOSING && c->pending_ops == 0)
		conn_free(d, c);
}

const char vyre_bad_ring_index[] =
    "impossible ring index in its region (an SQ tail more than a ring ahead of the head, or a "
    "CQ head past the tail): a broken or hostile client";

void vyre_conn_drop_later(struct vyre_daemon *d, struct vyre_conn *c, int reason, const char *why)
{
	if (c->drop_reason)
		return;
	c->drop_reason = reason;
	c->drop_why = why;
	d->drop[d->n_drop++] = c->slot;
}

void vyre_conn_wake_later(struct vyre_daemon *d, struct vyre_conn *c)
{
	if (c->wake_listed)
		return;
	c->wake_listed = 1;
	d->wake[d->n_wake++] = c->slot;
}
