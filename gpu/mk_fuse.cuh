// SPDX-License-Identifier: MIT
//
// gpu/mk_fuse.cuh - an on-chip handoff run (docs/design.md 7.6) on one block:
// a decoder or BYTEMAP W, BYTEMAPs, and a last member F (BYTEMAP or
// DFA_SCAN_COUNTED or DFA_REPORT_COUNTED), each reading what the one before wrote into a
// transient buffer. The block streams W's input through shared memory in
// tiles, in order: a tile of input words is staged, each thread decodes a
// quad of words (one base64 group, two hex groups, four mapped words),
// applies every BYTEMAP at once through the composed 256-byte map, and then
// either stores the words to F's output (a BYTEMAP F) or puts them back
// into the tile, which the block scans (a DFA_SCAN_COUNTED F), carrying the
// DFA state from tile to tile. The transient buffers are never read or
// written: their bytes stay as they were, which nothing can observe.
//
// A DFA_REPORT_COUNTED F scans each decoded tile with mk_report.cuh's
// report_tile, which writes the tile's records as it goes: W's characters
// and F's table are therefore checked before the first tile, and F's
// header and stream state are written at the end.
//
// F may also be a module op whose manifest says `stream yes` (design.md
// 6.7): the decoded tile is then handed to its device function, a tile at a
// time with its carried state words, instead of being scanned, and W's
// characters are checked first (the function may write its output as the
// tiles come).
//
// Outcomes are those of running the members one after the other (gpu/ops.c):
// W fails on a bad header or a character outside its alphabet, a BYTEMAP on
// a short table or output, F's DFA on a bad table; the first that fails
// completes with VYRE_E_INVAL and the later ones with VYRE_E_CANCELED, and
// nothing is written. So a run that writes F's output first checks W's
// characters in a pass of their own (mk_decode.cuh's scan_digits); a run
// that ends in a scan writes only F's word 0 at the end, so it checks them
// as it decodes. A failed chain predecessor (VYRE_MK_AFTER_PREV on W)
// cancels every member.
//
// The DFA walk over a tile: each thread takes a chunk of at least kChunk
// bytes and guesses its start state by walking kWarmup bytes before it from
// the table's start state (from the tile's carried state when the chunk
// starts within kWarmup bytes of the tile); guesses are then checked in
// order and wrong chunks walked again until they all agree, as in
// mk_dfa.cuh, which makes the count the sequential walk's for any table.
//
// gpu/mk_units.cuh includes this after mk_decode.cuh (whose helpers it
// uses) inside megakernel.cu's anonymous namespace; tests/test_mk_fuse.cpp
// compiles it for the host. Plain C++ loads only, so the host can run it.

namespace mk_fuse
{

constexpr uint32_t kChunk = 32;	   // bytes a thread's chunk of a tile gets at least
constexpr uint32_t kWarmup = 32;   // bytes a chunk's guess walks
constexpr uint32_t kCtlWords = 16; // header results, broadcast by thread 0
constexpr uint32_t kMapAt = kCtlWords;
// the map, then a module's state or a report's header (mk_report::kHdrWords)
constexpr uint32_t kTileAt = kMapAt + 64 + 16;

// ctl words
constexpr uint32_t kOk = 0, kLen = 1, kD = 2, kDigits = 3; // mk_bytes::check_header's
constexpr uint32_t kFirstBad = 4, kCanceled = 5, kStates = 6, kStart = 7, kState = 8;
constexpr uint32_t kModuleRc = 9;
// a stream module F's carried state (VYRE_OP_STATE_WORDS) follows the map
constexpr uint32_t kModuleStateAt = kMapAt + 64;
constexpr uint32_t kModuleStateWords = 8;
constexpr uint32_t kReportAt = kModuleStateAt;

// Transitions in memory as the client wrote them, clamped at each use.
struct global_table {
	const uint32_t *next, *accept;
	uint32_t last;

	__device__ __forceinline__ uint32_t step(uint32_t s, uint32_t b, uint32_t &h) const
	{
		const uint32_t t = min(next[s * 256u + b], last);
		h += (accept[t >> 5] >> (t & 31)) & 1u;
		return t;
	}
	__device__ __forceinline__ uint32_t skip(uint32_t s, uint32_t b) const
	{
		return min(next[s * 256u + b], last);
	}
};

// 16-bit entries in shared memory: the target state, its accept bit at bit 15.
struct shared_table {
	const uint16_t *e;

	__device__ __forceinline__ uint32_t step(uint32_t s, uint32_t b, uint32_t &h) const
	{
		const uint32_t v = e[s * 256u + b];
		h += v >> 15;
		return v & 0x7fffu;
	}
	__device__ __forceinline__ uint32_t skip(uint32_t s, uint32_t b) const
	{
		return e[s * 256u + b] & 0x7fffu;
	}
};

template <class T>
__device__ uint32_t walk(const T &t, const uint8_t *p, uint32_t a, uint32_t b, uint32_t s,
			 uint32_t &h)
{
	for (uint32_t i = a; i < b; i++)
		s = t.step(s, p[i], h);
	return s;
}

template <class T>
__device__ uint32_t walk_quiet(const T &t, const uint8_t *p, uint32_t a, uint32_t b, uint32_t s)
{
	for (uint32_t i = a; i < b; i++)
		s = t.skip(s, p[i]);
	return s;
}

// Bytes [0, nb) of the tile p on the whole block, from state s0 (the tile's
// carried state); adds this thread's accepting positions to acc and returns
// the end state. g and e: blockDim.x words of shared memory each.
template <class T>
__device__ uint32_t scan_tile(const T &t, const uint8_t *p, uint32_t nb, uint32_t start,
			      uint32_t s0, uint32_t *g, uint32_t *e, uint32_t &acc,
			      vyre_mk_devstate *ds)
{
	const uint32_t tid = threadIdx.x, threads = blockDim.x;
	const uint32_t len = max(kChunk, ((nb + threads - 1) / threads + 15) & ~15u);
	const uint32_t n = (nb + len - 1) / len;
	const uint32_t ca = min(tid * len, nb), cb = min(ca + len, nb);
	uint32_t h = 0;

	if (tid < n) {
		uint32_t gs = s0;
		if (tid > 0)
			gs = ca <= kWarmup ? walk_quiet(t, p, 0, ca, s0)
					   : walk_quiet(t, p, ca - kWarmup, ca, start);
		g[tid] = gs;
		e[tid] = walk(t, p, ca, cb, gs, h);
	}
	__syncthreads();
	for (;;) {
		const bool bad = tid > 0 && tid < n && g[tid] != e[tid - 1];
		const uint32_t fix = bad ? e[tid - 1] : 0;
		// also orders this round's reads before its writes
		if (!__syncthreads_or(bad))
			break;
		if (bad) {
			h = 0;
			g[tid] = fix;
			e[tid] = walk(t, p, ca, cb, fix, h);
		}
		__syncthreads();
		if (tid == 0)
			bump_progress(ds);
	}
	const uint32_t end = n ? e[n - 1] : s0;
	acc += h;
	// every read of g and e is done before the next tile writes them
	__syncthreads();
	return end;
}

__device__ __forceinline__ bool is_map(const vyre_mk_unit &u)
{
	return (u.op & VYRE_MK_OP_MASK) == VYRE_OP_BYTEMAP;
}

__device__ __forceinline__ bool is_module(const vyre_mk_unit &u)
{
	return (u.op & VYRE_MK_OP_MASK) == VYRE_MK_OP_MODULE;
}

__device__ __forceinline__ bool is_report(const vyre_mk_unit &u)
{
	return (u.op & VYRE_MK_OP_MASK) == VYRE_OP_DFA_REPORT_COUNTED;
}

// A module op's device function on every thread of the block, for input
// [bytes, bytes + nb) (a stream F: one tile of it; a module unit: all of it,
// as tile 0 and the last). Returns thread 0's return value, broadcast
// through ctl[kModuleRc]; *result is thread 0's. Without modules linked in
// (no VYRE_MK_MODULES), lowering never makes a module unit.
__device__ int module_tile(const vyre_mk_unit &f, const uint8_t *bytes, uint32_t nb, uint32_t tile,
			   bool last, uint32_t *state, void *scratch, uint32_t scratch_bytes,
			   uint32_t *ctl, unsigned long long *result)
{
#ifdef VYRE_MK_MODULES
	const bool table = (f.op & VYRE_MK_MODULE_TABLE) != 0;
	vyre_op_dev_args a = {};

	a.in = bytes;
	a.in_bytes = nb;
	a.out = reinterpret_cast<void *>(f.out);
	a.out_bytes = f.out ? f.aux : 0;
	a.table = reinterpret_cast<const void *>(f.table);
	a.table_bytes = table ? f.param : 0;
	a.param = table ? 0u : f.param;
	a.abi = VYRE_OP_MODULE_ABI;
	a.thread = threadIdx.x;
	a.threads = blockDim.x;
	a.scratch = scratch;
	a.scratch_bytes = scratch_bytes;
	a.tile = tile;
	a.last_tile = last;
	a.state = state;
	const int rc = vyre_module_dispatch(f.op >> VYRE_MK_MODULE_SHIFT, &a, result);

	if (threadIdx.x == 0)
		ctl[kModuleRc] = (uint32_t)rc;
#else
	(void)f, (void)bytes, (void)nb, (void)tile, (void)last, (void)state, (void)scratch;
	(void)scratch_bytes, (void)result;
	if (threadIdx.x == 0)
		ctl[kModuleRc] = (uint32_t)VYRE_E_INVAL;
#endif
	__syncthreads();
	return (int)ctl[kModuleRc];
}

// Thread 0: whether W's chain predecessor failed, W's header, and each later
// member's header given D, into ctl.
__device__ void check_headers(const vyre_mk_unit *run, uint32_t m, uint64_t results, uint32_t *ctl)
{
	const vyre_mk_unit &w = run[0];

	ctl[kCanceled] = (w.op & VYRE_MK_AFTER_PREV) &&
			 reinterpret_cast<const volatile int32_t *>(results)[4 * w.reserved] != 0;
	if (ctl[kCanceled])
		return;
	mk_bytes::check_header(w, w.op & VYRE_MK_OP_MASK, true, ctl);
	const uint64_t d = ctl[kD];
	uint32_t first_bad = ctl[kOk] ? m : 0;

	for (uint32_t j = 1; j < m && first_bad == m; j++) {
		const vyre_mk_unit &u = run[j];
		bool ok = u.count >= 4 && d <= u.count - 4;

		if (is_map(u)) {
			ok = ok && u.param >= 256 && 4 + 4 * ((d + 3) / 4) <= u.aux;
		} else if (is_module(u)) {
			// the module checks its own operands, tile by tile
		} else if (is_report(u)) {
			mk_report::read_header(u, (uint32_t)d, ok,
					       mk_report::stream_addr(u, results), ctl + kReportAt);
			ok = ctl[kReportAt + mk_report::kOk] != 0;
		} else {
			const uint32_t *table = reinterpret_cast<const uint32_t *>(u.table);
			const uint32_t n = u.aux >= 8 ? table[0] : 0,
				       start = u.aux >= 8 ? table[1] : 0;
			const uint64_t need =
			    n == 0 ? 0 : 4 * (2 + ((uint64_t)n + 31) / 32 + 256 * (uint64_t)n);
			ok = ok && need != 0 && need <= u.aux && start < n;
			ctl[kStates] = n;
			ctl[kStart] = start;
		}
		if (!ok)
			first_bad = j;
	}
	ctl[kFirstBad] = first_bad;
}

// Thread 0: every member's record, and F's word 0 when all succeeded.
__device__ void finish(const vyre_mk_unit *run, uint32_t m, uint64_t results, const uint32_t *ctl,
		       bool w_bad, bool f_bad, uint32_t count, unsigned long long module_result,
		       uint32_t report_end, uint64_t report_total)
{
	const uint32_t d = ctl[kD];
	uint32_t first_bad = ctl[kCanceled] ? 0 : w_bad ? 0 : ctl[kFirstBad];
	const vyre_mk_unit &f = run[m - 1];

	if (first_bad == m && f_bad)
		first_bad = m - 1;
	for (uint32_t j = 0; j < m; j++) {
		const bool scan = j == m - 1 && !is_map(f);
		if (ctl[kCanceled] || j > first_bad)
			put_result(results, run[j].slot, VYRE_E_CANCELED, 0);
		else if (j == first_bad)
			put_result(results, run[j].slot, VYRE_E_INVAL, 0);
		else if (j == m - 1 && is_module(f))
			put_result(results, f.slot, 0, module_result);
		else if (j == m - 1 && is_report(f))
			mk_report::finish(f, ctl + kReportAt, report_end, report_total, results);
		else
			put_result(results, run[j].slot, 0, scan ? count : d);
	}
	if (first_bad == m && !is_module(f) && !is_report(f))
		*reinterpret_cast<uint32_t *>(f.out) = is_map(f) ? d : count;
}

// Copies F's table into dst as shared_table entries; whether an entry was out of range.
__device__ bool copy_table(uint16_t *dst, const uint32_t *next, const uint32_t *accept, uint32_t n)
{
	int bad = 0;

	for (uint32_t i = threadIdx.x; i < 256 * n; i += blockDim.x) {
		const uint32_t v = next[i];
		const uint32_t t = min(v, n - 1);
		bad |= v >= n;
		dst[i] = (uint16_t)(t | ((accept[t >> 5] >> (t & 31)) & 1u) << 15);
	}
	return __syncthreads_or(bad) != 0;
}

__device__ bool any_bad(const uint32_t *next, uint32_t n)
{
	int bad = 0;

	for (uint64_t i = threadIdx.x; i < 256ull * n; i += blockDim.x)
		bad |= next[i] >= n;
	return __syncthreads_or(bad) != 0;
}

// This thread's quad of tile words [4q, 4q + 4), of which `have` are input
// words: its output words into o (base64 3, hex 2, map 4; returns how
// many), and whether one of its characters below `digits` is not a digit.
__device__ uint32_t decode_quad(uint32_t op, const uint32_t x[4], uint64_t char0, uint32_t digits,
				bool check, uint32_t o[4], int &bad)
{
	using namespace mk_bytes;

	if (check)
		for (uint32_t k = 0; k < 16; k++) {
			const uint32_t c = byte_of(x[k / 4], k % 4);
			const uint32_t v =
			    op == VYRE_OP_BASE64_DECODE ? vyre_b64_value(c) : vyre_hex_value(c);
			if (char0 + k < digits && (v & kNotDigit))
				bad = 1;
		}
	if (op == VYRE_OP_BASE64_DECODE) {
		b64_group(x, 0, o);
		return 3;
	}
	if (op == VYRE_OP_HEX_DECODE) {
		o[0] = hex_group(x, 0);
		o[1] = hex_group(x, 1);
		return 2;
	}
	for (uint32_t k = 0; k < 4; k++)
		o[k] = x[k];
	return 4;
}

// ---- a run on one warp ---------------------------------------------------------------
//
// A run that ends in DFA_SCAN_COUNTED of at most VYRE_MK_DFA_WARP_BYTES runs
// on one warp (the lowering makes it a warp unit), 32 such runs a block, as
// small DFA and report items do: a block's walk of a 4 KiB item kept 128 of
// its 1024 threads busy. The warp stages W's input through its own room of
// the dynamic shared memory (16-byte loads in address order, for PCIe),
// decodes it in place and walks the decoded tile with warp_walk of
// mk_dfa_walk.cuh, as a DFA_SCAN warp unit walks its staged tiles: chunks of
// at least 64 bytes, one a lane, guessed, checked in order with shuffles and
// walked again until they agree. The host build (tests/test_mk_fuse.cpp)
// walks with warp_scan_tile, the same walk in plain loads.

constexpr uint32_t kAll = 0xffffffffu;

// 16 bytes that the device loads whole (one 16-byte load over PCIe).
struct alignas(16) quad16 {
	uint32_t w[4];
};

#ifndef __CUDACC__
constexpr uint32_t kWarpChunk = 64; // bytes a lane's chunk of a tile gets at least

// Bytes [0, nb) of the tile p on one warp from the carried state s0: the end
// state and (every lane) the warp's accepting positions, as dfa::warp_walk.
template <class T>
uint32_t warp_scan_tile(const T t, const uint8_t *p, uint32_t nb, uint32_t start, uint32_t s0,
			uint32_t &acc)
{
	const uint32_t lane = threadIdx.x % 32;
	const uint32_t len = max(kWarpChunk, ((nb + 31) / 32 + 15) & ~15u);
	const uint32_t n = (nb + len - 1) / len;
	const uint32_t ca = min(lane * len, nb), cb = min(ca + len, nb);
	uint32_t h = 0, g = s0, e = s0;

	if (lane < n) {
		if (lane > 0)
			g = walk_quiet(t, p, ca - kWarmup, ca, start);
		e = walk(t, p, ca, cb, g, h);
	}
	for (;;) {
		const uint32_t prev = __shfl_up_sync(kAll, e, 1);
		const bool bad = lane > 0 && lane < n && g != prev;
		if (!__any_sync(kAll, bad))
			break;
		if (bad) {
			h = 0;
			g = prev;
			e = walk(t, p, ca, cb, g, h);
		}
	}
	for (uint32_t k = 16; k > 0; k /= 2)
		h += __shfl_xor_sync(kAll, h, k);
	acc += h;
	return n ? __shfl_sync(kAll, e, n - 1) : s0;
}
#endif

// Copies the 16-byte words [0, words) of src to dst on n threads, this one
// being `rank`: in address order, several loads in flight (over PCIe a
// round trip each).
__device__ __forceinline__ void stage16(quad16 *dst, const quad16 *src, uint32_t words,
					uint32_t rank, uint32_t n)
{
	constexpr uint32_t kLoads = 4; // words a thread has in flight

	for (uint32_t base = rank; base < words; base += n * kLoads) {
		quad16 v[kLoads];
		for (uint32_t k = 0; k < kLoads; k++)
			if (base + n * k < words)
				v[k] = src[base + n * k];
		for (uint32_t k = 0; k < kLoads; k++)
			if (base + n * k < words)
				dst[base + n * k] = v[k];
	}
}

} // namespace mk_fuse

// A handoff run of m members ending in DFA_SCAN_COUNTED (run[0] .. run[m -
// 1], in shared memory) on one warp; buf: the warp's shared memory, 16-byte
// aligned, of buf_words words (at least 128): the control words, then the
// tile and the map. Every lane of the warp calls it; the outcome is
// block_fused_run's.
__device__ __noinline__ void warp_fused_run(const vyre_mk_unit *run, uint32_t m, uint64_t results,
					    uint32_t *buf, uint32_t buf_words)
{
	using namespace mk_fuse;
	const uint32_t lane = threadIdx.x % 32;
	const vyre_mk_unit &w = run[0], &f = run[m - 1];
	const uint32_t op = w.op & VYRE_MK_OP_MASK;
	const bool decoder = op != VYRE_OP_BYTEMAP;
	// in shared memory: lane 0's registers would hold them through the walk
	uint32_t *ctl = buf;

	if (lane == 0)
		check_headers(run, m, results, ctl);
	__syncwarp();
	const uint32_t len = ctl[kLen], d = ctl[kD], digits = ctl[kDigits];
	const uint32_t first_bad = ctl[kCanceled] ? 0u : ctl[kFirstBad];
	const uint32_t n = ctl[kStates], start = ctl[kStart];
	bool w_bad = false, f_bad = false;

	buf += kCtlWords;
	buf_words -= kCtlWords;
	uint32_t hits = 0;

	// a later member's header failing does not excuse W's characters
	if (first_bad == m || (decoder && first_bad > 0)) {
		const bool all = first_bad == m;
		// the composed map of the BYTEMAPs (a decoder then the scan: none)
		const bool mapped = all && (!decoder || m > 2);
		uint8_t *map = reinterpret_cast<uint8_t *>(buf + buf_words - 64);
		const uint32_t tile_words = (buf_words - (mapped ? 64u : 0u)) & ~3u;
		// input words a tile takes: whole quads, and room for the 16-byte alignment
		const uint32_t tin = (tile_words - 4) & ~3u;
		const uint32_t per = op == VYRE_OP_BASE64_DECODE ? 3
				     : op == VYRE_OP_HEX_DECODE	 ? 2
								 : 4;
		const uint32_t *accept = reinterpret_cast<const uint32_t *>(f.table) + 2;
		const uint32_t *next = accept + (n + 31) / 32;
		const uint8_t *chars = reinterpret_cast<const uint8_t *>(w.in) + 4;
		const uint32_t in_words = (len + 3) / 4;
		int bad = 0;
		uint32_t s = start;

		for (uint32_t b = lane; mapped && b < 256; b += 32) {
			uint32_t v = b;
			for (uint32_t j = 0; j < m; j++)
				if (is_map(run[j]))
					v = reinterpret_cast<const uint8_t *>(run[j].table)[v];
			map[b] = (uint8_t)v;
		}
		if (all && !(f.op & VYRE_MK_TABLE_TRUSTED)) {
			int mine = 0;
			for (uint64_t i = lane; i < 256ull * n; i += 32)
				mine |= next[i] >= n;
			f_bad = __any_sync(kAll, mine) != 0;
		}
		__syncwarp();
		for (uint32_t t0 = 0; t0 < in_words; t0 += tin) {
			const uint32_t mw = min(tin, in_words - t0);
			const uintptr_t at = reinterpret_cast<uintptr_t>(chars + 4ull * t0);
			const uintptr_t q = at & ~static_cast<uintptr_t>(15);
			const uint32_t lo = (uint32_t)(at - q) / 4;
			const uint32_t quads = (mw + 3) / 4;

			// the 16-byte words around the tile's words lie in the same mapped memory
			stage16(reinterpret_cast<quad16 *>(buf),
				reinterpret_cast<const quad16 *>(q), (lo + mw + 3) / 4, lane, 32);
			__syncwarp();
			// in place, 32 quads a round: a round's outputs end before the next
			// round's inputs begin, and its quads are all read before any is written
			for (uint32_t r0 = 0; r0 < quads; r0 += 32) {
				const uint32_t qd = r0 + lane;
				uint32_t x[4] = {0, 0, 0, 0}, o[4] = {0, 0, 0, 0};

				for (uint32_t k = 0; qd < quads && k < 4; k++)
					x[k] = 4 * qd + k < mw ? buf[lo + 4 * qd + k] : 0u;
				__syncwarp();
				if (qd < quads) {
					const uint32_t k_out =
					    decode_quad(op, x, 4 * ((uint64_t)t0 + 4 * qd), digits,
							decoder, o, bad);
					for (uint32_t k = 0; k < k_out; k++)
						buf[per * qd + k] =
						    mapped ? mk_bytes::map_word(map, o[k]) : o[k];
				}
				__syncwarp();
			}
			const uint64_t first_out = (uint64_t)t0 / 4 * per;
			const uint64_t have = 4 * (first_out + (uint64_t)per * quads);
			const uint32_t nb =
			    (uint32_t)(min(have, (uint64_t)d) - min(4 * first_out, (uint64_t)d));
			if (all && !f_bad) {
#ifdef __CUDACC__
				const uint2 r = dfa::warp_walk<true>(
				    dfa::global_table{next, accept, n - 1},
				    reinterpret_cast<const uint8_t *>(buf), nb, start, s);
				s = r.x;
				hits += r.y;
#else
				s = warp_scan_tile(global_table{next, accept, n - 1},
						   reinterpret_cast<const uint8_t *>(buf), nb,
						   start, s, hits);
#endif
			}
			// every read of the tile is done before the next one is staged
			__syncwarp();
		}
		w_bad = decoder && __any_sync(kAll, bad) != 0;
	}
	// hits: the warp's, on every lane
	if (lane == 0)
		finish(run, m, results, ctl, w_bad, f_bad, hits, 0, 0, 0);
	__syncwarp();
}

// A handoff run of m members (run[0] .. run[m - 1], in shared memory) on the
// whole block. scratch: shared memory of scratch_words words (at least
// kTileAt + 4); g, e: blockDim.x words of shared memory each; cnt:
// mk_report::cnt_words(blockDim.x) (a report F's prefix sums). Every thread
// of the block calls it.
__device__ void block_fused_run(const vyre_mk_unit *run, uint32_t m, uint64_t results,
				uint32_t *scratch, uint32_t scratch_words, uint32_t *g, uint32_t *e,
				uint64_t *cnt, vyre_mk_devstate *ds)
{
	using namespace mk_fuse;
	const uint32_t tid = threadIdx.x, threads = blockDim.x;
	const vyre_mk_unit &w = run[0], &f = run[m - 1];
	const uint32_t op = w.op & VYRE_MK_OP_MASK;
	const bool module_f = is_module(f), report_f = is_report(f);
	const bool scan = !is_map(f) && !module_f && !report_f, decoder = op != VYRE_OP_BYTEMAP;
	uint32_t *ctl = scratch;
	uint8_t *map = reinterpret_cast<uint8_t *>(scratch + kMapAt);
	uint32_t *tile = scratch + kTileAt;
	// a module F keeps VYRE_OP_DEV_SCRATCH_MIN bytes past the tile for its scratch
	// (the backend starts with modules only when the dynamic shared memory holds both)
	const uint32_t keep = module_f ? VYRE_MK_MODULE_SCRATCH_WORDS : 0u;
	const uint32_t avail = (scratch_words - kTileAt - keep) & ~3u;
	uint32_t tile_words = min(4 * threads, avail);
	unsigned long long module_result = 0;
	const uint32_t *in = reinterpret_cast<const uint32_t *>(w.in) + 1;

	if (tid == 0)
		check_headers(run, m, results, ctl);
	__syncthreads();
	const uint32_t len = ctl[kLen], d = ctl[kD], digits = ctl[kDigits];
	const uint32_t first_bad = ctl[kCanceled] ? 0 : ctl[kFirstBad];
	// F's output is written as the input streams: W's characters are checked before
	const bool checked_first =
	    decoder && ctl[kOk] && !ctl[kCanceled] && (first_bad < m || !scan);
	bool w_bad = checked_first &&
		     __syncthreads_or(mk_bytes::scan_digits(reinterpret_cast<const uint8_t *>(in),
							    true, op, digits, ds));
	bool f_bad = false;
	uint32_t hits = 0, report_state = 0;
	uint64_t report_total = 0;

	if (first_bad == m && !w_bad) {
		const bool mapped = !decoder || m > 2 || is_map(f);
		const uint32_t n = scan ? ctl[kStates] : 1, start = scan ? ctl[kStart] : 0;
		const uint32_t *accept = reinterpret_cast<const uint32_t *>(f.table) + 2;
		const uint32_t *next = accept + (n + 31) / 32;
		const uint64_t room = 4ull * (scratch_words - kTileAt - tile_words);
		const bool in_shared = scan && n <= 32768 && 512ull * n <= room && 256ull * n <= d;
		// a scan takes the largest tile the table leaves, up to 16 words a thread:
		// fewer tiles, barriers and warm-up bytes (4 words a thread: 32-byte chunks)
		if (scan)
			tile_words =
			    min(16 * threads,
				(scratch_words - kTileAt - (in_shared ? 128 * n : 0u)) & ~3u);
		uint16_t *stable = reinterpret_cast<uint16_t *>(tile + tile_words);
		// 16-byte loads, the tile's words from word lo on: room for the alignment
		const bool wide = scan && tile_words >= 8;
		const uint32_t tin = wide ? tile_words - 4 : tile_words;

		// every BYTEMAP's table, composed, read whole before anything is written
		for (uint32_t b = tid; mapped && b < 256; b += threads) {
			uint32_t v = b;
			for (uint32_t j = 0; j < m; j++)
				if (is_map(run[j]))
					v = reinterpret_cast<const uint8_t *>(run[j].table)[v];
			map[b] = (uint8_t)v;
		}
		if (in_shared)
			f_bad = copy_table(stable, next, accept, n);
		else if (scan && !(f.op & VYRE_MK_TABLE_TRUSTED))
			f_bad = any_bad(next, n);
		else if (report_f)
			f_bad = mk_report::block_bad_table(f, ctl + kReportAt);
		if (report_f)
			report_state = ctl[kReportAt + mk_report::kS0];
		if (tid == 0)
			ctl[kState] = start;
		// a report F keeps its header there
		if (module_f && tid < kModuleStateWords)
			scratch[kModuleStateAt + tid] = 0;
		__syncthreads();

		const uint32_t in_words = (len + 3) / 4, out_words = (d + 3) / 4;
		int bad = 0;

		for (uint32_t t0 = 0; t0 < in_words; t0 += tin) {
			const uint32_t mw = min(tin, in_words - t0), quads = (mw + 3) / 4;
			const uint32_t per = op == VYRE_OP_BASE64_DECODE ? 3
					     : op == VYRE_OP_HEX_DECODE	 ? 2
									 : 4;
			const uint64_t first_out = (uint64_t)t0 / 4 * per;
			uint32_t lo = 0;

			if (wide) {
				// the 16-byte words around the tile's words lie in the same mapped
				// memory
				const uintptr_t at = reinterpret_cast<uintptr_t>(in + t0);
				const uintptr_t q = at & ~static_cast<uintptr_t>(15);
				lo = (uint32_t)(at - q) / 4;
				stage16(reinterpret_cast<quad16 *>(tile),
					reinterpret_cast<const quad16 *>(q), (lo + mw + 3) / 4, tid,
					threads);
			} else {
				for (uint32_t i = tid; i < mw; i += threads)
					tile[i] = in[(uint64_t)t0 + i];
			}
			__syncthreads();
			// a quad a thread a round (one round unless a scan's tile is wider): a
			// round's outputs end before the next round's inputs begin
			for (uint32_t r0 = 0; r0 < quads; r0 += threads) {
				const uint32_t qd = r0 + tid;
				const bool mine = qd < quads;
				uint32_t x[4] = {0, 0, 0, 0}, o[4] = {0, 0, 0, 0};

				for (uint32_t k = 0; mine && k < 4; k++)
					x[k] = 4 * qd + k < mw ? tile[lo + 4 * qd + k] : 0;
				// every quad of the round is read before any is written back (in
				// place)
				__syncthreads();
				if (!mine)
					continue;
				const uint32_t k_out =
				    decode_quad(op, x, 4 * ((uint64_t)t0 + 4 * qd), digits,
						decoder && !checked_first, o, bad);
				for (uint32_t k = 0; k < k_out; k++) {
					const uint64_t ow = first_out + (uint64_t)per * qd + k;
					const uint32_t v =
					    mapped ? mk_bytes::map_word(map, o[k]) : o[k];
					if (scan || module_f || report_f)
						tile[per * qd + k] = v;
					else if (ow < out_words)
						*(reinterpret_cast<uint32_t *>(f.out) + 1 + ow) =
						    mk_bytes::mask_past(v, ow, d);
				}
			}
			if (scan) {
				__syncthreads();
				const uint64_t have =
				    4 * (first_out + (uint64_t)per * ((mw + 3) / 4));
				const uint32_t nb = (uint32_t)(min(have, (uint64_t)d) -
							       min(4 * first_out, (uint64_t)d));
				const uint32_t s0 = ctl[kState];
				const uint8_t *bytes = reinterpret_cast<const uint8_t *>(tile);
				const uint32_t s1 =
				    in_shared ? scan_tile(shared_table{stable}, bytes, nb, start,
							  s0, g, e, hits, ds)
					      : scan_tile(global_table{next, accept, n - 1}, bytes,
							  nb, start, s0, g, e, hits, ds);
				if (tid == 0)
					ctl[kState] = s1;
			}
			if (report_f && !f_bad) {
				__syncthreads();
				const uint64_t have =
				    4 * (first_out + (uint64_t)per * ((mw + 3) / 4));
				const uint64_t at = min(4 * first_out, (uint64_t)d);
				const uint32_t nb = (uint32_t)(min(have, (uint64_t)d) - at);
				const uint32_t *rh = ctl + kReportAt;
				uint64_t added = 0;
				report_state = mk_report::report_tile(
				    mk_report::view_of(f, rh),
				    reinterpret_cast<const uint8_t *>(tile), nb,
				    rh[mk_report::kStart], report_state,
				    mk_report::offset_of(rh) + at, report_total,
				    reinterpret_cast<uint8_t *>(f.out),
				    (f.param - mk_report::kHeaderBytes) / mk_report::kRecordBytes,
				    g, e, cnt, &added, ds);
				report_total += added;
			}
			if (module_f && !f_bad) {
				__syncthreads();
				const uint64_t have =
				    4 * (first_out + (uint64_t)per * ((mw + 3) / 4));
				const uint32_t nb = (uint32_t)(min(have, (uint64_t)d) -
							       min(4 * first_out, (uint64_t)d));
				f_bad = module_tile(f, reinterpret_cast<const uint8_t *>(tile), nb,
						    t0 / tin, t0 + tin >= in_words,
						    scratch + kModuleStateAt, tile + tile_words,
						    4 * keep, ctl, &module_result) != 0;
			}
			if (tid == 0)
				bump_progress(ds);
			// the next tile overwrites what this one decoded from (and the carried
			// state)
			__syncthreads();
		}
		if (decoder && !checked_first)
			w_bad = __syncthreads_or(bad) != 0;
		// no tile: the function still sees the empty input once, as on the host
		if (module_f && in_words == 0)
			f_bad = module_tile(f, reinterpret_cast<const uint8_t *>(tile), 0, 0, true,
					    scratch + kModuleStateAt, tile + tile_words, 4 * keep,
					    ctl, &module_result) != 0;
	}
	// the sum of every thread's hits: 32 at a time, then those sums
	g[tid] = hits;
	__syncthreads();
	if (tid < (threads + 31) / 32) {
		uint32_t v = 0;
		for (uint32_t k = 32 * tid; k < min(32 * tid + 32, threads); k++)
			v += g[k];
		e[tid] = v;
	}
	__syncthreads();
	if (tid == 0) {
		uint32_t count = 0;
		for (uint32_t k = 0; k < (threads + 31) / 32; k++)
			count += e[k];
		finish(run, m, results, ctl, w_bad, f_bad, count, module_result, report_state,
		       report_total);
	}
	__syncthreads();
}
