/* SPDX-License-Identifier: MIT */
/* Resolve: handles of each drained item -> heap ranges of its client's domain. */
#include "../../ring/resolve.h"
#include "daemon.h"

void vyre_stage_resolve(struct vyre_daemon *d, struct vyre_batch *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		const struct vyre_domain *dom = &d->domains[b->domain[i]];

		if (b->flags[i] & ~VYRE_SQE_VALID_FLAGS)
			b->status[i] = VYRE_E_INVAL;
		else
			b->status[i] = vyre_resolve(&d->handles, dom->id, dom->slot, &b->items[i],
						    &b->exec[i]);
	}
}
