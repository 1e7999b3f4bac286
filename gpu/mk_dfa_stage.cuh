// SPDX-License-Identifier: MIT
//
// gpu/mk_dfa_stage.cuh - DFA_SCAN of host input through shared memory
// (included by gpu/mk_dfa.cuh; docs/cuda.md, "DFA_SCAN", "Host input"):
// tiles of consecutive bytes loaded in address order, then walked as
// mk_dfa_walk.cuh walks device input.
#pragma once

#include "mk_dfa_walk.cuh"

namespace dfa
{

// ---- host input through shared memory -------------------------------------------------
//
// Every thread reading its own chunk puts 32 places of memory in one warp
// load: from HBM that hardly matters, over PCIe it turns into many small
// read requests. Host input is therefore staged: the threads load a tile of
// consecutive bytes in address order (a warp load: 512 contiguous bytes),
// then walk it from shared memory in chunks of their own, each tile starting
// in the previous one's end state.

// Where a unit stages its input: `room` bytes at buf, 0 when it reads in place.
struct stage {
	uint4 *buf;
	uint32_t room;
};

// Copies words [0, words) of src to dst on n threads, this one being `rank`.
__device__ __forceinline__ void stage_words(uint4 *dst, const uint4 *src, uint32_t words,
					    uint32_t rank, uint32_t n)
{
	constexpr uint32_t kLoads = 4; // words a thread has in flight

	for (uint32_t base = rank; base < words; base += kLoads * n) {
		uint4 v[kLoads];
#pragma unroll
		for (uint32_t k = 0; k < kLoads; k++)
			if (base + k * n < words)
				v[k] = ld_global16(src + base + k * n);
#pragma unroll
		for (uint32_t k = 0; k < kLoads; k++)
			if (base + k * n < words)
				dst[base + k * n] = v[k];
	}
}

// The next tile from byte x of p, at most `room` bytes of 16-byte words:
// where its bytes begin in the tile, its end, and the words to stage.
struct tile {
	const uint4 *src;
	uint32_t lo, words;
	uint64_t y;
};

__device__ __forceinline__ tile next_tile(const uint8_t *p, uint64_t x, uint64_t b, uint32_t room)
{
	const uintptr_t at = reinterpret_cast<uintptr_t>(p + x);
	const uintptr_t q = at & ~static_cast<uintptr_t>(15);
	const uint32_t lo = (uint32_t)(at - q);
	const uint64_t y = min(b, x + (room - lo));

	return tile{reinterpret_cast<const uint4 *>(q), lo, (uint32_t)((lo + (y - x) + 15) / 16),
		    y};
}

// block_walk over bytes [a, b) of p through tiles staged at st.buf. Not
// inlined, like the warp's: the units that call them keep the registers
// they had before host input was staged (inlined, the in-place walks spilled).
template <class T>
__device__ __noinline__ uint32_t staged_walk(const T &t, const stage &st, const uint8_t *p,
					     uint64_t a, uint64_t b, uint32_t start, bool known,
					     uint32_t *first, uint32_t *count, block_shared &d,
					     vyre_mk_devstate *ds)
{
	if (a >= b) {
		if (!known)
			*first = start;
		*count = 0;
		return *first;
	}
	if (!known) {
		// the first chunk's warm-up bytes lie before the first tile
		if (threadIdx.x == 0)
			d.walk[3] = guess<false>(t, p, a, start);
		__syncthreads();
		*first = d.walk[3];
		__syncthreads();
	}
	uint32_t s = *first, total = 0;

	for (uint64_t x = a; x < b;) {
		const tile tl = next_tile(p, x, b, st.room);
		uint32_t f = s, c = 0;

		stage_words(st.buf, tl.src, tl.words, threadIdx.x, blockDim.x);
		__syncthreads();
		// block_walk's last barrier ends every read of the tile
		s = block_walk<true>(t, reinterpret_cast<const uint8_t *>(st.buf) + tl.lo, 0,
				     tl.y - x, start, true, &f, &c, d, ds);
		total += c;
		x = tl.y;
	}
	*count = total;
	return s;
}

// warp_walk over bytes [0, bytes) of p from `start`, through tiles at st.buf;
// the accepting positions.
template <class T>
__device__ __noinline__ uint32_t warp_staged(const T &t, const stage &st, const uint8_t *p,
					     uint64_t bytes, uint32_t start)
{
	uint32_t s = start, total = 0;

	for (uint64_t x = 0; x < bytes;) {
		const tile tl = next_tile(p, x, bytes, st.room);

		stage_words(st.buf, tl.src, tl.words, threadIdx.x % 32, 32);
		__syncwarp();
		const uint2 r = warp_walk<true>(
		    t, reinterpret_cast<const uint8_t *>(st.buf) + tl.lo, tl.y - x, start, s);
		__syncwarp();
		s = r.x;
		total += r.y;
		x = tl.y;
	}
	return total;
}

} // namespace dfa
