/* SPDX-License-Identifier: MIT */
/*
 * The table writer (docs/design.md 6 "DFA tables" and 6.8 "The report
 * section"): u32 n_states, start, accept[ceil(n/32)], next[n][256], then
 * magic, n_out, out_first[n + 1] and {id, len}[n_out], little-endian.
 */
#include <stdlib.h>
#include <string.h>

#include "dfa_build.h"
#include "vyre/abi.h"

uint64_t vyre_dfa_table_size(uint64_t states, uint64_t n_ent, uint64_t *rows_off)
{
	uint64_t off = 8 + 4 * ((states + 31) / 32);

	if (rows_off)
		*rows_off = off;
	/* states and n_ent below 2^32: far from overflowing a u64 */
	return off + 4 * VYRE_DFA_ALPHABET * states + 8 + 4 * (states + 1) + 8 * n_ent;
}

static void store32(uint8_t *p, uint32_t v)
{
	/* the table is little-endian; so is every host vyre builds for */
	memcpy(p, &v, sizeof(v));
}

static void write_report(uint8_t *p, uint32_t n, const struct vyre_dfa_lists *out)
{
	uint8_t *first = p + 8, *ent = first + 4 * ((size_t)n + 1);
	uint32_t at = 0;

	store32(p, VYRE_DFA_REPORT_MAGIC);
	store32(p + 4, out->n_ent);
	for (uint32_t s = 0; s < n; s++) {
		const struct vyre_dfa_out *e = out->ent + out->first[s];

		store32(first + 4 * (size_t)s, at);
		for (uint32_t k = 0; k < out->count[s]; k++, at++) {
			store32(ent + 8 * (size_t)at, e[k].id);
			store32(ent + 8 * (size_t)at + 4, e[k].len);
		}
	}
	store32(first + 4 * (size_t)n, at);
}

int vyre_dfa_table_finish(uint8_t *buf, uint64_t rows_at, uint32_t n,
			  const struct vyre_dfa_lists *out, uint8_t **table, uint32_t *bytes)
{
	uint64_t rows_off, total = vyre_dfa_table_size(n, out->n_ent, &rows_off);

	if (total > UINT32_MAX || total > SIZE_MAX) {
		free(buf);
		return VYRE_E_NOMEM;
	}
	uint8_t *t = realloc(buf, (size_t)total);

	if (!t) {
		free(buf);
		return VYRE_E_NOMEM;
	}
	size_t row_bytes = (size_t)n * 4 * VYRE_DFA_ALPHABET;

	if (rows_at != rows_off)
		memmove(t + rows_off, t + rows_at, row_bytes);
	store32(t, n);
	store32(t + 4, 0);
	memset(t + 8, 0, (size_t)rows_off - 8);
	for (uint32_t s = 0; s < n; s++)
		if (out->count[s])
			t[8 + s / 8] |= (uint8_t)(1u << (s % 8));
	write_report(t + rows_off + row_bytes, n, out);
	*table = t;
	*bytes = (uint32_t)total;
	return 0;
}
