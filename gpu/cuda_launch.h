/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_launch.h - launch mode of the CUDA backend: one kernel launch per
 * launch of a batch on its slot's stream (cuda_launch.c), as a mode table.
 */
#ifndef VYRE_GPU_CUDA_LAUNCH_H
#define VYRE_GPU_CUDA_LAUNCH_H

#include "cuda_core.h"

extern const struct vyre_cuda_mode_ops vyre_cuda_launch_mode;

#endif /* VYRE_GPU_CUDA_LAUNCH_H */
