/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/names.h - the names of one loop's buffers (docs/design.md
 * section 5, named buffers).
 *
 * A name belongs to one live buffer and is unique within its domain, so the
 * table is keyed by (domain id, name) and holds one entry per handle slot:
 * a buffer's entry sits at its handle-table slot, which makes forgetting the
 * name of a freed buffer constant time and bounds the table by
 * --max-buffers. Both arrays are allocated at start-up; requests never
 * allocate. Lookups hash the key into chains threaded through the entries.
 */
#ifndef VYRED_NAMES_H
#define VYRED_NAMES_H

#include <stdint.h>

#include "vyre/vyre.h"

struct vyre_name_entry {
	uint32_t domain; /* 0: the slot's buffer has no name */
	uint32_t handle;
	uint32_t next; /* the next slot of its hash chain, 0 at the end */
	uint8_t len;
	char name[VYRE_BUFFER_NAME_MAX];
};

struct vyre_names {
	struct vyre_name_entry *slot; /* indexed by handle & VYRE_HANDLE_SLOT_MASK */
	uint32_t n_slots;
	uint32_t *chain; /* first slot of each hash chain, 0: empty */
	uint32_t mask;	 /* chains - 1, a power of two minus one */
	uint32_t seed;	 /* so that no client can aim its names at one chain */
};

int vyre_names_init(struct vyre_names *t, uint32_t max_buffers);
void vyre_names_fini(struct vyre_names *t);

/* The handle named @name (@len bytes, already validated) in @domain, or 0. */
uint32_t vyre_names_find(const struct vyre_names *t, uint32_t domain, const char *name,
			 uint32_t len);

/*
 * vyre_names_add - name the live buffer @handle of @domain, which the handle
 * table holds at @slot (vyre_handles_slot; not always the handle's own
 * after a restart). The caller has checked that the domain has no buffer of
 * that name (vyre_names_find).
 */
void vyre_names_add(struct vyre_names *t, uint32_t domain, const char *name, uint32_t len,
		    uint32_t handle, uint32_t slot);

/* vyre_names_remove - forget the name of the buffer at handle-table @slot; 1 when it had one. */
int vyre_names_remove(struct vyre_names *t, uint32_t slot);

/*
 * vyre_names_next - the first named buffer of @domain at a slot from
 * @cursor, looking at no more than @budget slots below @limit (the slots
 * handed out so far). *next is the slot after the one returned or after the
 * last one looked at; 0 when every slot was seen.
 */
const struct vyre_name_entry *vyre_names_next(const struct vyre_names *t, uint32_t domain,
					      uint32_t cursor, uint32_t limit, uint32_t budget,
					      uint32_t *next);

/* vyre_names_drop_domain - forget every name of @domain; returns how many. */
uint32_t vyre_names_drop_domain(struct vyre_names *t, uint32_t domain, uint32_t limit);

#endif /* VYRED_NAMES_H */
