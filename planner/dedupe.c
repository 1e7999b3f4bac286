/* SPDX-License-Identifier: MIT */
/*
 * Hazard-correct dedupe (docs/design.md 7.1) and the seed's prune built on it.
 *
 * Item k is satisfied by an earlier identical item s (same domain, op,
 * input, output and param) only when re-running k could not change anything:
 * s is idempotent (vyre_op_idempotent: it does not read what it writes), and
 * no item executed between s and k wrote s's input, output or DFA table.
 * The second condition is one comparison per buffer: the buffer's last
 * executed writer must not come after s (s itself is the last writer of its
 * output). Deduplicated items execute nothing, so they never count as
 * writers.
 *
 * Flags: a VYRE_SQE_NODEDUPE item always runs; a VYRE_SQE_FENCE item always
 * runs too (its completion orders its client's earlier items, so it must be
 * scheduled after them). Both may still serve as the source of a later
 * identical item: they did run, which is all a source needs. A chained item
 * (VYRE_PLAN_F_CHAIN) always runs and is never a source: whether it runs at
 * all depends on the items before it in its chain (docs/design.md 6.3).
 */
#include <string.h>

#include "../gpu/ops.h"
#include "track.h"

#define DENSE_OUTPUT_UNIQUE_BITS  4096u
#define DENSE_OUTPUT_UNIQUE_WORDS (DENSE_OUTPUT_UNIQUE_BITS / 64u)

int vyre_output_handles_dense_unique(const struct vyre_work_item *items, uint32_t n)
{
	uint64_t seen[DENSE_OUTPUT_UNIQUE_WORDS] = {0};
	uint32_t min = UINT32_MAX, max = 0;

	if (n <= 1)
		return 1;
	if (n > DENSE_OUTPUT_UNIQUE_BITS)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		min = items[i].output_handle < min ? items[i].output_handle : min;
		max = items[i].output_handle > max ? items[i].output_handle : max;
	}
	if ((uint64_t)max - min + 1 > DENSE_OUTPUT_UNIQUE_BITS)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = items[i].output_handle - min;
		uint64_t bit = 1ull << (off % 64);

		if (seen[off / 64] & bit)
			return 0;
		seen[off / 64] |= bit;
	}
	return 1;
}

int dedupe_table_reserve(struct vyre_arena *a, uint32_t n_items, struct dedupe_table *t,
			 enum vyre_plan_component where, struct vyre_plan_error *err)
{
	uint32_t cap = table_capacity(n_items);
	void *p;

	if (vyre_arena_reserve(a, cap, sizeof(struct dedupe_slot), &p))
		return plan_err_reserve(err, where, "redundant-work hash", n_items);
	*t = (struct dedupe_table){.slots = p, .cap = cap, .mask = cap - 1};
	if (p)
		memset(p, 0, (size_t)cap * sizeof(struct dedupe_slot));
	return 0;
}

void dedupe_table_begin(struct dedupe_table *t, uint32_t n_items)
{
	t->gen = next_generation(t->gen);
	if (t->gen == 0) {
		memset(t->slots, 0, (size_t)t->cap * sizeof(*t->slots));
		t->gen = 1;
	}
	t->mask = table_mask_for(t->cap, n_items);
}

static uint64_t item_hash(const struct vyre_work_item *it, uint32_t domain)
{
	uint64_t a = (uint64_t)it->op_handle << 32 | it->input_handle;
	uint64_t b = (uint64_t)it->output_handle << 32 | it->param;

	return mix64(a ^ mix64(b ^ mix64(domain)));
}

uint32_t dedupe_step_unwritten(struct dedupe_table *t, const struct buffer_map *m,
			       const struct vyre_work_item *items, const uint32_t *domain,
			       uint32_t k, int may_dedupe, const struct item_slots *s)
{
	const struct vyre_work_item *it = &items[k];
	const uint32_t dom = domain ? domain[k] : 0;

	for (uint32_t h = (uint32_t)item_hash(it, dom) & t->mask;; h = (h + 1) & t->mask) {
		struct dedupe_slot *slot = &t->slots[h];
		uint32_t src = slot->source;

		if (slot->gen != t->gen) {
			*slot = (struct dedupe_slot){.source = k, .gen = t->gen};
			return VYRE_PLAN_NONE;
		}
		if (!same_item(&items[src], it) || (domain && domain[src] != dom))
			continue;
		if (may_dedupe && unchanged_since(m, s, src))
			return src;
		slot->source = k;
		return VYRE_PLAN_NONE;
	}
}

int vyre_dedupe_prune(struct vyre_arena *a, const struct vyre_work_item *items, uint32_t n,
		      struct vyre_work_item *out, uint32_t *n_out, struct vyre_redundancy *report,
		      struct vyre_plan_error *err)
{
	const enum vyre_plan_component in = VYRE_PLAN_IN_DEDUPE;
	struct buffer_map map;
	struct dedupe_table table;
	void *pairs;
	int found = 0;

	*n_out = 0;
	*report = (struct vyre_redundancy){0};
	if (vyre_output_handles_dense_unique(items, n))
		return 0;
	if (n > UINT32_MAX / 3)
		return plan_err_overflow(err, in, "buffer count");
	if (buffer_map_reserve(a, 3 * n, &map, in, err) ||
	    dedupe_table_reserve(a, n, &table, in, err))
		return VYRE_E_NOMEM;
	if (vyre_arena_reserve(a, n, sizeof(struct vyre_redundant_pair), &pairs))
		return plan_err_reserve(err, in, "dedup report", n);
	report->pairs = pairs;
	buffer_map_begin(&map, 3 * n);
	dedupe_table_begin(&table, n);
	for (uint32_t k = 0; k < n; k++) {
		struct item_slots s;
		uint32_t src;

		item_slots_resolve(&map, 0, &items[k], &s);
		src = dedupe_step(&table, &map, items, NULL, k, NULL, NULL, &s);
		if (src != VYRE_PLAN_NONE) {
			if (!found) {
				memcpy(out, items, (size_t)k * sizeof(*items));
				*n_out = k;
				found = 1;
			}
			report->pairs[report->n_pairs++] =
			    (struct vyre_redundant_pair){.early = src, .late = k, .op_index = 0};
			continue;
		}
		if (s.write != VYRE_PLAN_NONE)
			map.slot[s.write].last_write = k;
		if (found)
			out[(*n_out)++] = items[k];
	}
	report->total_redundant_ops = report->n_pairs;
	return 0;
}
