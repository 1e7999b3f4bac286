/* SPDX-License-Identifier: MIT */
/* Dense ids for keys, and the per-buffer hazard state built on them. */
#include <string.h>

#include "../gpu/ops.h"
#include "track.h"

int id_map_reserve(struct vyre_arena *a, uint32_t max_ids, struct id_map *m,
		   enum vyre_plan_component where, const char *field, struct vyre_plan_error *err)
{
	uint32_t cap = table_capacity(max_ids);

	if (arena_u64(a, cap, &m->keys) || arena_u32(a, cap, &m->id_of))
		return plan_err_reserve(err, where, field, cap);
	m->mask = cap - 1;
	m->max_ids = max_ids;
	m->n_ids = 0;
	return 0;
}

void id_map_clear(struct id_map *m)
{
	memset(m->id_of, 0xff, ((size_t)m->mask + 1) * sizeof(uint32_t));
	m->n_ids = 0;
}

uint32_t id_map_get(struct id_map *m, uint64_t key, int *added)
{
	*added = 0;
	for (uint32_t h = (uint32_t)mix64(key) & m->mask;; h = (h + 1) & m->mask) {
		uint32_t id = m->id_of[h];

		if (id == VYRE_PLAN_NONE) {
			if (m->n_ids == m->max_ids)
				return VYRE_PLAN_NONE;
			id = m->n_ids++;
			m->id_of[h] = id;
			m->keys[h] = key;
			*added = 1;
			return id;
		}
		if (m->keys[h] == key)
			return id;
	}
}

int buffer_map_reserve(struct vyre_arena *a, uint32_t max_buffers, struct buffer_map *m,
		       enum vyre_plan_component where, struct vyre_plan_error *err)
{
	int rc = id_map_reserve(a, max_buffers, &m->ids, where, "buffer table", err);

	if (rc)
		return rc;
	if (arena_u32(a, max_buffers, &m->last_write) || arena_u32(a, max_buffers, &m->readers))
		return plan_err_reserve(err, where, "buffer state", max_buffers);
	m->full = 0;
	return 0;
}

void buffer_map_clear(struct buffer_map *m)
{
	id_map_clear(&m->ids);
	m->full = 0;
}

static uint32_t buffer_slot(struct buffer_map *m, uint32_t domain, uint32_t handle)
{
	int added;
	uint32_t slot;

	if (handle == 0)
		return VYRE_PLAN_NONE;
	slot = id_map_get(&m->ids, (uint64_t)domain << 32 | handle, &added);
	if (slot == VYRE_PLAN_NONE) {
		m->full = 1;
	} else if (added) {
		m->last_write[slot] = VYRE_PLAN_NONE;
		m->readers[slot] = VYRE_PLAN_NONE;
	}
	return slot;
}

void item_slots_resolve(struct buffer_map *m, uint32_t domain, const struct vyre_work_item *it,
			struct item_slots *s)
{
	struct vyre_op_access acc;

	vyre_op_access(it, &acc);
	s->n_reads = 0;
	s->read[0] = s->read[1] = VYRE_PLAN_NONE;
	for (uint32_t i = 0; i < acc.n_reads; i++) {
		uint32_t slot = buffer_slot(m, domain, acc.reads[i]);

		if (slot != VYRE_PLAN_NONE && (s->n_reads == 0 || s->read[0] != slot))
			s->read[s->n_reads++] = slot;
	}
	s->write = buffer_slot(m, domain, acc.write);
}
