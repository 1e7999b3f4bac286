// SPDX-License-Identifier: MIT
//
// gpu/mk_barrier.cuh - the device-wide barrier of a launch of several
// blocks, and the watchdog that gives up on a barrier without progress.
//
// gpu/megakernel.cu includes this inside its anonymous namespace, after its
// common helpers (the ordered loads and stores, bump_progress).

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
