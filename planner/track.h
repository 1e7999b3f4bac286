/* SPDX-License-Identifier: MIT */
/*
 * planner/track.h - per-batch hazard tracking shared by the dedupe pass and
 * the dependency pass (planner-internal).
 *
 * A buffer is named by (domain, handle): handles of different domains never
 * alias. Each buffer gets a dense slot carrying its last executed writer and
 * the list of waves that read it since that write.
 */
#ifndef VYRE_PLANNER_TRACK_H
#define VYRE_PLANNER_TRACK_H

#include <stdint.h>

#include "internal.h"

/* Open-addressing map from 64-bit keys to dense ids 0, 1, 2, ... */
struct id_map {
	uint64_t *keys;	 /* valid where id_of != NONE */
	uint32_t *id_of; /* table entry -> id, VYRE_PLAN_NONE when empty */
	uint32_t mask;
	uint32_t n_ids;
	uint32_t max_ids;
};

int id_map_reserve(struct vyre_arena *a, uint32_t max_ids, struct id_map *m,
		   enum vyre_plan_component where, const char *field, struct vyre_plan_error *err);
void id_map_clear(struct id_map *m);
/* Id of @key; a new key gets the next id and sets *added. NONE when full. */
uint32_t id_map_get(struct id_map *m, uint64_t key, int *added);

struct buffer_map {
	struct id_map ids;    /* (domain << 32) | handle -> slot */
	uint32_t *last_write; /* slot -> item index of its last executed writer */
	uint32_t *readers;    /* slot -> head of its reader list (a node index) */
	int full;	      /* a buffer found no slot: the map was sized too small */
};

/* Room for @max_buffers distinct buffers. */
int buffer_map_reserve(struct vyre_arena *a, uint32_t max_buffers, struct buffer_map *m,
		       enum vyre_plan_component where, struct vyre_plan_error *err);
void buffer_map_clear(struct buffer_map *m);

/* The buffer slots an item touches; NONE where it has no such operand. */
struct item_slots {
	uint32_t read[2];
	uint32_t n_reads; /* distinct reads only */
	uint32_t write;
};

void item_slots_resolve(struct buffer_map *m, uint32_t domain, const struct vyre_work_item *it,
			struct item_slots *s);

/* Earlier identical items that may satisfy later ones, one per key. */
struct dedupe_table {
	uint32_t *source; /* item index, VYRE_PLAN_NONE when empty */
	uint32_t mask;
};

int dedupe_table_reserve(struct vyre_arena *a, uint32_t n_items, struct dedupe_table *t,
			 enum vyre_plan_component where, struct vyre_plan_error *err);
void dedupe_table_clear(struct dedupe_table *t);

/*
 * DESIGN 7.1 for item @k (not yet executed): returns the earlier item that
 * satisfies it, or VYRE_PLAN_NONE when it must run (and then remembers it
 * as the source for its key when it may be one). @domain may be NULL.
 */
uint32_t dedupe_step(struct dedupe_table *t, const struct buffer_map *m,
		     const struct vyre_work_item *items, const uint32_t *domain, uint32_t k,
		     uint32_t flags, const struct item_slots *s);

#endif /* VYRE_PLANNER_TRACK_H */
