/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_driver.h - the CUDA driver API, loaded with dlopen("libcuda.so.1")
 * at run time so one binary runs with and without a GPU.
 *
 * Each member has the type of the cuda.h declaration it is named after; the
 * names go through cuda.h's version macros (cuMemAlloc -> cuMemAlloc_v2), so
 * d->cuMemAlloc(...) calls the entry point that header means.
 */
#ifndef VYRE_GPU_CUDA_DRIVER_H
#define VYRE_GPU_CUDA_DRIVER_H

#include <stdint.h>

#include <cuda.h>

#define VYRE_CUDA_DRIVER_FUNCS(X)                                                                  \
	X(cuInit)                                                                                  \
	X(cuDriverGetVersion)                                                                      \
	X(cuGetErrorName)                                                                          \
	X(cuGetErrorString)                                                                        \
	X(cuDeviceGetCount)                                                                        \
	X(cuDeviceGet)                                                                             \
	X(cuDeviceGetName)                                                                         \
	X(cuDeviceGetAttribute)                                                                    \
	X(cuDevicePrimaryCtxRetain)                                                                \
	X(cuDevicePrimaryCtxRelease)                                                               \
	X(cuCtxSetCurrent)                                                                         \
	X(cuModuleLoadData)                                                                        \
	X(cuModuleUnload)                                                                          \
	X(cuModuleGetFunction)                                                                     \
	X(cuFuncGetAttribute)                                                                      \
	X(cuFuncSetAttribute)                                                                      \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                             \
	X(cuStreamCreate)                                                                          \
	X(cuStreamDestroy)                                                                         \
	X(cuStreamQuery)                                                                           \
	X(cuStreamSynchronize)                                                                     \
	X(cuLaunchKernel)                                                                          \
	X(cuLaunchCooperativeKernel)                                                               \
	X(cuEventCreate)                                                                           \
	X(cuEventDestroy)                                                                          \
	X(cuEventRecord)                                                                           \
	X(cuEventQuery)                                                                            \
	X(cuMemAlloc)                                                                              \
	X(cuMemFree)                                                                               \
	X(cuMemsetD8)                                                                              \
	X(cuMemsetD8Async)                                                                         \
	X(cuMemGetInfo)                                                                            \
	X(cuMemHostAlloc)                                                                          \
	X(cuMemFreeHost)                                                                           \
	X(cuMemHostGetDevicePointer)                                                               \
	X(cuMemHostRegister)                                                                       \
	X(cuMemHostUnregister)                                                                     \
	X(cuStreamBeginCapture)                                                                    \
	X(cuStreamEndCapture)                                                                      \
	X(cuGraphInstantiate)                                                                      \
	X(cuGraphLaunch)                                                                           \
	X(cuGraphExecDestroy)                                                                      \
	X(cuGraphDestroy)                                                                          \
	X(cuLinkCreate)                                                                            \
	X(cuLinkAddData)                                                                           \
	X(cuLinkComplete)                                                                          \
	X(cuLinkDestroy)

#define VYRE_CUDA_DRIVER_MEMBER(f) __typeof__(f) *f;

struct vyre_cuda_driver {
	VYRE_CUDA_DRIVER_FUNCS(VYRE_CUDA_DRIVER_MEMBER)
	int version; /* cuDriverGetVersion, e.g. 13000 */
};

/*
 * The process-wide driver table: libcuda.so.1 is opened and cuInit(0) called
 * once, and never closed. Returns NULL and says why (the missing library or
 * symbol, or cuInit's error) when the driver is unusable.
 */
const struct vyre_cuda_driver *vyre_cuda_driver_load(char *why, uint32_t why_len);

/* Writes "CALL failed: CUDA_ERROR_NAME (description)" into @why. */
void vyre_cuda_error(const struct vyre_cuda_driver *d, char *why, uint32_t why_len,
		     const char *call, CUresult r);

/* The embedded megakernel: a fatbin with sm_90 code and sm_90 / sm_75 PTX. */
extern const unsigned char vyre_megakernel_fatbin[];
extern const uint64_t vyre_megakernel_fatbin_bytes;
/* The same, relocatable, calling vyre_module_dispatch (gpu/cuda_modules.c links it). */
extern const unsigned char vyre_megakernel_rdc_fatbin[];
extern const uint64_t vyre_megakernel_rdc_fatbin_bytes;

#endif /* VYRE_GPU_CUDA_DRIVER_H */
