/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_group.h - the CUDA backends of this process that share a device
 * (cuda_group.c).
 */
#ifndef VYRE_GPU_CUDA_GROUP_H
#define VYRE_GPU_CUDA_GROUP_H

#include "cuda_core.h"

/*
 * exclusive: @fn(@b, @arg) runs with every member's operation lock held and
 * every resident grid on @b's device stopped (for driver calls that wait
 * until the whole context is idle); with @leave, @b leaves the group before
 * the list is unlocked.
 */
void vyre_cuda_group_join(struct vyre_backend *b);
int vyre_cuda_group_exclusive(struct vyre_backend *b, int (*fn)(struct vyre_backend *, void *),
			      void *arg, int leave);

#endif /* VYRE_GPU_CUDA_GROUP_H */
