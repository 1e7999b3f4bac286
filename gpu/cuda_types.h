/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_types.h - what the CUDA backend's interface (cuda_backend.h)
 * shares with its state and batch path: the counters and the test hook
 * bits. A header of its own so that cuda_core.h, far below the interface,
 * can hold them; cuda_backend.h includes it.
 */
#ifndef VYRE_GPU_CUDA_TYPES_H
#define VYRE_GPU_CUDA_TYPES_H

#include <stdint.h>

struct vyre_cuda_stats {
	uint64_t batches;
	uint64_t launches;	    /* doorbells (persistent) or cuLaunchKernel calls (launch) */
	uint64_t immediates;	    /* launches whose item travelled inside the doorbell */
	uint64_t module_imm;	    /* module batches run from their doorbell (LAUNCH_CPL) */
	uint64_t kernel_starts;	    /* persistent kernel (re)starts */
	uint64_t bytes_to_device;   /* descriptors, stages and doorbells written for the device */
	uint64_t bytes_from_device; /* result records read back */
	uint64_t faults;	    /* batches failed with VYRE_E_DEVICE */
	uint64_t watchdog_trips;
	uint64_t heartbeat_exits;
	/* persistent mode with the pool (docs/cuda.md "The pool"): launches run
	 * by teams, and their summed ns from handed out to begun, begun to ended,
	 * ended to done posted (device clock, added when the grid leaves); slab
	 * batches and their summed ns from the first doorbell to seen done */
	uint64_t pool_launches;
	uint64_t pool_ns[3];
	uint64_t pool_self; /* one-block launches a poller's own block ran (VYRE_MK_POOL_SELF) */
	uint64_t slab_batches;
	uint64_t slab_ns;
	uint32_t grid_blocks;
	uint32_t block_threads;
	uint32_t slots; /* batches that may run at once (max_inflight) */
	uint32_t lanes; /* persistent: parts of the grid with a doorbell ring each */
};

/* Test hooks (vyre_cuda_inject), applied to the first device launch of the next batch. */
#define VYRE_CUDA_INJECT_FAULT (1u << 0) /* an illegal address: a sticky context error */
#define VYRE_CUDA_INJECT_STALL (1u << 1) /* a block misses the barrier: the watchdog fires */

#endif /* VYRE_GPU_CUDA_TYPES_H */
