/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/hazards.h - which buffers the batches in flight read and write.
 *
 * Batches in different backend slots run side by side in no set order, so
 * an item may enter a new batch only if it has no RAW, WAR or WAW hazard
 * with an item of a batch still in flight. Hazards are per buffer handle,
 * like the planner's (a DFA table is a read). Handles are unique across
 * domains, so items of different domains never conflict.
 *
 * The table counts readers and writers per handle slot (the low bits of a
 * handle); one array of --max-buffers + 1 entries allocated at start-up.
 * A slot counted here is never freed (control.c defers the free), so a
 * reused slot can never be confused with a running one. A handle that does
 * not resolve still maps to some slot: the check may then make its item
 * wait for a batch it has nothing to do with, never the other way round.
 */
#ifndef VYRED_HAZARDS_H
#define VYRED_HAZARDS_H

#include <stdint.h>

#include "vyre/abi.h"

struct vyre_hazard_count {
	uint32_t readers;
	uint32_t writers;
};

struct vyre_hazards {
	struct vyre_hazard_count *slot; /* indexed by handle & VYRE_HANDLE_SLOT_MASK */
	uint32_t n_slots;
};

int vyre_hazards_init(struct vyre_hazards *h, uint32_t max_buffers);
void vyre_hazards_fini(struct vyre_hazards *h);

/* 1 when @it reads what an in-flight item writes, or writes what one reads or writes. */
int vyre_hazards_conflict(const struct vyre_hazards *h, const struct vyre_work_item *it);

/* Count @it's reads and writes as in flight (@delta 1) or finished (@delta -1). */
void vyre_hazards_track(struct vyre_hazards *h, const struct vyre_work_item *it, int delta);

/* 1 while an in-flight item uses @handle. */
int vyre_hazards_busy(const struct vyre_hazards *h, uint32_t handle);

#endif /* VYRED_HAZARDS_H */
