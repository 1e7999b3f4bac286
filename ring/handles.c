/* SPDX-License-Identifier: MIT */
/* A loop's handle table: slots with generations and a recycled-slot queue. */
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
	free(t->alias);
	memset(t, 0, sizeof(*t));
}

/* Room for one more slot; the recycled-slot queue keeps its order. */
int vyre_handles_grow(struct vyre_handle_table *t)
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
	uint32_t *fr = malloc((size_t)cap * sizeof(*fr));

	if (!fr)
		return VYRE_E_NOMEM; /* slots grew; cap stays, so the next call retries */
	for (uint32_t k = 0; k < t->n_free; k++)
		fr[k] = t->free[(t->free_head + k) % t->cap];
	free(t->free);
	t->free = fr;
	t->free_head = 0;
	t->cap = (uint32_t)cap;
	return 0;
}

/*
 * The next generation of @slot whose handle @domain does not know as an
 * alias, or 0 when an adopted ledger named every one (only a forged one can).
 */
static uint32_t next_gen(const struct vyre_handle_table *t, uint32_t slot, uint32_t domain)
{
	uint32_t gen = t->slots[slot].gen;

	for (uint32_t tries = 0; tries < VYRE_HANDLE_GEN_MAX; tries++) {
		gen = gen >= VYRE_HANDLE_GEN_MAX ? 1 : gen + 1;
		if (!t->n_alias ||
		    !vyre_handles_alias_find(t, domain, (gen << VYRE_HANDLE_SLOT_BITS) | slot))
			return gen;
	}
	return 0;
}

static void queue_slot(struct vyre_handle_table *t, uint32_t slot)
{
	t->free[(t->free_head + t->n_free) % t->cap] = slot;
	t->n_free++;
}

int vyre_handles_add(struct vyre_handle_table *t, const struct vyre_buffer_ref *ref,
		     uint32_t *handle)
{
	uint32_t slot = 0, gen;

	if (t->n_live >= t->max)
		return VYRE_E_NOMEM;
	/* a slot an adoption took is still queued until vyre_handles_adopt_done */
	while (t->n_free && (slot == 0 || t->slots[slot].live)) {
		slot = t->free[t->free_head];
		t->free_head = (t->free_head + 1) % t->cap;
		t->n_free--;
	}
	if (slot == 0 || t->slots[slot].live) {
		if (t->n_slots == t->cap && vyre_handles_grow(t) != 0)
			return VYRE_E_NOMEM;
		slot = t->n_slots++;
		t->slots[slot].gen = 0;
	}
	struct vyre_handle_slot *s = &t->slots[slot];

	/* a value an adopted domain knows under an alias is not given out again */
	gen = next_gen(t, slot, ref->domain);
	if (gen == 0) {
		/* the slot stays free for the other domains */
		queue_slot(t, slot);
		return VYRE_E_NOMEM;
	}
	s->gen = gen;
	*handle = (gen << VYRE_HANDLE_SLOT_BITS) | slot;
	s->ref = *ref;
	s->live = VYRE_HANDLE_LIVE;
	t->n_live++;
	return 0;
}

void vyre_handles_adopt_done(struct vyre_handle_table *t)
{
	uint32_t kept = 0;

	/* slots taken by adoption leave the recycled queue, which keeps its order */
	for (uint32_t k = 0; k < t->n_free; k++) {
		uint32_t slot = t->free[(t->free_head + k) % t->cap];

		if (!t->slots[slot].live)
			t->free[(t->free_head + kept++) % t->cap] = slot;
	}
	t->n_free = kept;
	t->adopt_queued = 0;
}

static void release_slot(struct vyre_handle_table *t, uint32_t slot)
{
	struct vyre_handle_slot *s = &t->slots[slot];

	if (s->live == VYRE_HANDLE_LIVE_ALIASED)
		vyre_handles_alias_del(t, s->ref.domain, s->alias);
	/* an adopted slot may still sit in the queue: out while live, so it is never there twice */
	if (t->adopt_queued)
		vyre_handles_adopt_done(t);
	s->live = 0;
	queue_slot(t, slot);
	t->n_live--;
}

int vyre_handles_remove(struct vyre_handle_table *t, uint32_t handle, uint32_t domain,
			struct vyre_buffer_ref *out)
{
	uint32_t slot = vyre_handles_slot(t, handle, domain);

	if (slot == 0)
		return VYRE_E_INVAL;
	*out = t->slots[slot].ref;
	release_slot(t, slot);
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

/* Aliases of adopted handles (handles_adopt.c makes them). */
static uint32_t alias_hash(uint32_t domain, uint32_t handle)
{
	uint32_t h = domain * 0x9e3779b1u ^ handle * 0x85ebca6bu;

	return h ^ (h >> 15);
}

/* Index of (domain, handle) in the alias table, or of the empty entry where it would go. */
uint32_t vyre_handles_alias_index(const struct vyre_handle_table *t, uint32_t domain,
				  uint32_t handle)
{
	uint32_t i = alias_hash(domain, handle) & (t->alias_cap - 1);

	while (t->alias[i].domain && (t->alias[i].domain != domain || t->alias[i].handle != handle))
		i = (i + 1) & (t->alias_cap - 1);
	return i;
}

uint32_t vyre_handles_alias_find(const struct vyre_handle_table *t, uint32_t domain,
				 uint32_t handle)
{
	if (t->alias_cap == 0)
		return 0;
	const struct vyre_handle_alias *a = &t->alias[vyre_handles_alias_index(t, domain, handle)];

	return a->domain ? a->slot : 0;
}

void vyre_handles_alias_del(struct vyre_handle_table *t, uint32_t domain, uint32_t handle)
{
	uint32_t mask = t->alias_cap - 1;
	uint32_t i = vyre_handles_alias_index(t, domain, handle);

	if (!t->alias[i].domain)
		return;
	t->alias[i].domain = 0;
	t->n_alias--;
	/* backward shift: an entry after the hole moves into it unless it sits at its home */
	for (uint32_t j = (i + 1) & mask; t->alias[j].domain; j = (j + 1) & mask) {
		uint32_t home = alias_hash(t->alias[j].domain, t->alias[j].handle) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->alias[i] = t->alias[j];
			t->alias[j].domain = 0;
			i = j;
		}
	}
}
