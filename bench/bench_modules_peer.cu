/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_peer.cu - the "modules" suite's GPU peer: the example
 * op modules' device functions (examples/ops/NAME/device.cu) compiled as a
 * user would compile them into a kernel of their own, one kernel an op,
 * one block of 1024 threads an item (as the megakernel runs a module op),
 * the scratch in dynamic shared memory. The device code is included here,
 * so one translation unit needs no device linking; gpu/cuda.mk builds it
 * into a fatbin that vyre-bench embeds (bench_modules_gpu.c loads it).
 */
#include "../examples/ops/crc32c/device.cu"
#include "../examples/ops/dot/device.cu"
#include "../examples/ops/hash64/device.cu"
#include "../examples/ops/histogram/device.cu"
#include "bench_modules_abi.h"

/*
 * Every thread calls the device function; once every thread's writes are
 * visible to the host, thread 0 writes the record, its seq last.
 */
#define MODULES_PEER_KERNEL(NAME)                                                                  \
	extern "C" __global__ void __launch_bounds__(VYRE_BENCH_MODULES_THREADS, 1)                \
	    vyre_bench_modules_##NAME(struct vyre_bench_modules_item it)                           \
	{                                                                                          \
		extern __shared__ __align__(16) unsigned char scratch[];                           \
		struct vyre_op_dev_args a = {};                                                    \
		unsigned long long result = 0;                                                     \
                                                                                                   \
		a.in = (const void *)it.in;                                                        \
		a.in_bytes = it.in_bytes;                                                          \
		a.out = (void *)it.out;                                                            \
		a.out_bytes = it.out_bytes;                                                        \
		a.table = (const void *)it.table;                                                  \
		a.table_bytes = it.table_bytes;                                                    \
		a.param = it.param;                                                                \
		a.abi = VYRE_OP_MODULE_ABI;                                                        \
		a.thread = threadIdx.x;                                                            \
		a.threads = blockDim.x;                                                            \
		a.scratch = scratch;                                                               \
		a.scratch_bytes = VYRE_OP_DEV_SCRATCH_MIN;                                         \
		const int rc = vyre_op_##NAME##_device(&a, &result);                               \
                                                                                                   \
		__threadfence_system();                                                            \
		__syncthreads();                                                                   \
		if (threadIdx.x == 0) {                                                            \
			volatile struct vyre_bench_modules_record *r =                             \
			    (volatile struct vyre_bench_modules_record *)it.record;                \
                                                                                                   \
			r->rc = rc;                                                                \
			r->result = result;                                                        \
			__threadfence_system();                                                    \
			r->seq = it.seq;                                                           \
		}                                                                                  \
	}

MODULES_PEER_KERNEL(crc32c)
MODULES_PEER_KERNEL(hash64)
MODULES_PEER_KERNEL(histogram)
MODULES_PEER_KERNEL(dot)
