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
					   uint32_t value)
{
	uint4 *r = reinterpret_cast<uint4 *>(results) + slot;
	*r = make_uint4((uint32_t)status, 0u, value, 0u);
}

__device__ __forceinline__ void bump_progress(vyre_mk_devstate *ds)
{
	if (ds)
		atomicAdd(&ds->progress, 1u);
}

// Ops whose unit writes a result record (at u.slot).
__device__ __forceinline__ bool has_record(uint32_t op)
{
	return op >= VYRE_OP_SUM && op <= VYRE_OP_DFA_SCAN_COUNTED;
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

// ---- elementwise ops: one warp (or block) over one chunk -------------------

// out[i] = f(in[i]) (or param for FILL) for i < n, by `step` threads of which
// this one is `idx`. Each thread reads kUnroll values before storing any, so
// several PCIe reads are in flight; in and out are equal or disjoint (the
// host sends partial overlaps down the sequential path), so batching the
// loads cannot reorder a read after a write of the same word.
__device__ void map_words(uint32_t op, const uint32_t *in, uint32_t *out, uint32_t n,
			  uint32_t param, uint32_t idx, uint32_t step)
{
	const bool fill = op == VYRE_OP_FILL;
	uint32_t done = 0;

	if ((((uintptr_t)in | (uintptr_t)out) & 15u) == 0) {
		const uint4 *in4 = reinterpret_cast<const uint4 *>(in);
		uint4 *out4 = reinterpret_cast<uint4 *>(out);
		const uint32_t n4 = n / 4;
		const uint4 p4 = make_uint4(param, param, param, param);

		for (uint32_t base = 0; base < n4; base += step * kUnroll) {
			uint4 v[kUnroll];
#pragma unroll
			for (uint32_t k = 0; k < kUnroll; k++) {
				uint32_t i = base + k * step + idx;
				if (i < n4)
					v[k] = fill ? p4 : combine4(op, in4[i], param);
			}
#pragma unroll
			for (uint32_t k = 0; k < kUnroll; k++) {
				uint32_t i = base + k * step + idx;
				if (i < n4)
					out4[i] = v[k];
			}
		}
		done = n4 * 4;
	}
	for (uint32_t base = done; base < n; base += step * kUnroll) {
		uint32_t v[kUnroll];
#pragma unroll
		for (uint32_t k = 0; k < kUnroll; k++) {
			uint32_t i = base + k * step + idx;
			if (i < n)
				v[k] = fill ? param : combine(op, in[i], param);
		}
#pragma unroll
		for (uint32_t k = 0; k < kUnroll; k++) {
			uint32_t i = base + k * step + idx;
			if (i < n)
				out[i] = v[k];
		}
	}
}

// This thread's share of a SUM/MAX over in[0..n); 0 is the identity of both.
__device__ uint32_t accumulate(uint32_t op, const uint32_t *in, uint32_t n, uint32_t idx,
			       uint32_t step, vyre_mk_devstate *ds)
{
	uint32_t acc = 0, done = 0;

	if (((uintptr_t)in & 15u) == 0) {
		const uint4 *in4 = reinterpret_cast<const uint4 *>(in);
		const uint32_t n4 = n / 4;

		for (uint32_t base = 0; base < n4; base += step * kUnroll) {
			uint4 v[kUnroll];
#pragma unroll
			for (uint32_t k = 0; k < kUnroll; k++) {
				uint32_t i = base + k * step + idx;
				v[k] = i < n4 ? in4[i] : make_uint4(0, 0, 0, 0);
			}
#pragma unroll
			for (uint32_t k = 0; k < kUnroll; k++)
				acc = reduce(op, reduce(op, acc, v[k].x),
					     reduce(op, reduce(op, v[k].y, v[k].z), v[k].w));
			if (idx == 0 && step > 32)
				bump_progress(ds);
		}
		done = n4 * 4;
	}
	for (uint32_t i = done + idx; i < n; i += step)
		acc = reduce(op, acc, in[i]);
	return acc;
}

__device__ __forceinline__ uint32_t warp_reduce(uint32_t op, uint32_t v)
{
#pragma unroll
	for (int d = 16; d > 0; d /= 2)
		v = reduce(op, v, __shfl_xor_sync(kFull, v, d));
	return v;
}

// ---- the sequential path: one thread, byte loads, exactly gpu/ops.c -------

__device__ __forceinline__ uint32_t load32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

__device__ __forceinline__ void store32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

__device__ uint64_t dfa_table_bytes(uint32_t n_states)
{
	if (n_states == 0)
		return 0;
	return 4 * (2 + ((uint64_t)n_states + 31) / 32 + 256 * (uint64_t)n_states);
}

__device__ int dfa_sequential(const uint8_t *table, uint32_t table_bytes, const uint8_t *in,
			      uint32_t in_bytes, uint32_t *count)
{
	if (table_bytes < 8)
		return VYRE_E_INVAL;
	const uint32_t n_states = load32(table), start = load32(table + 4);
	const uint64_t need = dfa_table_bytes(n_states);

	if (need == 0 || need > table_bytes || start >= n_states)
		return VYRE_E_INVAL;
	const uint8_t *accept = table + 8;
	const uint8_t *next = accept + 4 * (((uint64_t)n_states + 31) / 32);
	for (uint64_t i = 0; i < 256 * (uint64_t)n_states; i++)
		if (load32(next + 4 * i) >= n_states)
			return VYRE_E_INVAL;

	uint32_t state = load32(table + 4), hits = 0;
	if (state >= n_states)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < in_bytes; i++) {
		state = load32(next + 4 * ((uint64_t)state * 256 + in[i]));
		if (state >= n_states)
			return VYRE_E_INVAL;
		hits += (load32(accept + 4 * (state / 32)) >> (state % 32)) & 1u;
	}
	*count = hits;
	return 0;
}

__device__ void sequential_unit(const vyre_mk_unit &u, uint64_t results, vyre_mk_devstate *ds)
{
	const uint32_t op = u.op & VYRE_MK_OP_MASK;
	const uint8_t *in = reinterpret_cast<const uint8_t *>(u.in);
	uint8_t *out = reinterpret_cast<uint8_t *>(u.out);
	uint32_t acc = 0;

	switch (op) {
	case VYRE_OP_FILL:
		for (uint32_t i = 0; i < u.count; i++)
			store32(out + 4 * (uint64_t)i, u.param);
		return;
	case VYRE_OP_COPY:
		// memmove: forward when the destination is below the source
		if (out <= in) {
			for (uint64_t i = 0; i < 4 * (uint64_t)u.count; i++)
				out[i] = in[i];
		} else {
			for (uint64_t i = 4 * (uint64_t)u.count; i > 0; i--)
				out[i - 1] = in[i - 1];
		}
		return;
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		for (uint32_t i = 0; i < u.count; i++)
			store32(out + 4 * (uint64_t)i,
				combine(op, load32(in + 4 * (uint64_t)i), u.param));
		return;
	case VYRE_OP_SUM:
	case VYRE_OP_MAX:
		for (uint32_t i = 0; i < u.count; i++) {
			acc = reduce(op, acc, load32(in + 4 * (uint64_t)i));
			if ((i & 4095u) == 4095u)
				bump_progress(ds);
		}
		break;
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_SCAN_COUNTED: {
		// DFA_SCAN_COUNTED: the bytes after the length word (lowering made count >= 4)
		const uint32_t len = op == VYRE_OP_DFA_SCAN ? u.count : load32(in);
		const uint32_t skip = op == VYRE_OP_DFA_SCAN ? 0 : 4;
		if (len > u.count - skip ||
		    dfa_sequential(reinterpret_cast<const uint8_t *>(u.table), u.aux, in + skip,
				   len, &acc) != 0) {
			put_result(results, u.slot, VYRE_E_INVAL, 0);
			return;
		}
		break;
	}
	default:
		return;
	}
	store32(out, acc);
	put_result(results, u.slot, 0, acc);
}

// ---- units ----------------------------------------------------------------

// Dfa: whether DFA units may come (the polling warp's launches carry none,
// so its loop holds no call: see is_warp_launch).
template <bool Dfa>
__device__ void warp_unit(const vyre_mk_unit &u, uint64_t results, uint32_t lane,
			  vyre_mk_devstate *ds)
{
	const uint32_t op = u.op & VYRE_MK_OP_MASK;
	const uint32_t *in = reinterpret_cast<const uint32_t *>(u.in);
	uint32_t *out = reinterpret_cast<uint32_t *>(u.out);

	// every lane reads the same word: one load for the warp
	if (after_failed(u, results)) {
		if (lane == 0 && has_record(op))
			put_result(results, u.slot, VYRE_E_CANCELED, 0);
		__syncwarp();
		return;
	}
	if (u.op & VYRE_MK_SEQUENTIAL) {
		if (lane == 0)
			sequential_unit(u, results, ds);
		__syncwarp();
		return;
	}
	switch (op) {
	case VYRE_OP_FILL:
	case VYRE_OP_COPY:
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		map_words(op, in, out, u.count, u.param, lane, 32);
		break;
	case VYRE_OP_SUM:
	case VYRE_OP_MAX: {
		uint32_t acc = warp_reduce(op, accumulate(op, in, u.count, lane, 32, ds));
		if (lane == 0) {
			*out = acc;
			put_result(results, u.slot, 0, acc);
		}
		break;
	}
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_SCAN_COUNTED:
		if constexpr (Dfa)
			dfa::warp_item(u, results);
		break;
	default:
		break;
	}
	__syncwarp();
}

__device__ void block_reduce_unit(const vyre_mk_unit &u, uint64_t results, shared_state &sh,
				  vyre_mk_devstate *ds)
{
	const uint32_t op = u.op & VYRE_MK_OP_MASK;
	const uint32_t tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
	uint32_t acc =
	    accumulate(op, reinterpret_cast<const uint32_t *>(u.in), u.count, tid, blockDim.x, ds);

	acc = warp_reduce(op, acc);
	if (lane == 0)
		sh.red[warp] = acc;
	__syncthreads();
	if (warp == 0) {
		acc = lane < blockDim.x / 32 ? sh.red[lane] : 0;
		acc = warp_reduce(op, acc);
		if (lane == 0) {
			*reinterpret_cast<uint32_t *>(u.out) = acc;
			put_result(results, u.slot, 0, acc);
		}
	}
	__syncthreads();
}

#include "mk_decode.cuh"
#include "mk_fuse.cuh"

__device__ void block_unit(const vyre_mk_unit &u, uint64_t results, shared_state &sh,
			   vyre_mk_devstate *ds)
{
	const uint32_t op = u.op & VYRE_MK_OP_MASK;

	if ((u.op & VYRE_MK_AFTER_PREV) &&
	    __syncthreads_or(threadIdx.x == 0 && after_failed(u, results))) {
		if (threadIdx.x == 0 && has_record(op))
			put_result(results, u.slot, VYRE_E_CANCELED, 0);
		__syncthreads();
		return;
	}
	if (op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED)
		dfa::block_unit(u, results, sh.scan, ds);
	else if (is_byte_op(op))
		// the dynamic shared memory the DFA keeps its tables in is free between units
		block_bytes_unit(u, results, reinterpret_cast<uint32_t *>(dfa::shared_entries()),
				 VYRE_MK_DFA_SHARED_BYTES / 4, ds);
	else
		block_reduce_unit(u, results, sh, ds);
}

// The on-chip handoff run whose first unit is unit `at` of the launch (of
// n_units): its members are the units after it up to the first without
// HANDOFF_OUT (gpu/mk_fuse.cuh). They go to the start of the dynamic shared
// memory, the run's scratch after them. Not inlined, like the DFA units.
__device__ __noinline__ void fused_unit(const vyre_mk_unit *units, uint64_t at, uint32_t n_units,
					uint32_t n_pre, uint64_t results, shared_state &sh,
					vyre_mk_devstate *ds)
{
	constexpr uint32_t kRunWords = VYRE_MK_FUSE_MAX * VYRE_MK_UNIT_WORDS;
	uint32_t *smem = reinterpret_cast<uint32_t *>(dfa::shared_entries());
	vyre_mk_unit *run = reinterpret_cast<vyre_mk_unit *>(smem);
	const uint32_t tid = threadIdx.x;
	const uint32_t avail = (uint32_t)min((uint64_t)VYRE_MK_FUSE_MAX, n_units - at);

	// every candidate member in one round trip, a 16-byte word a thread
	if (tid < 3 * avail) {
		const uint64_t j = at + tid / 3;
		reinterpret_cast<uint4 *>(run)[tid] =
		    j < n_pre ? reinterpret_cast<const uint4 *>(sh.units)[3 * j + tid % 3]
			      : reinterpret_cast<const uint4 *>(units)[3 * j + tid % 3];
	}
	__syncthreads();
	uint32_t m = 1;
	while (m < avail && (run[m - 1].op & VYRE_MK_HANDOFF_OUT))
		m++;
	block_fused_run(run, m, results, smem + kRunWords,
			dfa::dynamic_smem_bytes() / 4 - kRunWords, sh.scan.g, sh.scan.e, ds);
}

// ---- device-wide barrier and watchdog --------------------------------------

__device__ void trip_watchdog(vyre_mk_devstate *ds, vyre_mk_ctrl *ctrl)
{
	if (atomicExch(&ds->abort, 1u) == 0 && ctrl) {
		st_volatile(&ctrl->detail, blockIdx.x);
		st_volatile(&ctrl->state, VYRE_MK_STATE_WATCHDOG);
		__threadfence_system();
	}
}

// Waits until *word differs from old. Gives up (0) when another block
// aborted, or trips the watchdog when neither the barrier count nor the
// progress counter moved for watchdog cycles.
__device__ int wait_change(const uint32_t *word, uint32_t old, vyre_mk_devstate *ds,
			   vyre_mk_ctrl *ctrl, uint64_t watchdog)
{
	uint64_t since = clock64();
	uint32_t seen = ld_volatile(&ds->progress) + ld_volatile(&ds->bar_count);

	for (;;) {
		if (ld_acquire(word) != old)
			return 1;
		if (ld_volatile(&ds->abort))
			return 0;
		const uint64_t now = clock64();
		const uint32_t moved = ld_volatile(&ds->progress) + ld_volatile(&ds->bar_count);
		if (moved != seen) {
			seen = moved;
			since = now;
		} else if (now - since > watchdog) {
			trip_watchdog(ds, ctrl);
			return 0;
		}
		__nanosleep(32);
	}
}

// Barrier of the first n_blocks blocks; false when the launch was aborted.
// The last barrier of a launch fences at system scope so the host sees every
// block's stores once block 0 posts done.
__device__ bool grid_barrier(vyre_mk_devstate *ds, vyre_mk_ctrl *ctrl, uint32_t n_blocks, bool last,
			     uint64_t watchdog, shared_state &sh)
{
	__syncthreads();
	if (n_blocks == 1)
		return true;
	if (threadIdx.x == 0) {
		int ok = 1;
		if (last)
			__threadfence_system();
		else
			__threadfence();
		const uint32_t gen = ld_acquire(&ds->bar_gen);
		if (atomicAdd(&ds->bar_count, 1u) + 1 == n_blocks) {
			atomicExch(&ds->bar_count, 0u);
			__threadfence();
			atomicAdd(&ds->bar_gen, 1u);
		} else {
			ok = wait_change(&ds->bar_gen, gen, ds, ctrl, watchdog);
		}
		__threadfence();
		sh.flag = ok;
	}
	__syncthreads();
	return sh.flag != 0;
}

// ---- a launch ---------------------------------------------------------------

__device__ __forceinline__ vyre_mk_unit unit_at(const shared_state &sh, const vyre_mk_unit *units,
						uint64_t i, uint32_t n_prefetched)
{
	return i < n_prefetched ? sh.units[i] : load_unit(units + i);
}

// Runs the stages of one launch on blocks [0, n_blocks) of a lane (or of a
// launch-mode grid), of which this one is `block`. The first round trip
// fetches the first units and stages together. Not inlined: the DFA units it
// may call would otherwise cost the persistent kernel's polling loop
// registers (H100: the slab path 9.30 -> 9.10 us a 1-item batch).
__device__ __noinline__ bool run_launch(const vyre_mk_launch_args L, uint32_t block,
					uint32_t n_blocks, vyre_mk_devstate *ds, vyre_mk_ctrl *ctrl,
					uint64_t watchdog, shared_state &sh)
{
	const vyre_mk_unit *units = reinterpret_cast<const vyre_mk_unit *>(L.units);
	const vyre_mk_stage *stages = reinterpret_cast<const vyre_mk_stage *>(L.stages);
	const uint32_t tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
	const bool in_slot = (L.flags & VYRE_MK_LAUNCH_INLINE) != 0;
	const uint32_t n_pre = min(L.n_units, VYRE_MK_PREFETCH);
	const uint32_t stage_loader = 3 * VYRE_MK_PREFETCH;
	uint32_t since_progress = 0;

	// an inline launch's units and stage are already in shared memory
	if (!in_slot && tid < 3 * n_pre)
		reinterpret_cast<uint4 *>(sh.units)[tid] =
		    reinterpret_cast<const uint4 *>(units)[tid];
	// launch mode queues launches behind an aborted one: they must not run
	if (tid == 0)
		sh.flag = ds == nullptr || ld_volatile(&ds->abort) == 0;
	__syncthreads();
	if (!sh.flag)
		return false;
	if ((L.flags & VYRE_MK_LAUNCH_FAULT) && block == 0 && tid == 0)
		st_volatile(reinterpret_cast<uint32_t *>(uintptr_t{16}), 1u);

	for (uint32_t s = 0; s < L.n_stages; s++) {
		if (s % VYRE_MK_PREFETCH == 0 && !in_slot) {
			const uint32_t m = min(VYRE_MK_PREFETCH, L.n_stages - s);
			if (tid >= stage_loader && tid < stage_loader + m)
				reinterpret_cast<uint4 *>(sh.stages)[tid - stage_loader] =
				    reinterpret_cast<const uint4 *>(stages + s)[tid - stage_loader];
			__syncthreads();
		}
		const vyre_mk_stage st = sh.stages[s % VYRE_MK_PREFETCH];

		for (uint32_t i = block; i < st.n_block_units; i += n_blocks) {
			const uint64_t at = (uint64_t)st.first_unit + i;
			const vyre_mk_unit u = unit_at(sh, units, at, n_pre);

			// a handoff run's later members run with its first
			if (u.op & VYRE_MK_HANDOFF_IN)
				continue;
			if (u.op & VYRE_MK_HANDOFF_OUT)
				fused_unit(units, at, L.n_units, n_pre, L.results, sh, ds);
			else
				block_unit(u, L.results, sh, ds);
		}
		const uint64_t warp_base = (uint64_t)st.first_unit + st.n_block_units;
		for (uint64_t i = block + (uint64_t)warp * n_blocks; i < st.n_warp_units;
		     i += (uint64_t)VYRE_MK_WARPS * n_blocks) {
			warp_unit<true>(unit_at(sh, units, warp_base + i, n_pre), L.results, lane,
					ds);
			if (++since_progress == 64) {
				since_progress = 0;
				if (lane == 0)
					bump_progress(ds);
			}
		}
		if ((L.flags & VYRE_MK_LAUNCH_STALL) && block == 1) {
			// test hook: never arrive, so the others' watchdog must fire
			if (tid == 0)
				while (!ld_volatile(&ds->abort))
					__nanosleep(1000);
			__syncthreads();
			return false;
		}
		if (!grid_barrier(ds, ctrl, n_blocks, s + 1 == L.n_stages, watchdog, sh))
			return false;
	}
	return true;
}

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
__device__ void run_immediate(const lane_view &a, uint32_t seq, uint32_t d0, uint32_t d1)
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
	if (lane == 0)
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
// with a DFA unit: that runs on the block, so that the polling loop holds no
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
		       (op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED);
	}
	return (flags & VYRE_MK_LAUNCH_INLINE) && n_blocks == 1 && n_block_units == 0 &&
	       !(flags & (VYRE_MK_LAUNCH_EXIT | VYRE_MK_LAUNCH_FAULT | VYRE_MK_LAUNCH_STALL)) &&
	       !__any_sync(kFull, dfa);
}

__device__ void run_warp_launch(const lane_view &a, uint32_t seq, uint32_t d0, uint32_t d1,
				shared_state &sh)
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
	if (lane == 0)
		st_release_sys(&a.ctrl->done, seq + 1);
	__syncwarp();
}

// Warp 0 of block 0: wait for the doorbell slot of launch `seq`, watching the
// host heartbeat meanwhile, and run IMMEDIATE and warp launches on the way
// (run_immediate, run_warp_launch). Leaves the next launch for the whole
// block in sh.launch (and an inline launch's units and stage in sh.units /
// sh.stages), its sequence number in sh.seq and the command in sh.cmd (kRun,
// or the VYRE_MK_STATE_* to stop with).
//
// One warp polls the slot's first half, a word a lane: one read of the host's
// memory in flight, never more. The second half is read only when the header
// says the launch fills it. More reads in flight made everything slower on
// the H100 (2026-11-22): four warps polling the slot, 3.33 vs 3.19 us for a
// single item and 15.2 vs 8.7 us down the slab path; one warp polling four
// copies of the slot in staggered phases, 7.7 vs 3.3 us.
__device__ void poll_doorbell(const lane_view &a, uint32_t seq, shared_state &sh)
{
	const uint32_t lane = threadIdx.x;
	vyre_mk_ctrl *ctrl = a.ctrl;
	const uint64_t check_every = a.heartbeat_cycles / 16 + 1;
	uint64_t checked = clock64(), changed = checked;
	uint32_t beat = ld_volatile(&ctrl->heartbeat);
	uint32_t d0, d1, flags;
	// the last launch filled the slot's second half, so the next one likely
	// does too (vyred's multi-item IMMEDIATE batches): both halves are read
	// in one round trip until a launch needs the first half alone
	bool full = false;

	for (;;) {
		const unsigned long long *slot =
		    a.ring + (uint64_t)(seq & (VYRE_MK_RING_SLOTS - 1)) * VYRE_MK_SLOT_WORDS;
		const unsigned long long w0 = *(const volatile unsigned long long *)(slot + lane);
		const unsigned long long w1_early =
		    full ? *(const volatile unsigned long long *)(slot + 32 + lane) : 0;
		const bool cur0 = (uint32_t)(w0 >> 32) == seq;
		bool cur1 = true;

		d0 = (uint32_t)w0;
		d1 = 0;
		if (__all_sync(kFull, cur0 || lane >= VYRE_MK_HEADER_WORDS)) {
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
				    full ? w1_early
					 : *(const volatile unsigned long long *)(slot + 32 + lane);
				cur1 = (uint32_t)(w1 >> 32) == seq;
				d1 = (uint32_t)w1;
			}
			if (__all_sync(kFull,
				       (cur0 || lane >= words) && (cur1 || lane + 32 >= words))) {
				full = words > 32;
				if (flags & VYRE_MK_LAUNCH_IMMEDIATE) {
					run_immediate(a, seq, d0, d1);
				} else {
					// acquire: the units, tables and heap words the host wrote
					// before the doorbell
					asm volatile("fence.acq_rel.sys;" ::: "memory");
					if (!is_warp_launch(flags, d0, d1))
						break;
					run_warp_launch(a, seq, d0, d1, sh);
				}
				seq++;
				continue;
			}
		}
		uint32_t stop = 0;
		if (lane == 0) {
			const uint64_t now = clock64();
			if (now - checked > check_every) {
				checked = now;
				const uint32_t b = ld_volatile(&ctrl->heartbeat);
				if (b != beat) {
					beat = b;
					changed = now;
				} else if (now - changed > a.heartbeat_cycles) {
					stop = VYRE_MK_STATE_HEARTBEAT;
				}
				// another lane's watchdog fired: the host restarts the grid
				for (uint32_t m = 0; m < a.n_lanes; m++)
					if (ld_volatile(&a.all_ds[m].abort))
						stop = VYRE_MK_STATE_HALTED;
			}
		}
		stop = __shfl_sync(kFull, stop, 0);
		if (stop) {
			if (lane == 0) {
				sh.cmd = stop;
				sh.seq = seq;
			}
			return;
		}
	}
	uint32_t d[VYRE_MK_HEADER_WORDS];
#pragma unroll
	for (uint32_t j = 0; j < VYRE_MK_HEADER_WORDS; j++)
		d[j] = __shfl_sync(kFull, d0, j);
	if (flags & VYRE_MK_LAUNCH_INLINE) {
		inline_units_to_shared(d0, d1, sh);
	}
	if (lane == 0) {
		const uint64_t slab = (uint64_t)d[0] | (uint64_t)d[1] << 32;
		sh.launch.units = slab + d[2];
		sh.launch.stages = slab + d[3];
		sh.launch.results = slab + d[4];
		sh.launch.n_stages = d[5];
		sh.launch.n_blocks = d[6] & 0xffffu;
		sh.launch.flags = flags;
		sh.launch.n_units = d[7];
		if (flags & VYRE_MK_LAUNCH_INLINE)
			sh.stages[0] = vyre_mk_stage{0, d[3], d[7] - d[3], 0};
		sh.cmd = (flags & VYRE_MK_LAUNCH_EXIT) ? VYRE_MK_STATE_EXITED : kRun;
		sh.seq = seq;
	}
}

} // namespace

// Resident grid, split into lanes (vyre_mk_persist_args.lane_first). The
// first block of each lane polls that lane's doorbell ring; a launch of one
// block runs on it alone, a larger one is published to the lane's other
// blocks through its device state and runs on the whole lane (every block is
// co-resident: the host sized the grid from occupancy). Lanes share nothing
// but the kernel: each has its own rings, control page and barrier.
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
