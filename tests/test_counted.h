/* SPDX-License-Identifier: MIT */
/*
 * tests/test_counted.h - counted buffers (docs/design.md 6.1) for the random
 * tests: valid and malformed inputs of BASE64_DECODE, HEX_DECODE, BYTEMAP
 * and DFA_SCAN_COUNTED, written independently of the oracle's decoders.
 */
#ifndef VYRE_TEST_COUNTED_H
#define VYRE_TEST_COUNTED_H

#include <stdint.h>
#include <string.h>

#include "test_rand.h"

static const char test_b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* RFC 4648 base64 of @n bytes of @src into @dst; returns the characters written. */
static inline uint32_t test_base64_encode(const uint8_t *src, uint32_t n, uint8_t *dst)
{
	uint32_t o = 0;

	for (uint32_t i = 0; i < n; i += 3) {
		const uint32_t left = n - i;
		uint32_t v = (uint32_t)src[i] << 16;

		if (left > 1)
			v |= (uint32_t)src[i + 1] << 8;
		if (left > 2)
			v |= src[i + 2];
		dst[o++] = (uint8_t)test_b64_alphabet[v >> 18];
		dst[o++] = (uint8_t)test_b64_alphabet[(v >> 12) & 63];
		dst[o++] = left > 1 ? (uint8_t)test_b64_alphabet[(v >> 6) & 63] : '=';
		dst[o++] = left > 2 ? (uint8_t)test_b64_alphabet[v & 63] : '=';
	}
	return o;
}

/*
 * Fill @p (@bytes >= 4) with a counted buffer drawn from @seed: usually
 * base64 or hex of random bytes (valid), mixed-case text, or one of the
 * malformed inputs (a character corrupted, a stray '=', an odd hex length,
 * a length word past the buffer). The bytes after the counted ones keep
 * what they held. Returns the length word written.
 */
static inline uint32_t test_counted_fill(uint8_t *p, uint32_t bytes, uint64_t seed)
{
	const uint32_t room = bytes - 4;
	const uint32_t kind = (uint32_t)(splitmix64(&seed) % 16);
	uint8_t *s = p + 4;
	uint32_t len;

	if (kind < 6) {
		const uint32_t n = (uint32_t)(splitmix64(&seed) % (room / 4 * 3 + 1));
		uint8_t raw[3];

		len = 0;
		for (uint32_t i = 0; i < n; i += 3) {
			const uint32_t k = n - i < 3 ? n - i : 3;

			for (uint32_t j = 0; j < k; j++)
				raw[j] = (uint8_t)splitmix64(&seed);
			len += test_base64_encode(raw, k, s + len);
		}
	} else if (kind < 10) {
		len = 2 * (uint32_t)(splitmix64(&seed) % (room / 2 + 1));
		for (uint32_t i = 0; i < len; i++)
			s[i] = (uint8_t) "0123456789abcdefABCDEF"[splitmix64(&seed) % 22];
	} else if (kind < 13) {
		len = (uint32_t)(splitmix64(&seed) % (room + 1));
		for (uint32_t i = 0; i < len; i++)
			s[i] = (uint8_t) "aAbBzZ09 =\n"[splitmix64(&seed) % 11];
	} else if (kind < 15) {
		/* base64 or hex, then one character made wrong */
		len = test_counted_fill(p, bytes, seed ^ 0x5a5a) & ~3u;
		if (len > room)
			len = room & ~3u;
		if (len)
			s[splitmix64(&seed) % len] = (uint8_t) "=!g \xff-_"[splitmix64(&seed) % 7];
	} else {
		len = room + 1 + (uint32_t)(splitmix64(&seed) % 4);
	}
	memcpy(p, &len, 4);
	return len;
}

#endif /* VYRE_TEST_COUNTED_H */
