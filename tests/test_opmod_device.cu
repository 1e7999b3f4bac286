/* SPDX-License-Identifier: MIT */
/*
 * test_opmod_device - the example op modules' device functions
 * (examples/ops/NAME/device.cu) against their host functions on a GPU,
 * called as the megakernel calls them (docs/design.md 6.7): one block an
 * item, every thread with its own index, the scratch in dynamic shared
 * memory, thread 0's return value and result the item's; the cases are
 * tests/opmod_device_cases.h's. Then one 1 MiB item of each, timed.
 * Exits 77 without a GPU.
 */
#include <cuda_runtime.h>

#include "../examples/ops/op_device.h"
#include "opmod_device_cases.h"

extern "C" {
__device__ int vyre_op_crc32c_device(const struct vyre_op_dev_args *a, unsigned long long *result);
__device__ int vyre_op_hash64_device(const struct vyre_op_dev_args *a, unsigned long long *result);
__device__ int vyre_op_histogram_device(const struct vyre_op_dev_args *a,
					unsigned long long *result);
__device__ int vyre_op_dot_device(const struct vyre_op_dev_args *a, unsigned long long *result);
}

#define CUDA(call)                                                                                 \
	do {                                                                                       \
		const cudaError_t e_ = (call);                                                     \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "test_opmod_device: %s: %s\n", #call,                      \
				cudaGetErrorString(e_));                                           \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* One item: a block of blockDim.x threads, the scratch dynamic shared memory. */
__global__ void one_item(int op, struct vyre_op_dev_args base, struct outcome *o)
{
	extern __shared__ __align__(16) unsigned char scratch[];
	struct vyre_op_dev_args a = base;
	unsigned long long result = 0x5eed5eed5eed5eedull;

	a.thread = threadIdx.x;
	a.threads = blockDim.x;
	a.scratch = scratch;
	const int rc = OPMOD_DEVICE_CALL(op, &a, &result);

	if (threadIdx.x == 0) {
		o->rc = rc;
		o->result = result;
	}
}

static struct outcome *d_o;

static void to_gpu(void *dst, const void *src, size_t n)
{
	CUDA(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
}

static void from_gpu(void *dst, const void *src, size_t n)
{
	CUDA(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
}

static void gpu_item(int op, const struct vyre_op_dev_args *a, uint32_t threads, uint32_t scratch,
		     struct outcome *o)
{
	struct vyre_op_dev_args b = *a;

	b.scratch_bytes = scratch;
	one_item<<<1, threads, scratch>>>(op, b, d_o);
	CUDA(cudaGetLastError());
	CUDA(cudaDeviceSynchronize());
	CUDA(cudaMemcpy(o, d_o, sizeof(*o), cudaMemcpyDeviceToHost));
}

/* One item of @n bytes: its kernel's time in ms, the mean of 5 after a warm-up. */
static float timed(const struct block_runner *r, int op, uint32_t n)
{
	struct vyre_op_dev_args a;
	cudaEvent_t e0, e1;
	float ms = 0;

	memset(&a, 0, sizeof(a));
	a.in = r->in;
	a.in_bytes = n;
	a.out = r->out;
	a.out_bytes = CASES_OUT_MAX;
	a.table = op == OP_DOT ? r->table : NULL;
	a.table_bytes = op == OP_DOT ? n : 0;
	a.abi = VYRE_OP_MODULE_ABI;
	a.scratch_bytes = VYRE_OP_DEV_SCRATCH_MIN;
	CUDA(cudaEventCreate(&e0));
	CUDA(cudaEventCreate(&e1));
	one_item<<<1, 1024, VYRE_OP_DEV_SCRATCH_MIN>>>(op, a, d_o);
	CUDA(cudaEventRecord(e0));
	for (int i = 0; i < 5; i++)
		one_item<<<1, 1024, VYRE_OP_DEV_SCRATCH_MIN>>>(op, a, d_o);
	CUDA(cudaEventRecord(e1));
	CUDA(cudaEventSynchronize(e1));
	CUDA(cudaEventElapsedTime(&ms, e0, e1));
	CUDA(cudaEventDestroy(e0));
	CUDA(cudaEventDestroy(e1));
	return ms / 5;
}

int main(void)
{
	static const uint32_t threads[] = {1024, 1024, 1024, 256, 96};
	struct block_runner r = {"test_opmod_device", NULL, NULL, NULL, to_gpu, from_gpu, gpu_item};
	int count = 0;

	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
		printf("test_opmod_device: no GPU\n");
		return 77;
	}
	if (cases_init() != 0)
		return 1;
	CUDA(cudaMalloc(&r.in, CASES_MAX_IN + CASES_SLACK));
	CUDA(cudaMalloc(&r.table, CASES_MAX_IN + CASES_SLACK));
	CUDA(cudaMalloc(&r.out, CASES_OUT_MAX));
	CUDA(cudaMalloc(&d_o, sizeof(struct outcome)));
	for (int op = 0; op < N_OPS; op++) {
		case_random(&r, op, 200, CASES_MAX_IN, threads, 5);
		case_refusals(&r, op);
	}
	for (int op = 0; op < N_OPS; op++)
		printf("test_opmod_device: %s: one 1 MiB item, one block of 1024: %.3f ms\n",
		       op_names[op], timed(&r, op, CASES_MAX_IN));
	cudaFree(r.in);
	cudaFree(r.table);
	cudaFree(r.out);
	cudaFree(d_o);
	cases_free();
	if (case_failures) {
		fprintf(stderr, "test_opmod_device: %d failures\n", case_failures);
		return 1;
	}
	printf("test_opmod_device: ok\n");
	return 0;
}
