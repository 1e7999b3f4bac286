/* SPDX-License-Identifier: MIT */
/*
 * Drain: copy published SQEs out of every active client's SQ into the batch.
 * A client gets at most as many items as it has free CQ slots not already
 * promised to items in flight, so its CQ can never overflow. The shared
 * sq_head is not advanced here: only for what the plan stage accepts.
 *
 * With batches in flight:
 * - a client with --client-batches of them is skipped until one is done;
 * - a client's items are taken up to the first one that has a hazard with
 *   an in-flight item (hazards.h), its own earlier batches' included, so
 *   batches in different slots never depend on each other and the first
 *   batch's items still come first in acceptance order; and, while it has a
 *   batch in flight, up to its first FENCE item, which depends on every
 *   earlier item of its client (docs/design.md 7.2) and so starts a batch
 *   once they are done (complete.c posts a client's CQEs in order);
 * - ready clients are spread over the free slots, those with fewer batches
 *   in flight first, and when a batch takes several clients each gets a fair
 *   share of it, so one that floods cannot fill every batch;
 * - with clients of several priority classes in the loop, a batch takes
 *   the highest class that has items ready (take_classes).
 *
 * Chains (docs/design.md section 6.3) are taken whole: a client's take ends
 * where a chain ends, and a chain whose last item is not published yet is
 * not taken. One that can never be taken whole (longer than a batch, the
 * client's CQ or its SQ) fails as a whole, in as many pieces as its CQ
 * credit needs.
 */
#include "conns.h"
#include "daemon.h"
#include "drain.h"
#include "hazards.h"
#include "trace.h"

/*
 * Of the @got SQEs copied at b->n, the prefix before the first FENCE while
 * @c has a batch in flight, and (with @hazards) before the first that has a
 * hazard against an in-flight item (then *held is 1). Each SQE of it is
 * copied into the batch's arrays as it is checked: one pass over the
 * copies, not one for the FENCE, one for the hazards and one to copy.
 * What is copied past the part the take keeps, the next take overwrites.
 */
static uint32_t take_prefix(const struct vyre_daemon *d, struct vyre_batch *b,
			    const struct vyre_conn *c, uint32_t got, int hazards, int *held)
{
	const uint32_t fence = c->batches ? VYRE_SQE_FENCE : 0u;
	const uint32_t at = b->n;
	uint32_t k = 0;

	hazards = hazards && d->n_running != 0;
	*held = 0;
	for (; k < got; k++) {
		const uint32_t i = at + k;
		const struct vyre_sqe *s = &b->sqes[i];
		const int mask = vyre_op_operands(s->item.op_handle);

		if (s->flags & fence)
			break;
		if (hazards) {
			if (k + VYRE_HAZARDS_AHEAD < got)
				vyre_hazards_prefetch(&d->hazards,
						      &b->sqes[i + VYRE_HAZARDS_AHEAD].item);
			if (vyre_hazards_conflict_mask(&d->hazards, s, mask)) {
				*held = 1;
				break;
			}
		}
		b->items[i] = s->item;
		b->cqe_src[i] = (struct vyre_cqe_src){s->user_data, s->submit_ns};
		b->flags[i] = s->flags;
		/* vyre_sqe_aux */
		b->aux[i] = mask > 0 && (mask & VYRE_OPERAND_AUX) ? s->aux_handle : 0;
		b->conn[i] = c->slot;
		b->domain[i] = c->domain->slot;
	}
	return k;
}

/*
 * Free CQ slots not promised to items in flight. cq_head is the client's
 * line, and reading it costs a transfer before the batch can start: the
 * last value is used unless it gives less than @need. The release stage
 * reads it again while the batch runs and drops a client that wrote
 * garbage there. Returns -1 after dropping the client.
 */
static int64_t cq_credit(struct vyre_daemon *d, struct vyre_conn *c, uint32_t need)
{
	uint32_t space = vyre_cq_space_seen(&c->cq);
	uint32_t credit = space > c->inflight ? space - c->inflight : 0;

	if (credit < need) {
		int fresh = vyre_cq_space(&c->cq);

		if (fresh < 0) {
			vyre_conn_drop_later(d, c, VYRE_E_PROTO, vyre_bad_ring_index);
			return -1;
		}
		credit = (uint32_t)fresh > c->inflight ? (uint32_t)fresh - c->inflight : 0;
	}
	return credit;
}

/* The longest prefix of @n copied SQEs that ends with a whole chain. */
static uint32_t whole_chains(const struct vyre_sqe *s, uint32_t n)
{
	while (n > 0 && (s[n - 1].flags & VYRE_SQE_CHAIN))
		n--;
	return n;
}

/* Longest chain a client can ever have taken: one batch, its CQ, its SQ. */
static uint32_t chain_limit(const struct vyre_daemon *d, const struct vyre_conn *c)
{
	uint32_t limit = d->cfg.max_batch < c->cq.entries ? d->cfg.max_batch : c->cq.entries;

	return limit < c->sq.entries ? limit : c->sq.entries;
}

/*
 * Of the @got SQEs copied at b->n, the part of a chain that can never be
 * taken whole, taken already failed: its first item with @first (VYRE_E_INVAL
 * where the chain starts, VYRE_E_CANCELED for a later piece), the rest with
 * VYRE_E_CANCELED, up to its last item. When that is not among them, the
 * client's next take goes on cancelling.
 */
static uint32_t take_failed(struct vyre_batch *b, struct vyre_conn *c, uint32_t got, int32_t first)
{
	uint32_t k = 0;

	while (k < got && (b->sqes[b->n + k].flags & VYRE_SQE_CHAIN))
		k++;
	c->chain_cancel = k == got;
	k = k == got ? got : k + 1;
	for (uint32_t i = 0; i < k; i++)
		b->status[b->n + i] = i ? VYRE_E_CANCELED : first;
	return k;
}

/*
 * The client's first chain did not fit what was copied: how long is it?
 * Not all published: wait. Longer than it can ever be taken: fail it. Else
 * it is taken alone when the CQ credit and the batch's room (beyond the
 * client's fair share, so a long chain is not starved) hold it; otherwise
 * it waits for the client to reap, or for a batch it comes first in.
 */
static uint32_t take_first_chain(struct vyre_daemon *d, struct vyre_batch *b, struct vyre_conn *c,
				 uint32_t got)
{
	const uint32_t limit = chain_limit(d, c);
	const uint32_t len = vyre_sq_chain_length(&c->sq, limit, VYRE_SQE_CHAIN);
	int held;

	if (len == 0)
		return 0;
	if (len > limit)
		return take_failed(b, c, got, VYRE_E_INVAL);
	int64_t credit = cq_credit(d, c, len);

	if (credit < len || len > b->cap - b->n)
		return 0;
	got = (uint32_t)vyre_sq_peek(&c->sq, &b->sqes[b->n], len);
	uint32_t n = take_prefix(d, b, c, got, 1, &held);
	uint32_t k = whole_chains(&b->sqes[b->n], n);

	d->hazard_holds += (uint64_t)held;
	for (uint32_t i = b->n; i < b->n + k; i++)
		b->status[i] = 0;
	return k;
}

/*
 * Whole chains out of the @n SQEs copied at b->n that take_prefix kept,
 * none with a hazard in flight; @held: a hazard ended them.
 */
static uint32_t take_chains(struct vyre_daemon *d, struct vyre_batch *b, struct vyre_conn *c,
			    uint32_t n, int held)
{
	uint32_t k = whole_chains(&b->sqes[b->n], n);

	d->hazard_holds += (uint64_t)held;
	if (k == 0 && !held)
		return take_first_chain(d, b, c, n);
	for (uint32_t i = b->n; i < b->n + k; i++)
		b->status[i] = 0;
	return k;
}

static void take(struct vyre_daemon *d, struct vyre_batch *b, struct vyre_conn *c, uint32_t share)
{
	const uint32_t left = b->cap - b->n;
	const uint32_t room = left < share ? left : share;
	const int64_t credit = cq_credit(d, c, room);
	int held;

	if (credit < 0)
		return;
	uint32_t want = (uint32_t)credit < room ? (uint32_t)credit : room;

	if (want == 0)
		return;
	int got = vyre_sq_peek(&c->sq, &b->sqes[b->n], want);

	if (got <= 0)
		return;
	/* a failed chain's rest is taken whatever its hazards */
	const uint32_t m = take_prefix(d, b, c, (uint32_t)got, !c->chain_cancel, &held);

	/* nothing before a FENCE: as if nothing was published */
	if (m == 0 && !held)
		return;
	c->chain_cancel_was = c->chain_cancel;
	uint32_t n =
	    c->chain_cancel ? take_failed(b, c, m, VYRE_E_CANCELED) : take_chains(d, b, c, m, held);

	if (n == 0)
		return;
	c->inflight += n;
	b->first[b->n_touched] = b->n;
	b->count[b->n_touched] = n;
	b->touched[b->n_touched++] = c->slot;
	b->n += n;
}

/*
 * @c's first published SQE waits for a batch in flight: a FENCE behind its
 * client's own (@fence), or one with a hazard against any in-flight item.
 */
static int first_waits(const struct vyre_daemon *d, struct vyre_conn *c, int fence)
{
	struct vyre_sqe s;

	if (d->n_running == 0 || vyre_sq_peek(&c->sq, &s, 1) != 1)
		return 0;
	if (fence)
		return c->batches && (s.flags & VYRE_SQE_FENCE);
	return vyre_hazards_conflict(&d->hazards, &s);
}

int vyre_drain_ready(const struct vyre_daemon *d, struct vyre_conn *c, uint32_t credit)
{
	const uint32_t limit = chain_limit(d, c);
	uint32_t len;

	/* what waits for a batch in flight is not work: that batch's completion wakes the loop */
	if (first_waits(d, c, 1))
		return 0;
	if (c->chain_cancel)
		return 1; /* a failed chain's rest is taken whatever its hazards */
	if (first_waits(d, c, 0))
		return 0;
	len = vyre_sq_chain_length(&c->sq, limit, VYRE_SQE_CHAIN);
	return len != 0 && (len > limit || len <= credit);
}

static int may_take(const struct vyre_daemon *d, const struct vyre_conn *c)
{
	return c->state == VYRE_CONN_ACTIVE && c->batches < d->client_batches && !c->drop_reason;
}

/*
 * How many of the ready clients a batch with room for @cap items takes, and
 * each one's share of it. Ready clients are spread over the free slots
 * (this one included), so that small items of different clients run side
 * by side, each batch small enough for the backend's fast path, rather than
 * wait for each other in one batch; not where every batch costs a launch of
 * its own (d->spread): then one batch takes all @ready. The spread counts
 * the @first ready clients, those with the fewest batches in flight, so a
 * client with a batch in flight gets another slot only when one is left
 * after them. Within a batch of several clients each gets an equal part of
 * it, but never less than --min-share items; a lone client may fill it.
 */
static void shares(const struct vyre_daemon *d, uint32_t first, uint32_t ready, uint32_t cap,
		   uint32_t *clients, uint32_t *share)
{
	const uint32_t free_slots = d->n_slots - d->n_running;

	*clients = first > free_slots ? first / free_slots + (first % free_slots != 0) : 1;
	if (!d->spread)
		*clients = ready;
	*share = cap;
	if (*clients > 1 && ready > 1) {
		const uint32_t parts = *clients < ready ? *clients : ready;
		const uint32_t even = cap / parts + (cap % parts != 0);

		*share = even > d->cfg.min_share ? even : d->cfg.min_share;
	}
}

/*
 * Which clients are ready (their next SQE published, fewer than
 * --client-batches batches in flight): d->ready lists them in round-robin
 * order, those with fewer batches in flight first, and only they are taken
 * from. *first: how many have the fewest.
 */
static uint32_t ready_clients(struct vyre_daemon *d, uint32_t n, uint32_t *first)
{
	uint32_t ready = 0, busy = 0;

	for (uint32_t k = 0; k < n; k++) {
		const uint32_t slot = d->active_snapshot[k];
		const struct vyre_conn *c = &d->conns[slot];

		if (!may_take(d, c) || !vyre_sq_published(&c->sq))
			continue;
		if (c->batches == 0)
			d->ready[ready++] = slot;
		else
			d->active_snapshot[busy++] = slot; /* busy <= k: read already */
	}
	*first = ready;
	/* the rest by their count of batches in flight, each count in round-robin order */
	for (uint32_t tier = 1; ready < *first + busy && tier < d->client_batches; tier++) {
		const uint32_t before = ready;

		for (uint32_t k = 0; k < busy; k++)
			if (d->conns[d->active_snapshot[k]].batches == tier)
				d->ready[ready++] = d->active_snapshot[k];
		if (*first == 0)
			*first = ready - before;
	}
	return ready;
}

/*
 * Clients of several priority classes in this loop (priority.h): a batch
 * holds one class, the highest whose ready clients give it items, taken by
 * the rules of shares(); a lower class gets the batch only when the classes
 * above it leave it empty. Below the loop's top class a batch takes at most
 * --priority-batch items, so an item of a higher class never waits long for
 * the batch ahead of it; and a batch of the lowest class present does not
 * take the last free slot (unless the loop has one only): that one is kept
 * for a higher class. While a batch of a class runs, no lower class is
 * taken: the loop's time would go to lowering and posting the lower batch
 * while the higher one's completion waits to be seen (measured on the H100:
 * a class-1 item's p50 under a class-0 flood went from 77 to 49 us).
 */
static void take_classes(struct vyre_daemon *d, struct vyre_batch *b, uint32_t ready)
{
	const struct vyre_classes *k = &d->classes;
	uint32_t n_ready[VYRED_CLASSES] = {0}, n_first[VYRED_CLASSES] = {0}, floor = k->low;
	uint32_t fewest[VYRED_CLASSES] = {0};

	for (uint32_t cls = k->top; cls > k->low; cls--)
		if (d->running_class[cls]) {
			floor = cls;
			break;
		}

	/* d->ready has the fewest batches in flight first: a class's first client has its fewest */
	for (uint32_t i = 0; i < ready; i++) {
		const struct vyre_conn *c = &d->conns[d->ready[i]];

		if (n_ready[c->priority]++ == 0)
			fewest[c->priority] = c->batches;
		n_first[c->priority] += c->batches == fewest[c->priority];
	}
	for (uint32_t cls = k->top + 1; cls-- > floor && b->n == 0;) {
		if (!n_ready[cls])
			continue;
		if (cls == k->low && d->n_slots - d->n_running == 1 && d->n_slots > 1)
			return;
		const uint32_t room =
		    cls < k->top && d->cfg.priority_batch < b->cap ? d->cfg.priority_batch : b->cap;
		uint32_t clients, share;

		shares(d, n_first[cls], n_ready[cls], room, &clients, &share);
		b->priority = cls;
		for (uint32_t i = 0; i < ready && b->n < room && b->n_touched < clients; i++) {
			struct vyre_conn *c = &d->conns[d->ready[i]];

			if (c->priority == cls)
				take(d, b, c, share < room - b->n ? share : room - b->n);
		}
	}
}

void vyre_stage_drain(struct vyre_daemon *d, struct vyre_batch *b)
{
	const uint32_t n = d->n_active;

	b->n = 0;
	b->n_touched = 0;
	b->n_accepted = 0;
	b->priority = d->classes.top;
	if (d->rr_cursor >= n)
		d->rr_cursor = 0;
	/*
	 * Only active connections are walked: the table has max-clients + 16
	 * slots, and touching each cost about a microsecond per batch.
	 */
	for (uint32_t k = 0; k < n; k++)
		d->active_snapshot[k] = d->active[(d->rr_cursor + k) % n];
	uint32_t first;
	const uint32_t ready = ready_clients(d, n, &first);

	/* timed from here: a pass that finds nobody ready (most, while polling) reads no clock */
	if (ready)
		b->drain_ns = vyre_now_ns();
	if (d->classes.mixed) {
		take_classes(d, b, ready);
	} else if (ready) {
		uint32_t clients, share;

		shares(d, first, ready, b->cap, &clients, &share);
		for (uint32_t k = 0; k < ready && b->n < b->cap && b->n_touched < clients; k++)
			take(d, b, &d->conns[d->ready[k]], share);
	}
	/* Start one client later next time, so a busy client cannot starve the others. */
	d->rr_cursor++;
	b->stats.items_in = b->n;
	b->stats.clients = b->n_touched;
	vyre_trace_pressure(d);
}
