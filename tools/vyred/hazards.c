/* SPDX-License-Identifier: MIT */
/* The in-flight reader and writer counts per buffer handle (hazards.h). */
#include <stdlib.h>

#include "../../gpu/ops.h"
#include "../../ring/handles.h"
#include "hazards.h"

int vyre_hazards_init(struct vyre_hazards *h, uint32_t max_buffers)
{
	/* slots run from 1 to max_buffers at most, plus the unused slot 0 */
	h->n_slots = max_buffers > VYRE_HANDLES_MAX ? VYRE_HANDLES_MAX + 1 : max_buffers + 1;
	h->slot = calloc(h->n_slots, sizeof(*h->slot));
	return h->slot ? 0 : VYRE_E_NOMEM;
}

void vyre_hazards_fini(struct vyre_hazards *h)
{
	free(h->slot);
	h->slot = NULL;
	h->n_slots = 0;
}

/*
 * The counters of @handle, 0 for none. A domain adopted after a restart
 * keeps handles whose slots may lie past the table: they share counters
 * with others, which can only make an item wait, never miss a hazard.
 */
static uint32_t slot_of(const struct vyre_hazards *h, uint32_t handle)
{
	uint32_t s = handle & VYRE_HANDLE_SLOT_MASK;

	if (handle == 0)
		return 0;
	return s < h->n_slots ? s : 1 + s % (h->n_slots - 1);
}

int vyre_hazards_conflict(const struct vyre_hazards *h, const struct vyre_work_item *it)
{
	struct vyre_op_access acc;

	vyre_op_access(it, &acc);
	for (uint32_t r = 0; r < acc.n_reads; r++) {
		uint32_t s = slot_of(h, acc.reads[r]);

		if (s && h->slot[s].writers)
			return 1;
	}
	return vyre_hazards_busy(h, acc.write);
}

void vyre_hazards_track(struct vyre_hazards *h, const struct vyre_work_item *it, int delta)
{
	struct vyre_op_access acc;
	uint32_t s;

	vyre_op_access(it, &acc);
	for (uint32_t r = 0; r < acc.n_reads; r++)
		if ((s = slot_of(h, acc.reads[r])))
			h->slot[s].readers += (uint32_t)delta;
	if ((s = slot_of(h, acc.write)))
		h->slot[s].writers += (uint32_t)delta;
}

int vyre_hazards_busy(const struct vyre_hazards *h, uint32_t handle)
{
	uint32_t s = slot_of(h, handle);

	return s && (h->slot[s].readers || h->slot[s].writers);
}
