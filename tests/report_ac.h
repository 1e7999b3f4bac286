/* SPDX-License-Identifier: MIT */
/*
 * tests/report_ac.h - DFA tables with a report section (docs/design.md 6.8)
 * built here for tests, independently of libvyre's compiler: the
 * Aho-Corasick automaton of case-sensitive literals, and the brute-force
 * matcher (caseless patterns too) whose records a table's report must give.
 */
#ifndef VYRE_TEST_REPORT_AC_H
#define VYRE_TEST_REPORT_AC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/abi.h"
#include "vyre/dfa.h"

struct ac_pat {
	const uint8_t *bytes;
	uint32_t len;
	uint32_t id;
};

struct ac_rec {
	uint32_t id;
	uint64_t start, end;
};

static inline void ac_put32(uint8_t *t, uint64_t word, uint32_t v)
{
	memcpy(t + 4 * word, &v, 4);
}

/*
 * The table of @n patterns (at most 4096 bytes of patterns in all), malloc'd,
 * its bytes in *bytes; NULL when out of memory.
 */
static inline uint8_t *ac_build(const struct ac_pat *p, uint32_t n, uint32_t *bytes)
{
	uint32_t total = 1;

	for (uint32_t i = 0; i < n; i++)
		total += p[i].len;
	uint32_t *go = calloc((size_t)total * 256, sizeof(uint32_t));
	uint32_t *fail = calloc(total, sizeof(uint32_t)), *queue = calloc(total, sizeof(uint32_t));
	/* per state, per pattern: the longest length of that id ending here (0: none) */
	uint32_t *best = calloc((size_t)total * (n ? n : 1), sizeof(uint32_t));
	uint32_t states = 1;
	uint8_t *t = NULL;

	if (!go || !fail || !queue || !best)
		goto out;
	for (uint32_t i = 0; i < total * 256; i++)
		go[i] = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = 0;

		for (uint32_t j = 0; j < p[i].len; j++) {
			uint32_t *g = &go[(size_t)s * 256 + p[i].bytes[j]];

			if (*g == UINT32_MAX)
				*g = states++;
			s = *g;
		}
		if (p[i].len > best[(size_t)s * n + i])
			best[(size_t)s * n + i] = p[i].len;
	}
	uint32_t head = 0, tail = 0;

	for (uint32_t b = 0; b < 256; b++) {
		uint32_t *g = &go[b];

		if (*g == UINT32_MAX) {
			*g = 0;
		} else {
			fail[*g] = 0;
			queue[tail++] = *g;
		}
	}
	while (head < tail) {
		const uint32_t s = queue[head++];

		for (uint32_t i = 0; i < n; i++)
			if (best[(size_t)fail[s] * n + i] > best[(size_t)s * n + i])
				best[(size_t)s * n + i] = best[(size_t)fail[s] * n + i];
		for (uint32_t b = 0; b < 256; b++) {
			uint32_t *g = &go[(size_t)s * 256 + b];

			if (*g == UINT32_MAX) {
				*g = go[(size_t)fail[s] * 256 + b];
			} else {
				fail[*g] = go[(size_t)fail[s] * 256 + b];
				queue[tail++] = *g;
			}
		}
	}
	/* outputs: one entry per distinct id, ids increasing, the longest len */
	uint64_t n_out = 0;
	uint32_t *ids = calloc(n ? n : 1, sizeof(uint32_t)), *lens = calloc(n ? n : 1, 4);
	uint32_t *first = calloc((size_t)states + 1, sizeof(uint32_t));
	uint32_t *o_id = calloc((size_t)states * (n ? n : 1), 4);
	uint32_t *o_len = calloc((size_t)states * (n ? n : 1), 4);

	if (!ids || !lens || !first || !o_id || !o_len)
		goto out2;
	for (uint32_t s = 0; s < states; s++) {
		uint32_t k = 0;

		first[s] = (uint32_t)n_out;
		for (uint32_t i = 0; i < n; i++) {
			const uint32_t l = best[(size_t)s * n + i];
			uint32_t j;

			if (!l)
				continue;
			for (j = 0; j < k && ids[j] != p[i].id; j++)
				;
			if (j == k) {
				ids[k] = p[i].id;
				lens[k++] = l;
			} else if (l > lens[j]) {
				lens[j] = l;
			}
		}
		for (uint32_t a = 1; a < k; a++)
			for (uint32_t b = a; b > 0 && ids[b - 1] > ids[b]; b--) {
				uint32_t x = ids[b];

				ids[b] = ids[b - 1];
				ids[b - 1] = x;
				x = lens[b];
				lens[b] = lens[b - 1];
				lens[b - 1] = x;
			}
		for (uint32_t j = 0; j < k; j++) {
			o_id[n_out] = ids[j];
			o_len[n_out++] = lens[j];
		}
	}
	first[states] = (uint32_t)n_out;
	const uint64_t aw = ((uint64_t)states + 31) / 32;
	const uint64_t words = 2 + aw + 256 * (uint64_t)states + 2 + states + 1 + 2 * n_out;

	t = calloc(words, 4);
	if (!t)
		goto out2;
	ac_put32(t, 0, states);
	ac_put32(t, 1, 0);
	for (uint32_t s = 0; s < states; s++) {
		if (first[s + 1] > first[s]) {
			uint32_t w;

			memcpy(&w, t + 4 * (2 + s / 32), 4);
			ac_put32(t, 2 + s / 32, w | 1u << (s % 32));
		}
		for (uint32_t b = 0; b < 256; b++)
			ac_put32(t, 2 + aw + 256 * (uint64_t)s + b, go[(size_t)s * 256 + b]);
	}
	uint64_t w = 2 + aw + 256 * (uint64_t)states;

	ac_put32(t, w++, VYRE_DFA_REPORT_MAGIC);
	ac_put32(t, w++, (uint32_t)n_out);
	for (uint32_t s = 0; s <= states; s++)
		ac_put32(t, w++, first[s]);
	for (uint64_t j = 0; j < n_out; j++) {
		ac_put32(t, w++, o_id[j]);
		ac_put32(t, w++, o_len[j]);
	}
	*bytes = (uint32_t)(4 * words);
out2:
	free(ids);
	free(lens);
	free(first);
	free(o_id);
	free(o_len);
out:
	free(go);
	free(fail);
	free(queue);
	free(best);
	return t;
}

/* @p ends at byte @e of @text (its letters in either case when caseless). */
static inline int ac_ends_at(const struct vyre_dfa_pattern *p, const uint8_t *text, uint64_t e)
{
	if (p->len > e)
		return 0;
	for (uint32_t j = 0; j < p->len; j++) {
		uint8_t a = text[e - p->len + j], b = p->bytes[j];

		if ((p->flags & VYRE_DFA_CASELESS) && ((a | 0x20) >= 'a' && (a | 0x20) <= 'z') &&
		    ((b | 0x20) >= 'a' && (b | 0x20) <= 'z')) {
			a |= 0x20;
			b |= 0x20;
		}
		if (a != b)
			return 0;
	}
	return 1;
}

/*
 * The records of @text (@len bytes) for @n patterns with ids and flags (those
 * of vyre_dfa_compile), brute force: per end, per id in increasing order, the
 * longest of its patterns ending there. Stores at most @max into @r; returns
 * how many there are.
 */
static inline uint64_t ac_brute_dfa(const struct vyre_dfa_pattern *p, uint32_t n,
				    const uint8_t *text, uint64_t len, struct ac_rec *r,
				    uint64_t max)
{
	uint64_t count = 0;

	for (uint64_t e = 1; e <= len; e++) {
		uint64_t last_id = 0;
		int any = 0;

		for (;;) {
			/* the smallest id above the last one that has a pattern ending at e */
			uint32_t id = 0, l = 0;
			int found = 0;

			for (uint32_t i = 0; i < n; i++) {
				if (!ac_ends_at(&p[i], text, e) || (any && p[i].id <= last_id))
					continue;
				if (!found || p[i].id < id || (p[i].id == id && p[i].len > l)) {
					id = p[i].id;
					l = p[i].len;
					found = 1;
				}
			}
			if (!found)
				break;
			if (count < max)
				r[count] = (struct ac_rec){id, e - l, e};
			count++;
			last_id = id;
			any = 1;
		}
	}
	return count;
}

/* ac_brute_dfa of case-sensitive patterns; UINT64_MAX when out of memory. */
static inline uint64_t ac_brute(const struct ac_pat *p, uint32_t n, const uint8_t *text,
				uint64_t len, struct ac_rec *r, uint64_t max)
{
	struct vyre_dfa_pattern *d = calloc(n ? n : 1, sizeof(*d));
	uint64_t count = UINT64_MAX;

	if (d) {
		for (uint32_t i = 0; i < n; i++)
			d[i] = (struct vyre_dfa_pattern){p[i].bytes, p[i].len, p[i].id, 0};
		count = ac_brute_dfa(d, n, text, len, r, max);
		free(d);
	}
	return count;
}

#endif /* VYRE_TEST_REPORT_AC_H */
