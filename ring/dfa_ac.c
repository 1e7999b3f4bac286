/* SPDX-License-Identifier: MIT */
/*
 * The Aho-Corasick automaton of one kind of pattern: the trie of the sorted
 * set, then a breadth-first pass that fills every missing transition from
 * the failure state's row (complete by then, being shallower) and gives each
 * state its report list: its own patterns merged with its failure state's
 * list, which already holds the rest of the dictionary-suffix chain. A
 * caseless automaton has edges on folded bytes only; each row's upper-case
 * letters copy the lower-case ones once the row is complete.
 */
#include <stdlib.h>
#include <string.h>

#include "dfa_build.h"
#include "vyre/abi.h"

struct own {
	uint32_t *at, *n;	  /* per state: where its own entries start, how many */
	struct vyre_dfa_out *ent; /* at most one per pattern */
};

/* The trie: state ids in the order the sorted patterns first reach them. */
static int build_trie(const struct vyre_dfa_set *s, uint32_t *rows, struct own *own)
{
	uint32_t *path = malloc(((size_t)s->max_len + 1) * sizeof(*path));
	uint32_t next_id = 1, n_own = 0;

	if (!path)
		return VYRE_E_NOMEM;
	path[0] = 0;
	for (uint32_t k = 0; k < s->n; k++) {
		uint32_t i = s->order[k], len = s->pat[i].len;
		const uint8_t *b = s->bytes[i];

		/* path[0..lcp] is still the previous pattern's, which shares those bytes */
		for (uint32_t d = s->lcp[k]; d < len; d++) {
			rows[(size_t)path[d] * VYRE_DFA_ALPHABET + b[d]] = next_id;
			path[d + 1] = next_id++;
		}
		uint32_t end = path[len];

		/* equal patterns are neighbours, their ids sorted: one entry per id */
		if (own->n[end] && own->ent[n_own - 1].id == s->pat[i].id)
			continue;
		if (own->n[end] == 0)
			own->at[end] = n_own;
		own->ent[n_own++] = (struct vyre_dfa_out){s->pat[i].id, len};
		own->n[end]++;
	}
	free(path);
	return 0;
}

static void fill_row(const struct vyre_dfa_set *set, uint32_t *rows, uint32_t s, uint32_t *fail,
		     uint32_t *queue, uint32_t *tail)
{
	uint32_t *row = rows + (size_t)s * VYRE_DFA_ALPHABET;
	const uint32_t *frow = rows + (size_t)fail[s] * VYRE_DFA_ALPHABET;

	for (uint32_t c = 0; c < VYRE_DFA_ALPHABET; c++) {
		uint32_t child = row[c];

		if (set->caseless && c >= 'A' && c <= 'Z')
			continue;
		if (child == 0) { /* no trie edge leads back to the root */
			row[c] = s ? frow[c] : 0;
			continue;
		}
		fail[child] = s ? frow[c] : 0;
		queue[(*tail)++] = child;
	}
	if (set->caseless)
		for (uint32_t c = 'A'; c <= 'Z'; c++)
			row[c] = row[c + 32];
}

static int complete(const struct vyre_dfa_set *set, struct vyre_dfa_ac *a, const struct own *own)
{
	uint32_t *fail = malloc((size_t)a->n * sizeof(*fail));
	uint32_t *queue = malloc((size_t)a->n * sizeof(*queue));
	uint32_t head = 0, tail = 0;
	int err = 0;

	if (!fail || !queue) {
		err = VYRE_E_NOMEM;
		goto out;
	}
	fail[0] = 0;
	queue[tail++] = 0;
	while (head < tail && !err) {
		uint32_t s = queue[head++];

		fill_row(set, a->rows, s, fail, queue, &tail);
		const struct vyre_dfa_out *inherit = s ? a->out.ent + a->out.first[fail[s]] : NULL;

		err = vyre_dfa_lists_merge(&a->out, s, own->ent + own->at[s], own->n[s], inherit,
					   s ? a->out.count[fail[s]] : 0);
	}
out:
	free(fail);
	free(queue);
	return err;
}

int vyre_dfa_ac_build(const struct vyre_dfa_set *s, uint32_t *rows, struct vyre_dfa_ac *a)
{
	struct own own = {0};
	int err;

	memset(a, 0, sizeof(*a));
	a->rows = rows;
	a->n = (uint32_t)s->nodes;
	own.at = calloc(a->n, sizeof(*own.at));
	own.n = calloc(a->n, sizeof(*own.n));
	own.ent = malloc((s->n ? s->n : 1) * sizeof(*own.ent));
	if (!own.at || !own.n || !own.ent)
		err = VYRE_E_NOMEM;
	else
		err = vyre_dfa_lists_reserve(&a->out, a->n);
	if (!err)
		err = build_trie(s, rows, &own);
	if (!err)
		err = complete(s, a, &own);
	free(own.at);
	free(own.n);
	free(own.ent);
	if (err)
		vyre_dfa_ac_free(a);
	return err;
}

void vyre_dfa_ac_free(struct vyre_dfa_ac *a)
{
	vyre_dfa_lists_free(&a->out);
	a->n = 0;
}
