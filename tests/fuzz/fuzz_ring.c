/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: vyred's side of a client region under a hostile client.
 *
 * The input is a script that interleaves a client which may write any word
 * anywhere in its region (indices, doorbells, SQEs, CQEs) with honest client
 * calls and with vyred's drain and completion steps exactly as
 * tools/vyred/drain.c and complete.c make them: vyre_cq_space, the CQ
 * credit, vyre_sq_peek, vyre_cq_post, vyre_sq_release, vyre_cq_flush, and
 * vyre_sq_pending when it would sleep. The region is heap memory of the
 * exact layout size, so AddressSanitizer sees any access outside it. vyred
 * must never take more than its credit, never copy an unpublished slot, keep
 * its private indices within one ring of each other, and once it sees
 * VYRE_E_PROTO it drops the client (the script's vyred steps stop).
 *
 * Script: u8 log2 SQ entries, u8 log2 CQ entries, then 6-byte steps:
 * u8 action, u8 count, u32 value.
 */
#include <stdlib.h>
#include <string.h>

#include "../../ring/ring.h"
#include "fuzz.h"

#define STEP	  6u
#define MAX_BATCH 64u

enum action {
	CLIENT_WRITE,  /* hostile: region word (count | value >> 24 << 8) = value */
	CLIENT_PUSH,   /* honest: vyre_sq_push of count SQEs, then vyre_sq_kick */
	CLIENT_REAP,   /* honest: vyre_cq_reap of up to count CQEs */
	VYRED_DRAIN,   /* vyred: one batch of at most count items */
	VYRED_PENDING, /* vyred: vyre_sq_pending before sleeping */
	N_ACTIONS,
};

struct harness {
	struct vyre_region region;
	struct vyre_sq_producer prod;
	struct vyre_cq_consumer reaper;
	struct vyre_sq_consumer sq;
	struct vyre_cq_producer cq;
	int dropped; /* vyred saw VYRE_E_PROTO and closed the connection */
	uint64_t next_user_data;
};

static int region_alloc(struct vyre_region *r, uint32_t sq_entries, uint32_t cq_entries)
{
	struct vyre_region_layout lay;
	void *mem;

	if (vyre_region_layout(sq_entries, cq_entries, &lay) != 0)
		return -1;
	size_t bytes = lay.cq_offset + (size_t)cq_entries * sizeof(struct vyre_cqe);

	if (posix_memalign(&mem, VYRE_CACHELINE, bytes) != 0)
		return -1;
	memset(mem, 0, bytes);
	r->hdr = mem;
	r->sq = (struct vyre_sqe *)(void *)((uint8_t *)mem + lay.sq_offset);
	r->cq = (struct vyre_cqe *)(void *)((uint8_t *)mem + lay.cq_offset);
	r->bytes = bytes;
	r->sq_entries = sq_entries;
	r->cq_entries = cq_entries;
	r->fd = -1;
	r->hdr->magic = VYRE_REGION_MAGIC;
	r->hdr->abi_version = VYRE_ABI_VERSION;
	r->hdr->sq_entries = sq_entries;
	r->hdr->cq_entries = cq_entries;
	r->hdr->sq_offset = lay.sq_offset;
	r->hdr->cq_offset = lay.cq_offset;
	r->hdr->region_bytes = bytes;
	return 0;
}

static void client_write(struct harness *h, uint32_t count, uint32_t value)
{
	uint64_t words = h->region.bytes / 4;
	uint64_t word = ((uint64_t)(value >> 24) << 8 | count) % words;

	memcpy((uint8_t *)h->region.hdr + 4 * word, &value, 4);
}

static void client_push(struct harness *h, uint32_t count)
{
	struct vyre_sqe sqes[8];
	uint32_t n = 1 + count % 8;

	memset(sqes, 0, sizeof(sqes));
	for (uint32_t i = 0; i < n; i++)
		sqes[i].user_data = ++h->next_user_data;
	/* the hostile writes may have corrupted what the honest producer reads: any result goes */
	if (vyre_sq_push(&h->prod, sqes, n, count & 8u) > 0)
		vyre_sq_kick(&h->prod);
}

static void client_reap(struct harness *h, uint32_t count)
{
	struct vyre_cqe out[16];
	int n = vyre_cq_reap(&h->reaper, out, 1 + count % 16);

	FUZZ_CHECK(n == VYRE_E_PROTO || (n >= 0 && n <= (int)(1 + count % 16)));
}

/* tools/vyred/drain.c take() and complete.c, for this one client. */
static void vyred_drain(struct harness *h, uint32_t count)
{
	struct vyre_sqe batch[MAX_BATCH];
	uint32_t head = h->sq.head, tail = h->cq.tail;
	int space = vyre_cq_space(&h->cq);

	if (space < 0) {
		FUZZ_CHECK(space == VYRE_E_PROTO);
		h->dropped = 1;
		return;
	}
	FUZZ_CHECK((uint32_t)space <= h->cq.entries);
	/* count % MAX_BATCH is vyred's --max-batch for this step; 0 means the whole batch */
	uint32_t cap = count % MAX_BATCH ? count % MAX_BATCH : MAX_BATCH;
	uint32_t want = (uint32_t)space < cap ? (uint32_t)space : cap;

	if (want == 0)
		return;
	int got = vyre_sq_peek(&h->sq, batch, want);

	if (got < 0) {
		FUZZ_CHECK(got == VYRE_E_PROTO);
		h->dropped = 1;
		return;
	}
	FUZZ_CHECK((uint32_t)got <= want);
	for (int i = 0; i < got; i++) {
		struct vyre_cqe cqe = {.user_data = batch[i].user_data, .status = VYRE_E_INVAL};

		FUZZ_CHECK(batch[i].seq == head + (uint32_t)i + 1);
		vyre_cq_post(&h->cq, &cqe);
	}
	vyre_sq_release(&h->sq, (uint32_t)got);
	vyre_cq_flush(&h->cq);
	FUZZ_CHECK(h->sq.head - head == (uint32_t)got);
	FUZZ_CHECK(h->cq.tail - tail == (uint32_t)got);
	FUZZ_CHECK(h->cq.published == h->cq.tail);
}

static void vyred_pending(struct harness *h)
{
	int pending = vyre_sq_pending(&h->sq);

	if (pending < 0) {
		FUZZ_CHECK(pending == VYRE_E_PROTO);
		h->dropped = 1;
		return;
	}
	FUZZ_CHECK(pending == 0 || pending == 1);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct harness h;

	if (size < 2)
		return 0;
	memset(&h, 0, sizeof(h));
	if (region_alloc(&h.region, 1u << (1 + data[0] % 6), 1u << (1 + data[1] % 6)) != 0)
		return 0;
	vyre_sq_producer_init(&h.prod, &h.region, -1);
	vyre_cq_consumer_init(&h.reaper, &h.region);
	vyre_sq_consumer_init(&h.sq, &h.region);
	vyre_cq_producer_init(&h.cq, &h.region, -1);
	for (size_t off = 2; off + STEP <= size; off += STEP) {
		const uint8_t *s = data + off;
		uint32_t count = s[1], value = fuzz_le32(s + 2);

		switch (s[0] % N_ACTIONS) {
		case CLIENT_WRITE:
			client_write(&h, count, value);
			break;
		case CLIENT_PUSH:
			client_push(&h, count);
			break;
		case CLIENT_REAP:
			client_reap(&h, count);
			break;
		case VYRED_DRAIN:
			if (!h.dropped)
				vyred_drain(&h, count);
			break;
		default:
			if (!h.dropped)
				vyred_pending(&h);
			break;
		}
		/* vyred's private view stays sane whatever the client did */
		FUZZ_CHECK(h.sq.entries == h.region.sq_entries);
		FUZZ_CHECK(h.cq.entries == h.region.cq_entries);
	}
	free(h.region.hdr);
	return 0;
}
