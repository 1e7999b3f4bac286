/* SPDX-License-Identifier: MIT */
/* Whether a batch's items share no written buffer, and their plan then (disjoint.h). */
#include <stdlib.h>
#include <string.h>

#include "../../ring/handles.h"
#include "disjoint.h"

int vyre_disjoint_init(struct vyre_disjoint *t, uint32_t max_buffers)
{
	/* slots run from 1 to max_buffers at most, plus the unused slot 0 */
	t->n_slots = max_buffers > VYRE_HANDLES_MAX ? VYRE_HANDLES_MAX + 1 : max_buffers + 1;
	t->mark = calloc(t->n_slots, sizeof(*t->mark));
	t->stamp = 0;
	return t->mark ? 0 : VYRE_E_NOMEM;
}

void vyre_disjoint_fini(struct vyre_disjoint *t)
{
	free(t->mark);
	t->mark = NULL;
	t->n_slots = 0;
}

/* A stamp no slot holds yet. */
static uint32_t next_stamp(struct vyre_disjoint *t)
{
	if (++t->stamp == 0) {
		memset(t->mark, 0, (size_t)t->n_slots * sizeof(*t->mark));
		t->stamp = 1;
	}
	return t->stamp;
}

void vyre_disjoint_begin(struct vyre_disjoint *t, uint32_t *order)
{
	next_stamp(t);
	t->order = order;
	t->k = 0;
	t->planner = 0;
	t->bytes = 0;
}

int64_t vyre_disjoint_finish(const struct vyre_disjoint *t, uint64_t budget)
{
	return t->planner || t->bytes > budget ? -1 : (int64_t)t->k;
}

int64_t vyre_disjoint_order(struct vyre_disjoint *t, uint32_t n, const struct vyre_work_item *items,
			    const struct vyre_exec_item *exec, const int32_t *status,
			    const uint32_t *flags, uint64_t budget, uint32_t *order)
{
	vyre_disjoint_begin(t, order);
	for (uint32_t i = 0; i < n; i++)
		if (status[i] == 0)
			vyre_disjoint_add(t, i, &items[i], &exec[i], flags[i], exec[i].aux_bytes);
	return vyre_disjoint_finish(t, budget);
}
