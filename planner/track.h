/* SPDX-License-Identifier: MIT */
/*
 * planner/track.h - per-batch hazard tracking shared by the dedupe pass and
 * the dependency pass (planner-internal).
 *
 * A buffer is named by (domain, handle): handles of different domains never
 * alias. Each buffer gets a dense slot carrying its last executed writer and
 * the list of waves that read it since that write.
 *
 * The hash tables are reserved once for the largest batch and stamped with
 * a generation: starting a batch bumps the generation, which empties them
 * without touching memory, and masks them down to the batch's size so a
 * small batch probes a small, cache-resident part.
 *
 * What runs once per item is inline here: the lookup that finds a key where
 * it hashes to, the slots of an item, and the dedupe step.
 */
#ifndef VYRE_PLANNER_TRACK_H
#define VYRE_PLANNER_TRACK_H

#include <stdint.h>

#include "../gpu/ops.h"
#include "internal.h"

/* Open-addressing map from 64-bit keys to dense ids 0, 1, 2, ... */
struct id_slot {
	uint64_t key;
	uint32_t id;
	uint32_t gen; /* the slot is empty unless gen is the map's */
};

/*
 * The map starts small and doubles (re-inserting the keys it holds) while it
 * is more than half full, so it stays proportional to the keys a batch
 * really has, not to the most it could have: a cache-sized table for the
 * common batch that names a few hundred buffers. A batch starts at the size
 * the previous one grew to, as far as its own keys could need it.
 */
struct id_map {
	struct id_slot *slots;
	uint64_t *keys; /* id -> key, for growing */
	uint32_t cap;	/* reserved slots, a power of two */
	uint32_t mask;
	uint32_t shift; /* 64 - log2(mask + 1): Fibonacci hashing keeps the top bits */
	uint32_t gen;
	uint32_t n_ids;
	uint32_t max_ids;
	uint32_t last_slots; /* the slots the previous batch ended with */
};

/* Room for @max_ids keys (empty until id_map_begin). */
int id_map_reserve(struct vyre_arena *a, uint32_t max_ids, struct id_map *m,
		   enum vyre_plan_component where, const char *field, struct vyre_plan_error *err);
/* Empty the map for a batch of at most @max_ids keys (<= the reserved room). */
void id_map_begin(struct id_map *m, uint32_t max_ids);
/* Id of @key; a new key gets the next id and sets *added. NONE when full. */
uint32_t id_map_get(struct id_map *m, uint64_t key, int *added);

/* Fibonacci hashing: one multiply, the well-mixed top bits pick the slot (mask >= 15). */
static inline uint32_t id_map_slot(const struct id_map *m, uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> m->shift);
}

/*
 * id_map_get, with the common cases inline: the key sits where it hashes
 * to, or that slot is free and the map has room without growing.
 */
static inline uint32_t id_map_find(struct id_map *m, uint64_t key, int *added)
{
	struct id_slot *s = &m->slots[id_map_slot(m, key)];

	if (s->gen == m->gen) {
		if (s->key == key) {
			*added = 0;
			return s->id;
		}
	} else if (m->n_ids < m->max_ids && 2 * ((uint64_t)m->n_ids + 1) <= (uint64_t)m->mask + 1) {
		*s = (struct id_slot){.key = key, .id = m->n_ids, .gen = m->gen};
		m->keys[m->n_ids] = key;
		*added = 1;
		return m->n_ids++;
	}
	return id_map_get(m, key, added);
}

/*
 * A read-only operand for the memory budget (docs/design.md 7.4): a byte
 * range of a buffer, counted once per group however many waves of the
 * group read it. A buffer's ranges form a short list from its slot.
 */
struct share_range {
	uint64_t off;
	uint32_t bytes;
	uint32_t group; /* 1 + the group that counted it last, 0: none yet */
	uint32_t next;	/* the buffer's next range, or NONE */
};

/*
 * Ranges of one buffer that count once per group; a wave reading a further
 * one is charged for it alone (more bytes than it touches, never fewer).
 */
#define SHARE_RANGES_PER_BUFFER 4u

/* What a batch knows of a buffer: one 16-byte entry, one cache line for the lot. */
struct slot_state {
	uint32_t last_write; /* item index of its last executed writer */
	uint32_t readers;    /* head of its reader list (a node index) */
	uint32_t share_head; /* its first shared range */
	uint32_t out_arm;    /* the arm of the items writing it (ARMS_MANY: several) */
};

/*
 * A buffer found by its handle's index instead of its hash: vyred's handles
 * are dense slots (ring/handles.h), and a batch names them mostly in order,
 * so the lookups walk this table in order where hashing scattered them over
 * a table larger than the caches (a miss an item at 65536 items).
 *
 * An index has DIRECT_WAYS ways, picked by the domain's low bits: vyred's
 * domains share one numbering of handles, so a batch of several domains
 * names the same index in each, and a way of its own keeps each of them off
 * the hash (a branch the predictor could not learn when the domains
 * alternate at random). A way holds the buffer's id alone; the id map's
 * keys[] says whether it is this batch's and whose (a sparse set: no
 * generation, no clearing).
 */
#define DIRECT_WAYS 4u

struct buffer_map {
	struct id_map ids; /* (domain << 32) | handle -> slot */
	uint32_t *direct;  /* [direct_n * DIRECT_WAYS]: ids, by handle & direct_mask; NULL: none */
	uint32_t direct_n;
	uint32_t direct_mask;
	struct slot_state *slot; /* [max buffers] */
	struct share_range
	    *ranges; /* [max_ranges + 1] (the last: NONE's, of no bytes); NULL: none */
	uint32_t n_ranges;
	uint32_t max_ranges;
	int full; /* a buffer found no slot: the map was sized too small */
};

/* Room for @max_buffers distinct buffers. */
int buffer_map_reserve(struct vyre_arena *a, uint32_t max_buffers, struct buffer_map *m,
		       enum vyre_plan_component where, struct vyre_plan_error *err);
/* Also look handles up directly by their index below @direct_handles (config.direct_handles). */
int buffer_map_reserve_direct(struct vyre_arena *a, struct buffer_map *m, uint32_t direct_handles,
			      enum vyre_plan_component where, struct vyre_plan_error *err);
/* Also track up to @max_ranges shared read-only operands (share_range), for the batch planner. */
int buffer_map_reserve_share(struct vyre_arena *a, struct buffer_map *m, uint32_t max_ranges,
			     enum vyre_plan_component where, struct vyre_plan_error *err);
/* The shared range (@off, @bytes) of buffer @slot: its index, or NONE when it cannot be one. */
uint32_t buffer_share_range(struct buffer_map *m, uint32_t slot, uint64_t off, uint32_t bytes);
void buffer_map_begin(struct buffer_map *m, uint32_t max_buffers);
/* A slot the batch names for the first time: no writer, no reader, no range, no arm. */
static inline void buffer_slot_added(struct buffer_map *m, uint32_t slot)
{
	m->slot[slot] =
	    (struct slot_state){VYRE_PLAN_NONE, VYRE_PLAN_NONE, VYRE_PLAN_NONE, VYRE_PLAN_NONE};
}

/* A new id for @key that only the direct table will find; NONE when the map is full. */
static inline uint32_t id_map_take(struct id_map *m, uint64_t key)
{
	if (m->n_ids == m->max_ids)
		return VYRE_PLAN_NONE;
	m->keys[m->n_ids] = key;
	return m->n_ids++;
}

/* @key's way of the direct table: its index and the domain's low bits. */
static inline uint32_t direct_way(const struct buffer_map *m, uint64_t key)
{
	return ((uint32_t)key & m->direct_mask) * DIRECT_WAYS +
	       ((uint32_t)(key >> 32) & (DIRECT_WAYS - 1));
}

/* The slot of (@domain, @handle); NONE for handle 0 or when the map is full. */
static inline uint32_t buffer_slot(struct buffer_map *m, uint32_t domain, uint32_t handle)
{
	const uint64_t key = (uint64_t)domain << 32 | handle;
	int added;
	uint32_t slot;

	if (handle == 0)
		return VYRE_PLAN_NONE;
	if ((handle & m->direct_mask) < m->direct_n) {
		uint32_t *way = &m->direct[direct_way(m, key)];
		const uint32_t id = *way;

		if (id < m->ids.n_ids) {
			const uint64_t held = m->ids.keys[id];

			if (held == key)
				return id;
			/* another key of this batch owns the way: hashed, as without the table */
			if (direct_way(m, held) == direct_way(m, key))
				goto hashed;
		}
		/* an id of another batch: the first key of the way in this one owns it */
		slot = id_map_take(&m->ids, key);
		if (slot == VYRE_PLAN_NONE) {
			m->full = 1;
			return slot;
		}
		*way = slot;
		buffer_slot_added(m, slot);
		return slot;
	}
hashed:
	slot = id_map_find(&m->ids, key, &added);
	if (added)
		buffer_slot_added(m, slot);
	else if (slot == VYRE_PLAN_NONE)
		m->full = 1;
	return slot;
}

/* The buffer slots an item touches; NONE where it has no such operand. */
struct item_slots {
	uint32_t read[2];
	uint32_t n_reads; /* distinct reads only */
	uint32_t write;
	uint32_t in, table; /* the input's and the table's slots */
	uint32_t aux;	    /* a stream (docs/design.md 6.8): read and written */
};

/* The slots of @it, whose op has the operands @mask (vyre_op_operands; <= 0: none). */
static inline void item_slots_of(struct buffer_map *m, uint32_t domain,
				 const struct vyre_work_item *it, int mask, struct item_slots *s)
{
	s->n_reads = 0;
	s->read[0] = s->read[1] = s->in = s->table = s->write = s->aux = VYRE_PLAN_NONE;
	if (mask <= 0)
		return;
	/* vyre_op_access's order: the input, the table, then the output */
	if (mask & VYRE_OPERAND_IN)
		s->in = buffer_slot(m, domain, it->input_handle);
	if (mask & VYRE_OPERAND_TABLE)
		s->table = buffer_slot(m, domain, it->param);
	if (mask & VYRE_OPERAND_OUT)
		s->write = buffer_slot(m, domain, it->output_handle);
	if (s->in != VYRE_PLAN_NONE)
		s->read[s->n_reads++] = s->in;
	if (s->table != VYRE_PLAN_NONE && s->table != s->in)
		s->read[s->n_reads++] = s->table;
}

void item_slots_resolve(struct buffer_map *m, uint32_t domain, const struct vyre_work_item *it,
			struct item_slots *s);

/* out_arm of a buffer that items of two arms or more write. */
#define ARMS_MANY (VYRE_PLAN_NONE - 1)

/* Items ahead whose lines the cross-arm walk prefetches. */
#define PREFETCH_DISTANCE 8u

/* Reads its own output: running it twice differs from running it once. */
static inline int item_slots_in_place(const struct item_slots *s)
{
	/* bitwise: a quarter of the high mix is in place, at random */
	return (s->write != VYRE_PLAN_NONE) & ((s->read[0] == s->write) | (s->read[1] == s->write));
}

/* Earlier identical items that may satisfy later ones, one per key. */
struct dedupe_slot {
	uint32_t source; /* item index */
	uint32_t gen;
};

struct dedupe_table {
	struct dedupe_slot *slots;
	uint32_t cap;
	uint32_t mask;
	uint32_t gen;
};

int dedupe_table_reserve(struct vyre_arena *a, uint32_t n_items, struct dedupe_table *t,
			 enum vyre_plan_component where, struct vyre_plan_error *err);
void dedupe_table_begin(struct dedupe_table *t, uint32_t n_items);
/* The table's step for an item that writes nothing (NOP): see dedupe_step. */
uint32_t dedupe_step_unwritten(struct dedupe_table *t, const struct buffer_map *m,
			       const struct vyre_work_item *items, const uint32_t *domain,
			       uint32_t k, int may_dedupe, const struct item_slots *s);

static inline int same_item(const struct vyre_work_item *x, const struct vyre_work_item *y)
{
	return x->op_handle == y->op_handle && x->input_handle == y->input_handle &&
	       x->output_handle == y->output_handle && x->param == y->param;
}

/*
 * Same byte ranges of the same handles (docs/design.md 6.6, 7.1): one
 * handle is one heap base, so the exec offsets and lengths say it.
 */
static inline int same_ranges(const struct vyre_exec_item *x, const struct vyre_exec_item *y)
{
	return x->in_off == y->in_off && x->in_bytes == y->in_bytes && x->out_off == y->out_off &&
	       x->out_bytes == y->out_bytes;
}

/* No buffer of the key was written by an executed item after @source. */
static inline int unchanged_since(const struct buffer_map *m, const struct item_slots *s,
				  uint32_t source)
{
	for (uint32_t i = 0; i < s->n_reads; i++)
		if (m->slot[s->read[i]].last_write != VYRE_PLAN_NONE &&
		    m->slot[s->read[i]].last_write > source)
			return 0;
	return s->write == VYRE_PLAN_NONE || m->slot[s->write].last_write == VYRE_PLAN_NONE ||
	       m->slot[s->write].last_write <= source;
}

static inline int chained(const uint32_t *flags, uint32_t k)
{
	return flags && (flags[k] & VYRE_PLAN_F_CHAIN);
}

/*
 * docs/design.md 7.1 for item @k (not yet executed): returns the earlier item that
 * satisfies it, or VYRE_PLAN_NONE when it must run (and then remembers it
 * as the source for its key when it may be one). @domain and @flags (the
 * batch's VYRE_SQE_* and VYRE_PLAN_F_* per item) may be NULL; so may
 * @ranges, the batch's exec items where it has byte ranges (an identical
 * item then also names the same ranges).
 *
 * An item that writes a buffer can only be satisfied by that buffer's last
 * executed writer: an identical earlier item writes the same buffer, and any
 * other writer after it is a hazard. So one array read finds the only
 * candidate; the table serves items that write nothing (NOP).
 */
static inline uint32_t dedupe_step(struct dedupe_table *t, const struct buffer_map *m,
				   const struct vyre_work_item *items, const uint32_t *domain,
				   uint32_t k, const uint32_t *flags,
				   const struct vyre_exec_item *ranges, const struct item_slots *s)
{
	const int may_dedupe = !(flags && (flags[k] & (VYRE_SQE_NODEDUPE | VYRE_SQE_FENCE)));

	/* vyre_op_idempotent, from the slots: handles of one domain alias only when equal. */
	if (item_slots_in_place(s) || chained(flags, k) || !vyre_op_pure(items[k].op_handle))
		return VYRE_PLAN_NONE;
	if (s->write != VYRE_PLAN_NONE) {
		const uint32_t src = m->slot[s->write].last_write;

		if (may_dedupe && src != VYRE_PLAN_NONE && !chained(flags, src) &&
		    same_item(&items[src], &items[k]) &&
		    (!ranges || same_ranges(&ranges[src], &ranges[k])) &&
		    unchanged_since(m, s, src))
			return src;
		return VYRE_PLAN_NONE;
	}
	return dedupe_step_unwritten(t, m, items, domain, k, may_dedupe, s);
}

/*
 * First arm that emitted each (domain, op, input, output) triple. Eight
 * bytes a slot: arms are below 2^24 (VYRE_PLANNER_MAX_ITEMS), which leaves
 * eight bits of generation; the table is cleared when they wrap.
 */
struct cross_arm_slot {
	uint32_t rep;	  /* an item with the triple */
	uint32_t arm_gen; /* arm << 8 | generation */
};

struct cross_arm_table {
	struct cross_arm_slot *slots;
	uint32_t cap;
	uint32_t mask;
	uint32_t gen; /* 1..255 */
};

int cross_arm_table_reserve(struct vyre_arena *a, uint32_t n_items, struct cross_arm_table *t,
			    struct vyre_plan_error *err);
void cross_arm_table_begin(struct cross_arm_table *t, uint32_t n_items);
/*
 * The detection walk of vyre_cross_arm_detect into @pairs (room for every
 * item). With @skip_marked, an entry of @arm_items with CROSS_ARM_SKIP set
 * is an item that is in no pair: it only takes its place in its arm.
 */
#define CROSS_ARM_SKIP (1u << 31)
void cross_arm_walk(struct cross_arm_table *t, const struct vyre_work_item *items,
		    const uint32_t *arm_items, const uint32_t *arm_end, uint32_t n_arms,
		    const uint32_t *arm_domain, int skip_marked, struct vyre_redundancy *report);
/* Mask for a table of @cap slots holding at most @n keys: the smallest that stays half empty. */
static inline uint32_t table_mask_for(uint32_t cap, uint32_t n)
{
	uint32_t want = table_capacity(n);

	return (want < cap ? want : cap) - 1;
}

/* The next generation; 0 means every stamp must be cleared first. */
static inline uint32_t next_generation(uint32_t gen)
{
	return gen + 1;
}

#endif /* VYRE_PLANNER_TRACK_H */
