/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_slots.h - the batch path of the CUDA backend (cuda_slots.c): the
 * submit and reap of gpu/backend.h's ops table.
 */
#ifndef VYRE_GPU_CUDA_SLOTS_H
#define VYRE_GPU_CUDA_SLOTS_H

#include "cuda_core.h"

int vyre_cuda_submit(struct vyre_backend *b, uint32_t slot, const struct vyre_exec_batch *batch);
int vyre_cuda_reap(struct vyre_backend *b, struct vyre_slot_done *done, uint32_t max,
		   int64_t timeout_ns);

#endif /* VYRE_GPU_CUDA_SLOTS_H */
