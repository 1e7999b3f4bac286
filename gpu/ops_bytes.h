/* SPDX-License-Identifier: MIT */
/*
 * gpu/ops_bytes.h - the byte ops over counted buffers (docs/design.md 6.1):
 * BASE64_DECODE, HEX_DECODE and BYTEMAP, as functions over plain pointers
 * and lengths, called by vyre_exec_one (the oracle).
 *
 * A counted buffer holds its byte length L in word 0 and its bytes from
 * byte 4. Every function validates everything before it stores anything, so
 * a malformed input returns VYRE_E_INVAL and leaves the output untouched.
 * The input and the output may be the same buffer (in == out: the decoders
 * read each input byte before any output byte can overwrite it), or
 * disjoint; ranges that overlap without starting at the same byte cannot be
 * named by handles and are VYRE_E_INVAL. The memory may be rewritten
 * concurrently by another process: L is read once and every access stays
 * inside the ranges given, whatever the bytes become.
 */
#ifndef VYRE_GPU_OPS_BYTES_H
#define VYRE_GPU_OPS_BYTES_H

#include <stdint.h>

/* Bytes a counted output of @d bytes occupies: 4 + 4 * ceil(d / 4). */
static inline uint64_t vyre_counted_bytes(uint32_t d)
{
	return 4 + 4 * (((uint64_t)d + 3) / 4);
}

/*
 * The byte length L of the counted buffer @buf of @bytes bytes, read once,
 * into *len; VYRE_E_INVAL when bytes < 4 or L > bytes - 4.
 */
int vyre_counted_len(const uint8_t *buf, uint32_t bytes, uint32_t *len);

/*
 * Run byte op @op (BASE64_DECODE, HEX_DECODE or BYTEMAP) from @in to @out;
 * @table (@table_bytes) is BYTEMAP's map and ignored by the others. Returns
 * 0 with the CQE result (decoded or mapped bytes) in *result, or
 * VYRE_E_INVAL with *result 0 and nothing written.
 */
int vyre_bytes_exec(uint32_t op, const uint8_t *in, uint32_t in_bytes, uint8_t *out,
		    uint32_t out_bytes, const uint8_t *table, uint32_t table_bytes,
		    uint64_t *result);

/* 1 when [a, a + a_bytes) and [b, b + b_bytes) share a byte but a != b. */
int vyre_bytes_partial_overlap(const uint8_t *a, uint32_t a_bytes, const uint8_t *b,
			       uint32_t b_bytes);

#endif /* VYRE_GPU_OPS_BYTES_H */
