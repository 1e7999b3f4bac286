/* SPDX-License-Identifier: MIT */
/* libvyre: submitting work items (any number of threads at once). */
#include <string.h>

#include "client.h"

/* An item's range fields when it has none: zeros, never what the slot held before. */
static const struct vyre_item_range no_range;

static void fill(struct vyre_sqe *slot, const struct vyre_work_item *it,
		 const struct vyre_item_range *r, uint32_t aux, uint64_t user_data, uint32_t flags,
		 uint64_t now)
{
	slot->flags = flags;
	slot->item = *it;
	slot->user_data = user_data;
	slot->submit_ns = now;
	/* past 2^32 no buffer holds it: an odd offset, so vyred fails the item as before */
	slot->in_offset = r->in_offset > UINT32_MAX ? UINT32_MAX : (uint32_t)r->in_offset;
	slot->aux_handle = aux;
	slot->out_offset = r->out_offset;
	slot->in_length = r->in_length;
	slot->out_length = r->out_length;
}

/* One item with @flags (VYRE_SQE_RANGE set exactly when @r is a range) and stream @aux. */
static int submit_one(struct vyre_client *c, const struct vyre_work_item *it,
		      const struct vyre_item_range *r, uint32_t aux, uint64_t user_data,
		      uint32_t flags)
{
	uint32_t pos;

	if (vyre_client_closed(c))
		return VYRE_E_DISCONNECTED;
	int got = vyre_sq_reserve(&c->sq, 1, 1, &pos);

	if (got < 0)
		return got;
	fill(vyre_sq_slot(&c->sq, pos), it, r, aux, user_data, flags, vyre_now_ns());
	vyre_sq_publish(&c->sq, pos);
	vyre_sq_kick(&c->sq);
	return 0;
}

int vyre_submit(struct vyre_client *c, const struct vyre_work_item *it, uint64_t user_data,
		uint32_t flags)
{
	/* a range travels only with vyre_submit_range */
	if (!c || !it || (flags & ~(VYRE_SQE_VALID_FLAGS & ~VYRE_SQE_RANGE)))
		return VYRE_E_INVAL;
	return submit_one(c, it, &no_range, 0, user_data, flags);
}

int vyre_submit_range(struct vyre_client *c, const struct vyre_work_item *it,
		      const struct vyre_item_range *range, uint64_t user_data, uint32_t flags)
{
	if (!c || !it || !range || (flags & ~VYRE_SQE_VALID_FLAGS))
		return VYRE_E_INVAL;
	return submit_one(c, it, range, 0, user_data, flags | VYRE_SQE_RANGE);
}

int vyre_submit_stream(struct vyre_client *c, const struct vyre_work_item *it, uint32_t stream,
		       const struct vyre_item_range *range, uint64_t user_data, uint32_t flags)
{
	/* VYRE_SQE_RANGE travels with a range, as in vyre_submit_range */
	if (!c || !it || (flags & ~(VYRE_SQE_VALID_FLAGS & ~VYRE_SQE_RANGE)) ||
	    (it->op_handle != VYRE_OP_DFA_REPORT && it->op_handle != VYRE_OP_DFA_REPORT_COUNTED))
		return VYRE_E_INVAL;
	if (!range)
		return submit_one(c, it, &no_range, stream, user_data, flags);
	return submit_one(c, it, range, stream, user_data, flags | VYRE_SQE_RANGE);
}

/* Up to @n items with flags 0, or VYRE_SQE_RANGE and @ranges[i] when @ranges is given. */
static int submit_many(struct vyre_client *c, const struct vyre_work_item *its,
		       const struct vyre_item_range *ranges, const uint64_t *user_data, uint32_t n)
{
	uint32_t pos;

	if (vyre_client_closed(c))
		return VYRE_E_DISCONNECTED;
	if (n == 0)
		return 0;
	if (n > (uint32_t)INT32_MAX)
		n = (uint32_t)INT32_MAX;
	int got = vyre_sq_reserve(&c->sq, n, 1, &pos);

	if (got == VYRE_E_AGAIN)
		return 0;
	if (got < 0)
		return got;
	const uint64_t now = vyre_now_ns();
	const uint32_t flags = ranges ? VYRE_SQE_RANGE : 0;

	for (uint32_t i = 0; i < (uint32_t)got; i++) {
		fill(vyre_sq_slot(&c->sq, pos + i), &its[i], ranges ? &ranges[i] : &no_range, 0,
		     user_data ? user_data[i] : 0, flags, now);
		vyre_sq_publish(&c->sq, pos + i);
	}
	vyre_sq_kick(&c->sq);
	return got;
}

int vyre_submit_batch(struct vyre_client *c, const struct vyre_work_item *its,
		      const uint64_t *user_data, uint32_t n)
{
	if (!c || (!its && n))
		return VYRE_E_INVAL;
	return submit_many(c, its, NULL, user_data, n);
}

int vyre_submit_batch_range(struct vyre_client *c, const struct vyre_work_item *its,
			    const struct vyre_item_range *ranges, const uint64_t *user_data,
			    uint32_t n)
{
	if (!c || ((!its || !ranges) && n))
		return VYRE_E_INVAL;
	return submit_many(c, its, ranges, user_data, n);
}
