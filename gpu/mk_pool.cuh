// SPDX-License-Identifier: MIT
//
// gpu/mk_pool.cuh - the pool (docs/cuda.md, "The pool"): each lane's first
// block's poller hands each slab launch to a team of the grid's idle blocks
// and reads the next doorbell at once, so the small launches of many slots
// run side by side on the whole grid instead of one after the other; `done`
// still moves in doorbell order. With VYRE_MK_POOL_SELF the poller's own
// block runs a one-block launch that finds nothing of its lane in flight,
// without the hand-off. Every other block waits in the pool for a team.
//
// gpu/megakernel.cu includes this inside its anonymous namespace, after
// mk_launch.cuh and mk_doorbell.cuh, whose code this calls.

struct pool_view {
	vyre_mk_team *all_teams;  // VYRE_MK_POOL_TEAMS a lane
	vyre_mk_team *teams;	  // this lane's
	unsigned long long *mail; // a block's: generation << 32 | team << 16 | rank
	uint32_t *idle;		  // bit b: block b of the grid waits for a team
	uint32_t *exit;		  // pollers that stopped: waiting blocks leave when all did
	uint32_t first_team;	  // this lane's first team
	uint32_t n_lanes;
	uint32_t spread;
};

__device__ __forceinline__ pool_view pool_at(uint64_t pool, uint32_t lane, uint32_t n_lanes,
					     uint32_t spread)
{
	uint8_t *base = reinterpret_cast<uint8_t *>(pool);
	vyre_mk_team *teams = reinterpret_cast<vyre_mk_team *>(base);
	return pool_view{
	    teams,
	    teams + lane * VYRE_MK_POOL_TEAMS,
	    reinterpret_cast<unsigned long long *>(base + VYRE_MK_POOL_MAIL_OFF),
	    reinterpret_cast<uint32_t *>(base + VYRE_MK_POOL_BITS_OFF),
	    reinterpret_cast<uint32_t *>(base + VYRE_MK_POOL_EXIT_OFF),
	    lane * VYRE_MK_POOL_TEAMS,
	    n_lanes,
	    spread ? spread : VYRE_MK_POOL_SPREAD,
	};
}

__device__ __forceinline__ uint64_t global_ns()
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// What a poller's teams spent, summed over its launches (lane 0 of the
// poller warp keeps it; the control page gets it when the poller stops).
struct pool_clock {
	uint64_t ns[3];
	uint32_t launches;
};

// A poller's state in shared memory (lane 0 writes it), so that its block
// may run a launch between two calls of pool_poller (VYRE_MK_POOL_SELF)
// while the polling loop holds no call and no more registers: where it
// was, the launch it left to the block (its doorbell words) and how many
// such launches there were; and a module batch's result records
// (VYRE_MK_LAUNCH_CPL: unit i's at i; 16-byte aligned for put_result).
struct __align__(16) pool_resume
{
	vyre_mk_result rec[VYRE_MK_INLINE_UNITS];
	pool_clock clk;
	stop_watch watch;
	uint32_t seq, posted, full;
	uint32_t self, self_runs;
	uint32_t flags, d[VYRE_MK_SLOT_WORDS];
};

__device__ __forceinline__ unsigned long long ld_acquire64(const unsigned long long *p)
{
	unsigned long long v;
	asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void st_release64(unsigned long long *p, unsigned long long v)
{
	asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Poller warp: hands launch `seq` (its doorbell in d0 / d1) to a team of
// idle blocks, or returns false when fewer than it needs wait (the doorbell
// is then read again). A team takes what is idle up to p.spread
// times the blocks the host asked for, but beyond what it asked for no more
// than the grid's workers over its lanes, so a batch of a few dozen DFA scans
// runs a few per SM over several SMs and leaves blocks for the other slots'
// batches; at least a quarter of what it asked for (two when
// it asked for more than one: the stall hook needs a second block). The
// pollers of all lanes take blocks from one pool: a block is this poller's
// once its atomicAnd cleared the bit.
__device__ bool pool_dispatch(const pool_view &p, uint32_t seq, uint32_t d0, uint32_t d1,
			      uint32_t flags)
{
	const uint32_t lane = threadIdx.x % 32;
	const uint32_t workers = gridDim.x - p.n_lanes;
	const vyre_mk_launch_args L = launch_of(d0, flags);
	const uint32_t need = max(1u, min(L.n_blocks, workers));
	const uint32_t least = need == 1 ? 1 : min(workers, max(2u, need / p.spread));
	// more than it needs only up to a fair share, so the other lanes' launches find blocks
	const uint32_t want = min(workers, max(need, min(need * p.spread, workers / p.n_lanes)));
	const uint32_t n_words = (gridDim.x + 31) / 32;
	uint32_t bits = lane < n_words ? ld_volatile(&p.idle[lane]) : 0u;
	uint32_t before = __popc(bits);
#pragma unroll
	for (uint32_t o = 1; o < 32; o <<= 1) {
		const uint32_t x = __shfl_up_sync(kFull, before, o);
		if (lane >= o)
			before += x;
	}
	if (__shfl_sync(kFull, before, 31) < least)
		return false;
	before -= __popc(bits);
	uint32_t take = 0;
	if (before < want) {
		uint32_t n = min((uint32_t)__popc(bits), want - before), b = bits;
		while (n--) {
			take |= b & (0u - b);
			b &= b - 1;
		}
	}
	// another poller may have taken some of them meanwhile
	if (take)
		take &= atomicAnd(&p.idle[lane], ~take);
	const uint32_t got = __popc(take);
	uint32_t rank = got;
#pragma unroll
	for (uint32_t o = 1; o < 32; o <<= 1) {
		const uint32_t x = __shfl_up_sync(kFull, rank, o);
		if (lane >= o)
			rank += x;
	}
	const uint32_t k = __shfl_sync(kFull, rank, 31);
	rank -= got;
	if (k < least) {
		if (take)
			atomicOr(&p.idle[lane], take);
		return false;
	}
	const uint32_t t = seq % VYRE_MK_POOL_TEAMS;
	vyre_mk_team *tm = &p.teams[t];

	// the team first, then the mail that sends its blocks to it
	if (flags & VYRE_MK_LAUNCH_INLINE) {
		uint32_t *u = reinterpret_cast<uint32_t *>(tm->units);
		if (lane >= VYRE_MK_HEADER_WORDS)
			u[lane - VYRE_MK_HEADER_WORDS] = d0;
		u[32 - VYRE_MK_HEADER_WORDS + lane] = d1;
	}
	const vyre_mk_stage st = inline_stage_of(d0);
	if (lane == 0) {
		tm->ds.bar_count = 0;
		tm->ds.abort = 0;
		tm->ds.progress = 0;
		tm->ds.go = L;
		tm->n_blocks = k;
		tm->seq = seq;
		tm->state = VYRE_MK_TEAM_RUNNING;
		tm->stage = st;
		tm->t_handed = global_ns();
	}
	__syncwarp();
	__threadfence();
	for (; take; take &= take - 1, rank++) {
		const uint32_t blk = lane * 32 + __ffs(take) - 1;
		const unsigned long long old =
		    ld_volatile(reinterpret_cast<const uint32_t *>(&p.mail[blk]) + 1);
		st_release64(&p.mail[blk], (old + 1) << 32 | (p.first_team + t) << 16 | rank);
	}
	__syncwarp();
	return true;
}

// Poller warp, when it stops (stop: the VYRE_MK_STATE_* it stops with):
// waiting blocks leave, and every team in flight finishes or aborts first,
// so that `done` and the control page tell the host exactly what ran. A
// launch after an aborted one that finished anyway is named in after_done:
// the host must not run it again.
__device__ void pool_stop(const pool_view &p, const lane_view &a, uint32_t posted, uint32_t seq,
			  uint32_t stop, const pool_clock &clk)
{
	if (threadIdx.x % 32 == 0) {
		atomicAdd(p.exit, 1u);
		for (uint32_t s = posted; s != seq; s++)
			for (;;) {
				const uint32_t x =
				    ld_acquire(&p.teams[s % VYRE_MK_POOL_TEAMS].state);
				if (x == VYRE_MK_TEAM_FINISHED || x == VYRE_MK_TEAM_ABORTED)
					break;
				__nanosleep(256);
			}
		while (posted != seq && ld_volatile(&p.teams[posted % VYRE_MK_POOL_TEAMS].state) ==
					    VYRE_MK_TEAM_FINISHED)
			posted++;
		uint32_t after[2] = {0, 0};
		for (uint32_t s = posted + 1; posted != seq && s != seq; s++)
			if (ld_volatile(&p.teams[s % VYRE_MK_POOL_TEAMS].state) ==
			    VYRE_MK_TEAM_FINISHED)
				after[(s - posted - 1) / 32] |= 1u << ((s - posted - 1) % 32);
		if (posted != seq) {
			// the other lanes halt at their next check
			st_volatile(&a.ds->abort, 1u);
			st_volatile(&a.ctrl->trip_seq, posted);
			st_volatile(&a.ctrl->after_done[0], after[0]);
			st_volatile(&a.ctrl->after_done[1], after[1]);
			stop = VYRE_MK_STATE_WATCHDOG;
		} else if (stop == VYRE_MK_STATE_EXITED) {
			// an EXIT doorbell counts as done, so a restart at `done` begins after it
			posted++;
		}
		a.ctrl->pool_launches = clk.launches;
		for (uint32_t i = 0; i < 3; i++)
			a.ctrl->pool_ns[i] = clk.ns[i];
		__threadfence_system();
		st_volatile(&a.ctrl->done, posted);
		st_volatile(&a.ctrl->state, stop);
		__threadfence_system();
	}
	__syncwarp();
}

// The poller block's own barrier (VYRE_MK_POOL_SELF), named so that no
// __syncthreads matches it: warps 1.. wait at it while warp 0 polls, and
// warp 0 arrives when it leaves a launch to the block or stops. A thread
// waiting at a barrier issues nothing: the parked warps never poll.
__device__ __forceinline__ void park_barrier()
{
	asm volatile("bar.sync 1;" ::: "memory");
}

// Whether the poller's block may run this launch itself: one block (as
// pool_dispatch's need == 1), no test hook (the fault and stall hooks keep
// to teams). Every lane: a shuffle.
__device__ __forceinline__ bool is_self_launch(uint32_t flags, uint32_t d0)
{
	const uint32_t n_blocks = __shfl_sync(kFull, d0, 6) & 0xffffu;

	return n_blocks <= 1 &&
	       !(flags & (VYRE_MK_LAUNCH_EXIT | VYRE_MK_LAUNCH_FAULT | VYRE_MK_LAUNCH_STALL));
}

// The poller warp, once a module batch (VYRE_MK_LAUNCH_CPL) is in shared
// memory as any inline launch: unit i's record goes to rs.rec[i], whatever
// its slot field says (so no index from the doorbell reaches shared
// memory), VYRE_E_INVAL until the unit writes it. A launch that is not what
// the flag promises (one stage of 1..VYRE_MK_INLINE_UNITS block units, each
// a module unit without chain or handoff flags) runs no stage: its items
// complete VYRE_E_INVAL, wrong words but never a stray store.
__device__ __forceinline__ void cpl_launch_to_shared(pool_resume &rs, shared_state &sh)
{
	constexpr uint32_t kNotPlain =
	    VYRE_MK_AFTER_PREV | VYRE_MK_HANDOFF_OUT | VYRE_MK_HANDOFF_IN;

	__syncwarp();
	if (threadIdx.x % 32 == 0) {
		const uint32_t n = sh.launch.n_units;
		bool ok = n >= 1 && n <= VYRE_MK_INLINE_UNITS && sh.launch.n_stages == 1 &&
			  sh.stages[0].n_block_units == n;

		for (uint32_t i = 0; i < VYRE_MK_INLINE_UNITS; i++) {
			if (i < n) {
				const uint32_t op = sh.units[i].op;
				ok = ok && (op & VYRE_MK_OP_MASK) == VYRE_MK_OP_MODULE &&
				     !(op & kNotPlain);
				sh.units[i].slot = i;
			}
			rs.rec[i] = vyre_mk_result{VYRE_E_INVAL, 0u, 0ull};
		}
		sh.launch.results = reinterpret_cast<uintptr_t>(rs.rec);
		if (!ok)
			sh.launch.n_stages = 0;
	}
	__syncwarp();
}

// Warp 0 of the poller block, after the block ran a module batch
// (VYRE_MK_LAUNCH_CPL) of n units: the system-scope fence makes the heap
// writes of every thread (the launch's last barrier ordered them before
// it) visible before any completion word; then lane l posts completion
// word l, each current on its own as run_immediate's: unit i's status,
// result low and high halves at 3i. The host takes the outcome from there
// and never reads the slab or waits for `done`.
__device__ __forceinline__ void pool_self_cpl(const lane_view &a, const pool_resume &rs, uint32_t n)
{
	const uint32_t lane = threadIdx.x % 32;
	const uint32_t seq = rs.seq;
	unsigned long long *cpl =
	    a.cpl + (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;
	// written through the launch's results address, not through rs: read past
	// what the compiler knows
	const volatile uint32_t *rec = reinterpret_cast<const volatile uint32_t *>(rs.rec);

	__threadfence_system();
	if (lane < VYRE_MK_CPL_MODULE_WORDS * min(n, VYRE_MK_INLINE_UNITS)) {
		const uint32_t i = lane / VYRE_MK_CPL_MODULE_WORDS,
			       k = lane % VYRE_MK_CPL_MODULE_WORDS;
		// a record's words: status, reserved, result low, result high
		const uint32_t v = rec[4 * i + (k == 0 ? 0 : k + 1)];
		st_word(cpl + lane, (unsigned long long)seq << 32 | v);
	}
	__syncwarp();
}

// Lane 0 of the poller warp, before the first pool_poller: from doorbell
// `seq` on; `self`: VYRE_MK_POOL_SELF.
__device__ __forceinline__ void pool_resume_start(const lane_view &a, uint32_t seq, bool self,
						  pool_resume &rs)
{
	rs.clk = pool_clock{{0, 0, 0}, 0};
	rs.self = self;
	rs.self_runs = 0;
	rs.watch = watch_start(a);
	rs.seq = seq;
	rs.posted = seq;
	rs.full = 0;
}

// The poller warp, after pool_poller returned `run`: true, the launch it
// left in rs goes into shared memory for the block as poll_doorbell leaves
// one (sh.launch, an inline launch's units and stage; sh.cmd kRun); false,
// it stopped: its count of such launches into the control page (the host
// reads it once the grid left), and sh.cmd tells parked warps to leave.
// Here, not in the polling loop, which then keeps no more registers live.
__device__ __forceinline__ void pool_poller_left(const lane_view &a, pool_resume &rs, bool run,
						 shared_state &sh)
{
	const uint32_t lane = threadIdx.x % 32;

	if (!run) {
		if (lane == 0) {
			a.ctrl->pool_self = rs.self_runs;
			sh.cmd = VYRE_MK_STATE_EXITED;
		}
		return;
	}
	launch_to_shared(rs.d[lane], rs.d[32 + lane], rs.flags, sh);
	if (rs.flags & VYRE_MK_LAUNCH_CPL)
		cpl_launch_to_shared(rs, sh);
	if (lane == 0)
		sh.cmd = kRun;
}

// Thread 0 of the poller block, after its block ran the one-block launch
// pool_poller left it (VYRE_MK_POOL_SELF): no barrier of that launch fenced
// at system scope, so the fence, as a one-block team's, before the poller
// posts `done` (unless pool_self_cpl just fenced: `fenced`); its team slot
// finished (t_handed is 0 since the slot was posted: no team times) or
// aborted, as a team's, which stops the poller at its next look at
// `posted` (pool_stop names it in trip_seq).
__device__ __forceinline__ void pool_self_ran(const pool_view &p, pool_resume &rs, bool ok,
					      bool fenced)
{
	if (ok && !fenced)
		__threadfence_system();
	st_volatile(&p.teams[rs.seq % VYRE_MK_POOL_TEAMS].state,
		    ok ? VYRE_MK_TEAM_FINISHED : VYRE_MK_TEAM_ABORTED);
	rs.seq++;
	rs.self_runs++;
}

// Warp 0 of a lane's first block, from where rs says on: runs IMMEDIATE
// and warp launches itself as poll_doorbell does, hands every other launch
// to a team and goes on reading; posts `done` as the oldest launches finish.
// A launch marked ORDERED (a later launch of the same batch) waits until
// everything before it finished. Returns false when it stopped; true, with
// rs.self (VYRE_MK_POOL_SELF), when a one-block launch finds nothing of its
// lane in flight (posted == seq): that launch's doorbell and where to go on
// from are then in rs, for its own block to run it (pool_poller_left,
// pool_self_ran). `done` still moves in doorbell order.
__device__ bool pool_poller(const pool_view &p, const lane_view &a, pool_resume &rs,
			    shared_state &sh)
{
	const uint32_t lane = threadIdx.x % 32;
	__syncwarp();
	stop_watch watch = rs.watch;
	uint32_t seq = rs.seq, posted = rs.posted, d0, d1, flags, stop = 0;
	bool full = rs.full != 0;
	pool_clock clk = rs.clk;

	for (;;) {
		uint32_t aborted = 0;
		if (lane == 0) {
			const uint32_t was = posted;
			while (posted != seq) {
				vyre_mk_team *tm = &p.teams[posted % VYRE_MK_POOL_TEAMS];
				const uint32_t x = ld_acquire(&tm->state);
				if (x != VYRE_MK_TEAM_FINISHED) {
					aborted = x == VYRE_MK_TEAM_ABORTED;
					break;
				}
				// launches the poller ran itself have no team times
				if (tm->t_handed) {
					clk.ns[0] += tm->t_began - tm->t_handed;
					clk.ns[1] += tm->t_ended - tm->t_began;
					clk.ns[2] += global_ns() - tm->t_ended;
					clk.launches++;
					tm->t_handed = 0;
				}
				st_volatile(&tm->state, VYRE_MK_TEAM_IDLE);
				posted++;
			}
			if (posted != was)
				st_release_sys(&a.ctrl->done, posted);
		}
		posted = __shfl_sync(kFull, posted, 0);
		if (__shfl_sync(kFull, aborted, 0)) {
			stop = VYRE_MK_STATE_WATCHDOG;
			break;
		}
		if (seq - posted < VYRE_MK_POOL_TEAMS && read_slot(a, seq, full, d0, d1, flags)) {
			vyre_mk_team *tm = &p.teams[seq % VYRE_MK_POOL_TEAMS];
			if (flags & VYRE_MK_LAUNCH_IMMEDIATE) {
				run_immediate(a, seq, d0, d1, false);
				if (lane == 0)
					st_volatile(&tm->state, VYRE_MK_TEAM_FINISHED);
				seq++;
				continue;
			}
			// acquire: the units, tables and heap words the host wrote before the
			// doorbell
			asm volatile("fence.acq_rel.sys;" ::: "memory");
			if (flags & VYRE_MK_LAUNCH_EXIT) {
				stop = VYRE_MK_STATE_EXITED;
				break;
			}
			// a module batch whose outcome goes to the completion slot runs on this
			// block alone, never on a team (whose records would be the slab's): it
			// waits until nothing of the lane is in flight
			const bool cpl =
			    (flags & VYRE_MK_LAUNCH_CPL) && rs.self && is_self_launch(flags, d0);
			if ((!(flags & VYRE_MK_LAUNCH_ORDERED) && !cpl) || posted == seq) {
				if (is_warp_launch(flags, d0, d1)) {
					run_warp_launch(a, seq, d0, d1, sh, false);
					if (lane == 0)
						st_volatile(&tm->state, VYRE_MK_TEAM_FINISHED);
					seq++;
					continue;
				}
				if (rs.self && posted == seq && is_self_launch(flags, d0)) {
					rs.d[lane] = d0;
					rs.d[32 + lane] = d1;
					if (lane == 0) {
						rs.flags = flags;
						rs.clk = clk;
						rs.watch = watch;
						rs.seq = seq;
						rs.posted = posted;
						rs.full = full;
					}
					__syncwarp();
					return true;
				}
				if (!cpl && pool_dispatch(p, seq, d0, d1, flags)) {
					seq++;
					continue;
				}
			}
		}
		stop = watch_check(a, watch);
		if (stop)
			break;
	}
	pool_stop(p, a, posted, seq, stop, clk);
	return false;
}

// A block that polls no lane: waits for a team of any lane, runs its launch
// as block `rank` of its n_blocks, and waits again; leaves when every
// poller stopped.
__device__ void pool_worker(const pool_view &p, vyre_mk_ctrl *all_ctrl, uint32_t block,
			    uint64_t watchdog, shared_state &sh)
{
	const uint32_t tid = threadIdx.x;
	uint32_t gen = 0;

	for (;;) {
		if (tid == 0) {
			unsigned long long m = 0;
			uint32_t cmd = kRun;

			atomicOr(&p.idle[block / 32], 1u << (block % 32));
			for (;;) {
				m = ld_acquire64(&p.mail[block]);
				if ((uint32_t)(m >> 32) != gen)
					break;
				if (ld_volatile(p.exit) >= p.n_lanes) {
					cmd = VYRE_MK_STATE_EXITED;
					break;
				}
				__nanosleep(64);
			}
			sh.cmd = cmd;
			if (cmd == kRun) {
				const vyre_mk_team *tm = &p.all_teams[(m >> 16) & 0xffffu];
				gen = (uint32_t)(m >> 32);
				sh.words[0] = (uint32_t)(m >> 16) & 0xffffu;
				sh.words[1] = (uint32_t)m & 0xffffu;
				sh.words[2] = tm->n_blocks;
				sh.launch = tm->ds.go;
				sh.stages[0] = tm->stage;
			}
		}
		__syncthreads();
		if (sh.cmd != kRun)
			return;
		vyre_mk_team *tm = &p.all_teams[sh.words[0]];
		const uint32_t rank = sh.words[1], n = sh.words[2];
		// an inline launch's units, from the team into shared memory, where run_launch
		// reads them
		if ((sh.launch.flags & VYRE_MK_LAUNCH_INLINE) &&
		    tid < VYRE_MK_INLINE_UNITS * VYRE_MK_UNIT_WORDS / 4)
			reinterpret_cast<uint4 *>(sh.units)[tid] =
			    reinterpret_cast<const uint4 *>(tm->units)[tid];
		__syncthreads();
		vyre_mk_ctrl *ctrl = all_ctrl + sh.words[0] / VYRE_MK_POOL_TEAMS;
		if (tid == 0 && rank == 0)
			tm->t_began = global_ns();
		const bool ok = run_launch(sh.launch, rank, n, &tm->ds, ctrl, watchdog, sh);
		if (tid == 0) {
			if (!ok) {
				atomicExch(&tm->state, VYRE_MK_TEAM_ABORTED);
			} else if (rank == 0) {
				tm->t_ended = global_ns();
				// one block passed no barrier that fenced at system scope
				if (n == 1)
					__threadfence_system();
				st_release(&tm->state, VYRE_MK_TEAM_FINISHED);
			}
		}
		__syncthreads();
	}
}
