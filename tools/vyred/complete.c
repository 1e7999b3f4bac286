/* SPDX-License-Identifier: MIT */
/*
 * Complete: one CQE per accepted item, posted to its client's CQ in
 * acceptance order (so a FENCE item's CQE always follows every earlier one
 * of its client: a client's earlier items were in an earlier batch, which
 * completed before this one was drained), and each client's CQ tail is
 * published with a wake-up if it sleeps.
 *
 * Accept: a resumable client's sq_accepted covers its items of the batch
 * before the backend may start one, so that a vyred that takes the client
 * over after a crash knows what may have run (docs/design.md section 3).
 *
 * Release: each client's SQ head advances (a resumable client's only when
 * its CQEs are posted) by what was accepted (the items
 * are copied), its cq_head is read and checked (the drain trusted the last
 * value), the first CQ slots of the batch are written with their user_data,
 * and --accept-log records the items in acceptance order, which is dispatch
 * order. The dispatch stage calls it right after the backend started, so
 * that the stores which must take lines from the clients' caches happen
 * while the device runs, not after; never before the doorbell, whose stores
 * would queue behind them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chains.h"
#include "daemon.h"
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

	cqe->user_data = b->sqes[i].user_data;
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

void vyre_stage_accept(struct vyre_daemon *d, const struct vyre_batch *b)
{
	if (d->n_resumable == 0)
		return;
	for (uint32_t t = 0; t < b->n_touched; t++) {
		struct vyre_conn *c = &d->conns[b->touched[t]];

		if (c->resumable && c->batch_count)
			__atomic_store_n(&c->region.hdr->sq_accepted, c->sq.head + c->batch_count,
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
		const uint32_t n = c->batch_count;

		if (n == 0)
			continue;
		/* a resumable client's SQEs stay until their CQEs are posted (section 3) */
		if (!c->resumable)
			vyre_sq_release(&c->sq, n);
		c->cq_garbage = vyre_cq_space(&c->cq) < 0;
		for (uint32_t k = 0; k < n && k < STAGED_CQES; k++)
			vyre_cq_stage(&c->cq, k, b->sqes[c->batch_first + k].user_data);
		for (uint32_t k = 0; d->accept_log && k < n; k++)
			accept_line(&al, c->id, b->sqes[c->batch_first + k].user_data);
	}
	accept_flush(&al);
}

void vyre_stage_complete(struct vyre_daemon *d, struct vyre_batch *b, uint64_t now)
{
	struct vyre_batch_stats *st = &b->stats;
	struct vyre_trace_cqes tc;

	vyre_stage_release(d, b);
	vyre_trace_cqes_begin(&tc, d, b);
	for (uint32_t t = 0; t < b->n_touched; t++) {
		struct vyre_conn *c = &d->conns[b->touched[t]];
		uint32_t n = c->batch_count;

		if (n == 0)
			continue;
		if (c->state != VYRE_CONN_ACTIVE) {
			/* it left while its batch ran: nobody reads these CQEs */
			c->inflight -= n;
			vyre_conn_batch_done(d, c);
			continue;
		}
		c->busy = 0;
		if (c->cq_garbage) {
			/* its cq_head claims CQEs never posted: no CQE is safe to post */
			c->inflight -= n;
			vyre_conn_drop_later(d, c, VYRE_E_PROTO, vyre_bad_ring_index);
			continue;
		}
		for (uint32_t i = c->batch_first; i < c->batch_first + n; i++) {
			struct vyre_cqe cqe;

			fill_cqe(b, i, now, &cqe);
			vyre_cq_post(&c->cq, &cqe);
			vyre_trace_cqe(&tc, b->sqes[i].submit_ns, &cqe);
			if (cqe.status != 0) {
				st->errors++;
				st->exec_invalid += exec_invalid(b, i, &cqe);
			}
			uint64_t lat = now > b->sqes[i].submit_ns ? now - b->sqes[i].submit_ns : 0;

			uint32_t bucket = log2_bucket(lat);

			st->latency_log2[bucket < VYRE_LATENCY_BUCKETS
					     ? bucket
					     : VYRE_LATENCY_BUCKETS - 1]++;
		}
		vyre_trace_client_done(&tc, c);
		c->inflight -= n;
		c->items_done += n;
		if (vyre_cq_flush(&c->cq) & VYRE_CQ_WAKE_EVENTFD)
			vyre_conn_wake_later(d, c);
		if (c->resumable)
			vyre_sq_release(&c->sq, n);
	}
	vyre_trace_cqes_end(&tc, st->exec_invalid);
}
