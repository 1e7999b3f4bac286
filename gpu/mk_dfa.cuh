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
#include "mk_dfa_stage.cuh"
#include "mk_dfa_walk.cuh"

namespace dfa
{

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
