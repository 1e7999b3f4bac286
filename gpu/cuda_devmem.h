/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_devmem.h - device buffers of the CUDA backend (cuda_devmem.c): the
 * backend ops of the same names.
 */
#ifndef VYRE_GPU_CUDA_DEVMEM_H
#define VYRE_GPU_CUDA_DEVMEM_H

#include "cuda_core.h"

int vyre_cuda_alloc_device(struct vyre_backend *b, uint32_t heap, uint64_t bytes, char *why,
			   uint32_t why_len);
int vyre_cuda_free_device(struct vyre_backend *b, uint32_t heap);
uint64_t vyre_cuda_device_free_bytes(struct vyre_backend *b);
/* cuMemFree of device buffer @heap, with nothing running (exclusive, or at shutdown). */
void vyre_cuda_free_device_now(struct vyre_backend *b, uint32_t heap);

#endif /* VYRE_GPU_CUDA_DEVMEM_H */
