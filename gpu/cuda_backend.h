/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_backend.h - what the CUDA backend offers beyond gpu/backend.h:
 * counters, a description for logs, and test hooks. Every function takes a
 * backend made by vyre_cuda_backend->init and returns VYRE_E_INVAL for any
 * other.
 *
 * Environment (read by init):
 *   VYRE_CUDA_HEARTBEAT_MS  the persistent kernel exits when the host
 *                           heartbeat is still this long (default 1000)
 *   VYRE_CUDA_WATCHDOG_MS   a device-wide barrier that sees no progress this
 *                           long aborts the launch (default 10000)
 *   VYRE_CUDA_MAX_BLOCKS    cap on the grid (default: occupancy x SMs)
 *   VYRE_CUDA_INJECT        test hook: "fault" or "stall", as vyre_cuda_inject
 *                           on the first batch (for tests of a whole vyred)
 */
#ifndef VYRE_GPU_CUDA_BACKEND_H
#define VYRE_GPU_CUDA_BACKEND_H

#include <stdint.h>

#include "backend.h"
#include "cuda_types.h"

int vyre_cuda_get_stats(struct vyre_backend *b, struct vyre_cuda_stats *out);

/* One line for logs: GPU, compute capability, grid, driver, mode. */
const char *vyre_cuda_describe(struct vyre_backend *b);

/*
 * 1 while the backend can run work; 0 after a CUDA error, which CUDA keeps
 * for the life of the process: vyred must then exit (and be restarted). A
 * submit that returns VYRE_E_DEVICE says the same.
 */
int vyre_cuda_usable(struct vyre_backend *b);

/* The last error or fault message ("" when none). */
const char *vyre_cuda_last_error(struct vyre_backend *b);

/* Test hooks (VYRE_CUDA_INJECT_*), applied to the first device launch of the next batch. */
int vyre_cuda_inject(struct vyre_backend *b, uint32_t what);

/*
 * Persistent mode runs a batch of a few small items of one group as an
 * IMMEDIATE launch (their data inside the doorbell and the completion slot,
 * see cuda_abi.h) unless this is turned off (@on 0), for tests and
 * benchmarks of the slab path.
 */
int vyre_cuda_set_immediate(struct vyre_backend *b, int on);

/* Test hook: stop (1) or restart (0) the heartbeat, as if vyred were stopped. */
int vyre_cuda_pause_heartbeat(struct vyre_backend *b, int paused);

#endif /* VYRE_GPU_CUDA_BACKEND_H */
