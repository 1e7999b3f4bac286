/* SPDX-License-Identifier: MIT */
/*
 * The patterns of one kind in trie order. Sorting first lets the trie be
 * counted before anything dense is allocated (so a set over the limit costs
 * no table), and built without edge lookups: each pattern only extends the
 * path of the one before it past their common prefix.
 */
#include <stdlib.h>
#include <string.h>

#include "dfa_build.h"
#include "vyre/abi.h"

struct sort_ctx {
	const struct vyre_dfa_pattern *pat;
	const uint8_t *const *bytes;
};

static int by_bytes_then_id(const void *x, const void *y, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	uint32_t li = c->pat[i].len, lj = c->pat[j].len;
	int d = memcmp(c->bytes[i], c->bytes[j], li < lj ? li : lj);

	if (d)
		return d;
	if (li != lj)
		return li < lj ? -1 : 1;
	if (c->pat[i].id != c->pat[j].id)
		return c->pat[i].id < c->pat[j].id ? -1 : 1;
	return i < j ? -1 : i > j;
}

static uint32_t common_prefix(const uint8_t *a, uint32_t la, const uint8_t *b, uint32_t lb)
{
	uint32_t n = la < lb ? la : lb, k = 0;

	while (k < n && a[k] == b[k])
		k++;
	return k;
}

/* Folded copies of the caseless patterns, so the sort and the trie see one case. */
static int fold_patterns(struct vyre_dfa_set *s)
{
	uint64_t total = 0;

	for (uint32_t k = 0; k < s->n; k++)
		total += s->pat[s->order[k]].len;
	if (total > SIZE_MAX || !(s->folded = malloc(total ? (size_t)total : 1)))
		return VYRE_E_NOMEM;
	uint8_t *w = s->folded;

	for (uint32_t k = 0; k < s->n; k++) {
		uint32_t i = s->order[k];

		for (uint32_t j = 0; j < s->pat[i].len; j++)
			w[j] = vyre_dfa_fold(s->pat[i].bytes[j]);
		s->bytes[i] = w;
		w += s->pat[i].len;
	}
	return 0;
}

int vyre_dfa_set_init(struct vyre_dfa_set *s, const struct vyre_dfa_pattern *p, uint32_t n,
		      int caseless)
{
	int want = caseless ? 1 : 0;

	memset(s, 0, sizeof(*s));
	s->pat = p;
	s->caseless = want;
	if ((uint64_t)n * sizeof(*s->bytes) > SIZE_MAX)
		return VYRE_E_NOMEM;
	s->bytes = calloc(n ? n : 1, sizeof(*s->bytes));
	s->order = malloc((n ? n : 1) * sizeof(*s->order));
	s->lcp = malloc((n ? n : 1) * sizeof(*s->lcp));
	if (!s->bytes || !s->order || !s->lcp)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (((p[i].flags & VYRE_DFA_CASELESS) != 0) != want)
			continue;
		s->order[s->n++] = i;
		s->bytes[i] = p[i].bytes;
		if (p[i].len > s->max_len)
			s->max_len = p[i].len;
	}
	if (want && fold_patterns(s))
		return VYRE_E_NOMEM;
	struct sort_ctx ctx = {p, s->bytes};

	qsort_r(s->order, s->n, sizeof(*s->order), by_bytes_then_id, &ctx);
	s->nodes = 1;
	for (uint32_t k = 0; k < s->n; k++) {
		uint32_t i = s->order[k], prev = k ? s->order[k - 1] : i;

		s->lcp[k] =
		    k ? common_prefix(s->bytes[prev], p[prev].len, s->bytes[i], p[i].len) : 0;
		s->nodes += p[i].len - s->lcp[k];
	}
	return 0;
}

void vyre_dfa_set_free(struct vyre_dfa_set *s)
{
	free(s->bytes);
	free(s->folded);
	free(s->order);
	free(s->lcp);
	memset(s, 0, sizeof(*s));
}
