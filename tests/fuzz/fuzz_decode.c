/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the byte ops over counted buffers (vyre_bytes_exec,
 * docs/design.md 6.1) against an independent reference decoder.
 *
 * Input: u8 mode, then the counted bytes. mode % 3 picks BASE64_DECODE,
 * HEX_DECODE or BYTEMAP; bit 2 decodes in place; bit 3 gives an output one
 * word shorter than the reference needs (which must be refused); bit 4
 * takes the length word from the first four bytes instead of the byte
 * count (usually past the buffer). Every buffer is allocated to the exact
 * byte, so AddressSanitizer sees any access outside it; the output must
 * hold the reference's bytes, then zeros to the end of the word, then what
 * it held before, and stay untouched on VYRE_E_INVAL.
 */
#include <stdlib.h>
#include <string.h>

#include "../../gpu/ops_bytes.h"
#include "../../include/vyre/abi.h"
#include "fuzz.h"

#define MODE_IN_PLACE 4u
#define MODE_SHORT    8u
#define MODE_RAW_LEN  16u
#define SENTINEL      0x5au

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int sextet(uint8_t c)
{
	const char *p = c ? memchr(alphabet, c, 64) : NULL;

	return p ? (int)(p - alphabet) : -1;
}

/* Strict RFC 4648 base64: the decoded length, or -1. */
static long ref_base64(const uint8_t *s, uint32_t len, uint8_t *out)
{
	long d = 0;

	if (len % 4)
		return -1;
	for (uint32_t g = 0; g < len; g += 4) {
		const int last = g + 4 == len;
		int v[4], pads = 0;

		for (int k = 0; k < 4; k++) {
			v[k] = sextet(s[g + k]);
			if (s[g + k] == '=' && last && k >= 2) {
				v[k] = 0;
				pads++;
			} else if (v[k] < 0 || pads) {
				return -1; /* not in the alphabet, or a character after '=' */
			}
		}
		const uint32_t bits = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
				      (uint32_t)v[2] << 6 | (uint32_t)v[3];

		if ((pads == 1 && (bits & 0xff)) || (pads == 2 && (bits & 0xffff)))
			return -1; /* non-canonical */
		for (int k = 0; k < 3 - pads; k++)
			out[d++] = (uint8_t)(bits >> (16 - 8 * k));
	}
	return d;
}

static int nibble(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static long ref_hex(const uint8_t *s, uint32_t len, uint8_t *out)
{
	if (len % 2)
		return -1;
	for (uint32_t i = 0; i < len; i += 2) {
		const int hi = nibble(s[i]), lo = nibble(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return len / 2;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	static const uint32_t ops[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE, VYRE_OP_BYTEMAP};
	if (size < 1 || size > (1u << 16))
		return 0;
	const uint32_t mode = data[0], op = ops[mode % 3];
	const uint32_t n = (uint32_t)size - 1;
	const uint32_t in_bytes = 4 + (n + 3) / 4 * 4;
	uint8_t *in = calloc(1, in_bytes), *want = malloc(in_bytes), table[256];
	uint32_t len = n;

	FUZZ_CHECK(in && want);
	memcpy(in + 4, data + 1, n);
	if ((mode & MODE_RAW_LEN) && n >= 4)
		len = fuzz_le32(data + 1);
	memcpy(in, &len, 4);
	for (uint32_t b = 0; b < 256; b++)
		table[b] = (uint8_t)(b * 167 + 13);

	/* the reference over the counted bytes, when the length word fits */
	long d = -1;
	if (len <= in_bytes - 4) {
		if (op == VYRE_OP_BASE64_DECODE)
			d = ref_base64(in + 4, len, want);
		else if (op == VYRE_OP_HEX_DECODE)
			d = ref_hex(in + 4, len, want);
		else
			for (d = 0; d < len; d++)
				want[d] = table[in[4 + d]];
	}
	const uint32_t need = d >= 0 ? (uint32_t)vyre_counted_bytes((uint32_t)d) : 4;
	uint32_t out_bytes = (mode & MODE_SHORT) && need > 4 ? need - 4 : need + 8;
	uint8_t *out = in, *before;

	if (mode & MODE_IN_PLACE) {
		out_bytes = in_bytes;
	} else {
		out = malloc(out_bytes);
		FUZZ_CHECK(out);
		memset(out, SENTINEL, out_bytes);
	}
	before = malloc(out_bytes);
	FUZZ_CHECK(before);
	memcpy(before, out, out_bytes);

	uint64_t result = 99;
	const int rc =
	    vyre_bytes_exec(op, in, in_bytes, out, out_bytes, table, sizeof(table), &result);
	const int ok = d >= 0 && need <= out_bytes;

	FUZZ_CHECK(rc == (ok ? 0 : VYRE_E_INVAL));
	if (!ok) {
		FUZZ_CHECK(result == 0);
		FUZZ_CHECK(memcmp(out, before, out_bytes) == 0);
	} else {
		FUZZ_CHECK(result == (uint64_t)d);
		FUZZ_CHECK(fuzz_le32(out) == (uint32_t)d);
		FUZZ_CHECK(memcmp(out + 4, want, (size_t)d) == 0);
		for (uint32_t i = 4 + (uint32_t)d; i < need; i++)
			FUZZ_CHECK(out[i] == 0);
		FUZZ_CHECK(memcmp(out + need, before + need, out_bytes - need) == 0);
	}
	if (out != in)
		free(out);
	free(before);
	free(in);
	free(want);
	return 0;
}
