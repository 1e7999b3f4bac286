/* SPDX-License-Identifier: MIT */
/*
 * ring/dfa_build.h - the parts of vyre_dfa_compile (include/vyre/dfa.h,
 * docs/design.md 6.8): the patterns of one kind sorted into a trie order
 * (dfa_set.c), an Aho-Corasick automaton of one kind (dfa_ac.c), report lists
 * (dfa_lists.c), the product of two automata (dfa_product.c) and the table
 * writer (dfa_table.c). Library-internal: hidden from libvyre.so's exports.
 */
#ifndef VYRE_RING_DFA_BUILD_H
#define VYRE_RING_DFA_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/dfa.h"

#define VYRE_DFA_HIDDEN	  __attribute__((visibility("hidden")))
#define VYRE_DFA_ALPHABET 256u

/* One report entry: pattern id and the longest length of it ending here. */
struct vyre_dfa_out {
	uint32_t id, len;
};

/*
 * Per-state report lists: state s lists ent[first[s] .. first[s] + count[s]),
 * ids strictly increasing. The entries of different states need not lie in
 * state order (an automaton fills them in breadth-first order).
 */
struct vyre_dfa_lists {
	uint32_t *first, *count; /* per state */
	struct vyre_dfa_out *ent;
	uint32_t n_ent, cap;
};

/*
 * The patterns of one kind (case-sensitive, or caseless over folded bytes)
 * in trie order: sorted by bytes, then id. lcp[k] is how many leading bytes
 * order[k] shares with order[k - 1]; nodes = 1 + sum(len - lcp) is the size of
 * their trie, hence of their Aho-Corasick automaton.
 */
struct vyre_dfa_set {
	const struct vyre_dfa_pattern *pat; /* the caller's array */
	const uint8_t **bytes;		    /* per caller index: the bytes to match (folded) */
	uint8_t *folded;		    /* storage of the folded copies, caseless only */
	uint32_t *order, *lcp;
	uint32_t n, max_len;
	uint64_t nodes;
	int caseless;
};

/* An automaton of one kind: complete transitions and per-state report lists. */
struct vyre_dfa_ac {
	uint32_t *rows; /* n * 256 entries, not owned */
	uint32_t n;
	struct vyre_dfa_lists out;
};

static inline uint8_t vyre_dfa_fold(uint8_t b)
{
	return b >= 'A' && b <= 'Z' ? (uint8_t)(b + 32) : b;
}

/* Sorts the patterns whose CASELESS flag equals @caseless; counts their trie. */
VYRE_DFA_HIDDEN int vyre_dfa_set_init(struct vyre_dfa_set *s, const struct vyre_dfa_pattern *p,
				      uint32_t n, int caseless);
VYRE_DFA_HIDDEN void vyre_dfa_set_free(struct vyre_dfa_set *s);

/*
 * Builds the automaton of @s into @rows (s->nodes * 256 entries, zeroed by
 * the caller), state 0 the start; fills a->out. s->nodes must fit a u32.
 */
VYRE_DFA_HIDDEN int vyre_dfa_ac_build(const struct vyre_dfa_set *s, uint32_t *rows,
				      struct vyre_dfa_ac *a);
VYRE_DFA_HIDDEN void vyre_dfa_ac_free(struct vyre_dfa_ac *a);

VYRE_DFA_HIDDEN int vyre_dfa_lists_reserve(struct vyre_dfa_lists *l, uint32_t states);
/* Appends to state @s the union of @x and @y by id (the longer len on equal ids). */
VYRE_DFA_HIDDEN int vyre_dfa_lists_merge(struct vyre_dfa_lists *l, uint32_t s,
					 const struct vyre_dfa_out *x, uint32_t nx,
					 const struct vyre_dfa_out *y, uint32_t ny);
VYRE_DFA_HIDDEN void vyre_dfa_lists_free(struct vyre_dfa_lists *l);

/*
 * The bytes of a table of @states states and @n_ent report entries (a table
 * must stay at or below UINT32_MAX bytes); *rows_off (may be NULL) is where
 * next[][] starts. No overflow for any u32 counts.
 */
VYRE_DFA_HIDDEN uint64_t vyre_dfa_table_size(uint64_t states, uint64_t n_ent, uint64_t *rows_off);

/*
 * Finishes a table: @buf holds next[n][256] at byte @rows_at and has room for
 * that; it grows to the whole table (rows moved to their place), gets the
 * header, accept bits and report section from @out. On failure @buf is freed.
 */
VYRE_DFA_HIDDEN int vyre_dfa_table_finish(uint8_t *buf, uint64_t rows_at, uint32_t n,
					  const struct vyre_dfa_lists *out, uint8_t **table,
					  uint32_t *bytes);

/*
 * The product of @a (case-sensitive) and @b (caseless): at most @max_states
 * reachable pairs, written as a table. Sets info->states and
 * report_entries: what it built, or on VYRE_E_NOMEM at least what it needs.
 */
VYRE_DFA_HIDDEN int vyre_dfa_product(const struct vyre_dfa_ac *a, const struct vyre_dfa_ac *b,
				     uint32_t max_states, uint8_t **table, uint32_t *bytes,
				     struct vyre_dfa_info *info);

#endif /* VYRE_RING_DFA_BUILD_H */
