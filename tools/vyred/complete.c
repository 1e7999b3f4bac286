/* SPDX-License-Identifier: MIT */
/*
 * Complete: one CQE per accepted item, written to its client's CQ at the
 * positions its batch was given at accept, in acceptance order, and the
 * client's CQ tail published with a wake-up if it sleeps. A client may have
 * several batches in flight (--client-batches, docs/design.md 8.6): a batch
 * that finishes before an earlier one of its client writes its CQEs past
 * the tail, where the client reads nothing, and waits in c->held; the tail
 * moves over it once the earlier batches' CQEs are written. So a client's
 * CQEs are published in submission order, a FENCE item's after every
 * earlier one of its client, and the batch's slot is free at once.
 *
 * Accept: each client's items of the batch get their CQ positions, after
 * those of its batches in flight (its CQ credit covers them all), and count
 * as one more batch of it; a resumable client's sq_accepted covers them
 * before the backend may start one, so that a vyred that takes the client
 * over after a crash knows what may have run (docs/design.md section 3).
 *
 * Release: each client's SQ head advances by what was accepted (the items
 * are copied; a resumable client's private head only: its sq_head follows
 * its published CQEs), its cq_head is read and checked (the drain trusted
 * the last value), the first CQ slots of the batch are written with their
 * user_data, and --accept-log records the items in acceptance order, which
 * is dispatch order. The dispatch stage calls it right after the backend
 * started, so that the stores which must take lines from the clients'
 * caches happen while the device runs, not after; never before the
 * doorbell, whose stores would queue behind them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chains.h"
#include "complete.h"
#include "conns.h"
#include "daemon.h"
#include "log.h"
#include "trace.h"

static uint32_t log2_bucket(uint64_t ns)
{
	return ns ? 64u - (uint32_t)__builtin_clzll(ns) : 0;
}

/*
 * An item the planner let through that ran into VYRE_E_INVAL (a DFA table
 * found malformed): invalid, not executed (docs/design.md 9). A deduplicated
 * item is deduplicated whatever its source's outcome.
 */
static int exec_invalid(const struct vyre_batch *b, uint32_t i, const struct vyre_cqe *cqe)
{
	return cqe->status == VYRE_E_INVAL && b->status[i] == 0 && !(cqe->flags & VYRE_CQE_DEDUPED);
}

/* The final status of item @i, which failed or ran (chained items are never deduplicated). */
static int32_t outcome(const struct vyre_batch *b, uint32_t i)
{
	return b->status[i] != 0 ? b->status[i] : b->results[i].status;
}

static void fill_cqe(const struct vyre_batch *b, uint32_t i, uint64_t now, struct vyre_cqe *cqe)
{
	uint32_t j = b->dedup_of[i];

	cqe->user_data = b->cqe_src[i].user_data;
	cqe->complete_ns = now;
	cqe->flags = 0;
	if (b->status[i] != 0) {
		/*
		 * A static failure after an item of its chain that failed when it
		 * ran: run in order, it would never have been looked at.
		 */
		cqe->status = vyre_chain_continues(b, i) && outcome(b, i - 1) != 0 ? VYRE_E_CANCELED
										   : b->status[i];
		cqe->result = 0;
	} else if (j != VYRE_PLAN_NO_DEDUPE) {
		cqe->status = b->results[j].status;
		cqe->result = b->results[j].result;
		cqe->flags = VYRE_CQE_DEDUPED;
	} else {
		cqe->status = b->results[i].status;
		cqe->result = b->results[i].result;
	}
}

void vyre_stage_accept(struct vyre_daemon *d, struct vyre_batch *b)
{
	for (uint32_t t = 0; t < b->n_touched; t++) {
		struct vyre_conn *c = &d->conns[b->touched[t]];
		const uint32_t n = b->count[t];

		if (n == 0)
			continue;
		/* c->inflight: its items of earlier batches not published, then these */
		b->cq_pos[t] = c->cq.tail + (c->inflight - n);
		if (++c->batches > d->most_client)
			d->most_client = c->batches;
		if (c->resumable)
			__atomic_store_n(&c->region.hdr->sq_accepted, c->sq.head + n,
					 __ATOMIC_RELEASE);
	}
}

/*
 * --accept-log lines, written whole: the GPU workers of one vyred append
 * to the same file, and a write() of whole lines to a file opened for
 * appending never interleaves with another's.
 */
struct accept_lines {
	int fd;
	size_t len;
	char buf[16384];
};

static void accept_flush(struct accept_lines *al)
{
	if (al->len && write(al->fd, al->buf, al->len) < 0)
		vyre_log("--accept-log: %s", strerror(errno));
	al->len = 0;
}

static void accept_line(struct accept_lines *al, uint32_t id, uint64_t user_data)
{
	if (al->len + 32 > sizeof(al->buf))
		accept_flush(al);
	al->len += (size_t)snprintf(al->buf + al->len, sizeof(al->buf) - al->len,
				    "%" PRIu32 " %" PRIu64 "\n", id, user_data);
}

/* CQEs per client whose slot lines vyre_stage_release brings in early. */
#define STAGED_CQES 4u

void vyre_stage_release(struct vyre_daemon *d, struct vyre_batch *b)
{
	struct accept_lines al; /* its buffer is not cleared: a batch's lines fill it */

	al.fd = d->accept_log ? fileno(d->accept_log) : -1;
	al.len = 0;
	if (b->released)
		return;
	b->released = 1;
	for (uint32_t t = 0; t < b->n_touched; t++) {
		struct vyre_conn *c = &d->conns[b->touched[t]];
		const uint32_t n = b->count[t], first = b->first[t];
		const uint32_t ahead = b->cq_pos[t] - c->cq.tail;

		if (n == 0)
			continue;
		/* a resumable client's SQEs stay until their CQEs are published (section 3) */
		if (c->resumable)
			vyre_sq_take(&c->sq, n);
		else
			vyre_sq_release(&c->sq, n);
		/* once garbage, always: an earlier batch's CQEs are not safe to post either */
		c->cq_garbage |= vyre_cq_space(&c->cq) < 0;
		for (uint32_t k = 0; k < n && k < STAGED_CQES; k++)
			vyre_cq_stage(&c->cq, ahead + k, b->cqe_src[first + k].user_data);
		for (uint32_t k = 0; d->accept_log && k < n; k++)
			accept_line(&al, c->id, b->cqe_src[first + k].user_data);
	}
	accept_flush(&al);
}

/*
 * @n CQEs written at @c's CQ tail: the tail moves past them, and past the
 * batches of @c that finished before and were held for them; then it is
 * published, and a resumable client's sq_head follows it (section 3).
 */
static void publish(struct vyre_daemon *d, struct vyre_conn *c, uint32_t n)
{
	for (;;) {
		vyre_cq_advance(&c->cq, n);
		c->inflight -= n;
		c->batches--;
		uint32_t h = 0;

		while (h < c->n_held && c->held[h].pos != c->cq.tail)
			h++;
		if (h == c->n_held)
			break;
		n = c->held[h].n;
		c->held[h] = c->held[--c->n_held];
	}
	if (vyre_cq_flush(&c->cq) & VYRE_CQ_WAKE_EVENTFD)
		vyre_conn_wake_later(d, c);
	/* CQEs first: sq_head never passes cq_tail; c->inflight are the accepted, unpublished */
	if (c->resumable)
		vyre_sq_store_head(&c->sq, c->sq.head - c->inflight);
}

/* CQEs ahead whose CQ slot (a line the client last read) is fetched for writing. */
#define CQE_AHEAD 8u

/*
 * Ask for @p's line in a state to be written: the client's copy of a CQ
 * line is invalidated ahead of the store instead of at it. GCC makes
 * __builtin_prefetch(p, 1) a plain read prefetch unless built for PRFCHW;
 * PREFETCHW is a no-op on x86-64 processors without it.
 */
static inline void prefetch_to_write(const void *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1);
#endif
}

/* Write @c's CQEs of @b (the @t-th client of it) at their CQ positions. */
static void write_cqes(struct vyre_batch *b, uint32_t t, struct vyre_conn *c, uint64_t now,
		       struct vyre_trace_cqes *tc)
{
	struct vyre_batch_stats *st = &b->stats;
	const uint32_t ahead = b->cq_pos[t] - c->cq.tail;

	for (uint32_t k = 0; k < b->count[t]; k++) {
		const uint32_t i = b->first[t] + k;
		struct vyre_cqe cqe;

		if (k + CQE_AHEAD < b->count[t])
			prefetch_to_write(
			    &c->cq.cq[(c->cq.tail + ahead + k + CQE_AHEAD) & c->cq.mask]);

		fill_cqe(b, i, now, &cqe);
		vyre_cq_post_at(&c->cq, ahead + k, &cqe);
		vyre_trace_cqe(tc, &b->sqes[i], &cqe);
		if (cqe.status != 0) {
			st->errors++;
			st->exec_invalid += exec_invalid(b, i, &cqe);
		}
		const uint64_t submit_ns = b->cqe_src[i].submit_ns;
		uint64_t lat = now > submit_ns ? now - submit_ns : 0;
		uint32_t bucket = log2_bucket(lat);

		st->latency_log2[bucket < VYRE_LATENCY_BUCKETS ? bucket
							       : VYRE_LATENCY_BUCKETS - 1]++;
	}
}

void vyre_stage_complete(struct vyre_daemon *d, struct vyre_batch *b, uint64_t now)
{
	struct vyre_trace_cqes tc;

	vyre_stage_release(d, b);
	vyre_trace_cqes_begin(&tc, d, b);
	for (uint32_t t = 0; t < b->n_touched; t++) {
		struct vyre_conn *c = &d->conns[b->touched[t]];
		const uint32_t n = b->count[t];

		if (n == 0)
			continue;
		if (c->state != VYRE_CONN_ACTIVE) {
			/* it left while its batch ran: nobody reads these CQEs */
			c->inflight -= n;
			vyre_conn_batch_done(d, c);
			continue;
		}
		if (c->cq_garbage) {
			/* its cq_head claims CQEs never posted: no CQE is safe to post */
			c->inflight -= n;
			c->batches--;
			vyre_conn_drop_later(d, c, VYRE_E_PROTO, vyre_bad_ring_index);
			continue;
		}
		write_cqes(b, t, c, now, &tc);
		vyre_trace_client_done(&tc, c);
		c->items_done += n;
		if (b->cq_pos[t] == c->cq.tail)
			publish(d, c, n);
		else
			c->held[c->n_held++] = (struct vyre_held){b->cq_pos[t], n};
	}
	vyre_trace_cqes_end(&tc, b->stats.exec_invalid);
}
