/* SPDX-License-Identifier: MIT */
/* libvyre: submitting work items (any number of threads at once). */
#include <string.h>

#include "client.h"

static void fill(struct vyre_sqe *slot, const struct vyre_work_item *it, uint64_t user_data,
		 uint32_t flags, uint64_t now)
{
	slot->flags = flags;
	slot->item = *it;
	slot->user_data = user_data;
	slot->submit_ns = now;
}

int vyre_submit(struct vyre_client *c, const struct vyre_work_item *it, uint64_t user_data,
		uint32_t flags)
{
	uint32_t pos;

	if (!c || !it || (flags & ~VYRE_SQE_VALID_FLAGS))
		return VYRE_E_INVAL;
	if (vyre_client_closed(c))
		return VYRE_E_DISCONNECTED;
	int got = vyre_sq_reserve(&c->sq, 1, 1, &pos);

	if (got < 0)
		return got;
	fill(vyre_sq_slot(&c->sq, pos), it, user_data, flags, vyre_now_ns());
	vyre_sq_publish(&c->sq, pos);
	vyre_sq_kick(&c->sq);
	return 0;
}

int vyre_submit_batch(struct vyre_client *c, const struct vyre_work_item *its,
		      const uint64_t *user_data, uint32_t n)
{
	uint32_t pos;

	if (!c || (!its && n))
		return VYRE_E_INVAL;
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
	uint64_t now = vyre_now_ns();

	for (uint32_t i = 0; i < (uint32_t)got; i++) {
		fill(vyre_sq_slot(&c->sq, pos + i), &its[i], user_data ? user_data[i] : 0, 0, now);
		vyre_sq_publish(&c->sq, pos + i);
	}
	vyre_sq_kick(&c->sq);
	return got;
}
