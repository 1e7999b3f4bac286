/* SPDX-License-Identifier: MIT */
/*
 * ring/ring.h - shared-memory regions, SQ/CQ rings and doorbells.
 *
 * The primitives under the client library and vyred, exposed on their own so
 * benchmarks can drive them across processes without a daemon. Layout and
 * protocol are those of include/vyre/abi.h.
 *
 * NAME
 *	vyre_region_layout, vyre_region_create, vyre_region_map,
 *	vyre_region_unmap - create and map a client region
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

#include "vyre/abi.h"
#include "vyre/vyre.h"

/* Bits of sq_need_wakeup: how vyred asks to be woken (cq_need_wakeup uses VYRE_CQ_WAKE_*). */
#define VYRE_SQ_WAKE_FUTEX   (1u << 0)
#define VYRE_SQ_WAKE_EVENTFD (1u << 1)
_Static_assert(VYRE_SQ_WAKE_FUTEX == VYRE_CQ_WAKE_FUTEX &&
		   VYRE_SQ_WAKE_EVENTFD == VYRE_CQ_WAKE_EVENTFD,
	       "both directions share one wake-bit encoding (vyre_wake)");

/*
 * vyre_ring_entries - the ring size for a request: 0 gives @dflt, anything
 * else is rounded up to a power of two. Returns 0 when the result would
 * exceed VYRE_MAX_RING_ENTRIES.
 */
uint32_t vyre_ring_entries(uint32_t requested, uint32_t dflt);

struct vyre_region_layout {
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t sq_offset;
	uint32_t cq_offset;
	uint64_t bytes; /* whole region, a multiple of the page size */
};

/*
 * vyre_region_layout - offsets and size of a region with these rings. Both
 * counts must be powers of two in [2, VYRE_MAX_RING_ENTRIES]; else
 * VYRE_E_INVAL.
 */
int vyre_region_layout(uint32_t sq_entries, uint32_t cq_entries, struct vyre_region_layout *out);

/* A region mapped into this process. */
struct vyre_region {
	struct vyre_region_header *hdr;
	struct vyre_sqe *sq;
	struct vyre_cqe *cq;
	uint64_t bytes;
	uint32_t sq_entries; /* private copies: never re-read from the shared header */
	uint32_t cq_entries;
	int fd; /* the memfd, or -1 */
};

/*
 * vyre_region_create - (vyred) a memfd sized for @sq_entries/@cq_entries,
 * sealed with F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL, mapped shared, header
 * written. On error nothing stays allocated. Errors: VYRE_E_INVAL (sizes),
 * VYRE_E_NOMEM (memfd, truncate, seal or mmap failed).
 */
int vyre_region_create(uint32_t sq_entries, uint32_t cq_entries, uint32_t client_id,
		       uint32_t domain_id, struct vyre_region *out);

/*
 * vyre_region_map - (client) map a region received from vyred and check its
 * header: magic, ABI version, ring sizes and offsets consistent with the
 * file size. Takes ownership of @fd on success only. Errors: VYRE_E_PROTO
 * (bad header or version), VYRE_E_NOMEM.
 */
int vyre_region_map(int fd, struct vyre_region *out);

/* vyre_region_unmap - unmap and close the memfd; safe on a zeroed struct. */
void vyre_region_unmap(struct vyre_region *r);

/*
 * vyre_sealed_memfd - a MFD_CLOEXEC memfd of @bytes bytes (rounded up to the
 * page size by the caller), sealed against growing, shrinking and further
 * sealing. Returns the fd or VYRE_E_NOMEM.
 */
int vyre_sealed_memfd(const char *name, uint64_t bytes);

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
 * checked the space for everything up to it.
 */
void vyre_cq_post_at(struct vyre_cq_producer *p, uint32_t k, const struct vyre_cqe *cqe);

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

/* ---- doorbells ---- */

/*
 * The sleeper's half of the protocol:
 *	if (vyre_sleep_prepare(need, bell, bit, &seen) && nothing to do after
 *	    re-checking the ring)
 *		vyre_futex_wait(bell, seen, timeout);
 *	vyre_sleep_finish(need, bit);
 * prepare sets @bit in *need and reads the doorbell with sequentially
 * consistent ordering, so a waker that published before the re-check is seen
 * by it, and one that published after sees the bit and changes the doorbell.
 * It returns 0 when a waker already took the futex bit again (a wake-up is
 * under way, and its doorbell bump may already be in @seen): do not sleep.
 */
int vyre_sleep_prepare(uint32_t *need_wakeup, const uint32_t *doorbell, uint32_t bit,
		       uint32_t *seen);
void vyre_sleep_finish(uint32_t *need_wakeup, uint32_t bit);

/*
 * vyre_wake - the waker's half, after publishing: if *need_wakeup is
 * non-zero, bump the doorbell; if the futex bit is set, clear it and
 * futex-wake the sleepers (only the first of several wakers pays the
 * syscall); if the eventfd bit is set, write 1 to @eventfd (when >= 0). A
 * sleeper sets its bit again before each sleep. Returns the bits acted on
 * (0: nobody sleeps, nothing done: one shared load, no write).
 */
int vyre_wake(uint32_t *need_wakeup, uint32_t *doorbell, int eventfd);

/*
 * vyre_futex_wait - shared FUTEX_WAIT on @word while it holds @expected, for
 * at most @timeout_ns (negative: forever). Returns 0 when woken (or
 * interrupted), VYRE_E_AGAIN when the word had already changed,
 * VYRE_E_TIMEDOUT.
 */
int vyre_futex_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns);

/* vyre_futex_wake - shared FUTEX_WAKE of every waiter on @word. */
void vyre_futex_wake(uint32_t *word);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t vyre_now_ns(void);

/* A pause instruction for spin loops. */
static inline void vyre_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* ---- resume (vyred, region_adopt.c; docs/design.md section 3) ---- */

/*
 * vyre_region_adopt - map the region memfd @fd that a client kept from a
 * vyred that died: sealed against shrinking and growing, its header
 * consistent with its size, rings no larger than @sq_max and @cq_max. On
 * success the region owns @fd. Errors: VYRE_E_PROTO, VYRE_E_NOMEM.
 */
int vyre_region_adopt(int fd, uint32_t sq_max, uint32_t cq_max, struct vyre_region *out);

/* Where an adopted region's rings stood when its vyred died. */
struct vyre_ring_resume {
	uint32_t done;	   /* cq_tail: SQ positions before it have their CQE */
	uint32_t accepted; /* sq_accepted: [done, accepted) may have run, no CQE */
	uint32_t reaped;   /* cq_head */
};

/*
 * vyre_ring_resume - read the indexes once and check that an honest vyred
 * could have left them: sq_head <= cq_tail <= sq_accepted <= sq_tail within
 * a ring, and room in the CQ for every accepted item. VYRE_E_PROTO if not.
 */
int vyre_ring_resume(const struct vyre_region *r, struct vyre_ring_resume *out);

/* Point vyred's private SQ head and CQ tail at @rs->done. */
void vyre_ring_resume_at(struct vyre_sq_consumer *sq, struct vyre_cq_producer *cq,
			 const struct vyre_ring_resume *rs);

#endif /* VYRE_RING_RING_H */
