// SPDX-License-Identifier: MIT
//
// gpu/mk_doorbell.cuh - the persistent kernel's poller: the warp that
// waits for a lane's next doorbell, runs IMMEDIATE and warp launches itself,
// and hands any other launch to its block (docs/cuda.md, "Slots and lanes").
//
// gpu/megakernel.cu includes this inside its anonymous namespace, after
// mk_units.cuh and mk_launch.cuh, whose code this calls.

// What the blocks of one lane of the persistent grid use: its own doorbell
// and completion rings, control page and device state; every lane's device
// state, so its poller notices another lane's watchdog.
struct lane_view {
	const unsigned long long *ring;
	unsigned long long *cpl;
	vyre_mk_ctrl *ctrl;
	vyre_mk_devstate *ds;
	const vyre_mk_devstate *all_ds;
	uint64_t heartbeat_cycles;
	uint32_t n_lanes;
};

// The data of doorbell word w, which lane w % 32 holds in d0 (w < 32) or d1.
// Every lane of the warp must call it (a shuffle).
__device__ __forceinline__ uint32_t slot_word(uint32_t d0, uint32_t d1, uint32_t w)
{
	const uint32_t x0 = __shfl_sync(kFull, d0, w % 32);
	const uint32_t x1 = __shfl_sync(kFull, d1, w % 32);
	return w < 32 ? x0 : x1;
}

__device__ __forceinline__ void st_word(unsigned long long *p, unsigned long long v)
{
	*(volatile unsigned long long *)p = v;
}

// Warp 0 of block 0: an IMMEDIATE launch, whose items' descriptors and
// input are in the slot words this warp holds (d0, d1). Lane l computes
// completion words l and l + 32, whichever item they belong to, so the whole
// batch leaves with one store instruction per half slot; the items are
// independent, so their order does not matter. Each word validates itself,
// so no fence is needed before the host may read it; `done` follows without
// one too (the host completes this launch from the completion slot, and a
// later launch's system-scope release orders it). Indices from the slot are
// clamped: a bad descriptor yields wrong words, never a stray access.
__device__ void run_immediate(const lane_view &a, uint32_t seq, uint32_t d0, uint32_t d1,
			      bool post_done)
{
	const uint32_t lane = threadIdx.x;
	const uint32_t n_items = min(slot_word(d0, d1, 7), VYRE_MK_IMM_MAX_ITEMS);
	unsigned long long *cpl =
	    a.cpl + (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;
	const unsigned long long tag = (unsigned long long)seq << 32;
	uint32_t val[2] = {0, 0};
	bool own[2] = {false, false};

	for (uint32_t j = 0; j < n_items; j++) {
		const uint32_t desc = VYRE_MK_HEADER_WORDS + VYRE_MK_IMM_DESC_WORDS * j;
		const uint32_t d = slot_word(d0, d1, desc);
		const uint32_t param = slot_word(d0, d1, desc + 1);
		const uint32_t op = VYRE_MK_IMM_OP(d), count = VYRE_MK_IMM_COUNT(d);
		const uint32_t in_at = VYRE_MK_IMM_IN_AT(d), cpl_at = VYRE_MK_IMM_CPL_AT(d);
		const bool reduction = op == VYRE_OP_SUM || op == VYRE_OP_MAX;
		const uint32_t n_words = VYRE_MK_CPL_HEADER_WORDS + (reduction ? 0 : count);
		uint32_t acc = 0, x[2] = {0, 0};

		// op is the same on every lane: the shuffles below see the whole warp
		if (reduction) {
#pragma unroll
			for (uint32_t h = 0; h < 2; h++) {
				const uint32_t i = lane + 32 * h, w = in_at + i;
				const uint32_t v =
				    slot_word(d0, d1, w < VYRE_MK_SLOT_WORDS ? w : 0);
				if (i < count)
					acc = reduce(op, acc, v);
			}
			acc = warp_reduce(op, acc);
		} else {
#pragma unroll
			for (uint32_t h = 0; h < 2; h++) {
				// output word i of this item is completion word cpl_at + 2 + i
				const uint32_t i =
				    lane + 32 * h - cpl_at - VYRE_MK_CPL_HEADER_WORDS;
				const uint32_t w = in_at + i;
				x[h] = slot_word(d0, d1, w < VYRE_MK_SLOT_WORDS ? w : 0);
			}
		}
#pragma unroll
		for (uint32_t h = 0; h < 2; h++) {
			const uint32_t w = lane + 32 * h;
			if (w < cpl_at || w - cpl_at >= n_words)
				continue;
			own[h] = true;
			val[h] = w == cpl_at	      ? 0u // status
				 : w == cpl_at + 1    ? acc
				 : op == VYRE_OP_FILL ? param
						      : combine(op, x[h], param);
		}
	}
#pragma unroll
	for (uint32_t h = 0; h < 2; h++)
		if (own[h])
			st_word(cpl + lane + 32 * h, tag | val[h]);
	if (lane == 0 && post_done)
		st_volatile(&a.ctrl->done, seq + 1);
	__syncwarp();
}

// An INLINE launch's units, slot words 8.. (this lane's d0 and d1), into
// sh.units, where the launch reads its first units.
__device__ __forceinline__ void inline_units_to_shared(uint32_t d0, uint32_t d1, shared_state &sh)
{
	const uint32_t lane = threadIdx.x % 32;
	uint32_t *u = reinterpret_cast<uint32_t *>(sh.units);

	if (lane >= VYRE_MK_HEADER_WORDS)
		u[lane - VYRE_MK_HEADER_WORDS] = d0;
	u[32 - VYRE_MK_HEADER_WORDS + lane] = d1;
}

// An INLINE launch of warp units alone (small elementwise and reductions):
// the polling warp runs it by itself and the block never gathers. Not one
// with a DFA or report unit: that runs on the block, so that the polling loop holds no
// call (the DFA code is a function of its own, and registers live across a
// call there cost the latency path local-memory traffic: +0.5 us, H100).
__device__ __forceinline__ bool is_warp_launch(uint32_t flags, uint32_t d0, uint32_t d1)
{
	const uint32_t lane = threadIdx.x % 32;
	const uint32_t n_blocks = __shfl_sync(kFull, d0, 6) & 0xffffu;
	const uint32_t n_block_units = __shfl_sync(kFull, d0, 3);
	const uint32_t n_units = min(__shfl_sync(kFull, d0, 7), VYRE_MK_INLINE_UNITS);
	bool dfa = false;

	// unit i's op is slot word HEADER + UNIT_WORDS * i: each lane looks at its own words
#pragma unroll
	for (uint32_t i = 0; i < VYRE_MK_INLINE_UNITS; i++) {
		const uint32_t w = VYRE_MK_HEADER_WORDS + VYRE_MK_UNIT_WORDS * i;
		const uint32_t op = (w < 32 ? d0 : d1) & VYRE_MK_OP_MASK;
		dfa |= i < n_units && lane == w % 32 &&
		       (op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED ||
			op == VYRE_OP_DFA_REPORT || op == VYRE_OP_DFA_REPORT_COUNTED);
	}
	return (flags & VYRE_MK_LAUNCH_INLINE) && n_blocks == 1 && n_block_units == 0 &&
	       !(flags & (VYRE_MK_LAUNCH_EXIT | VYRE_MK_LAUNCH_FAULT | VYRE_MK_LAUNCH_STALL)) &&
	       !__any_sync(kFull, dfa);
}

__device__ void run_warp_launch(const lane_view &a, uint32_t seq, uint32_t d0, uint32_t d1,
				shared_state &sh, bool post_done)
{
	const uint32_t lane = threadIdx.x;
	const uint32_t lo = __shfl_sync(kFull, d0, 4), hi0 = __shfl_sync(kFull, d0, 0),
		       hi1 = __shfl_sync(kFull, d0, 1);
	const uint32_t n_units = min(__shfl_sync(kFull, d0, 7), VYRE_MK_INLINE_UNITS);
	const uint64_t results = ((uint64_t)hi0 | (uint64_t)hi1 << 32) + lo;
	vyre_mk_devstate *ds = a.ds;

	inline_units_to_shared(d0, d1, sh);
	__syncwarp();
	for (uint32_t i = 0; i < n_units; i++)
		warp_unit<false>(sh.units[i], results, lane, ds);
	// release: every lane's heap and result writes, then `done` for the host
	__threadfence_system();
	__syncwarp();
	if (lane == 0 && post_done)
		st_release_sys(&a.ctrl->done, seq + 1);
	__syncwarp();
}

// The launch a slab doorbell's header describes (every lane: shuffles).
__device__ __forceinline__ vyre_mk_launch_args launch_of(uint32_t d0, uint32_t flags)
{
	uint32_t d[VYRE_MK_HEADER_WORDS];
#pragma unroll
	for (uint32_t j = 0; j < VYRE_MK_HEADER_WORDS; j++)
		d[j] = __shfl_sync(kFull, d0, j);
	const uint64_t slab = (uint64_t)d[0] | (uint64_t)d[1] << 32;
	return vyre_mk_launch_args{slab + d[2], slab + d[3],	slab + d[4], d[5],
				   d[7],	d[6] & 0xffffu, flags};
}

// An inline launch's one stage: header word 3 is its block units.
__device__ __forceinline__ vyre_mk_stage inline_stage_of(uint32_t d0)
{
	const uint32_t nb = __shfl_sync(kFull, d0, 3), n = __shfl_sync(kFull, d0, 7);
	return vyre_mk_stage{0, nb, n - nb, 0};
}

// One look at doorbell slot `seq` (every lane of the warp): true when the
// whole launch is current, then held in d0 / d1 (slot word w in lane w % 32)
// with its flags. One warp reads the slot's first half, a word a lane: one
// read of the host's memory in flight, never more. The second half is read
// only when the header says the launch fills it; `full` says the last
// launch did, so the next one likely does too (vyred's multi-item IMMEDIATE
// batches): both halves are then read in one round trip until a launch needs
// the first half alone. More reads in flight made everything slower on the
// H100 (2026-11-22): four warps polling the slot, 3.33 vs 3.19 us for a
// single item and 15.2 vs 8.7 us down the slab path; one warp polling four
// copies of the slot in staggered phases, 7.7 vs 3.3 us.
__device__ __forceinline__ bool read_slot(const lane_view &a, uint32_t seq, bool &full,
					  uint32_t &d0, uint32_t &d1, uint32_t &flags)
{
	const uint32_t lane = threadIdx.x % 32;
	const unsigned long long *slot =
	    a.ring + (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;
	const unsigned long long w0 = *(const volatile unsigned long long *)(slot + lane);
	const unsigned long long w1_early =
	    full ? *(const volatile unsigned long long *)(slot + 32 + lane) : 0;
	const bool cur0 = (uint32_t)(w0 >> 32) == seq;
	bool cur1 = true;

	d0 = (uint32_t)w0;
	d1 = 0;
	if (!__all_sync(kFull, cur0 || lane >= VYRE_MK_HEADER_WORDS))
		return false;
	flags = __shfl_sync(kFull, d0, 6) >> 16;
	const uint32_t n_units = __shfl_sync(kFull, d0, 7);
	const uint32_t imm_words = __shfl_sync(kFull, d0, 4);
	uint32_t words = VYRE_MK_HEADER_WORDS;

	if (flags & VYRE_MK_LAUNCH_INLINE)
		words += VYRE_MK_UNIT_WORDS * min(n_units, VYRE_MK_INLINE_UNITS);
	else if (flags & VYRE_MK_LAUNCH_IMMEDIATE)
		words += min(imm_words, VYRE_MK_IMM_DATA_WORDS);
	if (words > 32) {
		// the slot's second half: unless read early, one more round
		// trip, paid only by the launches that fill it
		const unsigned long long w1 =
		    full ? w1_early : *(const volatile unsigned long long *)(slot + 32 + lane);
		cur1 = (uint32_t)(w1 >> 32) == seq;
		d1 = (uint32_t)w1;
	}
	if (!__all_sync(kFull, (cur0 || lane >= words) && (cur1 || lane + 32 >= words)))
		return false;
	full = words > 32;
	return true;
}

// What a poller watches while it waits (every lane of the warp; lane 0
// reads): the host heartbeat, checked every sixteenth of its period, and
// every lane's abort word. The VYRE_MK_STATE_* to stop with, or 0.
struct stop_watch {
	uint64_t checked, changed;
	uint32_t beat;
};

__device__ __forceinline__ stop_watch watch_start(const lane_view &a)
{
	const uint64_t now = clock64();
	return stop_watch{now, now, ld_volatile(&a.ctrl->heartbeat)};
}

__device__ __forceinline__ uint32_t watch_check(const lane_view &a, stop_watch &w)
{
	uint32_t stop = 0;

	if (threadIdx.x % 32 == 0) {
		const uint64_t now = clock64();
		if (now - w.checked > a.heartbeat_cycles / 16 + 1) {
			w.checked = now;
			const uint32_t b = ld_volatile(&a.ctrl->heartbeat);
			if (b != w.beat) {
				w.beat = b;
				w.changed = now;
			} else if (now - w.changed > a.heartbeat_cycles) {
				stop = VYRE_MK_STATE_HEARTBEAT;
			}
			// another lane's watchdog fired: the host restarts the grid
			for (uint32_t m = 0; m < a.n_lanes; m++)
				if (ld_volatile(&a.all_ds[m].abort))
					stop = VYRE_MK_STATE_HALTED;
		}
	}
	return __shfl_sync(kFull, stop, 0);
}

// A launch for the whole block, from its doorbell (every lane: shuffles):
// sh.launch, and an inline launch's units and stage in sh.units / sh.stages.
__device__ __forceinline__ void launch_to_shared(uint32_t d0, uint32_t d1, uint32_t flags,
						 shared_state &sh)
{
	const vyre_mk_launch_args L = launch_of(d0, flags);
	const vyre_mk_stage st = inline_stage_of(d0);

	if (flags & VYRE_MK_LAUNCH_INLINE)
		inline_units_to_shared(d0, d1, sh);
	if (threadIdx.x % 32 == 0) {
		sh.launch = L;
		if (flags & VYRE_MK_LAUNCH_INLINE)
			sh.stages[0] = st;
	}
}

// Warp 0 of block 0: wait for the doorbell slot of launch `seq`, watching the
// host heartbeat meanwhile, and run IMMEDIATE and warp launches on the way
// (run_immediate, run_warp_launch). Leaves the next launch for the whole
// block in sh.launch (and an inline launch's units and stage in sh.units /
// sh.stages), its sequence number in sh.seq and the command in sh.cmd (kRun,
// or the VYRE_MK_STATE_* to stop with).
__device__ void poll_doorbell(const lane_view &a, uint32_t seq, shared_state &sh)
{
	const uint32_t lane = threadIdx.x;
	stop_watch watch = watch_start(a);
	uint32_t d0, d1, flags;
	bool full = false;

	for (;;) {
		if (read_slot(a, seq, full, d0, d1, flags)) {
			if (flags & VYRE_MK_LAUNCH_IMMEDIATE) {
				run_immediate(a, seq, d0, d1, true);
			} else {
				// acquire: the units, tables and heap words the host wrote
				// before the doorbell
				asm volatile("fence.acq_rel.sys;" ::: "memory");
				if (!is_warp_launch(flags, d0, d1))
					break;
				run_warp_launch(a, seq, d0, d1, sh, true);
			}
			seq++;
			continue;
		}
		const uint32_t stop = watch_check(a, watch);
		if (stop) {
			if (lane == 0) {
				sh.cmd = stop;
				sh.seq = seq;
			}
			return;
		}
	}
	launch_to_shared(d0, d1, flags, sh);
	if (lane == 0) {
		sh.cmd = (flags & VYRE_MK_LAUNCH_EXIT) ? VYRE_MK_STATE_EXITED : kRun;
		sh.seq = seq;
	}
}
