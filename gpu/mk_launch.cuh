// SPDX-License-Identifier: MIT
//
// gpu/mk_launch.cuh - one launch on the device: its stages, unit by unit,
// on the blocks of a lane (persistent mode) or of the grid (launch mode),
// with a device-wide barrier between stages.
//
// gpu/megakernel.cu includes this inside its anonymous namespace, after
// mk_units.cuh and mk_barrier.cuh, whose code this calls.

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
			const vyre_mk_unit u = unit_at(sh, units, warp_base + i, n_pre);

			// a handoff run on a warp (mk_fuse.cuh): its later members run with its
			// first
			if (u.op & VYRE_MK_HANDOFF_IN)
				continue;
			if (u.op & VYRE_MK_HANDOFF_OUT)
				warp_fused_unit(units, warp_base + i, L.n_units, n_pre, L.results,
						sh, lane);
			else
				warp_unit<true>(u, L.results, lane, ds);
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

// A module batch in the doorbell (VYRE_MK_LAUNCH_CPL) on the poller's own
// block: cpl_launch_to_shared checked that its units are module items of one
// stage without chains (n_stages 0 when not: every record stays
// VYRE_E_INVAL), so they run one after another here rather than through
// run_launch, whose registers spill: a trivial module item spent about 3 us
// of its 9 there on an H200, its 1024 threads writing and reading their
// frames (docs/opmods.md). Returns false when the lane was aborted.
__device__ __noinline__ bool run_module_batch(shared_state &sh, const vyre_mk_devstate *ds)
{
	if (threadIdx.x == 0)
		sh.flag = ld_volatile(&ds->abort) == 0;
	__syncthreads();
	if (!sh.flag)
		return false;
	const uint32_t n = sh.launch.n_stages ? sh.launch.n_units : 0;
	const uint64_t results = sh.launch.results;

	for (uint32_t i = 0; i < n; i++)
		module_unit(sh.units[i], results);
	return true;
}
