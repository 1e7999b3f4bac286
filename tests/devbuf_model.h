/* SPDX-License-Identifier: MIT */
/*
 * tests/devbuf_model.h - the oracle's view of one domain for the device
 * buffer tests: every buffer (heap or device) as a private copy of its bytes,
 * each its own heap for vyre_exec_one, so that items run here one at a time
 * in submission order give the statuses, results and bytes vyred must give.
 */
#ifndef VYRE_TESTS_DEVBUF_MODEL_H
#define VYRE_TESTS_DEVBUF_MODEL_H

#include <stdint.h>

#include "../gpu/ops.h"
#include "vyre/vyre.h"

#define DM_MAX_BUFFERS 64u

struct dm_buf {
	uint32_t handle; /* 0: freed (items naming it fail) */
	uint32_t bytes;
	int device;
};

struct dm {
	struct dm_buf b[DM_MAX_BUFFERS];
	struct vyre_heap_view views[DM_MAX_BUFFERS]; /* buffer i is heap i */
	uint32_t n;
};

/* A buffer vyred gave @handle, starting as @init (NULL: zeros). Its index, or -1. */
int dm_add(struct dm *m, uint32_t handle, uint32_t bytes, int device, const void *init);

/* Its bytes in the model, or NULL for an unknown handle. */
uint8_t *dm_bytes(const struct dm *m, uint32_t handle);

/* The buffer was freed: items that name it fail from now on. */
void dm_forget(struct dm *m, uint32_t handle);

/* Run one item submitted with SQE @flags as vyred must: its CQE status and result. */
void dm_exec(struct dm *m, const struct vyre_work_item *it, uint32_t flags, int32_t *status,
	     uint64_t *result);

/*
 * dm_exec of an item submitted with VYRE_SQE_RANGE (docs/design.md 6.6):
 * the op on [offset, offset + length) of its input and output, the table
 * whole; VYRE_E_INVAL, nothing changed, for a bad range.
 */
void dm_exec_range(struct dm *m, const struct vyre_work_item *it, uint32_t flags,
		   const struct vyre_item_range *r, int32_t *status, uint64_t *result);

void dm_free(struct dm *m);

/* A valid DFA table of @n states (random, from @rng) into @words, which hold its bytes. */
void dm_random_table(uint32_t *words, uint32_t n, uint64_t *rng);

uint64_t dm_rng(uint64_t *s);

/*
 * A 2-state DFA counting the bytes 'a' (state 1, after an 'a', accepts)
 * into @w (DM_TABLE2_BYTES); with @bad, a transition out of range that an
 * input without 'z' never takes.
 */
#define DM_TABLE2_BYTES (4u * (3u + 512u))
void dm_count_a_table(uint32_t *w, uint32_t bad);

#endif /* VYRE_TESTS_DEVBUF_MODEL_H */
