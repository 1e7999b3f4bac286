/* SPDX-License-Identifier: MIT */
/* The global handle table: slots with generations and a recycled-slot stack. */
#include <stdlib.h>
#include <string.h>

#include "handles.h"
#include "ring.h"

int vyre_handles_init(struct vyre_handle_table *t, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	if (max == 0 || max > VYRE_HANDLES_MAX)
		return VYRE_E_INVAL;
	t->cap = 64;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	t->free = malloc(t->cap * sizeof(*t->free));
	if (!t->slots || !t->free) {
		vyre_handles_fini(t);
		return VYRE_E_NOMEM;
	}
	t->n_slots = 1;
	t->max = max;
	return 0;
}

void vyre_handles_fini(struct vyre_handle_table *t)
{
	free(t->slots);
	free(t->free);
	memset(t, 0, sizeof(*t));
}

static int grow(struct vyre_handle_table *t)
{
	uint64_t cap = (uint64_t)t->cap * 2;

	if (cap > (uint64_t)t->max + 1)
		cap = (uint64_t)t->max + 1;
	if (cap <= t->cap)
		return VYRE_E_NOMEM;
	struct vyre_handle_slot *slots = realloc(t->slots, (size_t)cap * sizeof(*slots));

	if (!slots)
		return VYRE_E_NOMEM;
	t->slots = slots;
	memset(&slots[t->cap], 0, (size_t)(cap - t->cap) * sizeof(*slots));
	uint32_t *fr = realloc(t->free, (size_t)cap * sizeof(*fr));

	if (!fr)
		return VYRE_E_NOMEM; /* slots grew; cap stays, so the next call retries */
	t->free = fr;
	t->cap = (uint32_t)cap;
	return 0;
}

int vyre_handles_add(struct vyre_handle_table *t, const struct vyre_buffer_ref *ref,
		     uint32_t *handle)
{
	uint32_t slot;

	if (t->n_live >= t->max)
		return VYRE_E_NOMEM;
	if (t->n_free) {
		slot = t->free[t->free_head];
		t->free_head = (t->free_head + 1) % t->cap;
		t->n_free--;
	} else {
		/* The queue is empty, so growing never has to unwrap it. */
		t->free_head = 0;
		if (t->n_slots == t->cap && grow(t) != 0)
			return VYRE_E_NOMEM;
		slot = t->n_slots++;
		t->slots[slot].gen = 0;
	}
	struct vyre_handle_slot *s = &t->slots[slot];

	s->gen = s->gen >= VYRE_HANDLE_GEN_MAX ? 1 : s->gen + 1;
	s->ref = *ref;
	s->live = 1;
	t->n_live++;
	*handle = (s->gen << VYRE_HANDLE_SLOT_BITS) | slot;
	return 0;
}

static void release_slot(struct vyre_handle_table *t, uint32_t slot)
{
	t->slots[slot].live = 0;
	t->free[(t->free_head + t->n_free) % t->cap] = slot;
	t->n_free++;
	t->n_live--;
}

int vyre_handles_remove(struct vyre_handle_table *t, uint32_t handle, uint32_t domain,
			struct vyre_buffer_ref *out)
{
	if (vyre_handles_get(t, handle, domain, out) != 0)
		return VYRE_E_INVAL;
	release_slot(t, handle & VYRE_HANDLE_SLOT_MASK);
	return 0;
}

uint32_t vyre_handles_drop_domain(struct vyre_handle_table *t, uint32_t domain,
				  void (*fn)(void *arg, const struct vyre_buffer_ref *ref),
				  void *arg)
{
	uint32_t dropped = 0;

	for (uint32_t slot = 1; slot < t->n_slots; slot++) {
		if (t->slots[slot].live && t->slots[slot].ref.domain == domain) {
			if (fn)
				fn(arg, &t->slots[slot].ref);
			release_slot(t, slot);
			dropped++;
		}
	}
	return dropped;
}
