// SPDX-License-Identifier: MIT
//
// gpu/megakernel.cu - the device side of the CUDA backend.
//
// Every operation of docs/design.md section 6, with the results of gpu/ops.c's
// vyre_exec_one, executed over units lowered by gpu/cuda_lower.c. Buffers
// live in host heaps registered with cuMemHostRegister, so every load and
// store here crosses PCIe: the code keeps several loads in flight per thread
// and reads descriptors in as few round trips as it can.
//
// Kernels (extern "C", looked up by name):
//   vyre_mk_persistent  resident grid that polls the doorbell ring
//   vyre_mk_launch      one launch per cuLaunchKernel (launch mode)
//   vyre_mk_item        one unit per launch (the launch-per-item baseline)
//   vyre_mk_empty       nothing (the bare launch floor)
//   vyre_mk_pingpong    echoes a mapped word (the doorbell round-trip floor)
//
// The parts, each a .cuh included inside the anonymous namespace below, in
// the order they use each other: this file's common helpers (ordered loads
// and stores, combine, result records, a unit's load); the op families
// (mk_elementwise.cuh, mk_sequential.cuh; mk_dfa.cuh, mk_decode.cuh,
// mk_report.cuh and mk_fuse.cuh); one unit by family (mk_units.cuh); the device-wide barrier
// (mk_barrier.cuh); one launch (mk_launch.cuh); the persistent kernel's
// doorbell poller (mk_doorbell.cuh); the pool's pollers and teams
// (mk_pool.cuh). The kernels, at the end, are this
// file's.
//
// Memory ordering: the doorbell poller reads with volatile loads and then
// issues a system-scope fence (acquire); it hands work to the other blocks
// through a device-scope release/acquire pair; device-wide barriers fence at
// device scope, the last one of a launch at system scope, before block 0
// posts `done` for the host.
#include <stdint.h>

#include "cuda_abi.h"
#include "digits.h"
// vyre/abi.h is C17; C++ spells its static assertions static_assert.
#define _Static_assert static_assert
#include "vyre/abi.h"
#undef _Static_assert

#include "mk_dfa.cuh"

#include "vyre/op_module.h"
#ifdef VYRE_MK_MODULES
// Written by vyred at start as PTX and linked in (gpu/cuda_modules.c): calls
// the device function of module op `index`.
extern "C" __device__ int vyre_module_dispatch(uint32_t index, const vyre_op_dev_args *a,
					       unsigned long long *result);
#endif

namespace
{

constexpr uint32_t kFull = 0xffffffffu;
constexpr uint32_t kRun = 0;
constexpr uint32_t kUnroll = 4;

struct __align__(16) shared_state
{
	vyre_mk_unit units[VYRE_MK_PREFETCH];
	vyre_mk_stage stages[VYRE_MK_PREFETCH];
	vyre_mk_launch_args launch;
	dfa::block_shared scan;
	uint32_t red[VYRE_MK_WARPS];
	uint32_t words[4];
	uint32_t cmd;
	uint32_t seq;
	int flag;
};

__device__ __forceinline__ uint32_t ld_acquire(const uint32_t *p)
{
	uint32_t v;
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void st_release(uint32_t *p, uint32_t v)
{
	asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Release at system scope: the host sees every store ordered before it.
__device__ __forceinline__ void st_release_sys(uint32_t *p, uint32_t v)
{
	asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ uint32_t ld_volatile(const uint32_t *p)
{
	return *(const volatile uint32_t *)p;
}

__device__ __forceinline__ void st_volatile(uint32_t *p, uint32_t v)
{
	*(volatile uint32_t *)p = v;
}

__device__ __forceinline__ uint32_t combine(uint32_t op, uint32_t a, uint32_t param)
{
	switch (op) {
	case VYRE_OP_ADD:
		return a + param;
	case VYRE_OP_XOR:
		return a ^ param;
	case VYRE_OP_MUL:
		return a * param;
	default:
		return a;
	}
}

__device__ __forceinline__ uint4 combine4(uint32_t op, uint4 v, uint32_t param)
{
	return make_uint4(combine(op, v.x, param), combine(op, v.y, param), combine(op, v.z, param),
			  combine(op, v.w, param));
}

__device__ __forceinline__ uint32_t reduce(uint32_t op, uint32_t a, uint32_t b)
{
	return op == VYRE_OP_SUM ? a + b : (a > b ? a : b);
}

__device__ __forceinline__ void put_result(uint64_t results, uint32_t slot, int32_t status,
					   uint64_t value)
{
	uint4 *r = reinterpret_cast<uint4 *>(results) + slot;
	*r = make_uint4((uint32_t)status, 0u, (uint32_t)value, (uint32_t)(value >> 32));
}

__device__ __forceinline__ void bump_progress(vyre_mk_devstate *ds)
{
	if (ds)
		atomicAdd(&ds->progress, 1u);
}

// Ops whose unit writes a result record (at u.slot).
__device__ __forceinline__ bool has_record(uint32_t op)
{
	return (op >= VYRE_OP_SUM && op <= VYRE_OP_DFA_REPORT_COUNTED) || op == VYRE_MK_OP_MODULE;
}

// VYRE_MK_AFTER_PREV: whether the unit's chain predecessor failed, which
// result record u.reserved says (written in an earlier stage or launch,
// hence read past the caches).
__device__ __forceinline__ bool after_failed(const vyre_mk_unit &u, uint64_t results)
{
	return (u.op & VYRE_MK_AFTER_PREV) &&
	       ld_volatile(reinterpret_cast<const uint32_t *>(results) + 4ull * u.reserved) != 0;
}

__device__ vyre_mk_unit load_unit(const vyre_mk_unit *p)
{
	union {
		uint4 v[3];
		vyre_mk_unit u;
	} x;
	const uint4 *q = reinterpret_cast<const uint4 *>(p);
	x.v[0] = q[0];
	x.v[1] = q[1];
	x.v[2] = q[2];
	return x.u;
}

#include "mk_elementwise.cuh"

#include "mk_sequential.cuh"

#include "mk_units.cuh"

#include "mk_barrier.cuh"

#include "mk_launch.cuh"

#include "mk_doorbell.cuh"

#include "mk_pool.cuh"
} // namespace

// Resident grid, split into lanes (vyre_mk_persist_args.lane_first). The
// first block of each lane polls that lane's doorbell ring; a launch of one
// block runs on it alone, a larger one is published to the lane's other
// blocks through its device state and runs on the whole lane (every block is
// co-resident: the host sized the grid from occupancy). With a pool, the
// first block of each lane polls with its warp 0 and hands each launch to a
// team of the grid's idle blocks (mk_pool.cuh); with VYRE_MK_POOL_SELF its
// other warps wait at a barrier and run, with warp 0, each one-block launch
// that finds nothing of the lane in flight.
// Lanes share nothing but the kernel: each has its own rings, control page
// and barrier.
extern "C" __global__ void __launch_bounds__(VYRE_MK_THREADS, 1)
    vyre_mk_persistent(const vyre_mk_persist_args a)
{
	__shared__ shared_state sh;
	const uint32_t n_lanes = a.n_lanes < 1 ? 1 : min(a.n_lanes, VYRE_MK_MAX_LANES);
	uint32_t ln = 0;
	while (ln + 1 < n_lanes && blockIdx.x >= a.lane_first[ln + 1])
		ln++;
	const uint32_t first = a.lane_first[ln];
	const uint32_t lane_blocks =
	    ln + 1 < n_lanes ? a.lane_first[ln + 1] - first : gridDim.x - first;
	const uint32_t block = blockIdx.x - first;
	vyre_mk_devstate *all_ds = reinterpret_cast<vyre_mk_devstate *>(a.devstate);
	const lane_view v = {
	    reinterpret_cast<const unsigned long long *>(a.ring) +
		(uint64_t)ln * VYRE_MK_RING_SLOTS * VYRE_MK_SLOT_WORDS,
	    reinterpret_cast<unsigned long long *>(a.cpl) +
		(uint64_t)ln * VYRE_MK_RING_SLOTS * VYRE_MK_SLOT_WORDS,
	    reinterpret_cast<vyre_mk_ctrl *>(a.ctrl) + ln,
	    all_ds + ln,
	    all_ds,
	    a.heartbeat_cycles,
	    n_lanes,
	};
	vyre_mk_ctrl *ctrl = v.ctrl;
	vyre_mk_devstate *ds = v.ds;
	uint32_t seq = a.start_seq[ln], go_seen = 0;

	if (a.pool) {
		const pool_view p = pool_at(a.pool, ln, n_lanes, a.pool_spread);
		const bool self = (a.pool_flags & VYRE_MK_POOL_SELF) != 0;
		if (block == 0) {
			__shared__ pool_resume rs;
			if (threadIdx.x == 0)
				pool_resume_start(v, seq, self, rs);
			else if (threadIdx.x >= 32 && !self)
				return;
			// warp 0 polls; with `self` the other warps wait at the park barrier
			// (no polling) and run with it each one-block launch it leaves them
			for (;;) {
				if (threadIdx.x < 32)
					pool_poller_left(v, rs, pool_poller(p, v, rs, sh), sh);
				if (!self)
					return;
				park_barrier();
				if (sh.cmd != kRun)
					return;
				const bool ok = (sh.launch.flags & VYRE_MK_LAUNCH_CPL)
						    ? run_module_batch(sh, ds)
						    : run_launch(sh.launch, 0, 1, ds, ctrl,
								 a.watchdog_cycles, sh);
				// warp 0 alone reads sh.launch now: it may overwrite it with the
				// next launch before the other warps are back at the barrier
				if (threadIdx.x < 32) {
					const bool cpl =
					    ok && (sh.launch.flags & VYRE_MK_LAUNCH_CPL);
					if (cpl)
						pool_self_cpl(v, rs, sh.launch.n_units);
					if (threadIdx.x == 0)
						pool_self_ran(p, rs, ok, cpl);
				}
			}
		} else if (blockIdx.x < VYRE_MK_POOL_MAX_BLOCKS) {
			pool_worker(p, reinterpret_cast<vyre_mk_ctrl *>(a.ctrl), blockIdx.x,
				    a.watchdog_cycles, sh);
		}
		return;
	}
	for (;;) {
		if (block == 0) {
			if (threadIdx.x < 32)
				poll_doorbell(v, seq, sh);
			__syncthreads();
			const uint32_t cmd = sh.cmd;
			seq = sh.seq;
			if (threadIdx.x == 0 && lane_blocks > 1 &&
			    (cmd != kRun || sh.launch.n_blocks > 1)) {
				ds->go = sh.launch;
				if (cmd != kRun)
					ds->go.flags |= VYRE_MK_LAUNCH_EXIT;
				__threadfence();
				st_release(&ds->go_seq, ++go_seen);
			}
			if (cmd != kRun) {
				if (threadIdx.x == 0) {
					// an EXIT doorbell counts as done, so a restart at `done`
					// begins after it
					if (cmd == VYRE_MK_STATE_EXITED)
						st_volatile(&ctrl->done, seq + 1);
					st_volatile(&ctrl->state, cmd);
					__threadfence_system();
				}
				return;
			}
		} else {
			if (threadIdx.x == 0) {
				int ok = 1;
				while (ld_acquire(&ds->go_seq) == go_seen) {
					if (ld_volatile(&ds->abort)) {
						ok = 0;
						break;
					}
					__nanosleep(64);
				}
				go_seen++;
				sh.launch = ds->go;
				if (!ok)
					sh.launch.flags |= VYRE_MK_LAUNCH_EXIT;
			}
			__syncthreads();
			if (sh.launch.flags & VYRE_MK_LAUNCH_EXIT)
				return;
		}
		const vyre_mk_launch_args L = sh.launch;
		const uint32_t n_blocks = L.n_blocks > 1 ? lane_blocks : 1;
		if (!run_launch(L, block, n_blocks, ds, ctrl, a.watchdog_cycles, sh))
			return;
		if (block == 0 && threadIdx.x == 0)
			st_release_sys(&ctrl->done, seq + 1);
		seq++;
	}
}

// Launch mode: one launch per kernel on gridDim.x blocks (<= the co-resident
// count, so the device-wide barrier is safe).
extern "C" __global__ void __launch_bounds__(VYRE_MK_THREADS, 1)
    vyre_mk_launch(const vyre_mk_launch_kargs a)
{
	__shared__ shared_state sh;
	run_launch(a.launch, blockIdx.x, gridDim.x,
		   reinterpret_cast<vyre_mk_devstate *>(a.devstate),
		   reinterpret_cast<vyre_mk_ctrl *>(a.ctrl), a.watchdog_cycles, sh);
}

// The launch-per-item baseline: one unit, one block.
extern "C" __global__ void __launch_bounds__(VYRE_MK_THREADS, 1)
    vyre_mk_item(const vyre_mk_unit u, const uint64_t results, const uint32_t whole_block)
{
	__shared__ shared_state sh;
	if (whole_block)
		block_unit(u, results, sh, nullptr);
	else if (threadIdx.x < 32)
		warp_unit<true>(u, results, threadIdx.x, nullptr);
}

extern "C" __global__ void vyre_mk_empty(void)
{
}

// Echo round r of *ping into *pong, for r = 1..rounds; gives up after
// timeout_cycles without a new ping.
extern "C" __global__ void vyre_mk_pingpong(const uint64_t ping, const uint64_t pong,
					    const uint32_t rounds, const uint64_t timeout_cycles)
{
	const uint32_t *in = reinterpret_cast<const uint32_t *>(ping);
	uint32_t *out = reinterpret_cast<uint32_t *>(pong);

	for (uint32_t r = 1; r <= rounds; r++) {
		const uint64_t since = clock64();
		while (ld_volatile(in) != r)
			if (clock64() - since > timeout_cycles)
				return;
		st_volatile(out, r);
	}
}
