/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_device.h - one GPU as the CUDA backend and its benchmark peers use
 * it: the primary context, the embedded megakernel module, its kernels and
 * the co-resident grid size; pinned, device-mapped host allocations.
 */
#ifndef VYRE_GPU_CUDA_DEVICE_H
#define VYRE_GPU_CUDA_DEVICE_H

#include <stdint.h>

#include "backend.h"
#include "cuda_driver.h"

struct vyre_cuda_device {
	const struct vyre_cuda_driver *d;
	int ordinal;
	CUdevice dev;
	CUcontext ctx;	 /* the retained primary context, NULL when not held */
	uint64_t opened; /* which open this is, process-wide: vyre_cuda_device_bind's cache key */
	CUmodule mod;	 /* NULL when not loaded */
	CUfunction persistent, launch, item, empty, pingpong;
	uint32_t sm_count;
	uint32_t clock_khz;
	uint32_t cc_major, cc_minor;
	uint32_t grid; /* co-resident blocks of VYRE_MK_THREADS threads */
	/* dynamic shared memory every megakernel launch passes (DFA tables), and the most it may */
	uint32_t smem_dynamic, smem_dynamic_max;
	char name[96];
};

/*
 * Retain device @ordinal's primary context, make it current, load the
 * megakernel and size the grid (occupancy x SMs, at most @max_blocks when
 * not 0). On error nothing is held and @why names the failing call.
 */
int vyre_cuda_device_open(struct vyre_cuda_device *dv, int ordinal, uint32_t max_blocks, char *why,
			  uint32_t why_len);

/*
 * The devices vyred may drive (backend.h, devices): every ordinal the
 * driver counts whose attributes pass the checks of vyre_cuda_device_open,
 * without opening a context. Returns how many, or VYRE_E_DEVICE with @why.
 */
int vyre_cuda_device_list(struct vyre_device_info *out, uint32_t max, char *why, uint32_t why_len);

/*
 * backend.h's link_modules: device @ordinal's primary context retained (no
 * megakernel loaded), @e's device code linked with the megakernel and
 * unloaded, the context released.
 */
int vyre_cuda_device_link_modules(int ordinal, const struct vyre_op_module_entry *e, uint32_t n,
				  char *why, uint32_t why_len);
/* Unload the module and release the context (errors ignored: this also runs after faults). */
void vyre_cuda_device_close(struct vyre_cuda_device *dv);

/* Make the context current on the calling thread. */
int vyre_cuda_device_bind(const struct vyre_cuda_device *dv, char *why, uint32_t why_len);

/* Pinned host memory mapped into the device (cuMemHostAlloc DEVICEMAP|PORTABLE), zeroed. */
struct vyre_cuda_pinned {
	void *host;
	CUdeviceptr dev;
	uint64_t bytes;
};

int vyre_cuda_pinned_alloc(const struct vyre_cuda_device *dv, struct vyre_cuda_pinned *p,
			   uint64_t bytes, char *why, uint32_t why_len);
void vyre_cuda_pinned_free(const struct vyre_cuda_device *dv, struct vyre_cuda_pinned *p);

/* VYRE_E_NOMEM for out-of-memory results, VYRE_E_DEVICE for the rest. */
int vyre_cuda_status(CUresult r);

#endif /* VYRE_GPU_CUDA_DEVICE_H */
