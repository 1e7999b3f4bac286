/* SPDX-License-Identifier: MIT */
/*
 * SQ and CQ rings: the producer and consumer halves of both queues.
 *
 * Positions are free-running u32 counters; a slot is position & mask. The
 * side owned by vyred keeps its own index privately and reads the other
 * side's index exactly once per call, bounding it before use, because the
 * client can write anything into the region at any time.
 */
#include <string.h>

#include "atomics.h"
#include "ring.h"

uint32_t vyre_ring_entries(uint32_t requested, uint32_t dflt)
{
	uint32_t n = requested ? requested : dflt;

	if (n < 2)
		n = 2;
	if (n > VYRE_MAX_RING_ENTRIES)
		return 0;
	n--;
	n |= n >> 1;
	n |= n >> 2;
	n |= n >> 4;
	n |= n >> 8;
	n |= n >> 16;
	return n + 1;
}

/* Slots between two positions, or more than @entries when the pair is garbage. */
static uint32_t ring_used(uint32_t tail, uint32_t head)
{
	return tail - head;
}

/* ---- SQ producer ---- */

void vyre_sq_producer_init(struct vyre_sq_producer *p, const struct vyre_region *r, int wake_fd)
{
	p->hdr = r->hdr;
	p->sq = r->sq;
	p->entries = r->sq_entries;
	p->mask = r->sq_entries - 1;
	p->cached_head = __atomic_load_n(&r->hdr->sq_head, __ATOMIC_ACQUIRE);
	p->wake_fd = wake_fd;
}

static uint32_t sq_free(const struct vyre_sq_producer *p, uint32_t tail, uint32_t head)
{
	uint32_t used = ring_used(tail, head);

	return used > p->entries ? 0 : p->entries - used;
}

int vyre_sq_reserve(struct vyre_sq_producer *p, uint32_t want, uint32_t min, uint32_t *pos)
{
	if (min == 0 || min > want || min > p->entries)
		return VYRE_E_INVAL;
	if (want > p->entries)
		want = p->entries;

	uint32_t tail = __atomic_load_n(&p->hdr->sq_tail, __ATOMIC_RELAXED);

	for (;;) {
		/* Acquire/release on the cache keep the chain from vyred's sq_head release. */
		uint32_t head = __atomic_load_n(&p->cached_head, __ATOMIC_ACQUIRE);
		uint32_t room = sq_free(p, tail, head);

		if (room < min) {
			/* Acquire pairs with vyred's release of sq_head: its copies are done. */
			head = __atomic_load_n(&p->hdr->sq_head, __ATOMIC_ACQUIRE);
			__atomic_store_n(&p->cached_head, head, __ATOMIC_RELEASE);
			room = sq_free(p, tail, head);
			if (room < min)
				return VYRE_E_AGAIN;
		}
		uint32_t n = want < room ? want : room;

		if (__atomic_compare_exchange_n(&p->hdr->sq_tail, &tail, tail + n, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			*pos = tail;
			return (int)n;
		}
	}
}

void vyre_sq_publish(struct vyre_sq_producer *p, uint32_t pos)
{
	__atomic_store_n(&p->sq[pos & p->mask].seq, pos + 1, __ATOMIC_RELEASE);
}

int vyre_sq_push(struct vyre_sq_producer *p, const struct vyre_sqe *src, uint32_t n, int all)
{
	uint32_t pos;
	int got;

	if (n == 0)
		return 0;
	got = vyre_sq_reserve(p, n, all ? n : 1, &pos);
	if (got < 0)
		return got;
	for (int i = 0; i < got; i++) {
		struct vyre_sqe *slot = vyre_sq_slot(p, pos + (uint32_t)i);

		slot->flags = src[i].flags;
		slot->item = src[i].item;
		slot->user_data = src[i].user_data;
		slot->submit_ns = src[i].submit_ns;
		vyre_sq_publish(p, pos + (uint32_t)i);
	}
	return got;
}

int vyre_sq_kick(struct vyre_sq_producer *p)
{
	vyre_full_fence();
	return vyre_wake(&p->hdr->sq_need_wakeup, &p->hdr->sq_doorbell, p->wake_fd);
}

/* ---- SQ consumer (vyred) ---- */

void vyre_sq_consumer_init(struct vyre_sq_consumer *c, const struct vyre_region *r)
{
	c->hdr = r->hdr;
	c->sq = r->sq;
	c->entries = r->sq_entries;
	c->mask = r->sq_entries - 1;
	c->head = 0;
}

int vyre_sq_peek(struct vyre_sq_consumer *c, struct vyre_sqe *out, uint32_t max)
{
	uint32_t n = 0;

	/*
	 * Publication is decided by each slot's marker alone: never loading
	 * sq_tail leaves its cache line with the producers, whose CAS on it
	 * would otherwise wait for it on every reserve. At most one ring is
	 * read, from the private head, whatever the client wrote.
	 */
	if (max > c->entries)
		max = c->entries;
	for (; n < max; n++) {
		uint32_t pos = c->head + n;
		const struct vyre_sqe *slot = &c->sq[pos & c->mask];

		if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != pos + 1)
			break;
		memcpy(&out[n], slot, sizeof(*slot));
		out[n].seq = pos + 1;
	}
	return (int)n;
}

uint32_t vyre_sq_chain_length(const struct vyre_sq_consumer *c, uint32_t max, uint32_t flag)
{
	if (max > c->entries)
		max = c->entries;
	for (uint32_t n = 0; n < max; n++) {
		uint32_t pos = c->head + n;
		const struct vyre_sqe *slot = &c->sq[pos & c->mask];

		if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != pos + 1)
			return 0;
		if (!(__atomic_load_n(&slot->flags, __ATOMIC_RELAXED) & flag))
			return n + 1;
	}
	return max + 1;
}

void vyre_sq_release(struct vyre_sq_consumer *c, uint32_t n)
{
	c->head += n;
	/* Release: our copies of the slots are done before producers may reuse them. */
	__atomic_store_n(&c->hdr->sq_head, c->head, __ATOMIC_RELEASE);
}

void vyre_sq_take(struct vyre_sq_consumer *c, uint32_t n)
{
	c->head += n;
}

void vyre_sq_store_head(struct vyre_sq_consumer *c, uint32_t pos)
{
	__atomic_store_n(&c->hdr->sq_head, pos, __ATOMIC_RELEASE);
}

int vyre_sq_pending(const struct vyre_sq_consumer *c)
{
	uint32_t tail = __atomic_load_n(&c->hdr->sq_tail, __ATOMIC_ACQUIRE);
	uint32_t used = ring_used(tail, c->head);

	if (used > c->entries)
		return VYRE_E_PROTO;
	if (used == 0)
		return 0;
	const struct vyre_sqe *slot = &c->sq[c->head & c->mask];

	/* A reserved but unpublished slot is not work: its producer will kick us. */
	return __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) == c->head + 1;
}

int vyre_sq_published(const struct vyre_sq_consumer *c)
{
	const struct vyre_sqe *slot = &c->sq[c->head & c->mask];

	return __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) == c->head + 1;
}

/* ---- CQ producer (vyred) ---- */

void vyre_cq_producer_init(struct vyre_cq_producer *p, const struct vyre_region *r, int wake_fd)
{
	p->hdr = r->hdr;
	p->cq = r->cq;
	p->entries = r->cq_entries;
	p->mask = r->cq_entries - 1;
	p->tail = 0;
	p->published = 0;
	p->head_seen = 0;
	p->wake_fd = wake_fd;
}

int vyre_cq_space(struct vyre_cq_producer *p)
{
	uint32_t head = __atomic_load_n(&p->hdr->cq_head, __ATOMIC_ACQUIRE);
	uint32_t used = ring_used(p->tail, head);

	if (used > p->entries)
		return VYRE_E_PROTO;
	p->head_seen = head;
	return (int)(p->entries - used);
}

uint32_t vyre_cq_space_seen(const struct vyre_cq_producer *p)
{
	/* head_seen passed vyre_cq_space's check, and tail only grew within that space */
	return p->entries - ring_used(p->tail, p->head_seen);
}

void vyre_cq_stage(struct vyre_cq_producer *p, uint32_t k, uint64_t user_data)
{
	p->cq[(p->tail + k) & p->mask].user_data = user_data;
}

void vyre_cq_post(struct vyre_cq_producer *p, const struct vyre_cqe *cqe)
{
	memcpy(&p->cq[p->tail & p->mask], cqe, sizeof(*cqe));
	p->tail++;
}

void vyre_cq_advance(struct vyre_cq_producer *p, uint32_t n)
{
	p->tail += n;
}

int vyre_cq_flush(struct vyre_cq_producer *p)
{
	if (p->tail == p->published)
		return 0;
	p->published = p->tail;
	__atomic_store_n(&p->hdr->cq_tail, p->tail, __ATOMIC_RELEASE);
	vyre_full_fence();
	return vyre_wake(&p->hdr->cq_need_wakeup, &p->hdr->cq_doorbell, p->wake_fd);
}

/* ---- CQ consumer (client) ---- */

void vyre_cq_consumer_init(struct vyre_cq_consumer *c, const struct vyre_region *r)
{
	c->hdr = r->hdr;
	c->cq = r->cq;
	c->entries = r->cq_entries;
	c->mask = r->cq_entries - 1;
	c->head = __atomic_load_n(&r->hdr->cq_head, __ATOMIC_RELAXED);
}

uint32_t vyre_cq_ready(const struct vyre_cq_consumer *c)
{
	uint32_t tail = __atomic_load_n(&c->hdr->cq_tail, __ATOMIC_ACQUIRE);
	uint32_t used = ring_used(tail, c->head);

	return used > c->entries ? 0 : used;
}

int vyre_cq_reap(struct vyre_cq_consumer *c, struct vyre_cqe *out, uint32_t max)
{
	uint32_t tail = __atomic_load_n(&c->hdr->cq_tail, __ATOMIC_ACQUIRE);
	uint32_t avail = ring_used(tail, c->head);

	if (avail > c->entries)
		return VYRE_E_PROTO;
	if (avail > max)
		avail = max;
	for (uint32_t i = 0; i < avail; i++)
		memcpy(&out[i], &c->cq[(c->head + i) & c->mask], sizeof(out[i]));
	if (avail) {
		c->head += avail;
		__atomic_store_n(&c->hdr->cq_head, c->head, __ATOMIC_RELEASE);
	}
	return (int)avail;
}
