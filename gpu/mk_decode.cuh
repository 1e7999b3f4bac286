// SPDX-License-Identifier: MIT
//
// gpu/mk_decode.cuh - the byte ops of docs/design.md 6.1 on the device:
// BASE64_DECODE, HEX_DECODE and BYTEMAP, each item on one whole block, with
// exactly the results of gpu/ops_bytes.c (DFA_SCAN_COUNTED is not here).
//
// gpu/mk_units.cuh includes this inside megakernel.cu's anonymous
// namespace, after put_result and bump_progress, and lends each unit
// shared-memory scratch (its DFA cache, free between units).
//
// An item runs in two phases. Validation reads the whole counted input
// (word loads, several in flight per thread) and the block votes with
// __syncthreads_or before anything is stored, so a malformed input changes
// nothing. Then the input is decoded tile by tile, in order: the block stages
// a tile of input words in shared memory, then each thread turns its part
// into whole output words. Output byte j comes from input bytes at or after
// byte j, so a tile's output never reaches input that a later tile has yet
// to read, and in place (in == out) is exact. Output words are whole words
// with zeros past D, which is the zero padding 6.1 asks for; word 0 (D) is
// stored last. The lowering (gpu/cuda_lower.c) sends items whose input and
// output partly overlap to VYRE_E_INVAL, as the oracle does.
//
// Unit fields: count = input bytes, aux = output bytes, param = table bytes
// (BYTEMAP); in, out, table: device addresses, 4-byte aligned or not.

namespace mk_bytes
{

constexpr uint32_t kNotDigit = VYRE_NOT_A_DIGIT;
constexpr uint32_t kCtlWords = 8;  // L, D, ok, broadcast by thread 0
constexpr uint32_t kMapWords = 64; // BYTEMAP's table, read whole before any store
constexpr uint32_t kTileAt = kCtlWords + kMapWords;

__device__ __forceinline__ uint32_t load_word(const uint8_t *p, bool aligned)
{
	if (aligned)
		return *reinterpret_cast<const uint32_t *>(p);
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

__device__ __forceinline__ void store_word(uint8_t *p, bool aligned, uint32_t v)
{
	if (aligned) {
		*reinterpret_cast<uint32_t *>(p) = v;
		return;
	}
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

// Byte k of the little-endian word v.
__device__ __forceinline__ uint32_t byte_of(uint32_t v, uint32_t k)
{
	return (v >> (8 * k)) & 0xffu;
}

// Thread 0's checks from the length word and at most three characters:
// whether the item can succeed, L, D. The rest of the input is voted on.
__device__ void check_header(const vyre_mk_unit &u, uint32_t op, bool in_al, uint32_t *ctl)
{
	const uint8_t *in = reinterpret_cast<const uint8_t *>(u.in);
	const uint8_t *s = in + 4;
	const uint32_t len = load_word(in, in_al);
	bool ok = u.count >= 4 && len <= u.count - 4;
	uint64_t d = len;

	ctl[3] = 0;
	if (ok && op == VYRE_OP_BASE64_DECODE) {
		uint32_t pads = 0;

		ok = len % 4 == 0;
		if (ok && len) {
			if (s[len - 1] == '=')
				pads = s[len - 2] == '=' ? 2 : 1;
			// the bits the last character carries past the decoded bytes are zero
			if (pads == 1)
				ok = (vyre_b64_value(s[len - 2]) & 0x3u) == 0;
			else if (pads == 2)
				ok = (vyre_b64_value(s[len - 3]) & 0xfu) == 0;
		}
		d = (uint64_t)len / 4 * 3 - pads;
		ctl[3] = len - pads; // characters that must be in the alphabet
	} else if (ok && op == VYRE_OP_HEX_DECODE) {
		ok = len % 2 == 0;
		d = len / 2;
		ctl[3] = len;
	} else if (ok && op == VYRE_OP_BYTEMAP) {
		ok = u.param >= 256;
	}
	ok = ok && 4 + 4 * ((d + 3) / 4) <= u.aux;
	ctl[0] = ok;
	ctl[1] = len;
	ctl[2] = (uint32_t)d;
}

// This thread's share of the vote: 1 when one of the first `limit` counted
// bytes is not a digit of the op.
__device__ int scan_digits(const uint8_t *s, bool al, uint32_t op, uint32_t limit,
			   vyre_mk_devstate *ds)
{
	const uint32_t tid = threadIdx.x, step = blockDim.x;
	const uint32_t words = (limit + 3) / 4;
	uint32_t bad = 0;

	for (uint32_t base = 0; base < words; base += step * 4) {
		uint32_t v[4];
#pragma unroll
		for (uint32_t k = 0; k < 4; k++) {
			const uint32_t i = base + k * step + tid;
			v[k] = i < words ? load_word(s + 4 * (uint64_t)i, al) : 0;
		}
#pragma unroll
		for (uint32_t k = 0; k < 4; k++) {
			const uint32_t i = base + k * step + tid;
#pragma unroll
			for (uint32_t b = 0; b < 4; b++) {
				const uint32_t c = byte_of(v[k], b);
				const uint32_t val =
				    op == VYRE_OP_BASE64_DECODE ? vyre_b64_value(c) : vyre_hex_value(c);
				if (i < words && 4 * (uint64_t)i + b < limit)
					bad |= val;
			}
		}
		if (tid == 0)
			bump_progress(ds);
	}
	return (bad & kNotDigit) != 0;
}

// Output word `ow` with its bytes from D on made zero.
__device__ __forceinline__ uint32_t mask_past(uint32_t v, uint64_t ow, uint32_t d)
{
	const uint64_t at = 4 * ow;

	if (at + 4 <= d)
		return v;
	return at >= d ? 0u : v & (0xffffffffu >> (8 * (uint32_t)(at + 4 - d)));
}

// Base64: 16 characters (tile words 4g .. 4g + 3) give output words 3g .. 3g + 2.
__device__ __forceinline__ void b64_group(const uint32_t *w, uint32_t g, uint32_t out3[3])
{
	const uint32_t in4[4] = {w[4 * g], w[4 * g + 1], w[4 * g + 2], w[4 * g + 3]};
	uint32_t bytes[12];

#pragma unroll
	for (uint32_t k = 0; k < 4; k++) {
		const uint32_t v = (vyre_b64_value(byte_of(in4[k], 0)) & 63u) << 18 |
				   (vyre_b64_value(byte_of(in4[k], 1)) & 63u) << 12 |
				   (vyre_b64_value(byte_of(in4[k], 2)) & 63u) << 6 |
				   (vyre_b64_value(byte_of(in4[k], 3)) & 63u);
		bytes[3 * k] = v >> 16;
		bytes[3 * k + 1] = (v >> 8) & 0xffu;
		bytes[3 * k + 2] = v & 0xffu;
	}
#pragma unroll
	for (uint32_t j = 0; j < 3; j++)
		out3[j] = bytes[4 * j] | bytes[4 * j + 1] << 8 | bytes[4 * j + 2] << 16 |
			  bytes[4 * j + 3] << 24;
}

// Hex: 8 digits (tile words 2g, 2g + 1) give output word g.
__device__ __forceinline__ uint32_t hex_group(const uint32_t *w, uint32_t g)
{
	const uint32_t in2[2] = {w[2 * g], w[2 * g + 1]};
	uint32_t v = 0;

#pragma unroll
	for (uint32_t k = 0; k < 2; k++)
#pragma unroll
		for (uint32_t j = 0; j < 2; j++) {
			const uint32_t hi = vyre_hex_value(byte_of(in2[k], 2 * j)) & 15u;
			const uint32_t lo = vyre_hex_value(byte_of(in2[k], 2 * j + 1)) & 15u;
			v |= (hi << 4 | lo) << (8 * (2 * k + j));
		}
	return v;
}

__device__ __forceinline__ uint32_t map_word(const uint8_t *map, uint32_t v)
{
	return (uint32_t)map[byte_of(v, 0)] | (uint32_t)map[byte_of(v, 1)] << 8 |
	       (uint32_t)map[byte_of(v, 2)] << 16 | (uint32_t)map[byte_of(v, 3)] << 24;
}

} // namespace mk_bytes

__device__ __forceinline__ bool is_byte_op(uint32_t op)
{
	return op == VYRE_OP_BASE64_DECODE || op == VYRE_OP_HEX_DECODE || op == VYRE_OP_BYTEMAP;
}

// One byte-op unit on the whole block; `scratch` is shared memory of
// `scratch_words` words, at least kTileAt + 4.
__device__ void block_bytes_unit(const vyre_mk_unit &u, uint64_t results, uint32_t *scratch,
				 uint32_t scratch_words, vyre_mk_devstate *ds)
{
	using namespace mk_bytes;
	const uint32_t op = u.op & VYRE_MK_OP_MASK, tid = threadIdx.x, step = blockDim.x;
	const uint8_t *in = reinterpret_cast<const uint8_t *>(u.in);
	uint8_t *out = reinterpret_cast<uint8_t *>(u.out);
	const bool in_al = (u.in & 3u) == 0, out_al = (u.out & 3u) == 0;
	uint32_t *ctl = scratch;
	uint8_t *map = reinterpret_cast<uint8_t *>(scratch + kCtlWords);
	uint32_t *tile = scratch + kTileAt;
	// base64 decodes 4 words at a time, hex 2, the map 1
	const uint32_t tile_words = (scratch_words - kTileAt) & ~3u;

	if (tid == 0)
		check_header(u, op, in_al, ctl);
	__syncthreads();
	const bool ok = ctl[0] != 0;
	const uint32_t len = ctl[1], d = ctl[2], digits = ctl[3];
	int bad = !ok;

	if (ok && op == VYRE_OP_BYTEMAP) {
		for (uint32_t i = tid; i < kMapWords; i += step)
			scratch[kCtlWords + i] =
			    load_word(reinterpret_cast<const uint8_t *>(u.table) + 4 * i,
				      (u.table & 3u) == 0);
	} else if (ok) {
		bad = scan_digits(in + 4, in_al, op, digits, ds);
	}
	if (__syncthreads_or(bad)) {
		if (tid == 0)
			put_result(results, u.slot, VYRE_E_INVAL, 0);
		__syncthreads();
		return;
	}

	const uint32_t in_words = (len + 3) / 4, out_words = (d + 3) / 4;
	for (uint32_t t0 = 0; t0 < in_words; t0 += tile_words) {
		const uint32_t m = min(tile_words, in_words - t0);
#pragma unroll 4
		for (uint32_t i = tid; i < m; i += step)
			tile[i] = load_word(in + 4 + 4 * ((uint64_t)t0 + i), in_al);
		// every load of the tile is done before a store can reach it in place
		__syncthreads();
		if (op == VYRE_OP_BASE64_DECODE) {
			const uint64_t first = (uint64_t)t0 / 4 * 3;
			for (uint32_t g = tid; g < (m + 3) / 4; g += step) {
				uint32_t w3[3];
				b64_group(tile, g, w3);
#pragma unroll
				for (uint32_t j = 0; j < 3; j++) {
					const uint64_t ow = first + 3 * (uint64_t)g + j;
					if (ow < out_words)
						store_word(out + 4 + 4 * ow, out_al,
							   mask_past(w3[j], ow, d));
				}
			}
		} else if (op == VYRE_OP_HEX_DECODE) {
			const uint64_t first = t0 / 2;
			for (uint32_t g = tid; g < (m + 1) / 2; g += step) {
				const uint64_t ow = first + g;
				if (ow < out_words)
					store_word(out + 4 + 4 * ow, out_al,
						   mask_past(hex_group(tile, g), ow, d));
			}
		} else {
			for (uint32_t g = tid; g < m; g += step) {
				const uint64_t ow = (uint64_t)t0 + g;
				store_word(out + 4 + 4 * ow, out_al,
					   mask_past(map_word(map, tile[g]), ow, d));
			}
		}
		if (tid == 0)
			bump_progress(ds);
		// the next tile overwrites the shared words this one decodes from
		__syncthreads();
	}
	if (tid == 0) {
		store_word(out, out_al, d);
		put_result(results, u.slot, 0, d);
	}
	__syncthreads();
}
