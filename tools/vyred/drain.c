/* SPDX-License-Identifier: MIT */
/*
 * Drain: copy published SQEs out of every active client's SQ into the batch.
 * A client gets at most as many items as it has free CQ slots not already
 * promised to items in flight, so its CQ can never overflow. The shared
 * sq_head is not advanced here: only for what the plan stage accepts.
 *
 * With batches in flight:
 * - a client that has one is skipped: its later items wait for its CQEs,
 *   which keeps per-client order (and FENCE) exact across batches;
 * - a client's items are taken up to the first one that has a hazard with
 *   an in-flight item (hazards.h), so batches in different slots never
 *   depend on each other and the first batch's items still come first in
 *   acceptance order;
 * - ready clients are spread over the free slots, and when a batch takes
 *   several clients each gets a fair share of it, so one that floods cannot
 *   fill every batch.
 */
#include "daemon.h"
#include "trace.h"

static uint32_t hazard_free_prefix(struct vyre_daemon *d, const struct vyre_batch *b, uint32_t from,
				   uint32_t n)
{
	if (d->n_running == 0)
		return n;
	for (uint32_t k = 0; k < n; k++)
		if (vyre_hazards_conflict(&d->hazards, &b->sqes[from + k].item))
			return k;
	return n;
}

static void take(struct vyre_daemon *d, struct vyre_batch *b, struct vyre_conn *c, uint32_t share)
{
	uint32_t room = b->cap - b->n < share ? b->cap - b->n : share;
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
			vyre_conn_drop_later(d, c, VYRE_E_PROTO);
			return;
		}
		credit = (uint32_t)fresh > c->inflight ? (uint32_t)fresh - c->inflight : 0;
	}
	uint32_t want = credit < room ? credit : room;

	if (want == 0)
		return;
	int got = vyre_sq_peek(&c->sq, &b->sqes[b->n], want);

	if (got <= 0)
		return;
	uint32_t n = hazard_free_prefix(d, b, b->n, (uint32_t)got);

	d->hazard_holds += n < (uint32_t)got;
	if (n == 0)
		return;
	c->batch_first = b->n;
	c->batch_count = n;
	c->inflight += n;
	b->touched[b->n_touched++] = c->slot;
	for (uint32_t i = b->n; i < b->n + n; i++) {
		b->items[i] = b->sqes[i].item;
		b->flags[i] = b->sqes[i].flags;
		b->conn[i] = c->slot;
		b->domain[i] = c->domain->slot;
	}
	b->n += n;
}

static int may_take(const struct vyre_conn *c)
{
	return c->state == VYRE_CONN_ACTIVE && !c->busy && !c->drop_reason;
}

/*
 * Which clients are ready (their next SQE published, no batch in flight),
 * how many of them this batch takes, and each one's share of it. Ready
 * clients are spread over the free slots (this one included), so that small
 * items of different clients run side by side, each batch small enough for
 * the backend's fast path, rather than wait for each other in one batch;
 * not where every batch costs a launch of its own (d->spread).
 * Within a batch of several clients each gets an equal part of it, but
 * never less than --min-share items; a lone client may fill it.
 */
static uint32_t plan_shares(struct vyre_daemon *d, uint32_t cap, uint32_t n, uint32_t *clients,
			    uint32_t *share)
{
	const uint32_t free_slots = d->n_slots - d->n_running;
	uint32_t ready = 0;

	/* the ready ones move to the front of the snapshot, in order: only they are taken from */
	for (uint32_t k = 0; k < n; k++) {
		const uint32_t slot = d->active_snapshot[k];
		const struct vyre_conn *c = &d->conns[slot];

		if (may_take(c) && vyre_sq_published(&c->sq))
			d->active_snapshot[ready++] = slot;
	}
	*clients = ready > free_slots ? ready / free_slots + (ready % free_slots != 0) : 1;
	if (!d->spread)
		*clients = ready;
	*share = cap;
	if (*clients > 1 && ready > 1) {
		const uint32_t parts = *clients < ready ? *clients : ready;
		const uint32_t even = cap / parts + (cap % parts != 0);

		*share = even > d->cfg.min_share ? even : d->cfg.min_share;
	}
	return ready;
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
	 * slots, and touching each cost about a microsecond per batch.
	 */
	for (uint32_t k = 0; k < n; k++)
		d->active_snapshot[k] = d->active[(d->rr_cursor + k) % n];
	uint32_t clients, share;
	const uint32_t ready = plan_shares(d, b->cap, n, &clients, &share);

	/* timed from here: a pass that finds nobody ready (most, while polling) reads no clock */
	if (ready)
		b->drain_ns = vyre_now_ns();
	for (uint32_t k = 0; k < ready && b->n < b->cap && b->n_touched < clients; k++)
		take(d, b, &d->conns[d->active_snapshot[k]], share);
	/* Start one client later next time, so a busy client cannot starve the others. */
	d->rr_cursor++;
	b->stats.items_in = b->n;
	b->stats.clients = b->n_touched;
	vyre_trace_pressure(d);
}
