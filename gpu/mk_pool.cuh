// SPDX-License-Identifier: MIT
//
// gpu/mk_pool.cuh - the pool (docs/cuda.md, "The pool"): each lane's first
// block's poller hands each slab launch to a team of the grid's idle blocks
// and reads the next doorbell at once, so the small launches of many slots
// run side by side on the whole grid instead of one after the other; `done`
// still moves in doorbell order. Every other block waits in the pool for a
// team.
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

// Warp 0 of a lane's first block, from doorbell `seq` on: runs
// IMMEDIATE and warp launches itself as poll_doorbell does, hands every
// other launch to a team and goes on reading; posts `done` as the oldest
// launches finish. A launch marked ORDERED (a later launch of the same
// batch) waits until everything before it finished.
__device__ void pool_poller(const pool_view &p, const lane_view &a, uint32_t seq, shared_state &sh)
{
	const uint32_t lane = threadIdx.x % 32;
	stop_watch watch = watch_start(a);
	uint32_t posted = seq, d0, d1, flags, stop = 0;
	bool full = false;
	pool_clock clk = {{0, 0, 0}, 0};

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
			if (!(flags & VYRE_MK_LAUNCH_ORDERED) || posted == seq) {
				if (is_warp_launch(flags, d0, d1)) {
					run_warp_launch(a, seq, d0, d1, sh, false);
					if (lane == 0)
						st_volatile(&tm->state, VYRE_MK_TEAM_FINISHED);
					seq++;
					continue;
				}
				if (pool_dispatch(p, seq, d0, d1, flags)) {
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
