/* SPDX-License-Identifier: MIT */
/*
 * The handles of a domain adopted after a restart (handles.h): a slot of
 * their own where the table allows it, an alias where it does not.
 */
#include <stdlib.h>
#include <string.h>

#include "handles.h"

static int alias_room(struct vyre_handle_table *t)
{
	if ((uint64_t)(t->n_alias + 1) * 2 <= t->alias_cap)
		return 0;
	uint32_t cap = t->alias_cap ? t->alias_cap * 2 : 64;
	struct vyre_handle_alias *old = t->alias;
	uint32_t old_cap = t->alias_cap;

	if (cap <= old_cap)
		return VYRE_E_NOMEM;
	t->alias = calloc(cap, sizeof(*t->alias));
	if (!t->alias) {
		t->alias = old;
		return VYRE_E_NOMEM;
	}
	t->alias_cap = cap;
	for (uint32_t k = 0; k < old_cap; k++)
		if (old[k].domain)
			t->alias[vyre_handles_alias_index(t, old[k].domain, old[k].handle)] =
			    old[k];
	free(old);
	return 0;
}

/* Whether the slot of @handle can be its own: this table never issued that generation there. */
static int own_slot_free(struct vyre_handle_table *t, uint32_t handle)
{
	uint32_t slot = handle & VYRE_HANDLE_SLOT_MASK;

	if (slot > t->max)
		return 0;
	while (slot >= t->cap)
		if (vyre_handles_grow(t) != 0)
			return 0;
	if (slot >= t->n_slots)
		return 1;
	return !t->slots[slot].live && t->slots[slot].gen < handle >> VYRE_HANDLE_SLOT_BITS;
}

static void take_own_slot(struct vyre_handle_table *t, uint32_t handle,
			  const struct vyre_buffer_ref *ref)
{
	uint32_t slot = handle & VYRE_HANDLE_SLOT_MASK;

	/* the slots skipped on the way are free: they join the queue, gen 0 */
	for (; t->n_slots < slot; t->n_slots++) {
		t->slots[t->n_slots].gen = 0;
		t->slots[t->n_slots].live = 0;
		t->free[(t->free_head + t->n_free++) % t->cap] = t->n_slots;
	}
	if (t->n_slots == slot)
		t->n_slots++;
	else
		t->adopt_queued++; /* a free slot below n_slots: queued until adopt_done */
	t->slots[slot].gen = handle >> VYRE_HANDLE_SLOT_BITS;
	t->slots[slot].ref = *ref;
	t->slots[slot].live = VYRE_HANDLE_LIVE;
	t->n_live++;
}

int vyre_handles_adopt(struct vyre_handle_table *t, uint32_t handle,
		       const struct vyre_buffer_ref *ref, uint32_t *slot)
{
	uint32_t own;

	if ((handle & VYRE_HANDLE_SLOT_MASK) == 0 || handle >> VYRE_HANDLE_SLOT_BITS == 0 ||
	    vyre_handles_slot(t, handle, ref->domain))
		return VYRE_E_INVAL;
	if (t->n_live >= t->max)
		return VYRE_E_NOMEM;
	if (own_slot_free(t, handle)) {
		take_own_slot(t, handle, ref);
		*slot = handle & VYRE_HANDLE_SLOT_MASK;
		return 0;
	}
	if (alias_room(t) != 0 || vyre_handles_add(t, ref, &own) != 0)
		return VYRE_E_NOMEM;
	*slot = own & VYRE_HANDLE_SLOT_MASK;
	t->slots[*slot].live = VYRE_HANDLE_LIVE_ALIASED;
	t->slots[*slot].alias = handle;
	t->alias[vyre_handles_alias_index(t, ref->domain, handle)] =
	    (struct vyre_handle_alias){.domain = ref->domain, .handle = handle, .slot = *slot};
	t->n_alias++;
	return 0;
}
