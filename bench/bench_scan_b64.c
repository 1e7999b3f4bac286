/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_b64.c - the scan suite's base64 rows: the item sets
 * encoded once (RFC 4648, standard alphabet, padded) as counted buffers
 * (docs/design.md section 6.1), and the decoder of the CPU peer, which
 * decodes each item before hs_scan as a user without a GPU would.
 *
 * The decoder is a scalar one (a table lookup per character, validity
 * folded into one OR per group); SIMD decoders are several times faster,
 * which is said wherever the rows are quoted.
 */
#include <string.h>

#include "bench_scan_b64.h"

static const char alphabet[64] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/*
 * A character's 6 bits, or 0x100 for one outside the alphabet. Filled by
 * vyre_scan_b64_encode_items, which the suite calls before any worker decodes.
 */
static uint16_t sextet[256];

static void sextet_init(void)
{
	for (unsigned i = 0; i < 256; i++)
		sextet[i] = 0x100;
	for (unsigned i = 0; i < 64; i++)
		sextet[(uint8_t)alphabet[i]] = (uint16_t)i;
}

uint32_t vyre_scan_b64_counted_bytes(uint32_t bytes)
{
	const uint64_t text = ((uint64_t)bytes + 2) / 3 * 4;

	return (uint32_t)(4 + (text + 3) / 4 * 4);
}

static uint32_t encode(const uint8_t *src, uint32_t bytes, uint8_t *dst)
{
	uint32_t o = 0, i = 0;

	for (; i + 3 <= bytes; i += 3) {
		const uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];

		dst[o++] = (uint8_t)alphabet[v >> 18];
		dst[o++] = (uint8_t)alphabet[(v >> 12) & 63];
		dst[o++] = (uint8_t)alphabet[(v >> 6) & 63];
		dst[o++] = (uint8_t)alphabet[v & 63];
	}
	if (i < bytes) {
		const uint32_t v =
		    (uint32_t)src[i] << 16 | (i + 1 < bytes ? (uint32_t)src[i + 1] << 8 : 0);

		dst[o++] = (uint8_t)alphabet[v >> 18];
		dst[o++] = (uint8_t)alphabet[(v >> 12) & 63];
		dst[o++] = i + 1 < bytes ? (uint8_t)alphabet[(v >> 6) & 63] : '=';
		dst[o++] = '=';
	}
	return o;
}

void vyre_scan_b64_encode_items(const uint8_t *data, uint32_t item_bytes, uint32_t n_items,
				uint8_t *enc, uint32_t stride)
{
	sextet_init();
	for (uint32_t k = 0; k < n_items; k++) {
		uint8_t *dst = enc + (uint64_t)k * stride;
		const uint32_t text = encode(data + (uint64_t)k * item_bytes, item_bytes, dst + 4);

		memcpy(dst, &text, sizeof(text));
		memset(dst + 4 + text, 0, stride - 4 - text);
	}
}

int64_t vyre_scan_b64_decode(const uint8_t *counted, uint8_t *out, uint64_t out_cap)
{
	uint32_t len;

	memcpy(&len, counted, sizeof(len));
	if (len % 4)
		return -1;
	const uint8_t *t = counted + 4;
	uint32_t pad = 0;

	if (len >= 4 && t[len - 1] == '=')
		pad = t[len - 2] == '=' ? 2 : 1;
	const uint64_t decoded = (uint64_t)len / 4 * 3 - pad;

	if (decoded > out_cap)
		return -1;
	uint64_t o = 0;
	uint32_t bad = 0;
	const uint32_t full = pad ? len - 4 : len;

	for (uint32_t i = 0; i < full; i += 4) {
		const uint32_t v = (uint32_t)sextet[t[i]] << 18 | (uint32_t)sextet[t[i + 1]] << 12 |
				   (uint32_t)sextet[t[i + 2]] << 6 | sextet[t[i + 3]];

		bad |=
		    (sextet[t[i]] | sextet[t[i + 1]] | sextet[t[i + 2]] | sextet[t[i + 3]]) & 0x100;
		out[o++] = (uint8_t)(v >> 16);
		out[o++] = (uint8_t)(v >> 8);
		out[o++] = (uint8_t)v;
	}
	if (pad) {
		const uint8_t *g = t + full;
		const uint16_t c = pad == 1 ? sextet[g[2]] : 0;
		const uint32_t v =
		    (uint32_t)sextet[g[0]] << 18 | (uint32_t)sextet[g[1]] << 12 | (uint32_t)c << 6;

		bad |= (sextet[g[0]] | sextet[g[1]] | c) & 0x100;
		bad |= pad == 1 ? (v & 0xff) : (v & 0xffff); /* non-canonical pad bits */
		out[o++] = (uint8_t)(v >> 16);
		if (pad == 1)
			out[o++] = (uint8_t)(v >> 8);
	}
	return bad ? -1 : (int64_t)o;
}
