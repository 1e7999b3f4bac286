// SPDX-License-Identifier: MIT
//
// gpu/mk_report.cuh - DFA_REPORT and DFA_REPORT_COUNTED on one block, or on
// one warp for a small item (docs/design.md 6.8, docs/cuda.md "DFA_REPORT";
// the warp's walk is at the end of this file).
//
// The input goes through shared memory in tiles, in order (word loads in
// address order, so host input crosses PCIe in whole lines). Each tile is
// scanned as mk_fuse.cuh scans a decoded tile: a chunk a thread, each
// guessing its start state from the bytes before it, checked in order and
// walked again until every guess agrees, so every chunk then knows its
// right start state. Each chunk counts its matches (a match: the state
// after a byte has a non-empty out list; one record per entry), an
// exclusive prefix sum over the chunks, in order, gives each chunk the
// index of its first record, and a second walk of the chunks that have
// matches, from the byte and state of each one's first (kept by the first
// walk), writes their records below the capacity only. So the kept
// records are exactly the sequential walk's first min(total, capacity),
// each written whole by one thread, and a chunk never writes an index
// counted for another (a table rewritten between the walks gives wrong
// records, never a record two threads write).
//
// Every check comes before any store (design.md 6.8: the table and its
// report section, the counted length, the stream state; next[] is not
// checked under VYRE_MK_TABLE_TRUSTED, nor the report section's lists under
// VYRE_MK_REPORT_TRUSTED, only its header); the report's
// header, the stream state and the result record are written at the end.
// The table is read with plain loads, clamped at every use, so a table
// rewritten while it is read yields wrong records, never a stray access.
//
// mk_units.cuh includes this inside megakernel.cu's anonymous namespace,
// before its warp units (small items) and mk_fuse.cuh, which runs a report
// as the last member of a handoff run with the same tile code; tests/test_mk_report.cpp compiles it
// for the host. Plain C++ loads only, so the host can run it.

namespace mk_report
{

constexpr uint32_t kChunk = 32;			 // bytes a chunk of a tile gets at least
constexpr uint32_t kWarmup = VYRE_MK_DFA_WARMUP; // bytes a chunk's guess walks
constexpr uint32_t kTileMax = 64u << 10;	 // bytes of input a tile holds at most
constexpr uint32_t kRecordBytes = 24;
constexpr uint32_t kHeaderBytes = 16;

// The header words thread 0 reads and the block shares (hdr[]).
constexpr uint32_t kOk = 0, kStates = 1, kStart = 2, kNOut = 3, kSection = 4, kS0 = 5;
constexpr uint32_t kOffLo = 6, kOffHi = 7, kLen = 8, kStreamLo = 9, kStreamHi = 10;
constexpr uint32_t kHdrWords = 12;

// cnt[] of report_tile: a word a thread, then a word a warp, then the tile's total.
__device__ __forceinline__ uint32_t cnt_words(uint32_t threads)
{
	return threads + 33;
}

__device__ __forceinline__ uint32_t ld32(const uint8_t *p)
{
	if ((reinterpret_cast<uintptr_t>(p) & 3u) == 0)
		return *reinterpret_cast<const uint32_t *>(p);
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// Words an earlier stage (another block) may have written: past the caches.
__device__ __forceinline__ uint32_t ld32_volatile(const uint8_t *p)
{
	const volatile uint8_t *q = p;
	return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}

__device__ __forceinline__ void st32(uint8_t *p, uint32_t v)
{
	if ((reinterpret_cast<uintptr_t>(p) & 3u) == 0) {
		*reinterpret_cast<uint32_t *>(p) = v;
		return;
	}
	for (uint32_t k = 0; k < 4; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}

__device__ __forceinline__ void st64(uint8_t *p, uint64_t v)
{
	if ((reinterpret_cast<uintptr_t>(p) & 7u) == 0) {
		*reinterpret_cast<uint64_t *>(p) = v;
		return;
	}
	st32(p, (uint32_t)v);
	st32(p + 4, (uint32_t)(v >> 32));
}

// 16 bytes, a then b, in as few stores as p's alignment allows: reports go
// to host memory, where each store is a PCIe write of its own.
__device__ __forceinline__ void st128(uint8_t *p, uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
	if ((reinterpret_cast<uintptr_t>(p) & 15u) == 0) {
		*reinterpret_cast<ulonglong2 *>(p) = make_ulonglong2(a, b);
		return;
	}
#endif
	st64(p, a);
	st64(p + 8, b);
}

// The table with its report section; every lookup is clamped.
struct table_view {
	const uint8_t *accept; // accept[(n + 31) / 32]
	const uint8_t *next;   // next[n][256]
	const uint8_t *out;    // { id, len }[n_out]
	uint32_t n, n_out;

	__device__ __forceinline__ uint32_t step(uint32_t s, uint32_t b) const
	{
		return min(ld32(next + 4 * ((uint64_t)s * 256u + b)), n - 1);
	}
	// Whether the table starts on a word: then its words are read a load each
	// (the contract allows any alignment; the aligned walks are the fast ones).
	__device__ __forceinline__ bool aligned() const
	{
		return (reinterpret_cast<uintptr_t>(next) & 3u) == 0;
	}
	// out_first[n + 1], just below out: not kept, for registers in the walks
	__device__ __forceinline__ const uint8_t *first() const
	{
		return out - 4 * ((uint64_t)n + 1);
	}
	// Whether state t (below n) accepts: only such a state has a list.
	__device__ __forceinline__ bool accepts(uint32_t t) const
	{
		return (ld32(accept + 4 * (t >> 5)) >> (t & 31)) & 1u;
	}
};

__device__ __forceinline__ table_view view_of(const vyre_mk_unit &u, const uint32_t *hdr)
{
	const uint8_t *t = reinterpret_cast<const uint8_t *>(u.table);
	const uint32_t n = hdr[kStates];
	const uint8_t *out = t + hdr[kSection] + 8 + 4 * ((uint64_t)n + 1);

	return table_view{t + 8, t + 4 * (2 + (n + 31) / 32), out, n, hdr[kNOut]};
}

__device__ __forceinline__ uint64_t offset_of(const uint32_t *hdr)
{
	return (uint64_t)hdr[kOffHi] << 32 | hdr[kOffLo];
}

__device__ __forceinline__ uint8_t *stream_of(const uint32_t *hdr)
{
	return reinterpret_cast<uint8_t *>((uint64_t)hdr[kStreamHi] << 32 | hdr[kStreamLo]);
}

// The item's record carries the stream buffer's address until the item
// writes its outcome there (cuda_lower_item.c: the unit has no room for it);
// 0 without VYRE_MK_REPORT_STREAM, the record not read.
__device__ __forceinline__ uint64_t stream_addr(const vyre_mk_unit &u, uint64_t results)
{
	if (!(u.op & VYRE_MK_REPORT_STREAM))
		return 0;
	return *(reinterpret_cast<const uint64_t *>(results) + 2ull * u.slot + 1);
}

// Thread 0: the table's header and report section's header, the stream
// state, and the bytes to scan (`len`, found valid by the caller when
// len_ok), into hdr. hdr[kOk] is 0 when any is invalid.
__device__ void read_header(const vyre_mk_unit &u, uint32_t len, bool len_ok, uint64_t stream,
			    uint32_t *hdr)
{
	const uint8_t *t = reinterpret_cast<const uint8_t *>(u.table);
	const uint64_t tb = u.aux;
	bool ok = len_ok && tb >= 8 && u.param >= kHeaderBytes;
	const uint32_t n = ok ? ld32(t) : 0, start = ok ? ld32(t + 4) : 0;
	const uint64_t sec = n == 0 ? 0 : 4 * (2 + ((uint64_t)n + 31) / 32 + 256 * (uint64_t)n);
	uint32_t n_out = 0, s0 = start;
	uint64_t off = 0;

	ok = ok && sec != 0 && start < n && sec + 8 <= tb;
	if (ok) {
		n_out = ld32(t + sec + 4);
		ok = ld32(t + sec) == VYRE_DFA_REPORT_MAGIC &&
		     sec + 8 + 4 * ((uint64_t)n + 1) + 8 * (uint64_t)n_out <= tb;
	}
	if (ok && stream) {
		const uint8_t *sp = reinterpret_cast<const uint8_t *>(stream);
		const uint32_t started = ld32_volatile(sp), state = ld32_volatile(sp + 4);
		const uint64_t seen =
		    (uint64_t)ld32_volatile(sp + 12) << 32 | ld32_volatile(sp + 8);

		// zeroed: a new stream; started: continues (design.md 6.8)
		ok = started == 1 ? state < n : started == 0 && state == 0 && seen == 0;
		if (started == 1) {
			s0 = state;
			off = seen;
		}
		ok = ok && off <= UINT64_MAX - len;
	}
	hdr[kOk] = ok;
	hdr[kStates] = n;
	hdr[kStart] = start;
	hdr[kNOut] = n_out;
	hdr[kSection] = (uint32_t)sec;
	hdr[kS0] = s0;
	hdr[kOffLo] = (uint32_t)off;
	hdr[kOffHi] = (uint32_t)(off >> 32);
	hdr[kLen] = len;
	hdr[kStreamLo] = (uint32_t)stream;
	hdr[kStreamHi] = (uint32_t)(stream >> 32);
}

// Whether any next entry i = first, first + step, ... (below 256 n) is n or more.
__device__ __forceinline__ int next_bad(const table_view &v, uint32_t first, uint32_t step)
{
	int bad = 0;

	for (uint64_t i = first; i < 256ull * v.n; i += step)
		bad |= ld32(v.next + 4 * i) >= v.n;
	return bad;
}

// Whether any state s = first, first + step, ... breaks the report section's
// rules: out_first 0 .. n_out in order, lists of ids strictly increasing with
// len >= 1, a non-empty list only on an accepting state.
__device__ __forceinline__ int section_bad(const table_view &v, uint32_t first, uint32_t step)
{
	int bad = 0;

	for (uint32_t s = first; s < v.n; s += step) {
		const uint8_t *f = v.first() + 4ull * s;
		const uint32_t lo = ld32(f), hi = ld32(f + 4);

		bad |= (s == 0 && lo != 0) || (s == v.n - 1 && hi != v.n_out) || hi < lo ||
		       hi > v.n_out || (hi > lo && !v.accepts(s));
		if (bad)
			continue;
		for (uint32_t j = lo; j < hi; j++) {
			const uint8_t *e = v.out + 8ull * j;
			bad |= ld32(e + 4) == 0 || (j > lo && ld32(e) <= ld32(e - 8));
		}
	}
	return bad;
}

// Whether the table breaks design.md 6.8 (hdr read and ok): a transition
// out of range (unless VYRE_MK_TABLE_TRUSTED: its next[] was validated since
// its last write), or a report section that section_bad finds wrong (unless
// VYRE_MK_REPORT_TRUSTED: the section was, too). Every thread of the block
// calls it.
__device__ bool block_bad_table(const vyre_mk_unit &u, const uint32_t *hdr)
{
	const table_view v = view_of(u, hdr);
	int bad = 0;

	if (!(u.op & VYRE_MK_TABLE_TRUSTED))
		bad |= next_bad(v, threadIdx.x, blockDim.x);
	if (!(u.op & VYRE_MK_REPORT_TRUSTED))
		bad |= section_bad(v, threadIdx.x, blockDim.x);
	return __syncthreads_or(bad) != 0;
}

// Bytes [a, b) of p a 64-bit word at a time where p + i is 8-byte aligned
// (chunks start at multiples of 16 from an operand's or a tile's first
// byte, which is at least word aligned; any p is allowed): one load for
// eight steps, not eight. f(i, byte) makes the step. It returns false to
// stop early.
template <typename F>
__device__ __forceinline__ void walk_bytes(const uint8_t *p, uint32_t a, uint32_t b, F f)
{
	uint32_t i = a;

	for (; i < b && (reinterpret_cast<uintptr_t>(p + i) & 7u) != 0; i++)
		if (!f(i, p[i]))
			return;
	for (; i + 8 <= b; i += 8) {
		const uint64_t w = *reinterpret_cast<const uint64_t *>(p + i);
		for (uint32_t k = 0; k < 8; k++)
			if (!f(i + k, (uint32_t)(w >> (8 * k)) & 0xffu))
				return;
	}
	for (; i < b; i++)
		if (!f(i, p[i]))
			return;
}

// A word of a table known to be word aligned: a global load that names its
// memory (no generic address check on every byte; mk_dfa_walk.cuh's reason).
__device__ __forceinline__ uint32_t ld32_aligned(const uint8_t *p)
{
#ifdef __CUDA_ARCH__
	uint32_t v;
	asm("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p));
	return v;
#else
	uint32_t v;
	__builtin_memcpy(&v, p, 4);
	return v;
#endif
}

// One step of the walks: the aligned table's fast loads, or ld32's.
template <bool Aligned>
__device__ __forceinline__ uint32_t step_of(const table_view &v, uint32_t s, uint32_t c)
{
	if (!Aligned)
		return v.step(s, c);
	return min(ld32_aligned(v.next + 4 * ((uint64_t)s * 256u + c)), v.n - 1);
}

// State t's accept bit (t below n), as a value: no branch waits for it.
template <bool Aligned>
__device__ __forceinline__ uint32_t accept_bit(const table_view &v, uint32_t t)
{
	const uint8_t *w = v.accept + 4 * (t >> 5);
	return ((Aligned ? ld32_aligned(w) : ld32(w)) >> (t & 31)) & 1u;
}

template <bool Aligned>
__device__ __forceinline__ uint32_t walk_quiet_t(const table_view &v, const uint8_t *p, uint32_t a,
						 uint32_t b, uint32_t s)
{
	walk_bytes(p, a, b, [&](uint32_t, uint32_t c) {
		s = step_of<Aligned>(v, s, c);
		return true;
	});
	return s;
}

__device__ __forceinline__ uint32_t walk_quiet(const table_view &v, const uint8_t *p, uint32_t a,
					       uint32_t b, uint32_t s)
{
	return v.aligned() ? walk_quiet_t<true>(v, p, a, b, s) : walk_quiet_t<false>(v, p, a, b, s);
}

// A chunk's guess of its start state, at byte ca (> 0) of p: the warm-up
// bytes before it from the table's start, or near the start every byte
// before it from s0. A call of its own, as walk_count.
// cppcheck-suppress passedByValue
__device__ __noinline__ uint32_t guess_at(const table_view v, const uint8_t *p, uint32_t ca,
					  uint32_t s0, uint32_t start)
{
	return ca <= kWarmup ? walk_quiet(v, p, 0, ca, s0)
			     : walk_quiet(v, p, ca - kWarmup, ca, start);
}

// The end of a counting walk: its state, the records its bytes make, and
// where the first of them is made: byte `first` from state `s_first`, where
// the write walk starts (from the chunk's start it walked every byte before
// the first record again, and on a warp the lanes without records wait for
// the longest such walk: with sparse matches about a whole chunk).
struct walked {
	uint32_t s, first, s_first;
	uint64_t hits;
};

// The out list of an accepting state t: entries [*lo, returned) (list's
// bounds without its accept check, which the walks already made).
template <bool Aligned>
__device__ __forceinline__ uint32_t accepting_list(const table_view &v, uint32_t t, uint32_t *lo)
{
	const uint8_t *f = v.first() + 4ull * t;
	const uint32_t a = min(Aligned ? ld32_aligned(f) : ld32(f), v.n_out);
	const uint32_t b = min(Aligned ? ld32_aligned(f + 4) : ld32(f + 4), v.n_out);

	*lo = a;
	return b > a ? b : a;
}

// Byte i of p (the state before it, s after it, s accepting) counted into
// w: the records of s's list, and the first of them.
template <bool Aligned>
__device__ __forceinline__ void count_at(const table_view &v, walked &w, uint32_t i,
					 uint32_t before, uint32_t s)
{
	uint32_t lo;
	const uint32_t hi = accepting_list<Aligned>(v, s, &lo);

	if (hi > lo && w.hits == 0) {
		w.first = i;
		w.s_first = before;
	}
	w.hits += hi - lo;
}

// Eight bytes (the word c, from state s) of a walk that counts: the steps
// alone first, each state kept and its accept bit gathered as a value, so
// that the next step's table load never waits for the last one's accept bit
// (a branch on a load stalls the warp until it lands: two dependent loads a
// byte instead of one); then the lists of the accepting states among them
// (none in most words of real rule sets). Returns the state after the word.
template <bool Aligned>
__device__ __forceinline__ uint32_t count_word(const table_view &v, walked &w, uint32_t i,
					       uint64_t c, uint32_t s)
{
	uint32_t st[9], acc = 0;

	st[0] = s;
#pragma unroll
	for (uint32_t k = 0; k < 8; k++) {
		st[k + 1] = step_of<Aligned>(v, st[k], (uint32_t)(c >> (8 * k)) & 0xffu);
		acc |= accept_bit<Aligned>(v, st[k + 1]) << k;
	}
	if (acc) {
#pragma unroll
		for (uint32_t k = 0; k < 8; k++)
			if ((acc >> k) & 1u)
				count_at<Aligned>(v, w, i + k, st[k], st[k + 1]);
	}
	return st[8];
}

// walk_count's body: bytes up to an 8-byte boundary one at a time, then
// 8-byte words with the next one's load in flight (input in device or
// host memory is hundreds of cycles away), then the tail.
template <bool Aligned>
__device__ __forceinline__ walked walk_count_t(const table_view &v, const uint8_t *p, uint32_t a,
					       uint32_t b, uint32_t s)
{
	walked w = {s, b, s, 0};
	uint32_t i = a;

	for (; i < b && (reinterpret_cast<uintptr_t>(p + i) & 7u) != 0; i++) {
		const uint32_t before = s;
		s = step_of<Aligned>(v, s, p[i]);
		if (accept_bit<Aligned>(v, s))
			count_at<Aligned>(v, w, i, before, s);
	}
	if (i + 8 <= b) {
		uint64_t next = *reinterpret_cast<const uint64_t *>(p + i);
		for (; i + 8 <= b; i += 8) {
			const uint64_t c = next;
			if (i + 16 <= b)
				next = *reinterpret_cast<const uint64_t *>(p + i + 8);
			s = count_word<Aligned>(v, w, i, c, s);
		}
	}
	for (; i < b; i++) {
		const uint32_t before = s;
		s = step_of<Aligned>(v, s, p[i]);
		if (accept_bit<Aligned>(v, s))
			count_at<Aligned>(v, w, i, before, s);
	}
	w.s = s;
	return w;
}

// The state after bytes [a, b) of p from s, and the records they make;
// returned in registers (no pointer kept through the loop). A call of its
// own with the view by value keeps the view in registers.
// cppcheck-suppress passedByValue
__device__ __noinline__ walked walk_count(const table_view v, const uint8_t *p, uint32_t a,
					  uint32_t b, uint32_t s)
{
	return v.aligned() ? walk_count_t<true>(v, p, a, b, s) : walk_count_t<false>(v, p, a, b, s);
}

// Writes a record at r: two stores when r is 16-byte aligned or 8 past
// (the 16-byte half first or last), three or six when the output is only
// 8- or 4-byte aligned (the contract's least).
__device__ __forceinline__ void put_record(uint8_t *r, uint32_t id, uint32_t len, uint64_t end)
{
	const uint64_t start = end >= len ? end - len : 0;

	if ((reinterpret_cast<uintptr_t>(r) & 15u) == 0) {
		st128(r, id, start);
		st64(r + 16, end);
	} else {
		st64(r, id);
		st128(r + 8, start, end);
	}
}

// The records of accepting state t after byte i (stream offset off + i),
// from r on while any of `left` remain.
template <bool Aligned>
__device__ __forceinline__ void emit_at(const table_view &v, uint32_t t, uint64_t end, uint8_t *&r,
					uint32_t &left)
{
	uint32_t lo;
	const uint32_t hi = accepting_list<Aligned>(v, t, &lo);

	for (uint32_t j = lo; j < hi && left; j++, left--, r += kRecordBytes) {
		const uint8_t *e = v.out + 8ull * j;
		put_record(r, ld32(e), ld32(e + 4), end);
	}
}

// walk_write's body, as walk_count_t's: single bytes to an 8-byte boundary,
// then words whose steps run without waiting for accept bits, then the tail.
template <bool Aligned>
__device__ __forceinline__ void walk_write_t(const table_view &v, const uint8_t *p, uint32_t a,
					     uint32_t b, uint32_t s, uint64_t off, uint8_t *r,
					     uint32_t left)
{
	uint32_t i = a;

	for (; i < b && left && (reinterpret_cast<uintptr_t>(p + i) & 7u) != 0; i++) {
		s = step_of<Aligned>(v, s, p[i]);
		if (accept_bit<Aligned>(v, s))
			emit_at<Aligned>(v, s, off + i + 1, r, left);
	}
	for (; i + 8 <= b && left; i += 8) {
		const uint64_t c = *reinterpret_cast<const uint64_t *>(p + i);
		uint32_t st[8], acc = 0;

#pragma unroll
		for (uint32_t k = 0; k < 8; k++) {
			s = step_of<Aligned>(v, s, (uint32_t)(c >> (8 * k)) & 0xffu);
			st[k] = s;
			acc |= accept_bit<Aligned>(v, s) << k;
		}
		if (acc) {
#pragma unroll
			for (uint32_t k = 0; k < 8; k++)
				if ((acc >> k) & 1u)
					emit_at<Aligned>(v, st[k], off + i + k + 1, r, left);
		}
	}
	for (; i < b && left; i++) {
		s = step_of<Aligned>(v, s, p[i]);
		if (accept_bit<Aligned>(v, s))
			emit_at<Aligned>(v, s, off + i + 1, r, left);
	}
}

// The second walk: bytes [a, b) of p from s, whose first byte is at stream
// offset off + a; writes its first `left` records from r on (a pointer and a
// count: fewer registers than indexes in the loop).
// cppcheck-suppress passedByValue
__device__ __noinline__ void walk_write(const table_view v, const uint8_t *p, uint32_t a,
					uint32_t b, uint32_t s, uint64_t off, uint8_t *r,
					uint32_t left)
{
	if (left == 0)
		return;
	if (v.aligned())
		walk_write_t<true>(v, p, a, b, s, off, r, left);
	else
		walk_write_t<false>(v, p, a, b, s, off, r, left);
}

// Records idx .. min(idx + h, cap) of the report at out, made by bytes [a,
// b) of p from s (a: the chunk's first record's byte, walked.first; p[0] at
// stream offset off): walk_write where any fall below cap (cap < 2^32: the
// output's bytes are a u32).
__device__ __forceinline__ void write_chunk(const table_view &v, const uint8_t *p, uint32_t a,
					    uint32_t b, uint32_t s, uint64_t off, uint64_t idx,
					    uint64_t h, uint64_t cap, uint8_t *out)
{
	if (h && idx < cap)
		walk_write(v, p, a, b, s, off, out + kHeaderBytes + kRecordBytes * idx,
			   (uint32_t)min(h, cap - idx));
}

// Bytes [0, nb) of the tile p (shared memory) on the whole block, from state
// s0; p[0] is at stream offset off and `base` records came before it. Writes
// this tile's records below cap into out and returns the end state; *total
// gets the tile's records. g, e: a word a thread; cnt: cnt_words(threads).
// Every thread calls it with the same arguments.
__device__ uint32_t report_tile(const table_view &v, const uint8_t *p, uint32_t nb, uint32_t start,
				uint32_t s0, uint64_t off, uint64_t base, uint8_t *out,
				uint64_t cap, uint32_t *g, uint32_t *e, uint64_t *cnt,
				uint64_t *total, vyre_mk_devstate *ds)
{
	const uint32_t tid = threadIdx.x, threads = blockDim.x, warps = (threads + 31) / 32;
	const uint32_t len = max(kChunk, ((nb + threads - 1) / threads + 15) & ~15u);
	const uint32_t n = (nb + len - 1) / len;
	const uint32_t ca = min(tid * len, nb), cb = min(ca + len, nb);
	uint64_t h = 0;
	uint32_t first = cb, s_first = s0;

	if (tid < n) {
		uint32_t gs = s0;
		if (tid > 0)
			gs = guess_at(v, p, ca, s0, start);
		g[tid] = gs;
		const walked w = walk_count(v, p, ca, cb, gs);
		e[tid] = w.s;
		h = w.hits;
		first = w.first;
		s_first = w.s_first;
	}
	__syncthreads();
	for (;;) {
		const bool bad = tid > 0 && tid < n && g[tid] != e[tid - 1];
		const uint32_t fix = bad ? e[tid - 1] : 0;
		// also orders this round's reads before its writes
		if (!__syncthreads_or(bad))
			break;
		if (bad) {
			g[tid] = fix;
			const walked w = walk_count(v, p, ca, cb, fix);
			e[tid] = w.s;
			h = w.hits;
			first = w.first;
			s_first = w.s_first;
		}
		__syncthreads();
		if (tid == 0)
			bump_progress(ds);
	}
	// the exclusive prefix sum over the chunks: by warps, then over the warps
	cnt[tid] = h;
	__syncthreads();
	if (tid < warps) {
		uint64_t w = 0;
		for (uint32_t k = 32 * tid; k < min(32 * tid + 32, threads); k++)
			w += cnt[k];
		cnt[threads + tid] = w;
	}
	__syncthreads();
	if (tid == 0) {
		uint64_t sum = 0;
		for (uint32_t k = 0; k < warps; k++) {
			const uint64_t w = cnt[threads + k];
			cnt[threads + k] = sum;
			sum += w;
		}
		cnt[threads + 32] = sum;
	}
	__syncthreads();
	uint64_t idx = base + cnt[threads + tid / 32];
	for (uint32_t k = 32 * (tid / 32); k < tid; k++)
		idx += cnt[k];
	*total = cnt[threads + 32];
	const uint32_t end = n ? e[n - 1] : s0;

	write_chunk(v, p, first, cb, s_first, off, idx, h, cap, out);
	// every read of g, e and cnt is done before the next tile writes them
	__syncthreads();
	return end;
}

// Thread 0, after a report item succeeded: the report's header, the stream
// state (when it has one) and the item's record.
__device__ void finish(const vyre_mk_unit &u, const uint32_t *hdr, uint32_t end, uint64_t total,
		       uint64_t results)
{
	uint8_t *out = reinterpret_cast<uint8_t *>(u.out);
	const uint64_t cap = (u.param - kHeaderBytes) / kRecordBytes;
	uint8_t *sp = stream_of(hdr);

	const uint32_t flags = total > cap ? VYRE_REPORT_OVERFLOW : 0u;

	st128(out, min(total, cap) | (uint64_t)flags << 32, total);
	if (sp)
		st128(sp, 1 | (uint64_t)end << 32, offset_of(hdr) + hdr[kLen]);
	put_result(results, u.slot, 0, total);
}

__device__ __forceinline__ bool counted(const vyre_mk_unit &u)
{
	return (u.op & VYRE_MK_OP_MASK) == VYRE_OP_DFA_REPORT_COUNTED;
}

// One thread: read_header with the item's bytes to scan (a counted input's
// length word, found valid or not).
__device__ __forceinline__ void read_item_header(const vyre_mk_unit &u, uint64_t results,
						 uint32_t *hdr)
{
	const uint8_t *in = reinterpret_cast<const uint8_t *>(u.in);
	uint32_t len = u.count;
	bool len_ok = true;

	if (counted(u)) {
		len = u.count >= 4 ? ld32_volatile(in) : 0;
		len_ok = u.count >= 4 && len <= u.count - 4;
	}
	read_header(u, len, len_ok, stream_addr(u, results), hdr);
}

// A report item on the whole block (op 13 or 14; any alignment). scratch:
// shared memory of scratch_words words, the header then the tile; g, e: a
// word a thread; cnt: cnt_words(blockDim.x) words. Every thread calls it.
__device__ __noinline__ void report_unit(const vyre_mk_unit &u, uint64_t results, uint32_t *scratch,
					 uint32_t scratch_words, uint32_t *g, uint32_t *e,
					 uint64_t *cnt, vyre_mk_devstate *ds)
{
	const uint32_t tid = threadIdx.x, threads = blockDim.x;
	uint32_t *hdr = scratch;
	const uint8_t *in = reinterpret_cast<const uint8_t *>(u.in);

	if (tid == 0)
		read_item_header(u, results, hdr);
	__syncthreads();
	const bool bad = !hdr[kOk] || block_bad_table(u, hdr);

	if (bad) {
		if (tid == 0)
			put_result(results, u.slot, VYRE_E_INVAL, 0);
		__syncthreads();
		return;
	}
	const table_view v = view_of(u, hdr);
	const uint8_t *p = in + (counted(u) ? 4 : 0);
	const uint32_t len = hdr[kLen], start = hdr[kStart];
	const uint64_t cap = (u.param - kHeaderBytes) / kRecordBytes, off0 = offset_of(hdr);
	uint8_t *tile = reinterpret_cast<uint8_t *>(scratch + kHdrWords + 4);
	// the caller gives at least a KiB of tile (the dynamic shared memory: 64 KiB)
	const uint32_t tile_bytes = min(kTileMax, (4 * (scratch_words - kHdrWords - 4)) & ~15u);
	uint32_t s = hdr[kS0];
	uint64_t total = 0;

	for (uint32_t t0 = 0; t0 < len; t0 += tile_bytes) {
		const uint32_t nb = min(tile_bytes, len - t0);
		const uint8_t *src = p + t0;

		// in address order, whole words when aligned (a counted input's last
		// word lies inside its buffer, whose bytes are a multiple of 4)
		if ((reinterpret_cast<uintptr_t>(src) & 3u) == 0) {
			const uint32_t words = (nb + 3) / 4;
			const uint32_t *w = reinterpret_cast<const uint32_t *>(src);
			uint32_t *d = reinterpret_cast<uint32_t *>(tile);
			for (uint32_t i = tid; i < words; i += 4 * threads) {
				uint32_t x[4];
				for (uint32_t k = 0; k < 4; k++)
					x[k] = i + k * threads < words ? w[i + k * threads] : 0;
				for (uint32_t k = 0; k < 4; k++)
					if (i + k * threads < words)
						d[i + k * threads] = x[k];
			}
		} else {
			for (uint32_t i = tid; i < nb; i += threads)
				tile[i] = src[i];
		}
		__syncthreads();
		uint64_t added = 0;
		s = report_tile(v, tile, nb, start, s, off0 + t0, total,
				reinterpret_cast<uint8_t *>(u.out), cap, g, e, cnt, &added, ds);
		total += added;
	}
	if (tid == 0)
		finish(u, hdr, s, total, results);
	__syncthreads();
}

// ---- a small item on one warp ---------------------------------------------------
//
// An item of at most VYRE_MK_DFA_WARP_BYTES (cuda_lower_item.h,
// classify_report) runs on one warp, as a small DFA_SCAN item does, so a
// block runs 32 at once. Its bytes are walked as report_tile walks a tile,
// the lanes for the threads and shuffles for the barriers: chunks of at
// least kWarpChunk bytes (the warm-up is a quarter of that), a guess each,
// fixed up in order, a count pass, a prefix sum over the lanes, and a write
// pass on the lanes with records. Device input is walked in place (the lanes'
// byte loads stay in their own lines of L1); host input is staged through the
// warp's own shared memory in tiles that the lanes load in address order.

constexpr uint32_t kAll = 0xffffffffu;
constexpr uint32_t kWarpChunk = 128; // bytes a lane's chunk gets at least

// Bytes [0, nb) of p on one warp, report_tile's contract with the lanes for
// its threads: every lane calls it with the same arguments.
__device__ uint32_t warp_tile(const table_view &v, const uint8_t *p, uint32_t nb, uint32_t start,
			      uint32_t s0, uint64_t off, uint64_t base, uint8_t *out, uint64_t cap,
			      uint64_t *total)
{
	const uint32_t lane = threadIdx.x % 32;
	const uint32_t len = max(kWarpChunk, ((nb + 31) / 32 + 15) & ~15u);
	const uint32_t n = (nb + len - 1) / len;
	const uint32_t ca = min(lane * len, nb), cb = min(ca + len, nb);
	uint32_t g = s0, e = s0, first = cb, s_first = s0;
	uint64_t h = 0;

	if (lane < n) {
		if (lane > 0)
			g = guess_at(v, p, ca, s0, start);
		const walked w = walk_count(v, p, ca, cb, g);
		e = w.s;
		h = w.hits;
		first = w.first;
		s_first = w.s_first;
	}
	for (;;) {
		const uint32_t prev = __shfl_up_sync(kAll, e, 1);
		const bool bad = lane > 0 && lane < n && g != prev;
		if (!__any_sync(kAll, bad))
			break;
		if (bad) {
			g = prev;
			const walked w = walk_count(v, p, ca, cb, g);
			e = w.s;
			h = w.hits;
			first = w.first;
			s_first = w.s_first;
		}
	}
	// the inclusive prefix sum of the lanes' records
	uint64_t incl = h;
	for (uint32_t d = 1; d < 32; d *= 2) {
		const uint64_t x = __shfl_up_sync(kAll, incl, d);
		if (lane >= d)
			incl += x;
	}
	*total = __shfl_sync(kAll, incl, 31);
	const uint32_t end = __shfl_sync(kAll, e, n ? n - 1 : 0);
	const uint64_t idx = base + incl - h;

	write_chunk(v, p, first, cb, s_first, off, idx, h, cap, out);
	return n ? end : s0;
}

// Whether the table breaks design.md 6.8: block_bad_table on one warp.
__device__ bool warp_bad_table(const vyre_mk_unit &u, const uint32_t *hdr)
{
	const table_view v = view_of(u, hdr);
	const uint32_t lane = threadIdx.x % 32;
	int bad = 0;

	if (!(u.op & VYRE_MK_TABLE_TRUSTED))
		bad |= next_bad(v, lane, 32);
	if (!(u.op & VYRE_MK_REPORT_TRUSTED))
		bad |= section_bad(v, lane, 32);
	return __any_sync(kAll, bad) != 0;
}

// A report item on one warp (op 13 or 14; any alignment). scratch: the
// warp's own shared memory, scratch_words words: the header, then (host
// input, VYRE_MK_DFA_HOST_IN) the tile; at least kHdrWords + 4 (the
// megakernel gives a DFA warp unit's staging room, dfa::warp_stage: 2
// KiB, as report_unit assumes a KiB of the dynamic shared memory). Every
// lane calls it; no block barrier.
__device__ __noinline__ void warp_report(const vyre_mk_unit &u, uint64_t results, uint32_t *scratch,
					 uint32_t scratch_words)
{
	const uint32_t lane = threadIdx.x % 32;
	uint32_t *hdr = scratch;

	if (lane == 0)
		read_item_header(u, results, hdr);
	__syncwarp();
	if (!hdr[kOk] || warp_bad_table(u, hdr)) {
		if (lane == 0)
			put_result(results, u.slot, VYRE_E_INVAL, 0);
		__syncwarp();
		return;
	}
	const table_view v = view_of(u, hdr);
	const uint8_t *p = reinterpret_cast<const uint8_t *>(u.in) + (counted(u) ? 4 : 0);
	const uint32_t len = hdr[kLen], start = hdr[kStart];
	const uint64_t cap = (u.param - kHeaderBytes) / kRecordBytes, off0 = offset_of(hdr);
	uint8_t *out = reinterpret_cast<uint8_t *>(u.out);
	uint8_t *tile = reinterpret_cast<uint8_t *>(scratch + kHdrWords + 4);
	const uint32_t tile_bytes =
	    scratch_words > kHdrWords + 4 ? (4 * (scratch_words - kHdrWords - 4)) & ~15u : 0u;
	uint32_t s = hdr[kS0];
	uint64_t total = 0;

	if (!(u.op & VYRE_MK_DFA_HOST_IN) || tile_bytes == 0) {
		s = warp_tile(v, p, len, start, s, off0, 0, out, cap, &total);
	} else {
		for (uint32_t t0 = 0; t0 < len; t0 += tile_bytes) {
			const uint32_t nb = min(tile_bytes, len - t0);
			const uint8_t *src = p + t0;
			uint64_t added = 0;

			// in address order: a warp's loads are whole lines (words when aligned)
			if ((reinterpret_cast<uintptr_t>(src) & 3u) == 0)
				for (uint32_t i = lane; i < (nb + 3) / 4; i += 32)
					reinterpret_cast<uint32_t *>(tile)[i] =
					    reinterpret_cast<const uint32_t *>(src)[i];
			else
				for (uint32_t i = lane; i < nb; i += 32)
					tile[i] = src[i];
			__syncwarp();
			s = warp_tile(v, tile, nb, start, s, off0 + t0, total, out, cap, &added);
			total += added;
			// every lane's reads of the tile are done before the next one lands
			__syncwarp();
		}
	}
	if (lane == 0)
		finish(u, hdr, s, total, results);
	__syncwarp();
}

} // namespace mk_report
