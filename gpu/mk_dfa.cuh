// SPDX-License-Identifier: MIT
//
// gpu/mk_dfa.cuh - DFA_SCAN and DFA_SCAN_COUNTED in the megakernel
// (included by gpu/megakernel.cu; docs/cuda.md, "DFA_SCAN").
//
// The scanned bytes are cut into chunks, one a thread. A chunk cannot know
// the state it starts in, so it guesses: it walks the VYRE_MK_DFA_WARMUP
// bytes before it from the table's start state (for a literal-set automaton
// the state no longer depends on where a walk began once it has read as many
// bytes as the longest pattern). Every chunk then walks its bytes from its
// guess. The guesses are checked in chunk order: a chunk whose guess differs
// from its predecessor's end state walks again from that end state, in
// rounds until every guess agrees. Each round makes the first wrong chunk
// right, so it ends for every table, converging or not (a table that never
// converges, such as a counter mod m, costs at most a sequential walk), and
// the counts, each over its own chunk only, add up to the sequential walk's.
//
// An item runs on one warp (small), one block, or in parts: one block each,
// a part leaves {guessed start, end state, count, flags} in a result record,
// and a join in the next stage checks the parts in order the same way and
// walks again those whose guess was wrong.
//
// Tables: a table of at most 32768 states whose next-state array fits the
// dynamic shared memory is copied there as 16-bit entries with the accept bit
// of the target folded in (one shared load a byte); otherwise transitions
// are read from global memory (the L1 and L2 caches). Every lookup is clamped
// to the state count read once per unit, and shared copies are clamped when
// made, so a table rewritten between validation and use (or a trusted table)
// yields a wrong count, never a stray access.
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

// ---- validation and the shared copy ----------------------------------------------------

// Whether any of next entries [lo, hi) is n or more; every thread of the block calls it.
__device__ bool block_any_bad(const uint32_t *next, uint64_t lo, uint64_t hi, uint32_t n)
{
	int bad = 0;
	for (uint64_t i = lo + threadIdx.x; i < hi; i += blockDim.x)
		bad |= next[i] >= n;
	return __syncthreads_or(bad) != 0;
}

__device__ __forceinline__ bool host_input(const vyre_mk_unit &u)
{
	return (u.op & VYRE_MK_DFA_HOST_IN) != 0;
}

// Whether a table of n states goes to shared memory for a walk over `bytes`:
// it must fit (with room for a staged tile beside it, for host input), and
// copying it (n KiB read) must not cost more than a quarter of the walk's
// reads.
template <bool Host> __device__ __forceinline__ bool use_shared(uint32_t n, uint64_t bytes)
{
	const uint32_t beside = Host ? VYRE_MK_DFA_STAGE_MIN : 0u;
	return n <= kShortMax && 512ull * n + beside <= dynamic_smem_bytes() && 256ull * n <= bytes;
}

// Copies the table into dst as shared_table entries; returns whether any
// entry was out of range (the validation, for free). Every thread calls it.
__device__ bool block_copy(uint16_t *dst, const vyre_mk_unit &u, uint32_t n)
{
	constexpr uint32_t kLoads = 4; // entries a thread has in flight
	const uint32_t *next = next_of(u, n), *accept = accept_of(u);
	const uint32_t entries = 256 * n; // n <= kShortMax
	const uint32_t step = blockDim.x;
	int bad = 0;

	for (uint32_t base = threadIdx.x; base < entries; base += kLoads * step) {
		uint32_t v[kLoads];
#pragma unroll
		for (uint32_t k = 0; k < kLoads; k++)
			v[k] = base + k * step < entries ? next[base + k * step] : 0;
#pragma unroll
		for (uint32_t k = 0; k < kLoads; k++) {
			if (base + k * step >= entries)
				break;
			bad |= v[k] >= n;
			const uint32_t t = min(v[k], n - 1);
			dst[base + k * step] =
			    (uint16_t)(t | ((accept[t >> 5] >> (t & 31)) & 1u) << 15);
		}
	}
	return __syncthreads_or(bad) != 0;
}

__device__ __forceinline__ uint16_t *shared_entries()
{
	extern __shared__ uint4 vyre_mk_dynamic[];
	return reinterpret_cast<uint16_t *>(vyre_mk_dynamic);
}

__device__ __forceinline__ shared_table shared_view()
{
	return shared_table{(uint32_t)__cvta_generic_to_shared(shared_entries())};
}

__device__ __forceinline__ global_table global_view(const vyre_mk_unit &u, uint32_t n)
{
	return global_table{next_of(u, n), accept_of(u), n - 1};
}

// A block unit's staging room: what a shared table of `table_bytes` leaves of
// the dynamic shared memory, in whole KiB, for host input and if enough.
template <bool Host> __device__ __forceinline__ stage block_stage(uint32_t table_bytes)
{
	const uint32_t smem = dynamic_smem_bytes();
	const uint32_t room = smem > table_bytes ? (smem - table_bytes) & ~1023u : 0u;

	if (!Host || room < VYRE_MK_DFA_STAGE_MIN)
		return stage{nullptr, 0};
	return stage{reinterpret_cast<uint4 *>(shared_entries()) + table_bytes / 16, room};
}

// A warp unit's: its warp's share of the dynamic shared memory (warp units
// read their tables from global memory), in multiples of a warp load.
__device__ __forceinline__ stage warp_stage()
{
	const uint32_t room = (dynamic_smem_bytes() / VYRE_MK_WARPS) & ~(kWarpStageMin - 1);

	if (room == 0)
		return stage{nullptr, 0};
	return stage{reinterpret_cast<uint4 *>(shared_entries()) + threadIdx.x / 32 * (room / 16),
		     room};
}

// A block walks bytes [a, b) of p: staged for host input, else in place
// (block_walk's contract).
template <bool Host, class T>
__device__ __forceinline__ uint32_t range_walk(const T &t, const stage &st, const uint8_t *p,
					       uint64_t a, uint64_t b, uint32_t start, bool known,
					       uint32_t *first, uint32_t *count, block_shared &d,
					       vyre_mk_devstate *ds)
{
	if (Host && st.room)
		return staged_walk(t, st, p, a, b, start, known, first, count, d, ds);
	return block_walk<false>(t, p, a, b, start, known, first, count, d, ds);
}

// Thread 0 reads the header once and the block shares it (each thread
// reading the words itself could see different values if they change).
__device__ header block_header(const vyre_mk_unit &u, block_shared &d)
{
	if (threadIdx.x == 0) {
		const header h = read_header(u);
		d.hdr[0] = h.n;
		d.hdr[1] = h.start;
		d.hdr[2] = h.bytes;
		d.hdr[3] = h.ok;
	}
	__syncthreads();
	const header h = {d.hdr[0], d.hdr[1], d.hdr[2], d.hdr[3]};
	__syncthreads();
	return h;
}

// ---- units -------------------------------------------------------------------------

// A whole item on one block.
template <bool Host>
__device__ void block_item(const vyre_mk_unit &u, uint64_t results, block_shared &d,
			   vyre_mk_devstate *ds)
{
	const header h = block_header(u, d);
	const bool trusted = (u.op & VYRE_MK_TABLE_TRUSTED) != 0;
	const uint8_t *p = first_byte(u);
	uint32_t first = h.start, count = 0;
	bool bad = !h.ok;

	if (!bad && use_shared<Host>(h.n, h.bytes)) {
		bad = block_copy(shared_entries(), u, h.n);
		if (!bad)
			range_walk<Host>(shared_view(), block_stage<Host>(512 * h.n), p, 0, h.bytes,
					 h.start, true, &first, &count, d, ds);
	} else if (!bad) {
		bad = !trusted && block_any_bad(next_of(u, h.n), 0, 256ull * h.n, h.n);
		if (!bad)
			range_walk<Host>(global_view(u, h.n), block_stage<Host>(0), p, 0, h.bytes,
					 h.start, true, &first, &count, d, ds);
	}
	// block_walk's last barrier: every read of the input is done (out may be in)
	if (threadIdx.x == 0) {
		if (!bad)
			*reinterpret_cast<uint32_t *>(u.out) = count;
		result(results, u.slot, bad ? VYRE_E_INVAL : 0, bad ? 0 : count);
	}
	__syncthreads();
}

// Part u.param of a split item: its bytes and, unless trusted, its share of
// the table's validation; the record goes to result slot u.slot + 1 + part.
template <bool Host>
__device__ void block_part(const vyre_mk_unit &u, uint64_t results, block_shared &d,
			   vyre_mk_devstate *ds)
{
	const header h = block_header(u, d);
	const bool trusted = (u.op & VYRE_MK_TABLE_TRUSTED) != 0;
	const uint32_t part = u.param, part_bytes = u.reserved;
	const uint64_t limit = max_bytes(u);
	const uint64_t parts = part_bytes ? (limit + part_bytes - 1) / part_bytes : 1;
	// a counted item scans only its first h.bytes bytes: later parts are empty
	const uint64_t b = min(min((uint64_t)(part + 1) * part_bytes, limit), (uint64_t)h.bytes);
	const uint64_t a = min((uint64_t)part * part_bytes, b);
	const uint8_t *p = first_byte(u);
	uint32_t first = h.start, count = 0, end = h.start;
	bool bad = !h.ok || part_bytes == 0;

	if (!bad && use_shared<Host>(h.n, b - a)) {
		bad = block_copy(shared_entries(), u, h.n);
		if (!bad)
			end = range_walk<Host>(shared_view(), block_stage<Host>(512 * h.n), p, a, b,
					       h.start, part == 0, &first, &count, d, ds);
	} else if (!bad) {
		const uint64_t entries = 256ull * h.n;
		bad = !trusted && block_any_bad(next_of(u, h.n), entries * part / parts,
						entries * (part + 1) / parts, h.n);
		if (!bad)
			end = range_walk<Host>(global_view(u, h.n), block_stage<Host>(0), p, a, b,
					       h.start, part == 0, &first, &count, d, ds);
	}
	if (threadIdx.x == 0)
		reinterpret_cast<uint4 *>(results)[u.slot + 1 + part] =
		    make_uint4(first, end, count, bad ? kRecBad : 0u);
	__syncthreads();
}

// The join of a split item (a stage after its parts): the parts' guesses are
// checked in order from the start state; a part whose guess was wrong walks
// again from the right state, on this block.
template <bool Host>
__device__ void block_join(const vyre_mk_unit &u, uint64_t results, block_shared &d,
			   vyre_mk_devstate *ds)
{
	const header h = block_header(u, d);
	const uint32_t tid = threadIdx.x, parts = min(u.param, VYRE_MK_DFA_MAX_PARTS);
	// the parts' bytes, as the lowering cut them (cuda_lower.c, dfa_part_bytes)
	const uint32_t part_bytes =
	    parts ? (uint32_t)((((uint64_t)max_bytes(u) + parts - 1) / parts + 15) & ~15ull) : 0;
	const uint4 *rec = reinterpret_cast<const uint4 *>(results) + u.slot + 1;
	const uint8_t *p = first_byte(u);
	int flags = 0;

	for (uint32_t i = tid; i < parts; i += blockDim.x) {
		d.rec[i] = rec[i];
		flags |= d.rec[i].w & kRecBad;
	}
	bool bad = __syncthreads_or(flags) || !h.ok || part_bytes == 0;
	const bool shared = !bad && use_shared<Host>(h.n, h.bytes);
	const stage st = block_stage<Host>(shared ? 512 * h.n : 0);
	bool copied = false;
	uint32_t i = 0, s = h.start, total = 0;

	while (!bad) {
		if (tid == 0) {
			// the parts past the scanned bytes (a counted item) are empty
			while (i < parts && (uint64_t)i * part_bytes < h.bytes) {
				if (d.rec[i].x != s)
					break;
				s = d.rec[i].y;
				total += d.rec[i].z;
				i++;
			}
			if ((uint64_t)i * part_bytes >= h.bytes)
				i = parts;
			d.walk[0] = i;
			d.walk[1] = s;
			d.walk[2] = total;
		}
		__syncthreads();
		i = d.walk[0];
		s = d.walk[1];
		total = d.walk[2];
		__syncthreads();
		if (i >= parts)
			break;
		const uint64_t a = (uint64_t)i * part_bytes;
		const uint64_t b = min(a + part_bytes, (uint64_t)h.bytes);
		// a part that read another n_states (its table rewritten) may end past ours
		uint32_t first = min(s, h.n - 1), count = 0;
		if (shared && !copied) {
			// the parts validated the table: this copy only needs to be safe
			block_copy(shared_entries(), u, h.n);
			copied = true;
		}
		if (shared)
			s = range_walk<Host>(shared_view(), st, p, a, b, h.start, true, &first,
					     &count, d, ds);
		else
			s = range_walk<Host>(global_view(u, h.n), st, p, a, b, h.start, true,
					     &first, &count, d, ds);
		total += count;
		i++;
		if (tid == 0)
			progress(ds);
	}
	if (tid == 0) {
		if (!bad)
			*reinterpret_cast<uint32_t *>(u.out) = total;
		result(results, u.slot, bad ? VYRE_E_INVAL : 0, bad ? 0 : total);
	}
	__syncthreads();
}

// A small item on one warp (which may be the polling warp: no block barrier).
// Host: its input is host memory (staged). Each kind is a function of its
// own, so the in-place units keep the registers they had without staging.
template <bool Host>
__device__ __noinline__ void warp_item_as(const vyre_mk_unit &u, uint64_t results)
{
	const uint32_t lane = threadIdx.x % 32;
	header h = {0, 0, 0, 0};

	if (lane == 0)
		h = read_header(u);
	h.n = __shfl_sync(kAll, h.n, 0);
	h.start = __shfl_sync(kAll, h.start, 0);
	h.bytes = __shfl_sync(kAll, h.bytes, 0);
	h.ok = __shfl_sync(kAll, h.ok, 0);
	bool bad = !h.ok;
	uint32_t count = 0;

	if (!bad && !(u.op & VYRE_MK_TABLE_TRUSTED)) {
		const uint32_t *next = next_of(u, h.n);
		int mine = 0;
		for (uint64_t i = lane; i < 256ull * h.n; i += 32)
			mine |= next[i] >= h.n;
		bad = __any_sync(kAll, mine) != 0;
	}
	const stage st = Host ? warp_stage() : stage{nullptr, 0};
	if (!bad && Host && st.room)
		count = warp_staged(global_view(u, h.n), st, first_byte(u), h.bytes, h.start);
	else if (!bad)
		count =
		    warp_walk<false>(global_view(u, h.n), first_byte(u), h.bytes, h.start, h.start)
			.y;
	__syncwarp();
	if (lane == 0) {
		if (!bad)
			*reinterpret_cast<uint32_t *>(u.out) = count;
		result(results, u.slot, bad ? VYRE_E_INVAL : 0, bad ? 0 : count);
	}
	__syncwarp();
}

__device__ __noinline__ void warp_item(const vyre_mk_unit &u, uint64_t results)
{
	if (host_input(u))
		warp_item_as<true>(u, results);
	else
		warp_item_as<false>(u, results);
}

template <bool Host>
__device__ __noinline__ void block_unit_as(const vyre_mk_unit &u, uint64_t results, block_shared &d,
					   vyre_mk_devstate *ds)
{
	if (u.op & VYRE_MK_DFA_PART)
		block_part<Host>(u, results, d, ds);
	else if (u.op & VYRE_MK_DFA_JOIN)
		block_join<Host>(u, results, d, ds);
	else
		block_item<Host>(u, results, d, ds);
}

__device__ __noinline__ void block_unit(const vyre_mk_unit &u, uint64_t results, block_shared &d,
					vyre_mk_devstate *ds)
{
	if (host_input(u))
		block_unit_as<true>(u, results, d, ds);
	else
		block_unit_as<false>(u, results, d, ds);
}

} // namespace dfa
