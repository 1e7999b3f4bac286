/* SPDX-License-Identifier: MIT */
/* Dense ids for keys, and the per-buffer hazard state built on them. */
#include <string.h>

#include "../gpu/ops.h"
#include "track.h"

/* Slots a map starts a batch with. */
#define ID_MAP_FIRST_SLOTS 512u

static void set_slots(struct id_map *m, uint32_t slots)
{
	m->mask = slots - 1;
	m->shift = 64 - (uint32_t)__builtin_ctz(slots);
}

int id_map_reserve(struct vyre_arena *a, uint32_t max_ids, struct id_map *m,
		   enum vyre_plan_component where, const char *field, struct vyre_plan_error *err)
{
	uint32_t cap = table_capacity(max_ids);
	void *p;

	if (vyre_arena_reserve(a, cap, sizeof(struct id_slot), &p))
		return plan_err_reserve(err, where, field, cap);
	*m = (struct id_map){.slots = p, .cap = cap, .max_ids = max_ids};
	set_slots(m, cap);
	if (arena_u64(a, max_ids, &m->keys))
		return plan_err_reserve(err, where, field, max_ids);
	if (p)
		memset(p, 0, (size_t)cap * sizeof(struct id_slot));
	return 0;
}

static void new_generation(struct id_map *m)
{
	m->gen = next_generation(m->gen);
	if (m->gen == 0) {
		memset(m->slots, 0, (size_t)m->cap * sizeof(*m->slots));
		m->gen = 1;
	}
}

void id_map_begin(struct id_map *m, uint32_t max_ids)
{
	uint32_t slots = m->last_slots > ID_MAP_FIRST_SLOTS ? m->last_slots : ID_MAP_FIRST_SLOTS;
	const uint32_t most = table_capacity(max_ids);

	/* where the last batch ended, as far as this one's keys could need (growing costs) */
	slots = slots < most ? slots : most;
	slots = slots < m->cap ? slots : m->cap;
	new_generation(m);
	set_slots(m, slots);
	m->last_slots = slots;
	m->max_ids = max_ids;
	m->n_ids = 0;
}

static void place(struct id_map *m, uint64_t key, uint32_t id)
{
	uint32_t h = id_map_slot(m, key);

	while (m->slots[h].gen == m->gen)
		h = (h + 1) & m->mask;
	m->slots[h] = (struct id_slot){.key = key, .id = id, .gen = m->gen};
}

/*
 * Double the table until it is half empty with every id in it: a new
 * generation empties it, then every key goes back in. Ids the direct table
 * handed out (id_map_take) took no slot and were never counted against the
 * load, so once doubling can be too few: a batch of thousands of direct
 * handles and then one hashed key would fill the table and probe forever.
 */
static void grow(struct id_map *m)
{
	uint32_t slots = 2 * (m->mask + 1);

	while (slots < m->cap && 2 * ((uint64_t)m->n_ids + 1) > slots)
		slots <<= 1;
	new_generation(m);
	set_slots(m, slots);
	m->last_slots = m->mask + 1;
	for (uint32_t id = 0; id < m->n_ids; id++)
		place(m, m->keys[id], id);
}

uint32_t id_map_get(struct id_map *m, uint64_t key, int *added)
{
	*added = 0;
	for (uint32_t h = id_map_slot(m, key);; h = (h + 1) & m->mask) {
		struct id_slot *s = &m->slots[h];

		if (s->gen == m->gen) {
			if (s->key == key)
				return s->id;
			continue;
		}
		if (m->n_ids == m->max_ids)
			return VYRE_PLAN_NONE;
		if (2 * ((uint64_t)m->n_ids + 1) > (uint64_t)m->mask + 1 && m->mask + 1 < m->cap) {
			grow(m);
			place(m, key, m->n_ids);
		} else {
			*s = (struct id_slot){.key = key, .id = m->n_ids, .gen = m->gen};
		}
		m->keys[m->n_ids] = key;
		*added = 1;
		return m->n_ids++;
	}
}

int buffer_map_reserve(struct vyre_arena *a, uint32_t max_buffers, struct buffer_map *m,
		       enum vyre_plan_component where, struct vyre_plan_error *err)
{
	int rc = id_map_reserve(a, max_buffers, &m->ids, where, "buffer table", err);

	if (rc)
		return rc;
	void *p;

	if (vyre_arena_reserve(a, max_buffers, sizeof(struct slot_state), &p))
		return plan_err_reserve(err, where, "buffer state", max_buffers);
	m->slot = p;
	m->direct = NULL;
	m->direct_n = m->direct_mask = 0;
	m->ranges = NULL;
	m->n_ranges = m->max_ranges = 0;
	m->full = 0;
	return 0;
}

int buffer_map_reserve_direct(struct vyre_arena *a, struct buffer_map *m, uint32_t direct_handles,
			      enum vyre_plan_component where, struct vyre_plan_error *err)
{
	const uint64_t ways = (uint64_t)direct_handles * DIRECT_WAYS;
	void *p;

	if (direct_handles == 0)
		return 0;
	if (ways > SIZE_MAX / sizeof(uint32_t) ||
	    vyre_arena_reserve(a, (size_t)ways, sizeof(uint32_t), &p))
		return plan_err_reserve(err, where, "direct buffer table", direct_handles);
	m->direct = p;
	m->direct_n = direct_handles;
	/* the smallest all-ones mask every index below direct_handles passes through */
	m->direct_mask = UINT32_MAX >> __builtin_clz(direct_handles);
	/* id 0 everywhere: a valid index into keys[], which says it is no one's yet */
	if (p)
		memset(p, 0, (size_t)ways * sizeof(uint32_t));
	return 0;
}

int buffer_map_reserve_share(struct vyre_arena *a, struct buffer_map *m, uint32_t max_ranges,
			     enum vyre_plan_component where, struct vyre_plan_error *err)
{
	void *p;

	if (vyre_arena_reserve(a, max_ranges, sizeof(struct share_range), &p))
		return plan_err_reserve(err, where, "shared operands", max_ranges);
	m->ranges = p;
	m->max_ranges = max_ranges;
	return 0;
}

uint32_t buffer_share_range(struct buffer_map *m, uint32_t slot, uint64_t off, uint32_t bytes)
{
	uint32_t depth = 0, r;

	for (r = m->slot[slot].share_head; r != VYRE_PLAN_NONE; r = m->ranges[r].next, depth++)
		if (m->ranges[r].off == off && m->ranges[r].bytes == bytes)
			return r;
	if (depth == SHARE_RANGES_PER_BUFFER || m->n_ranges == m->max_ranges)
		return VYRE_PLAN_NONE;
	r = m->n_ranges++;
	m->ranges[r] = (struct share_range){
	    .off = off, .bytes = bytes, .group = 0, .next = m->slot[slot].share_head};
	m->slot[slot].share_head = r;
	return r;
}

void buffer_map_begin(struct buffer_map *m, uint32_t max_buffers)
{
	id_map_begin(&m->ids, max_buffers);
	m->n_ranges = 0;
	m->full = 0;
}

void item_slots_resolve(struct buffer_map *m, uint32_t domain, const struct vyre_work_item *it,
			struct item_slots *s)
{
	item_slots_of(m, domain, it, vyre_op_operands(it->op_handle), s);
}
