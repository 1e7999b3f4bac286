// SPDX-License-Identifier: MIT
//
// gpu/mk_dfa_walk.cuh - how DFA_SCAN walks bytes (included by gpu/mk_dfa.cuh;
// docs/cuda.md, "DFA_SCAN"): the two table views (global memory, 16-bit
// entries in shared memory), one chunk's walk from a state, a chunk's guess
// of its start, and a block's or a warp's walk of a range in chunks checked
// in order. mk_dfa.cuh's header says why chunks guess.
#pragma once

#include <stdint.h>

#include "cuda_abi.h"

namespace dfa
{
constexpr uint32_t kAll = 0xffffffffu;
constexpr uint32_t kWarmup = VYRE_MK_DFA_WARMUP;
constexpr uint32_t kBlockChunkMin = 256; // bytes a block's chunk gets at least
constexpr uint32_t kWarpChunkMin = 128;	 // bytes a warp's chunk gets at least
constexpr uint32_t kShortMax = 32768;	 // states a 16-bit shared entry can name
constexpr uint32_t kRecBad = 1u;	 // part record flag: table or length invalid
constexpr uint32_t kStageChunk = VYRE_MK_DFA_STAGE_CHUNK;
constexpr uint32_t kWarpStageMin = 512; // a warp's staged tile: whole 512-byte warp loads

// What the block units of DFA items keep in shared memory (megakernel.cu's
// shared_state holds one).
struct block_shared {
	uint32_t g[VYRE_MK_THREADS];	  // each chunk's start state (guessed, then right)
	uint32_t e[VYRE_MK_THREADS];	  // each chunk's end state
	uint4 rec[VYRE_MK_DFA_MAX_PARTS]; // the join: the parts' records
	uint32_t red[VYRE_MK_WARPS];
	uint32_t sum;
	uint32_t hdr[4];  // n_states, start, bytes to scan, ok
	uint32_t walk[4]; // the join: next part, state, count so far; [3] a staged part's guess
};

// ---- small helpers -----------------------------------------------------------

__device__ __forceinline__ uint32_t warp_sum(uint32_t v)
{
#pragma unroll
	for (int d = 16; d > 0; d /= 2)
		v += __shfl_xor_sync(kAll, v, d);
	return v;
}

// The sum of every thread's v; every thread of the block must call it.
__device__ uint32_t block_sum(uint32_t v, block_shared &d)
{
	const uint32_t lane = threadIdx.x % 32, warp = threadIdx.x / 32;

	v = warp_sum(v);
	if (lane == 0)
		d.red[warp] = v;
	__syncthreads();
	if (warp == 0) {
		v = lane < blockDim.x / 32 ? d.red[lane] : 0;
		v = warp_sum(v);
		if (lane == 0)
			d.sum = v;
	}
	__syncthreads();
	v = d.sum;
	__syncthreads();
	return v;
}

__device__ __forceinline__ void progress(vyre_mk_devstate *ds)
{
	if (ds)
		atomicAdd(&ds->progress, 1u);
}

__device__ __forceinline__ void result(uint64_t results, uint32_t slot, int32_t status,
				       uint32_t value)
{
	reinterpret_cast<uint4 *>(results)[slot] = make_uint4((uint32_t)status, 0u, value, 0u);
}

__device__ __forceinline__ uint32_t dynamic_smem_bytes()
{
	uint32_t r;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
	return r;
}

__device__ __forceinline__ bool counted(const vyre_mk_unit &u)
{
	return (u.op & VYRE_MK_OP_MASK) == VYRE_OP_DFA_SCAN_COUNTED;
}

// The bytes a unit's item may scan: all of in, or after DFA_SCAN_COUNTED's length word.
__device__ __forceinline__ uint32_t max_bytes(const vyre_mk_unit &u)
{
	return counted(u) ? (u.count >= 4 ? u.count - 4 : 0) : u.count;
}

__device__ __forceinline__ const uint8_t *first_byte(const vyre_mk_unit &u)
{
	return reinterpret_cast<const uint8_t *>(u.in) + (counted(u) ? 4 : 0);
}

// What one thread reads of the item's words before anything else: the
// table's n_states and start, and the bytes to scan. ok is 0 for a table
// whose header is invalid or a counted length beyond the buffer.
struct header {
	uint32_t n, start, bytes, ok;
};

__device__ header read_header(const vyre_mk_unit &u)
{
	const uint32_t *table = reinterpret_cast<const uint32_t *>(u.table);
	header h = {0, 0, 0, 0};

	if (u.aux < 8)
		return h;
	h.n = table[0];
	h.start = table[1];
	const uint64_t need =
	    h.n == 0 ? 0 : 4 * (2 + ((uint64_t)h.n + 31) / 32 + 256 * (uint64_t)h.n);
	h.ok = need != 0 && need <= u.aux && h.start < h.n;
	h.bytes = u.count;
	if (counted(u)) {
		const uint32_t len = u.count >= 4 ? *reinterpret_cast<const uint32_t *>(u.in) : 0;
		h.ok = h.ok && u.count >= 4 && len <= u.count - 4;
		h.bytes = len;
	}
	return h;
}

__device__ __forceinline__ const uint32_t *accept_of(const vyre_mk_unit &u)
{
	return reinterpret_cast<const uint32_t *>(u.table) + 2;
}

__device__ __forceinline__ const uint32_t *next_of(const vyre_mk_unit &u, uint32_t n)
{
	return accept_of(u) + (n + 31) / 32;
}

// ---- loads that name their memory -------------------------------------------------
//
// The walk is a function of its own (see walk), where a plain pointer no
// longer tells the compiler which memory it points to: these say so, sparing
// the generic loads' address-space check on every byte.

__device__ __forceinline__ uint32_t ld_global(const uint32_t *p)
{
	uint32_t v;
	asm("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p));
	return v;
}

__device__ __forceinline__ uint4 ld_global16(const uint4 *p)
{
	uint4 v;
	asm("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
	    : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
	    : "l"(p));
	return v;
}

// Volatile: a staged tile is written by other threads before a barrier.
__device__ __forceinline__ uint4 ld_shared_v4(const uint4 *p)
{
	uint4 v;
	asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
		     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
		     : "r"((uint32_t)__cvta_generic_to_shared(p)));
	return v;
}

// The input's 16-byte words: in place (global memory) or from a staged tile.
template <bool Staged> __device__ __forceinline__ uint4 ld_input(const uint4 *p)
{
	return Staged ? ld_shared_v4(p) : ld_global16(p);
}

__device__ __forceinline__ uint32_t ld_shared16(uint32_t addr)
{
	uint16_t v;
	asm("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(addr));
	return v;
}

// ---- the two table views -----------------------------------------------------

// Transitions in global memory as the client wrote them, clamped at each use.
struct global_table {
	const uint32_t *next, *accept;
	uint32_t last; // n_states - 1

	__device__ __forceinline__ uint32_t step(uint32_t s, uint32_t byte, uint32_t &hits) const
	{
		const uint32_t t = min(ld_global(next + (s * 256u + byte)), last);
		hits += (ld_global(accept + (t >> 5)) >> (t & 31)) & 1u;
		return t;
	}
	__device__ __forceinline__ uint32_t skip(uint32_t s, uint32_t byte) const
	{
		return min(ld_global(next + (s * 256u + byte)), last);
	}
};

// 16-bit entries in shared memory: the target state, its accept bit at bit 15.
struct shared_table {
	uint32_t base; // shared-memory address of entry 0

	__device__ __forceinline__ uint32_t step(uint32_t s, uint32_t byte, uint32_t &hits) const
	{
		const uint32_t v = ld_shared16(base + 2 * (s * 256u + byte));
		hits += v >> 15;
		return v & 0x7fffu;
	}
	__device__ __forceinline__ uint32_t skip(uint32_t s, uint32_t byte) const
	{
		return ld_shared16(base + 2 * (s * 256u + byte)) & 0x7fffu;
	}
};

// ---- walking bytes -------------------------------------------------------------

template <bool Count, class T>
__device__ __forceinline__ uint32_t step(const T &t, uint32_t s, uint32_t byte, uint32_t &hits)
{
	return Count ? t.step(s, byte, hits) : t.skip(s, byte);
}

template <bool Count, class T>
__device__ __forceinline__ uint32_t step_word(const T &t, uint32_t s, uint32_t w, uint32_t &hits)
{
#pragma unroll
	for (uint32_t k = 0; k < 4; k++)
		s = step<Count>(t, s, (w >> (8 * k)) & 0xffu, hits);
	return s;
}

__device__ __forceinline__ uint32_t byte_of(const uint4 &v, uint32_t j)
{
	const uint32_t w = j < 8 ? (j < 4 ? v.x : v.y) : (j < 12 ? v.z : v.w);
	return (w >> (8 * (j & 3))) & 0xffu;
}

template <bool Count, class T>
__device__ __forceinline__ uint32_t whole_word(const T &t, const uint4 &v, uint32_t s,
					       uint32_t &hits)
{
	s = step_word<Count>(t, s, v.x, hits);
	s = step_word<Count>(t, s, v.y, hits);
	s = step_word<Count>(t, s, v.z, hits);
	return step_word<Count>(t, s, v.w, hits);
}

// Bytes [lo, hi) of the 16-byte word at q.
template <bool Count, bool Staged, class T>
__device__ __forceinline__ uint32_t part_word(const T &t, const uint4 *q, uint32_t lo, uint32_t hi,
					      uint32_t s, uint32_t &hits)
{
	const uint4 v = ld_input<Staged>(q);

	for (uint32_t j = lo; j < hi; j++)
		s = step<Count>(t, s, byte_of(v, j), hits);
	return s;
}

constexpr uint32_t kAhead = 1; // 16-byte words a walk keeps in flight

// The state after bytes [a, b) of p from s (x) and, when Count, the
// accepting positions among them (y). Reads aligned 16-byte words and keeps
// kAhead of them in flight: each slot is loaded again as soon as its word is
// taken (a word of host memory is a PCIe round trip away). The words around
// a and b lie in the same 16-byte-aligned, hence mapped, memory as the bytes
// themselves. Not inlined: its loop then gets registers of its own (the
// megakernel runs 1024 threads a block, 64 registers each), and a call
// costs little next to a chunk.
template <bool Count, bool Staged, class T>
__device__ __noinline__ uint2 walk(const T t, const uint8_t *p, uint64_t a, uint64_t b, uint32_t s)
{
	uint32_t hits = 0;

	if (a >= b)
		return make_uint2(s, 0);
	const uintptr_t from = reinterpret_cast<uintptr_t>(p + a);
	const uint4 *q = reinterpret_cast<const uint4 *>(from & ~static_cast<uintptr_t>(15));
	const uint32_t lo = (uint32_t)(from & 15);
	const uint64_t span = lo + (b - a); // bytes from q
	uint64_t w = 0;

	if (lo != 0 || span < 16) {
		s = part_word<Count, Staged>(t, q, lo, span < 16 ? (uint32_t)span : 16u, s, hits);
		w = 1;
	}
	// the whole words [w, span / 16), then what is left of the last one
	const uint64_t n = span / 16 > w ? span / 16 - w : 0;
	uint4 ring[kAhead];

	q += w;
#pragma unroll
	for (uint32_t i = 0; i < kAhead; i++)
		if (i < n)
			ring[i] = ld_input<Staged>(q + i);
	for (uint64_t k = 0; k < n; k += kAhead) {
#pragma unroll
		for (uint32_t i = 0; i < kAhead; i++) {
			if (k + i >= n)
				break;
			const uint4 v = ring[i];
			if (k + i + kAhead < n)
				ring[i] = ld_input<Staged>(q + k + i + kAhead);
			s = whole_word<Count>(t, v, s, hits);
		}
	}
	if ((span & 15) && span / 16 >= w)
		s = part_word<Count, Staged>(t, q + n, 0, (uint32_t)(span & 15), s, hits);
	return make_uint2(s, hits);
}

// A chunk's guess: the state after the warm-up bytes before byte `at` (or
// all of them, near the start) from the table's start state.
template <bool Staged, class T>
__device__ __forceinline__ uint32_t guess(const T &t, const uint8_t *p, uint64_t at, uint32_t start)
{
	return walk<false, Staged>(t, p, at - min((uint64_t)kWarmup, at), at, start).x;
}

// How [a, b) is cut into chunks for `threads` threads of at least `min_bytes`:
// a chunk length (a multiple of 16) and how many chunks are not empty.
struct cut {
	uint64_t len;
	uint32_t n;
};

__device__ __forceinline__ cut cut_range(uint64_t bytes, uint32_t threads, uint32_t min_bytes)
{
	if (bytes == 0)
		return cut{16, 0};
	uint64_t n = bytes / min_bytes;
	n = n < 1 ? 1 : (n > threads ? threads : n);
	const uint64_t len = ((bytes + n - 1) / n + 15) & ~static_cast<uint64_t>(15);
	return cut{len, (uint32_t)((bytes + len - 1) / len)};
}

// ---- a block walks a range -------------------------------------------------------

// Bytes [a, b) of p on the whole block. The first chunk starts in *first when
// known, else guesses like the others (and *first becomes its guess); returns
// the end state and *count, the accepting positions in [a, b) from *first.
// Every thread must call it with the same arguments. Staged: p is a staged
// tile in shared memory (chunks of at least VYRE_MK_DFA_STAGE_CHUNK bytes).
template <bool Staged, class T>
__device__ uint32_t block_walk(const T &t, const uint8_t *p, uint64_t a, uint64_t b, uint32_t start,
			       bool known, uint32_t *first, uint32_t *count, block_shared &d,
			       vyre_mk_devstate *ds)
{
	const uint32_t tid = threadIdx.x;
	const cut c = cut_range(b - a, blockDim.x, Staged ? kStageChunk : kBlockChunkMin);
	const uint64_t ca = a + (uint64_t)tid * c.len;
	const uint64_t cb = min(ca + c.len, b);
	uint32_t hits = 0;

	if (tid < c.n) {
		const uint32_t g = tid == 0 && known ? *first : guess<Staged>(t, p, ca, start);
		const uint2 w = walk<true, Staged>(t, p, ca, cb, g);
		d.g[tid] = g;
		d.e[tid] = w.x;
		hits = w.y;
	}
	__syncthreads();
	for (;;) {
		const bool bad = tid > 0 && tid < c.n && d.g[tid] != d.e[tid - 1];
		const uint32_t fix = bad ? d.e[tid - 1] : 0;
		// also orders this round's reads before its writes
		if (!__syncthreads_or(bad))
			break;
		if (bad) {
			const uint2 w = walk<true, Staged>(t, p, ca, cb, fix);
			d.g[tid] = fix;
			d.e[tid] = w.x;
			hits = w.y;
		}
		__syncthreads();
		if (tid == 0)
			progress(ds);
	}
	const uint32_t end = c.n ? d.e[c.n - 1] : (known ? *first : start);
	if (c.n)
		*first = d.g[0];
	else if (!known)
		*first = start;
	*count = block_sum(hits, d); // its barriers end every read of d.g and d.e
	return end;
}

// ---- a warp walks a small item ----------------------------------------------------

// Bytes [0, bytes) of p on one warp, lane 0's chunk from `first`, the others
// guessing from `start`: the end state (x) and the accepting positions (y).
template <bool Staged, class T>
__device__ uint2 warp_walk(const T &t, const uint8_t *p, uint64_t bytes, uint32_t start,
			   uint32_t first)
{
	const uint32_t lane = threadIdx.x % 32;
	const cut c = cut_range(bytes, 32, Staged ? kStageChunk : kWarpChunkMin);
	const uint64_t ca = (uint64_t)lane * c.len;
	const uint64_t cb = min(ca + c.len, bytes);
	uint32_t hits = 0, g = 0, e = 0;

	if (lane < c.n) {
		g = lane == 0 ? first : guess<Staged>(t, p, ca, start);
		const uint2 w = walk<true, Staged>(t, p, ca, cb, g);
		e = w.x;
		hits = w.y;
	}
	for (;;) {
		const uint32_t prev = __shfl_up_sync(kAll, e, 1);
		const bool bad = lane > 0 && lane < c.n && g != prev;
		if (!__any_sync(kAll, bad))
			break;
		if (bad) {
			const uint2 w = walk<true, Staged>(t, p, ca, cb, prev);
			g = prev;
			e = w.x;
			hits = w.y;
		}
	}
	const uint32_t end = c.n ? __shfl_sync(kAll, e, c.n - 1) : first;
	return make_uint2(end, warp_sum(hits));
}

} // namespace dfa
