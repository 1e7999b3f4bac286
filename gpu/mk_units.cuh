// SPDX-License-Identifier: MIT
//
// gpu/mk_units.cuh - one unit on the device, by the op family it belongs
// to: warp units (elementwise, reductions, small DFA and report items), block units
// (large reductions, DFA and report items, the byte ops of mk_decode.cuh)
// and
// on-chip handoff runs (mk_fuse.cuh).
//
// gpu/megakernel.cu includes this inside its anonymous namespace, after
// mk_elementwise.cuh and mk_sequential.cuh, whose code this calls; this
// includes mk_report.cuh first (warp units run reports), mk_decode.cuh and
// mk_fuse.cuh where the block units need them.

// the report units, warp and block (mk_fuse.cuh runs one at the end of a run)
#include "mk_report.cuh"

// Dfa: whether DFA units (scans and reports) may come (the polling warp's launches carry none,
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
	case VYRE_OP_DFA_REPORT:
	case VYRE_OP_DFA_REPORT_COUNTED:
		if constexpr (Dfa) {
			// the warp's share of the dynamic shared memory, exactly a DFA warp
			// unit's staging room: other warps' units use theirs meanwhile
			const dfa::stage st = dfa::warp_stage();
			mk_report::warp_report(u, results, reinterpret_cast<uint32_t *>(st.buf),
					       st.room / 4);
		}
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

// The prefix sums of a report unit or run: the split DFA join's records,
// which neither uses.
__device__ __forceinline__ uint64_t *report_counts(shared_state &sh)
{
	static_assert(sizeof(sh.scan.rec) >= 8 * (VYRE_MK_THREADS + 33), "report counts fit");
	return reinterpret_cast<uint64_t *>(sh.scan.rec);
}

// A module op's item: every thread of the block calls the module's device
// function (op_module.h), as the ABI promises, with the counted bytes of a
// counted input and the dynamic shared memory as scratch; thread 0's return
// and result are the item's, any non-zero return VYRE_E_INVAL as on the host
// (gpu/ops.c). Without modules linked in, lowering never makes such a unit.
__device__ __noinline__ void module_unit(const vyre_mk_unit &u, uint64_t results)
{
	__shared__ uint32_t state[VYRE_OP_STATE_WORDS];
	// [0] the counted length, [1] whether it is too long, [kModuleRc] the return
	__shared__ uint32_t ctl[mk_fuse::kModuleRc + 1];
	const uint32_t tid = threadIdx.x;
	const bool counted = (u.op & VYRE_MK_MODULE_COUNTED) != 0;
	const uint8_t *in = reinterpret_cast<const uint8_t *>(u.in);

	if (tid < VYRE_OP_STATE_WORDS)
		state[tid] = 0;
	if (tid == 0 && counted) {
		// an earlier stage may have written the length word: read it past the
		// caches, a byte at a time (the buffer need not be word aligned)
		const volatile uint8_t *p = in;
		const uint32_t len = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24;

		ctl[0] = len;
		ctl[1] = len > u.count - 4u;
	}
	__syncthreads();
	unsigned long long r = 0;
	const int rc =
	    counted && ctl[1]
		? VYRE_E_INVAL
		: mk_fuse::module_tile(u, counted ? in + 4 : in,
				       u.in ? (counted ? ctl[0] : u.count) : 0u, 0, true, state,
				       dfa::shared_entries(), dfa::dynamic_smem_bytes(), ctl, &r);

	if (tid == 0)
		put_result(results, u.slot, rc ? VYRE_E_INVAL : 0, rc ? 0 : r);
	__syncthreads();
}

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
	else if (op == VYRE_OP_DFA_REPORT || op == VYRE_OP_DFA_REPORT_COUNTED)
		mk_report::report_unit(
		    u, results, reinterpret_cast<uint32_t *>(dfa::shared_entries()),
		    dfa::dynamic_smem_bytes() / 4, sh.scan.g, sh.scan.e, report_counts(sh), ds);
	else if (op == VYRE_MK_OP_MODULE)
		module_unit(u, results);
	else if (is_byte_op(op))
		// the dynamic shared memory the DFA keeps its tables in is free between units
		block_bytes_unit(u, results, reinterpret_cast<uint32_t *>(dfa::shared_entries()),
				 VYRE_MK_DFA_SHARED_BYTES / 4, ds);
	else
		block_reduce_unit(u, results, sh, ds);
}

// A handoff run that the lowering gave a warp (one that ends in a small
// DFA_SCAN_COUNTED): its first unit is unit `at` of the launch. The members
// go to the start of the warp's room of the dynamic shared memory (a DFA
// warp unit's staging room), the run's tile after them.
__device__ __noinline__ void warp_fused_unit(const vyre_mk_unit *units, uint64_t at,
					     uint32_t n_units, uint32_t n_pre, uint64_t results,
					     const shared_state &sh, uint32_t lane)
{
	const dfa::stage st = dfa::warp_stage();
	vyre_mk_unit *run = reinterpret_cast<vyre_mk_unit *>(st.buf);
	const uint32_t avail = (uint32_t)min((uint64_t)VYRE_MK_FUSE_MAX, n_units - at);

	// every candidate member in one round trip, a 16-byte word a lane
	if (lane < 3 * avail) {
		const uint64_t j = at + lane / 3;
		reinterpret_cast<uint4 *>(run)[lane] =
		    j < n_pre ? reinterpret_cast<const uint4 *>(sh.units)[3 * j + lane % 3]
			      : reinterpret_cast<const uint4 *>(units)[3 * j + lane % 3];
	}
	__syncwarp();
	uint32_t m = 1;
	while (m < avail && (run[m - 1].op & VYRE_MK_HANDOFF_OUT))
		m++;
	// 12 words a unit keep the tile 16-byte aligned
	warp_fused_run(run, m, results, reinterpret_cast<uint32_t *>(st.buf) + 12 * m,
		       st.room / 4 - 12 * m);
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
			dfa::dynamic_smem_bytes() / 4 - kRunWords, sh.scan.g, sh.scan.e,
			report_counts(sh), ds);
}
