/* SPDX-License-Identifier: MIT */
/*
 * Report lists. A state's list is a merge of two sorted lists (its own
 * patterns and its failure state's list, or the lists of a pair's two
 * components), so building every list costs the size of the output, never a
 * walk of the dictionary-suffix chains.
 */
#include <stdlib.h>
#include <string.h>

#include "dfa_build.h"
#include "vyre/abi.h"

int vyre_dfa_lists_reserve(struct vyre_dfa_lists *l, uint32_t states)
{
	size_t bytes = (size_t)(states ? states : 1) * sizeof(uint32_t);

	if ((uint64_t)(states ? states : 1) * sizeof(uint32_t) > SIZE_MAX)
		return VYRE_E_NOMEM;
	uint32_t *first = realloc(l->first, bytes);

	if (!first)
		return VYRE_E_NOMEM;
	l->first = first;
	uint32_t *count = realloc(l->count, bytes);

	if (!count)
		return VYRE_E_NOMEM;
	l->count = count;
	return 0;
}

static int grow(struct vyre_dfa_lists *l, uint64_t need)
{
	if (need <= l->cap && l->ent)
		return 0;
	/* a table holds every entry in 8 bytes, below 4 GiB */
	if (need > UINT32_MAX / sizeof(struct vyre_dfa_out))
		return VYRE_E_NOMEM;
	uint64_t cap = l->cap ? 2 * (uint64_t)l->cap : 256;

	if (cap < need)
		cap = need;
	if (cap > UINT32_MAX / sizeof(struct vyre_dfa_out))
		cap = UINT32_MAX / sizeof(struct vyre_dfa_out);
	void *ent = realloc(l->ent, (size_t)cap * sizeof(*l->ent));

	if (!ent)
		return VYRE_E_NOMEM;
	l->ent = ent;
	l->cap = (uint32_t)cap;
	return 0;
}

int vyre_dfa_lists_merge(struct vyre_dfa_lists *l, uint32_t s, const struct vyre_dfa_out *x,
			 uint32_t nx, const struct vyre_dfa_out *y, uint32_t ny)
{
	/* @x or @y may lie in l->ent, which growing moves */
	uintptr_t lo = (uintptr_t)l->ent, hi = lo + (uintptr_t)l->n_ent * sizeof(*l->ent);
	int x_in = l->ent && (uintptr_t)x >= lo && (uintptr_t)x < hi;
	int y_in = l->ent && (uintptr_t)y >= lo && (uintptr_t)y < hi;
	size_t x_at = x_in ? ((uintptr_t)x - lo) / sizeof(*x) : 0;
	size_t y_at = y_in ? ((uintptr_t)y - lo) / sizeof(*y) : 0;
	int err = grow(l, (uint64_t)l->n_ent + nx + ny);

	if (err)
		return err;
	x = x_in ? l->ent + x_at : x;
	y = y_in ? l->ent + y_at : y;
	struct vyre_dfa_out *w = l->ent + l->n_ent;
	uint32_t i = 0, j = 0, k = 0;

	while (i < nx && j < ny) {
		if (x[i].id < y[j].id) {
			w[k++] = x[i++];
		} else if (y[j].id < x[i].id) {
			w[k++] = y[j++];
		} else {
			w[k] = x[i].len >= y[j].len ? x[i] : y[j];
			k++, i++, j++;
		}
	}
	while (i < nx)
		w[k++] = x[i++];
	while (j < ny)
		w[k++] = y[j++];
	l->first[s] = l->n_ent;
	l->count[s] = k;
	l->n_ent += k;
	return 0;
}

void vyre_dfa_lists_free(struct vyre_dfa_lists *l)
{
	free(l->first);
	free(l->count);
	free(l->ent);
	memset(l, 0, sizeof(*l));
}
