/* SPDX-License-Identifier: MIT */
/*
 * ring/handles.h - vyred's global buffer handle table.
 *
 * A handle is (generation << VYRE_HANDLE_SLOT_BITS) | slot. Handles are
 * unique across domains; freeing a buffer bumps its slot's generation, so a
 * freed handle, a guessed one or one belonging to another domain never
 * resolves. Handle 0 is never issued (generations start at 1).
 *
 * A domain adopted after a restart (docs/design.md section 3) keeps its
 * handles. Each goes to its own slot when this table never gave that slot a
 * generation as high; otherwise (another domain holds the slot, or this
 * vyred used it) the buffer takes a fresh slot and the table keeps an alias
 * from (domain, handle) to it. Aliases cost nothing until one exists: the
 * resolve path looks at them only after the slot did not match.
 */
#ifndef VYRE_RING_HANDLES_H
#define VYRE_RING_HANDLES_H

#include <stdint.h>

#include "vyre/abi.h"
#include "vyre/vyre.h"

#define VYRE_HANDLE_SLOT_BITS 20u
#define VYRE_HANDLE_SLOT_MASK ((1u << VYRE_HANDLE_SLOT_BITS) - 1)
#define VYRE_HANDLE_GEN_MAX   ((1u << (32 - VYRE_HANDLE_SLOT_BITS)) - 1)
#define VYRE_HANDLES_MAX      VYRE_HANDLE_SLOT_MASK /* slot 0 is never used */

/*
 * A buffer: a range of its domain's heap, or (VYRE_BUF_DEVICE) a device
 * buffer, which is a backend heap of its own (index @heap, @off 0).
 */
struct vyre_buffer_ref {
	uint64_t off;
	uint32_t bytes;
	uint32_t domain;
	uint32_t heap;	/* VYRE_BUF_DEVICE: its heap index; else 0 (the domain's heap) */
	uint32_t flags; /* VYRE_BUF_DEVICE, VYRE_BUF_TRANSIENT (in the domain heap) or 0 */
};

#define VYRE_HANDLE_LIVE	 1u /* clients use the slot's own handle */
#define VYRE_HANDLE_LIVE_ALIASED 2u /* clients use @alias; the slot's own handle is nobody's */

struct vyre_handle_slot {
	struct vyre_buffer_ref ref;
	uint32_t gen;
	uint32_t live;	 /* 0, VYRE_HANDLE_LIVE or VYRE_HANDLE_LIVE_ALIASED */
	uint32_t alias;	 /* VYRE_HANDLE_LIVE_ALIASED: the handle its clients know */
	uint32_t ledger; /* the owner's index of the buffer's ledger entry */
};

struct vyre_handle_alias {
	uint32_t domain; /* 0: empty */
	uint32_t handle;
	uint32_t slot;
};

struct vyre_handle_table {
	struct vyre_handle_slot *slots; /* index 0 unused */
	uint32_t n_slots;		/* slots handed out so far, including 0 */
	uint32_t cap;
	uint32_t max;	/* most live handles */
	uint32_t *free; /* recycled slots, a FIFO so a slot is reused as late as possible */
	uint32_t free_head;
	uint32_t n_free;
	uint32_t n_live;
	uint32_t adopt_queued; /* slots adopted since vyre_handles_adopt_done still queued */
	struct vyre_handle_alias *alias; /* open addressing, linear probing */
	uint32_t alias_cap;		 /* 0 or a power of two */
	uint32_t n_alias;
};

/* vyre_handles_init - an empty table of at most @max (<= VYRE_HANDLES_MAX) handles. */
int vyre_handles_init(struct vyre_handle_table *t, uint32_t max);
void vyre_handles_fini(struct vyre_handle_table *t);

/*
 * vyre_handles_add - a new handle for @ref. Errors: VYRE_E_NOMEM (table
 * full, or, in a domain whose forged ledger named every generation of the
 * next free slot, no value of that slot left for it).
 */
int vyre_handles_add(struct vyre_handle_table *t, const struct vyre_buffer_ref *ref,
		     uint32_t *handle);

/*
 * vyre_handles_get - the buffer of @handle if it is live and belongs to
 * @domain; VYRE_E_INVAL otherwise. Constant time: the resolve hot path.
 */
/* The slot behind an aliased @handle of @domain, or 0. */
uint32_t vyre_handles_alias_find(const struct vyre_handle_table *t, uint32_t domain,
				 uint32_t handle);
void vyre_handles_alias_del(struct vyre_handle_table *t, uint32_t domain, uint32_t handle);
/* Where (domain, handle) is in the alias table, or the empty entry where it would go. */
uint32_t vyre_handles_alias_index(const struct vyre_handle_table *t, uint32_t domain,
				  uint32_t handle);
/* Room for one more slot (handles.c). */
int vyre_handles_grow(struct vyre_handle_table *t);

/* vyre_handles_slot - the slot that holds the live buffer @handle of @domain, or 0. */
static inline uint32_t vyre_handles_slot(const struct vyre_handle_table *t, uint32_t handle,
					 uint32_t domain)
{
	uint32_t slot = handle & VYRE_HANDLE_SLOT_MASK;

	if (slot != 0 && slot < t->n_slots) {
		const struct vyre_handle_slot *s = &t->slots[slot];

		if (s->live == VYRE_HANDLE_LIVE && s->gen == handle >> VYRE_HANDLE_SLOT_BITS &&
		    s->ref.domain == domain)
			return slot;
	}
	return t->n_alias ? vyre_handles_alias_find(t, domain, handle) : 0;
}

/*
 * vyre_handles_prefetch - start loading @handle's slot: a batch of many
 * items names slots far apart in a table larger than the caches, and one
 * miss an item was most of resolving it.
 */
static inline void vyre_handles_prefetch(const struct vyre_handle_table *t, uint32_t handle)
{
	const uint32_t slot = handle & VYRE_HANDLE_SLOT_MASK;

	if (slot < t->n_slots)
		__builtin_prefetch(&t->slots[slot]);
}

static inline int vyre_handles_get(const struct vyre_handle_table *t, uint32_t handle,
				   uint32_t domain, struct vyre_buffer_ref *out)
{
	uint32_t slot = vyre_handles_slot(t, handle, domain);

	if (slot == 0)
		return VYRE_E_INVAL;
	*out = t->slots[slot].ref;
	return 0;
}

/*
 * vyre_handles_adopt - a buffer of an adopted domain, under the @handle its
 * clients know (above). *slot is the slot that holds it. Errors:
 * VYRE_E_INVAL (handle 0, or @handle already names a buffer of that
 * domain), VYRE_E_NOMEM. Call vyre_handles_adopt_done after a domain's.
 */
int vyre_handles_adopt(struct vyre_handle_table *t, uint32_t handle,
		       const struct vyre_buffer_ref *ref, uint32_t *slot);
void vyre_handles_adopt_done(struct vyre_handle_table *t);

/* vyre_handles_remove - forget @handle of @domain and return its buffer in *out. */
int vyre_handles_remove(struct vyre_handle_table *t, uint32_t handle, uint32_t domain,
			struct vyre_buffer_ref *out);

/*
 * vyre_handles_drop_domain - forget every handle of @domain; returns how
 * many. @fn (may be NULL) sees each dropped buffer first, so that its owner
 * can release what it holds (a device buffer's memory).
 */
uint32_t vyre_handles_drop_domain(struct vyre_handle_table *t, uint32_t domain,
				  void (*fn)(void *arg, const struct vyre_buffer_ref *ref),
				  void *arg);

#endif /* VYRE_RING_HANDLES_H */
