/* SPDX-License-Identifier: MIT */
/*
 * Drain: copy published SQEs out of every active client's SQ into the batch.
 * A client gets at most as many items as it has free CQ slots not already
 * promised to items in flight, so its CQ can never overflow. The shared
 * sq_head is not advanced here: only for what the plan stage accepts.
 */
#include "daemon.h"
#include "trace.h"

static void take(struct vyre_daemon *d, struct vyre_batch *b, struct vyre_conn *c)
{
	uint32_t room = b->cap - b->n;
	uint32_t space = vyre_cq_space_seen(&c->cq);
	uint32_t credit = space > c->inflight ? space - c->inflight : 0;

	/*
	 * cq_head is the client's line, and reading it costs a transfer before
	 * the batch can start: the last value is used unless it limits us. The
	 * release stage reads it again while the batch runs and drops a client
	 * that wrote garbage there.
	 */
	if (credit < room) {
		int fresh = vyre_cq_space(&c->cq);

		if (fresh < 0) {
			vyre_conn_close(d, c, VYRE_E_PROTO);
			return;
		}
		credit = (uint32_t)fresh > c->inflight ? (uint32_t)fresh - c->inflight : 0;
	}
	uint32_t want = credit < room ? credit : room;

	if (want == 0)
		return;
	int got = vyre_sq_peek(&c->sq, &b->sqes[b->n], want);

	if (got == 0)
		return;
	c->batch_first = b->n;
	c->batch_count = (uint32_t)got;
	c->inflight += (uint32_t)got;
	b->touched[b->n_touched++] = c->slot;
	for (uint32_t i = b->n; i < b->n + (uint32_t)got; i++) {
		b->items[i] = b->sqes[i].item;
		b->flags[i] = b->sqes[i].flags;
		b->conn[i] = c->slot;
		b->domain[i] = c->domain->slot;
	}
	b->n += (uint32_t)got;
}

void vyre_stage_drain(struct vyre_daemon *d, struct vyre_batch *b)
{
	const uint32_t n = d->n_active;

	b->n = 0;
	b->n_touched = 0;
	b->n_accepted = 0;
	if (d->rr_cursor >= n)
		d->rr_cursor = 0;
	/*
	 * Only active connections are walked: the table has max-clients + 16
	 * slots, and touching each cost about a microsecond per batch. take()
	 * may close a connection, which moves the last active one into its
	 * place: a snapshot of the slots keeps the walk exact.
	 */
	for (uint32_t k = 0; k < n && b->n < b->cap; k++)
		d->active_snapshot[k] = d->active[(d->rr_cursor + k) % n];
	for (uint32_t k = 0; k < n && b->n < b->cap; k++) {
		struct vyre_conn *c = &d->conns[d->active_snapshot[k]];

		if (c->state == VYRE_CONN_ACTIVE)
			take(d, b, c);
	}
	/* Start one client later next time, so a busy client cannot starve the others. */
	d->rr_cursor++;
	b->stats.items_in = b->n;
	b->stats.clients = b->n_touched;
	vyre_trace_pressure(d);
}
