/* SPDX-License-Identifier: MIT */
/*
 * The byte ops over counted buffers (docs/design.md 6.1). Each op validates
 * its whole input first, then writes in one forward pass: output byte j
 * depends only on input bytes at or after j's position, so in place
 * (in == out) every input byte is read before a store can reach it.
 */
#include "ops_bytes.h"

#include <string.h>

#include "digits.h"
#include "vyre/abi.h"

/*
 * L is read through a volatile pointer so the compiler cannot read it again
 * later: another process may rewrite it, and every bound derives from it.
 */
static uint32_t load32_once(const uint8_t *p)
{
	const volatile uint8_t *v = p;

	return (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24;
}

static void store32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

int vyre_counted_len(const uint8_t *buf, uint32_t bytes, uint32_t *len)
{
	if (bytes < 4)
		return VYRE_E_INVAL;
	uint32_t l = load32_once(buf);

	if (l > bytes - 4)
		return VYRE_E_INVAL;
	*len = l;
	return 0;
}

int vyre_bytes_partial_overlap(const uint8_t *a, uint32_t a_bytes, const uint8_t *b,
			       uint32_t b_bytes)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return x != y && x < y + b_bytes && y < x + a_bytes;
}

/*
 * The decoded length of the @len base64 characters at @s, or -1 when they
 * are not a canonical padded encoding (RFC 4648 section 4, design.md 6.1).
 */
static int64_t base64_check(const uint8_t *s, uint32_t len)
{
	uint32_t pads = 0, bad = 0;

	if (len % 4)
		return -1;
	if (len == 0)
		return 0;
	if (s[len - 1] == '=')
		pads = s[len - 2] == '=' ? 2 : 1;
	for (uint32_t i = 0; i < len - pads; i++)
		bad |= vyre_b64_value(s[i]);
	if (bad & VYRE_NOT_A_DIGIT)
		return -1;
	/* the bits the last character carries beyond the decoded bytes are zero */
	if (pads == 1 && (vyre_b64_value(s[len - 2]) & 0x3u))
		return -1;
	if (pads == 2 && (vyre_b64_value(s[len - 3]) & 0xfu))
		return -1;
	return (int64_t)len / 4 * 3 - pads;
}

/* Decodes @d bytes from @s to @o; characters that changed since the check decode as 0. */
static void base64_decode(const uint8_t *s, uint32_t d, uint8_t *o)
{
	for (uint32_t g = 0; 3 * (uint64_t)g < d; g++) {
		const uint8_t *c = s + 4 * (uint64_t)g;
		uint32_t v = (vyre_b64_value(c[0]) & 63u) << 18 |
			     (vyre_b64_value(c[1]) & 63u) << 12 |
			     (vyre_b64_value(c[2]) & 63u) << 6 | (vyre_b64_value(c[3]) & 63u);
		uint32_t n = d - 3 * g < 3 ? d - 3 * g : 3;
		uint8_t *p = o + 3 * (uint64_t)g;

		/* all four characters are read above, before the stores reach them in place */
		for (uint32_t k = 0; k < n; k++)
			p[k] = (uint8_t)(v >> (16 - 8 * k));
	}
}

static int64_t hex_check(const uint8_t *s, uint32_t len)
{
	uint32_t bad = 0;

	if (len % 2)
		return -1;
	for (uint32_t i = 0; i < len; i++)
		bad |= vyre_hex_value(s[i]);
	return (bad & VYRE_NOT_A_DIGIT) ? -1 : (int64_t)len / 2;
}

static void hex_decode(const uint8_t *s, uint32_t d, uint8_t *o)
{
	for (uint32_t j = 0; j < d; j++) {
		uint32_t hi = vyre_hex_value(s[2 * (uint64_t)j]),
			 lo = vyre_hex_value(s[2 * (uint64_t)j + 1]);

		o[j] = (uint8_t)((hi & 15u) << 4 | (lo & 15u));
	}
}

int vyre_bytes_exec(uint32_t op, const uint8_t *in, uint32_t in_bytes, uint8_t *out,
		    uint32_t out_bytes, const uint8_t *table, uint32_t table_bytes,
		    uint64_t *result)
{
	uint8_t map[256];
	uint32_t len;
	int64_t d;

	*result = 0;
	if (out_bytes < 4 || vyre_bytes_partial_overlap(in, in_bytes, out, out_bytes) ||
	    vyre_counted_len(in, in_bytes, &len) != 0)
		return VYRE_E_INVAL;
	switch (op) {
	case VYRE_OP_BASE64_DECODE:
		d = base64_check(in + 4, len);
		break;
	case VYRE_OP_HEX_DECODE:
		d = hex_check(in + 4, len);
		break;
	case VYRE_OP_BYTEMAP:
		if (table_bytes < sizeof(map))
			return VYRE_E_INVAL;
		/* the whole table is read first: it may be the output */
		memcpy(map, table, sizeof(map));
		d = len;
		break;
	default:
		return VYRE_E_INVAL;
	}
	if (d < 0 || vyre_counted_bytes((uint32_t)d) > out_bytes)
		return VYRE_E_INVAL;
	const uint32_t n = (uint32_t)d;

	switch (op) {
	case VYRE_OP_BASE64_DECODE:
		base64_decode(in + 4, n, out + 4);
		break;
	case VYRE_OP_HEX_DECODE:
		hex_decode(in + 4, n, out + 4);
		break;
	default:
		for (uint32_t j = 0; j < n; j++)
			out[4 + (uint64_t)j] = map[in[4 + (uint64_t)j]];
		break;
	}
	memset(out + 4 + (uint64_t)n, 0, vyre_counted_bytes(n) - 4 - n);
	store32(out, n);
	*result = n;
	return 0;
}
