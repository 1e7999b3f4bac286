/* SPDX-License-Identifier: MIT */
/* Linked instead of the CUDA backend when this build had no nvcc. */
#include "backend.h"

const struct vyre_backend_ops *const vyre_cuda_backend = NULL;
const char vyre_cuda_unavailable[] =
    "vyred was built without the CUDA backend: nvcc was not found at build time "
    "(install the CUDA toolkit at /usr/local/cuda and rebuild)";
