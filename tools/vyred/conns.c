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

#include "daemon.h"
#include "trace.h"

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
			vyre_loop_write_eventfd(d, c);
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
	vyre_loop_cancel(d, c);
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

int vyre_conn_has_work(struct vyre_daemon *d, struct vyre_conn *c)
{
	int pending = vyre_sq_pending(&c->sq);
	int space = pending > 0 ? vyre_cq_space(&c->cq) : 0;

	if (pending < 0 || space < 0) {
		c->drop_why = vyre_bad_ring_index;
		vyre_conn_close(d, c, VYRE_E_PROTO);
		return 1;
	}
	/*
	 * Items waiting on a full CQ are not work: the client's reap kicks us.
	 * Nor are those of a client with --client-batches batches in flight, or
	 * a FENCE behind its batches: their completion wakes us. Nor a chain
	 * whose last item is not published: that publish kicks us.
	 */
	return pending > 0 && (uint32_t)space > c->inflight && c->batches < d->client_batches &&
	       vyre_drain_ready(d, c, (uint32_t)space - c->inflight);
}
