/* SPDX-License-Identifier: MIT */
/*
 * ring/handles.h - vyred's global buffer handle table.
 *
 * A handle is (generation << VYRE_HANDLE_SLOT_BITS) | slot. Handles are
 * unique across domains; freeing a buffer bumps its slot's generation, so a
 * freed handle, a guessed one or one belonging to another domain never
 * resolves. Handle 0 is never issued (generations start at 1).
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

struct vyre_handle_slot {
	struct vyre_buffer_ref ref;
	uint32_t gen;
	uint32_t live;
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
};

/* vyre_handles_init - an empty table of at most @max (<= VYRE_HANDLES_MAX) handles. */
int vyre_handles_init(struct vyre_handle_table *t, uint32_t max);
void vyre_handles_fini(struct vyre_handle_table *t);

/* vyre_handles_add - a new handle for @ref. Errors: VYRE_E_NOMEM (table full). */
int vyre_handles_add(struct vyre_handle_table *t, const struct vyre_buffer_ref *ref,
		     uint32_t *handle);

/*
 * vyre_handles_get - the buffer of @handle if it is live and belongs to
 * @domain; VYRE_E_INVAL otherwise. Constant time: the resolve hot path.
 */
static inline int vyre_handles_get(const struct vyre_handle_table *t, uint32_t handle,
				   uint32_t domain, struct vyre_buffer_ref *out)
{
	uint32_t slot = handle & VYRE_HANDLE_SLOT_MASK;
	const struct vyre_handle_slot *s;

	if (slot == 0 || slot >= t->n_slots)
		return VYRE_E_INVAL;
	s = &t->slots[slot];
	if (!s->live || s->gen != handle >> VYRE_HANDLE_SLOT_BITS || s->ref.domain != domain)
		return VYRE_E_INVAL;
	*out = s->ref;
	return 0;
}

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
