/* SPDX-License-Identifier: MIT */
/*
 * ring/ring.h - the SQ/CQ rings of a shared-memory region.
 *
 * The primitives under the client library and vyred, exposed on their own so
 * benchmarks can drive them across processes without a daemon. Layout and
 * protocol are those of include/vyre/abi.h. The regions (region.h,
 * region_create.h, region_adopt.h) and the doorbells (doorbell.h) have
 * headers of their own, included here because the rings live in a region
 * and ring its doorbells, and so one include still gives every primitive.
 *
 * NAME
 *	vyre_region_layout, vyre_region_create, vyre_region_map,
 *	vyre_region_unmap - create and map a client region (region.h,
 *	region_create.h)
 *
 *	vyre_sq_producer_init, vyre_sq_reserve, vyre_sq_slot, vyre_sq_publish,
 *	vyre_sq_push, vyre_sq_kick - the multi-producer side of the SQ
 *
 *	vyre_sq_consumer_init, vyre_sq_peek, vyre_sq_release, vyre_sq_take,
 *	vyre_sq_store_head, vyre_sq_pending - vyred's side of the SQ (treats
 *	the region as hostile)
 *
 *	vyre_cq_producer_init, vyre_cq_space, vyre_cq_post, vyre_cq_post_at,
 *	vyre_cq_advance, vyre_cq_flush - vyred's side of the CQ
 *
 *	vyre_cq_consumer_init, vyre_cq_reap, vyre_cq_ready - the client's side
 *
 *	vyre_sleep_prepare, vyre_sleep_finish, vyre_wake, vyre_futex_wait,
 *	vyre_futex_wake - the need-wakeup + shared futex doorbell protocol
 *	(doorbell.h)
 *
 * THREADS AND PROCESSES
 *	Every producer of one SQ may run in any thread of any process mapping
 *	the region; each thread uses the same struct vyre_sq_producer or its
 *	own copy (the cached head is only a hint). The SQ consumer, the CQ
 *	producer and the CQ consumer are single-threaded objects.
 *
 * ERRORS
 *	Functions returning int return 0 or a count on success and a negative
 *	VYRE_E_* value on failure. VYRE_E_PROTO from a consumer or producer
 *	owned by vyred means the other process wrote an impossible index: the
 *	caller drops that client.
 */
#ifndef VYRE_RING_RING_H
#define VYRE_RING_RING_H

#include <stdint.h>

#include "doorbell.h"
#include "region.h"
#include "region_adopt.h"
#include "region_create.h"
#include "vyre/abi.h"
#include "vyre/vyre.h"

/*
 * vyre_ring_entries - the ring size for a request: 0 gives @dflt, anything
 * else is rounded up to a power of two. Returns 0 when the result would
 * exceed VYRE_MAX_RING_ENTRIES.
 */
uint32_t vyre_ring_entries(uint32_t requested, uint32_t dflt);

/* ---- SQ, producer side (clients; any number of threads) ---- */

struct vyre_sq_producer {
	struct vyre_region_header *hdr;
	struct vyre_sqe *sq;
	uint32_t mask;
	uint32_t entries;
	uint32_t cached_head; /* accessed atomically: a lower bound of sq_head */
	int wake_fd;	      /* eventfd rung when vyred sleeps in eventfd mode, or -1 */
};

void vyre_sq_producer_init(struct vyre_sq_producer *p, const struct vyre_region *r, int wake_fd);

/*
 * vyre_sq_reserve - claim between @min and @want consecutive slots (CAS on
 * sq_tail). *pos gets the first position. Returns the count claimed, or
 * VYRE_E_AGAIN when fewer than @min are free (nothing was claimed). Every
 * claimed slot must then be filled and published.
 */
int vyre_sq_reserve(struct vyre_sq_producer *p, uint32_t want, uint32_t min, uint32_t *pos);

/* vyre_sq_slot - the slot of position @pos, to fill before publishing it. */
static inline struct vyre_sqe *vyre_sq_slot(const struct vyre_sq_producer *p, uint32_t pos)
{
	return &p->sq[pos & p->mask];
}

/* vyre_sq_publish - make slot @pos visible: stores seq = pos + 1 with release. */
void vyre_sq_publish(struct vyre_sq_producer *p, uint32_t pos);

/*
 * vyre_sq_push - reserve, copy and publish up to @n entries (their seq fields
 * are ignored). With @all set it pushes all @n or none. Returns the count
 * pushed or VYRE_E_AGAIN. Does not ring the doorbell: call vyre_sq_kick.
 */
int vyre_sq_push(struct vyre_sq_producer *p, const struct vyre_sqe *src, uint32_t n, int all);

/*
 * vyre_sq_kick - after publishing: if vyred asked to be woken, bump the SQ
 * doorbell and wake it (futex and/or eventfd). Costs one shared load and no
 * syscall while vyred is awake. Returns the need-wakeup bits it acted on
 * (0: vyred was awake).
 */
int vyre_sq_kick(struct vyre_sq_producer *p);

/* ---- SQ, consumer side (vyred; the region is hostile) ---- */

struct vyre_sq_consumer {
	struct vyre_region_header *hdr;
	const struct vyre_sqe *sq;
	uint32_t mask;
	uint32_t entries;
	uint32_t head; /* private: never read back from the region */
};

void vyre_sq_consumer_init(struct vyre_sq_consumer *c, const struct vyre_region *r);

/*
 * vyre_sq_peek - copy up to @max (at most one ring of) published entries
 * starting at the private head into @out, in order, stopping at the first
 * slot whose seq marker is not its position + 1. Reads no shared index, so
 * a polling consumer does not contend with the producers' sq_tail. Does not
 * consume: vyre_sq_release does. Returns the count (never an error: garbage
 * indices are vyre_sq_pending's to report).
 */
int vyre_sq_peek(struct vyre_sq_consumer *c, struct vyre_sqe *out, uint32_t max);

/*
 * vyre_sq_chain_length - how long the chain at the private head is (docs/
 * design.md section 6.3): the entries up to and including the first one
 * whose flags lack @flag, all published. 0 when an unpublished slot comes
 * first; @max + 1 when the first @max entries all carry @flag (@max is at
 * most one ring). The client may rewrite its slots at any time, so this is
 * advice: decisions rest on the copies vyre_sq_peek makes.
 */
uint32_t vyre_sq_chain_length(const struct vyre_sq_consumer *c, uint32_t max, uint32_t flag);

/* vyre_sq_release - consume @n peeked entries: advances the head and stores sq_head. */
void vyre_sq_release(struct vyre_sq_consumer *c, uint32_t n);

/*
 * vyre_sq_take - consume @n peeked entries privately: the next peek starts
 * after them, but sq_head stays, so producers do not reuse their slots
 * until vyre_sq_store_head (a resumable client's SQEs stay intact until
 * their CQEs are posted, docs/design.md section 3).
 */
void vyre_sq_take(struct vyre_sq_consumer *c, uint32_t n);

/* vyre_sq_store_head - store sq_head = @pos, a position the private head has reached. */
void vyre_sq_store_head(struct vyre_sq_consumer *c, uint32_t pos);

/*
 * vyre_sq_pending - 1 when the slot at the private head is published, 0
 * when not (empty, or reserved and not yet published: its producer kicks
 * us), VYRE_E_PROTO when sq_tail is more than a ring ahead of the head.
 * Called before sleeping; one read of sq_tail.
 */
int vyre_sq_pending(const struct vyre_sq_consumer *c);

/*
 * vyre_sq_published - 1 when the slot at the private head carries its
 * publish marker. Reads that slot's marker alone, never sq_tail, so a
 * spinning consumer leaves the producers' lines in their caches; a hostile
 * marker only makes the caller look closer (vyre_sq_peek checks everything).
 */
int vyre_sq_published(const struct vyre_sq_consumer *c);

/* ---- CQ, producer side (vyred) ---- */

struct vyre_cq_producer {
	struct vyre_region_header *hdr;
	struct vyre_cqe *cq;
	uint32_t mask;
	uint32_t entries;
	uint32_t tail;	    /* private; published by vyre_cq_flush */
	uint32_t published; /* last value stored to cq_tail */
	uint32_t head_seen; /* cq_head at the last vyre_cq_space that passed */
	int wake_fd;	    /* the client's eventfd, or -1 */
};

void vyre_cq_producer_init(struct vyre_cq_producer *p, const struct vyre_region *r, int wake_fd);

/*
 * vyre_cq_space - free CQ slots, from one read of cq_head. VYRE_E_PROTO
 * when cq_head claims entries that were never posted.
 */
int vyre_cq_space(struct vyre_cq_producer *p);

/*
 * vyre_cq_space_seen - free CQ slots as of the last vyre_cq_space that
 * passed: a lower bound (the client only frees slots) that leaves the
 * client's cq_head line in its cache.
 */
uint32_t vyre_cq_space_seen(const struct vyre_cq_producer *p);

/*
 * vyre_cq_stage - store the user_data of the CQE that the @k-th next
 * vyre_cq_post will write, ahead of it. The client reads no slot beyond
 * cq_tail, so this only brings the slot's line to us early (while a device
 * runs) instead of when the CQE is due. The caller checked the space.
 */
void vyre_cq_stage(struct vyre_cq_producer *p, uint32_t k, uint64_t user_data);

/* vyre_cq_post - write one CQE at the private tail; the caller checked the space. */
void vyre_cq_post(struct vyre_cq_producer *p, const struct vyre_cqe *cqe);

/*
 * vyre_cq_post_at - write one CQE @k slots past the private tail, leaving
 * the tail where it is: the client reads it only once vyre_cq_advance has
 * moved the tail past it and vyre_cq_flush published that. The caller
 * checked the space for everything up to it. Inline: vyred's complete stage
 * calls it once a CQE, and the build has no link-time optimization.
 */
static inline void vyre_cq_post_at(struct vyre_cq_producer *p, uint32_t k,
				   const struct vyre_cqe *cqe)
{
	p->cq[(p->tail + k) & p->mask] = *cqe;
}

/* vyre_cq_advance - move the private tail past @n CQEs written by vyre_cq_post_at. */
void vyre_cq_advance(struct vyre_cq_producer *p, uint32_t n);

/*
 * vyre_cq_flush - publish posted CQEs (store cq_tail) and wake the client if
 * it sleeps or armed its eventfd. Returns the need-wakeup bits it acted on,
 * 0 when the client wanted no wake-up or nothing was new. With wake_fd -1
 * the caller writes the eventfd itself when VYRE_CQ_WAKE_EVENTFD is returned
 * (vyred does, through io_uring, so a hostile eventfd can never block it).
 */
int vyre_cq_flush(struct vyre_cq_producer *p);

/* ---- CQ, consumer side (the client's reaping thread) ---- */

struct vyre_cq_consumer {
	struct vyre_region_header *hdr;
	const struct vyre_cqe *cq;
	uint32_t mask;
	uint32_t entries;
	uint32_t head; /* private copy of cq_head */
};

void vyre_cq_consumer_init(struct vyre_cq_consumer *c, const struct vyre_region *r);

/* vyre_cq_reap - copy up to @max CQEs and store cq_head. Returns the count or VYRE_E_PROTO. */
int vyre_cq_reap(struct vyre_cq_consumer *c, struct vyre_cqe *out, uint32_t max);

/* vyre_cq_ready - number of CQEs ready to reap (0 on garbage). */
uint32_t vyre_cq_ready(const struct vyre_cq_consumer *c);

/*
 * vyre_ring_resume_at - (vyred) point its private SQ head and CQ tail of an
 * adopted region (region_adopt.h) at @rs->done.
 */
static inline void vyre_ring_resume_at(struct vyre_sq_consumer *sq, struct vyre_cq_producer *cq,
				       const struct vyre_ring_resume *rs)
{
	sq->head = rs->done;
	cq->tail = rs->done;
	cq->published = rs->done;
	cq->head_seen = rs->reaped;
}

#endif /* VYRE_RING_RING_H */
