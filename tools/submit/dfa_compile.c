/* SPDX-License-Identifier: MIT */
/*
 * Aho-Corasick construction: a trie of the patterns, then a breadth-first
 * pass that fills every missing transition from the failure state's row (which
 * is complete by then, being shallower) and inherits its accept bit.
 */
#include "dfa_compile.h"

#include <stdlib.h>
#include <string.h>

#include "vyre/abi.h"
#include "../../gpu/ops.h"

#define ALPHABET 256u

struct trie {
	uint32_t (*next)[ALPHABET]; /* 0 = no edge yet: no trie edge leads back to the root */
	uint8_t *accept;
	uint32_t n, cap, max;
};

static int trie_add_state(struct trie *t, uint32_t *id)
{
	if (t->n >= t->max)
		return VYRE_E_NOMEM;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap : 64;

		cap = cap > t->max / 2 ? t->max : cap * 2;
		void *next = realloc(t->next, (size_t)cap * sizeof(*t->next));

		if (!next)
			return VYRE_E_NOMEM;
		t->next = next;
		uint8_t *accept = realloc(t->accept, cap);

		if (!accept)
			return VYRE_E_NOMEM;
		t->accept = accept;
		t->cap = cap;
	}
	memset(t->next[t->n], 0, sizeof(t->next[t->n]));
	t->accept[t->n] = 0;
	*id = t->n++;
	return 0;
}

static int trie_insert(struct trie *t, const struct vyre_dfa_pattern *p)
{
	uint32_t s = 0;

	for (uint32_t i = 0; i < p->len; i++) {
		uint8_t c = p->bytes[i];

		if (t->next[s][c] == 0) {
			uint32_t id;
			int err = trie_add_state(t, &id);

			if (err)
				return err;
			t->next[s][c] = id;
		}
		s = t->next[s][c];
	}
	t->accept[s] = 1;
	return 0;
}

/* Turns the trie into the complete automaton in place. */
static int fold_failure_links(struct trie *t)
{
	uint32_t *fail = calloc(t->n, sizeof(*fail));
	uint32_t *queue = malloc((size_t)t->n * sizeof(*queue));
	uint32_t head = 0, tail = 0;

	if (!fail || !queue) {
		free(fail);
		free(queue);
		return VYRE_E_NOMEM;
	}
	queue[tail++] = 0;
	while (head < tail) {
		uint32_t s = queue[head++];

		for (uint32_t c = 0; c < ALPHABET; c++) {
			uint32_t child = t->next[s][c];

			if (child == 0) {
				t->next[s][c] = s == 0 ? 0 : t->next[fail[s]][c];
				continue;
			}
			fail[child] = s == 0 ? 0 : t->next[fail[s]][c];
			t->accept[child] |= t->accept[fail[child]];
			queue[tail++] = child;
		}
	}
	free(fail);
	free(queue);
	return 0;
}

static void store32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static int emit_table(const struct trie *t, uint8_t **table, uint32_t *bytes)
{
	uint64_t need = vyre_dfa_table_bytes(t->n);

	if (need == 0 || need > UINT32_MAX)
		return VYRE_E_NOMEM;
	uint8_t *out = calloc(1, need);

	if (!out)
		return VYRE_E_NOMEM;
	uint32_t accept_words = (t->n + 31) / 32;

	store32(out, t->n);
	store32(out + 4, 0);
	for (uint32_t s = 0; s < t->n; s++)
		if (t->accept[s]) {
			uint8_t *w = out + 8 + 4 * (s / 32);
			uint32_t v;

			memcpy(&v, w, sizeof(v));
			store32(w, v | (1u << (s % 32)));
		}
	uint8_t *next = out + 8 + 4 * (uint64_t)accept_words;

	for (uint32_t s = 0; s < t->n; s++)
		for (uint32_t c = 0; c < ALPHABET; c++)
			store32(next + 4 * ((uint64_t)s * ALPHABET + c), t->next[s][c]);
	*table = out;
	*bytes = (uint32_t)need;
	return 0;
}

int vyre_dfa_compile(const struct vyre_dfa_pattern *patterns, uint32_t n, uint32_t max_states,
		     uint8_t **table, uint32_t *bytes)
{
	struct trie t = {.max = max_states};
	uint32_t root;
	int err;

	if ((n && !patterns) || !table || !bytes || max_states == 0)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < n; i++)
		if (patterns[i].len && !patterns[i].bytes)
			return VYRE_E_INVAL;
	err = trie_add_state(&t, &root);
	for (uint32_t i = 0; i < n && !err; i++)
		err = trie_insert(&t, &patterns[i]);
	if (!err)
		err = fold_failure_links(&t);
	if (!err)
		err = emit_table(&t, table, bytes);
	free(t.next);
	free(t.accept);
	return err;
}
