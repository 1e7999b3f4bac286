/* SPDX-License-Identifier: MIT */
/*
 * The product of the case-sensitive and the caseless automaton: a
 * breadth-first walk from (start, start) where only reachable pairs become
 * states (a hash map from pair to state). Most bytes lead both components
 * where they lead from their start states (no suffix of the state has an edge
 * on that byte), so such a transition is the start pair's and needs no map
 * look-up: the walk costs about as much as writing the rows.
 */
#include <stdlib.h>
#include <string.h>

#include "dfa_build.h"
#include "vyre/abi.h"

#define EMPTY UINT64_MAX /* no pair: components are below UINT32_MAX */

struct walk {
	uint64_t *key;
	uint32_t *val;
	uint64_t mask;	   /* map capacity - 1, a power of two minus one */
	uint32_t *pa, *pb; /* per state: its pair */
	uint32_t n, cap, max;
	struct vyre_dfa_lists out;
};

static uint64_t slot_of(uint64_t key, uint64_t mask)
{
	/* the product's top bits depend on every bit of the key (its low bits only on b's) */
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (h >> 32 ^ h) >> 16 & mask;
}

static int map_grow(struct walk *w)
{
	uint64_t cap = w->key ? 2 * (w->mask + 1) : 1024;

	if (cap > SIZE_MAX / sizeof(uint64_t))
		return VYRE_E_NOMEM;
	uint64_t *key = malloc((size_t)cap * sizeof(*key));
	uint32_t *val = malloc((size_t)cap * sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return VYRE_E_NOMEM;
	}
	memset(key, 0xff, (size_t)cap * sizeof(*key));
	for (uint64_t i = 0; w->key && i <= w->mask; i++) {
		if (w->key[i] == EMPTY)
			continue;
		uint64_t j = slot_of(w->key[i], cap - 1);

		while (key[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		key[j] = w->key[i];
		val[j] = w->val[i];
	}
	free(w->key);
	free(w->val);
	w->key = key;
	w->val = val;
	w->mask = cap - 1;
	return 0;
}

static int states_grow(struct walk *w)
{
	uint64_t cap = w->cap ? 2 * (uint64_t)w->cap : 1024;

	if (cap > w->max)
		cap = w->max;
	uint32_t *pa = realloc(w->pa, (size_t)cap * sizeof(*pa));

	if (!pa)
		return VYRE_E_NOMEM;
	w->pa = pa;
	uint32_t *pb = realloc(w->pb, (size_t)cap * sizeof(*pb));

	if (!pb)
		return VYRE_E_NOMEM;
	w->pb = pb;
	w->cap = (uint32_t)cap;
	return vyre_dfa_lists_reserve(&w->out, w->cap);
}

/* The state of pair (a, b), made a new one when it has none. */
static int state_of(struct walk *w, uint32_t a, uint32_t b, uint32_t *id)
{
	uint64_t key = (uint64_t)a << 32 | b, i = slot_of(key, w->mask);

	for (; w->key[i] != EMPTY; i = (i + 1) & w->mask)
		if (w->key[i] == key) {
			*id = w->val[i];
			return 0;
		}
	if (w->n >= w->max)
		return VYRE_E_NOMEM;
	if (w->n == w->cap && states_grow(w))
		return VYRE_E_NOMEM;
	w->key[i] = key;
	w->val[i] = w->n;
	w->pa[w->n] = a;
	w->pb[w->n] = b;
	*id = w->n++;
	/* at most half full, so probes stay short */
	return 2 * (uint64_t)w->n > w->mask ? map_grow(w) : 0;
}

static int walk_row(struct walk *w, const struct vyre_dfa_ac *a, const struct vyre_dfa_ac *b,
		    uint32_t s, uint32_t *rows)
{
	const uint32_t *ra = a->rows + (size_t)w->pa[s] * VYRE_DFA_ALPHABET;
	const uint32_t *rb = b->rows + (size_t)w->pb[s] * VYRE_DFA_ALPHABET;
	uint32_t *row = rows + (size_t)s * VYRE_DFA_ALPHABET;

	for (uint32_t c = 0; c < VYRE_DFA_ALPHABET; c++) {
		/* state 0 is (0, 0): its row is complete before any other's */
		if (s && ra[c] == a->rows[c] && rb[c] == b->rows[c]) {
			row[c] = rows[c];
			continue;
		}
		int err = state_of(w, ra[c], rb[c], &row[c]);

		if (err)
			return err;
	}
	const struct vyre_dfa_lists *la = &a->out, *lb = &b->out;
	uint32_t x = w->pa[s], y = w->pb[s];

	return vyre_dfa_lists_merge(&w->out, s, la->ent + la->first[x], la->count[x],
				    lb->ent + lb->first[y], lb->count[y]);
}

int vyre_dfa_product(const struct vyre_dfa_ac *a, const struct vyre_dfa_ac *b, uint32_t max_states,
		     uint8_t **table, uint32_t *bytes, struct vyre_dfa_info *info)
{
	struct walk w = {.max = max_states};
	uint8_t *rows = NULL;
	uint32_t rows_cap = 0, id;
	int err = map_grow(&w);

	if (!err)
		err = state_of(&w, 0, 0, &id);
	for (uint32_t s = 0; s < w.n && !err; s++) {
		if (s == rows_cap) {
			uint64_t cap = rows_cap ? 2 * (uint64_t)rows_cap : 1024;

			cap = cap > w.max ? w.max : cap;
			uint8_t *r = realloc(rows, (size_t)cap * 4 * VYRE_DFA_ALPHABET);

			if (!r) {
				err = VYRE_E_NOMEM;
				break;
			}
			rows = r;
			rows_cap = (uint32_t)cap;
		}
		err = walk_row(&w, a, b, s, (uint32_t *)(void *)rows);
	}
	/* stopped at the limit: at least one state more, whose list is unknown */
	info->states = err == VYRE_E_NOMEM && w.n >= w.max ? (uint64_t)w.max + 1 : w.n;
	info->report_entries = w.out.n_ent;
	if (!err) {
		err = vyre_dfa_table_finish(rows, 0, w.n, &w.out, table, bytes);
		rows = NULL;
	}
	free(rows);
	free(w.key);
	free(w.val);
	free(w.pa);
	free(w.pb);
	vyre_dfa_lists_free(&w.out);
	return err;
}
