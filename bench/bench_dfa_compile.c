/* SPDX-License-Identifier: MIT */
/*
 * vyre-bench suite "dfacompile": what vyre_dfa_compile (libvyre, issue 26)
 * costs for 10^3, 10^4 and 10^5 literals, on the host, one thread.
 *
 * Sets:
 *   words    words of 2-6 syllables from a skewed pick of 40 syllables (the
 *            shared prefixes and suffixes of text), distinct, ids 0..n-1
 *   random   distinct strings of 8-16 random bytes (any value): a trie of
 *            about 12 states a pattern, nothing shared
 *   words-i10, random-i10: the same with every tenth pattern caseless, so
 *            the compiler builds the product of two automata
 * each compiled with the default limit (65536 states) and with 2^22. Rows
 * "SET/N/LIMIT": compile ms, states and table MiB; a set over the limit
 * gives instead the NOMEM figures (at least this many states and MiB) and
 * how long finding that out took. --quick: 10^3 and 10^4 only.
 * VYRE_BENCH_DFACOMPILE_ONLY=SET (words, random, words-i10 or random-i10)
 * runs that set's rows alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "vyre/abi.h"
#include "vyre/dfa.h"

#define SUITE	    "dfacompile"
#define MAX_LITERAL 32u
#define BIG_LIMIT   (1u << 22)

struct lit {
	uint8_t b[MAX_LITERAL];
	uint32_t len;
};

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int by_bytes(const void *x, const void *y)
{
	const struct lit *a = x, *b = y;
	int d = memcmp(a->b, b->b, a->len < b->len ? a->len : b->len);

	return d ? d : (a->len > b->len) - (a->len < b->len);
}

static void make_word(struct lit *l, uint64_t *rng)
{
	static const char *const syl[] = {
	    "the", "in",  "er", "an", "re", "on", "at",	 "en", "nd", "ti",  "es", "or", "te", "of",
	    "ed",  "is",  "it", "al", "ar", "st", "to",	 "nt", "ng", "se",  "ha", "as", "ou", "io",
	    "le",  "con", "ve", "co", "me", "de", "pro", "ra", "li", "ter", "ex", "un"};
	uint32_t n = 2 + (uint32_t)(next_rand(rng) % 5);

	l->len = 0;
	for (uint32_t k = 0; k < n; k++) {
		/* the square of a uniform pick favours the first syllables, as text does */
		uint64_t u = next_rand(rng) % 40;
		const char *s = syl[(u * u) / 40];
		size_t sl = strlen(s);

		memcpy(l->b + l->len, s, sl);
		l->len += (uint32_t)sl;
	}
}

static void make_random(struct lit *l, uint64_t *rng)
{
	l->len = 8 + (uint32_t)(next_rand(rng) % 9);
	for (uint32_t i = 0; i < l->len; i++)
		l->b[i] = (uint8_t)next_rand(rng);
}

/* @n distinct literals of one kind (sorted, which the compiler does not care about). */
static int make_set(struct lit *lits, uint32_t n, int words)
{
	uint64_t rng = words ? 0x243f6a8885a308d3ull : 0x13198a2e03707344ull;
	uint32_t have = 0;

	for (int round = 0; have < n && round < 64; round++) {
		while (have < n)
			(words ? make_word : make_random)(&lits[have++], &rng);
		qsort(lits, have, sizeof(*lits), by_bytes);
		uint32_t k = 0;

		for (uint32_t i = 0; i < have; i++)
			if (k == 0 || by_bytes(&lits[k - 1], &lits[i]) != 0)
				lits[k++] = lits[i];
		have = k;
	}
	return have == n ? 0 : -1;
}

static int run_one(struct vyre_bench_ctx *ctx, const struct vyre_dfa_pattern *pats, uint32_t n,
		   const char *set, uint32_t limit)
{
	char name[96];
	uint8_t *table = NULL;
	uint32_t bytes = 0;
	struct vyre_dfa_info info;

	snprintf(name, sizeof(name), "%s/%u/%s", set, n, limit ? "2^22" : "default");
	uint64_t t0 = vyre_bench_now_ns();
	int rc = vyre_dfa_compile(pats, n, limit, &table, &bytes, &info);
	double ms = (double)(vyre_bench_now_ns() - t0) / 1e6;

	vyre_dfa_free(table);
	if (rc == VYRE_E_NOMEM && info.states) {
		vyre_bench_report(ctx, SUITE, name, "NOMEM after", ms, "ms");
		vyre_bench_report(ctx, SUITE, name, "needs states >=", (double)info.states, "");
		vyre_bench_report(ctx, SUITE, name,
				  "needs table >=", (double)info.table_bytes / (1 << 20), "MiB");
		return 0;
	}
	if (rc) {
		fprintf(stderr, "dfacompile: %s: vyre_dfa_compile: %d\n", name, rc);
		return -1;
	}
	vyre_bench_report(ctx, SUITE, name, "compile", ms, "ms");
	vyre_bench_report(ctx, SUITE, name, "states", (double)info.states, "");
	vyre_bench_report(ctx, SUITE, name, "table", (double)info.table_bytes / (1 << 20), "MiB");
	return 0;
}

static int run(struct vyre_bench_ctx *ctx)
{
	static const uint32_t sizes[] = {1000, 10000, 100000};
	const uint32_t n_sizes = ctx->quick ? 2 : 3, max = sizes[n_sizes - 1];
	struct lit *lits = malloc((size_t)max * sizeof(*lits));
	struct vyre_dfa_pattern *pats = malloc((size_t)max * sizeof(*pats));
	const char *only = getenv("VYRE_BENCH_DFACOMPILE_ONLY");
	int rc = lits && pats ? 0 : -1;

	for (int words = 1; words >= 0 && !rc; words--) {
		if (make_set(lits, max, words)) {
			rc = -1;
			break;
		}
		/* a fixed shuffle, so the first n are not a sorted prefix of the set */
		uint64_t rng = 0x452821e638d01377ull;

		for (uint32_t i = max - 1; i > 0; i--) {
			uint32_t j = (uint32_t)(next_rand(&rng) % (i + 1));
			struct lit t = lits[i];

			lits[i] = lits[j];
			lits[j] = t;
		}
		for (int caseless = 0; caseless < 2 && !rc; caseless++) {
			char set[32];

			snprintf(set, sizeof(set), "%s%s", words ? "words" : "random",
				 caseless ? "-i10" : "");
			if (only && strcmp(only, set) != 0)
				continue;
			for (uint32_t i = 0; i < max; i++)
				pats[i] = (struct vyre_dfa_pattern){
				    lits[i].b, lits[i].len, i,
				    caseless && i % 10 == 9 ? VYRE_DFA_CASELESS : 0};
			for (uint32_t s = 0; s < n_sizes && !rc; s++) {
				rc = run_one(ctx, pats, sizes[s], set, 0);
				if (!rc)
					rc = run_one(ctx, pats, sizes[s], set, BIG_LIMIT);
			}
		}
	}
	free(lits);
	free(pats);
	return rc;
}

VYRE_BENCH_SUITE(dfacompile,
		 "vyre_dfa_compile: 10^3..10^5 words and random literals, 10% caseless, "
		 "compile time, states, table bytes",
		 run)
