/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_persistent.h - persistent mode of the CUDA backend: the resident
 * grid, its lanes and doorbells (cuda_persistent.c), as a mode table.
 */
#ifndef VYRE_GPU_CUDA_PERSISTENT_H
#define VYRE_GPU_CUDA_PERSISTENT_H

#include "cuda_core.h"

extern const struct vyre_cuda_mode_ops vyre_cuda_persistent_mode;

#endif /* VYRE_GPU_CUDA_PERSISTENT_H */
