/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_data.c - what the scan suite scans and looks for: text
 * nobody here wrote (the C headers in /usr/include and /usr/include/linux,
 * the licenses in /usr/share/common-licenses, each glob sorted by name,
 * concatenated), and identifiers picked from it by a fixed-seed PRNG.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_scan_data.h"
#include "bench_scan_job.h"
#include "vyre/dfa.h"

static const char *const corpus_globs[] = {"/usr/include/*.h", "/usr/include/linux/*.h",
					   "/usr/share/common-licenses/*"};
#define N_GLOBS (sizeof(corpus_globs) / sizeof(corpus_globs[0]))

/* Appends the regular file @path; 1 when it did (links name files read already, or none). */
static int corpus_add(struct corpus *c, const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return 0;
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	const size_t want = c->len + (size_t)st.st_size;

	if (want > c->cap) {
		const size_t cap = want > 2 * c->cap ? want : 2 * c->cap;
		uint8_t *grown = realloc(c->bytes, cap);

		if (!grown) {
			fclose(f);
			return 0;
		}
		c->bytes = grown;
		c->cap = cap;
	}
	/* a file that shrank since lstat gives fewer bytes, and that is all right */
	const size_t got = fread(c->bytes + c->len, 1, (size_t)st.st_size, f);

	fclose(f);
	c->len += got;
	return got > 0;
}

int vyre_scan_corpus_load(struct corpus *c)
{
	char first[3][64] = {"", "", ""};
	unsigned files[N_GLOBS] = {0}, total = 0;

	for (size_t i = 0; i < N_GLOBS; i++) {
		glob_t g;

		if (glob(corpus_globs[i], 0, NULL, &g) != 0)
			continue;
		for (size_t k = 0; k < g.gl_pathc; k++) {
			if (!corpus_add(c, g.gl_pathv[k]))
				continue;
			if (total < 3)
				snprintf(first[total], sizeof(first[total]), "%s", g.gl_pathv[k]);
			files[i]++;
			total++;
		}
		globfree(&g);
	}
	fprintf(stderr, "scan: data: %zu bytes from %u files (", c->len, total);
	for (size_t i = 0; i < N_GLOBS; i++)
		fprintf(stderr, "%s%s: %u", i ? ", " : "", corpus_globs[i], files[i]);
	fprintf(stderr, "), in that order, each sorted by name; first: %s %s %s\n", first[0],
		first[1], first[2]);
	return c->len >= PICK_BYTES ? 0 : -1;
}

/* @len bytes of the corpus repeated from its start. */
void vyre_scan_tile(const struct corpus *c, uint8_t *dst, size_t len)
{
	for (size_t at = 0; at < len;) {
		const size_t n = len - at < c->len ? len - at : c->len;

		memcpy(dst + at, c->bytes, n);
		at += n;
	}
}

static int ident_start(uint8_t ch)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int ident_char(uint8_t ch)
{
	return ident_start(ch) || (ch >= '0' && ch <= '9');
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Up to @want distinct identifiers of PATTERN_MIN..PATTERN_MAX bytes from the
 * first PICK_BYTES of @text, each the whole identifier around a random
 * offset (so frequent ones are likelier, as in real rule sets); the smaller
 * sets are prefixes of the larger. Returns how many it found.
 */
uint32_t vyre_scan_pick_patterns(const uint8_t *text, struct vyre_dfa_pattern *out, uint32_t want)
{
	uint64_t rng = 0x5ca11ab1e0ddba11ull;
	uint32_t n = 0;

	for (uint64_t tries = 0; n < want && tries < 1000ull * want; tries++) {
		size_t at = (size_t)(xorshift(&rng) % PICK_BYTES), end;

		while (at > 0 && ident_char(text[at - 1]))
			at--;
		if (!ident_start(text[at]))
			continue;
		for (end = at; end < PICK_BYTES && ident_char(text[end]); end++)
			;
		const uint32_t len = (uint32_t)(end - at);
		uint32_t dup = 0;

		if (len < PATTERN_MIN || len > PATTERN_MAX)
			continue;
		for (uint32_t i = 0; i < n && !dup; i++)
			dup = out[i].len == len && memcmp(out[i].bytes, text + at, len) == 0;
		if (!dup) {
			out[n] = (struct vyre_dfa_pattern){text + at, len, n, 0};
			n++;
		}
	}
	return n;
}

/* FNV-1a of an identifier, for the distinct-identifier table. */
static uint32_t ident_hash(const uint8_t *p, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/*
 * Up to @want identifiers of PATTERN_MIN..PATTERN_MAX bytes drawn uniformly
 * from the distinct identifiers of all @len bytes of @text, the whole
 * corpus (not by occurrence: most identifiers are rare, and many occur
 * only past the bytes scanned, so the set matches seldom, as a real rule
 * set does); the smaller sets are prefixes of the larger. Returns how many
 * it found, or 0 when out of memory.
 */
uint32_t vyre_scan_pick_sparse(const uint8_t *text, size_t len_text, struct vyre_dfa_pattern *out,
			       uint32_t want)
{
	const uint32_t slots = 1u << 22; /* twice the distinct identifiers it keeps */
	struct vyre_dfa_pattern *seen = calloc(slots, sizeof(*seen));
	uint32_t n_seen = 0, n = 0;
	uint64_t rng = 0x5eed5ba75eull;

	if (!seen)
		return 0;
	for (size_t at = 0; at < len_text;) {
		if (!ident_start(text[at]) || (at > 0 && ident_char(text[at - 1]))) {
			at++;
			continue;
		}
		size_t end = at;

		while (end < len_text && ident_char(text[end]))
			end++;
		const uint32_t len = (uint32_t)(end - at);

		for (uint32_t h = ident_hash(text + at, len) & (slots - 1);
		     len >= PATTERN_MIN && len <= PATTERN_MAX && n_seen < slots / 2;
		     h = (h + 1) & (slots - 1)) {
			if (seen[h].len == 0) {
				seen[h] = (struct vyre_dfa_pattern){text + at, len, 0, 0};
				n_seen++;
				break;
			}
			if (seen[h].len == len && memcmp(seen[h].bytes, text + at, len) == 0)
				break;
		}
		at = end;
	}
	/* the table in hash order, then a fixed-seed shuffle: a uniform draw */
	uint32_t k = 0;

	for (uint32_t h = 0; h < slots; h++)
		if (seen[h].len)
			seen[k++] = seen[h];
	for (uint32_t i = 0; i < k && n < want; i++) {
		const uint32_t r = i + (uint32_t)(xorshift(&rng) % (k - i));
		const struct vyre_dfa_pattern t = seen[r];

		seen[r] = seen[i];
		out[n] = (struct vyre_dfa_pattern){t.bytes, t.len, n, 0};
		n++;
	}
	free(seen);
	return n;
}
