/* SPDX-License-Identifier: MIT */
/*
 * test_opmod_device - the example op modules' device functions
 * (examples/ops/NAME/device.cu) against their host functions on a GPU,
 * called as the megakernel calls them (docs/design.md 6.7): one block an
 * item, every thread with its own index, the scratch in dynamic shared
 * memory, thread 0's return value and result the item's; the cases are
 * tests/opmod_device_cases.h's. Then one 1 MiB item of each, timed, and
 * each op's device time an item at 4 KiB and 64 KiB alone (no launch each).
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

/*
 * One item: a block of blockDim.x threads, the scratch dynamic shared memory.
 * Bounded as the megakernel is (1024 threads, so 64 registers a thread),
 * which is what the CUDA linker compiles a module's PTX to there.
 */
__global__ void __launch_bounds__(1024, 1)
    one_item(int op, struct vyre_op_dev_args base, struct outcome *o)
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

/*
 * @reps items one after another on one block, item r's input @stride bytes
 * after item r-1's: a module item's device time alone, without a launch
 * each (what vyre's block pays per item, where a producer under MPS adds a
 * launch and a sync).
 */
__global__ void __launch_bounds__(1024, 1)
    many_items(int op, struct vyre_op_dev_args base, uint32_t reps, uint64_t stride,
	       struct outcome *o)
{
	extern __shared__ __align__(16) unsigned char scratch[];
	unsigned long long sum = 0;

	for (uint32_t r = 0; r < reps; r++) {
		struct vyre_op_dev_args a = base;
		unsigned long long result = 0;

		a.in = (const unsigned char *)base.in + r * stride;
		if (a.table)
			a.table = (const unsigned char *)base.table + r * stride;
		a.thread = threadIdx.x;
		a.threads = blockDim.x;
		a.scratch = scratch;
		const int rc = OPMOD_DEVICE_CALL(op, &a, &result);
		sum += result + (unsigned long long)rc;
		__syncthreads();
	}
	if (threadIdx.x == 0)
		o->result = sum;
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

#define PER_ITEM_REPS 64u

/*
 * One item of @n bytes, device time alone in us: PER_ITEM_REPS distinct
 * items of @src (device memory, or pinned host memory mapped for the
 * device, as vyre's heap is) run back to back by one block of 1024.
 */
static float per_item_us(int op, const unsigned char *src, uint32_t n, void *out)
{
	struct vyre_op_dev_args a;
	cudaEvent_t e0, e1;
	float ms = 0;

	memset(&a, 0, sizeof(a));
	a.in = src;
	a.in_bytes = n;
	a.out = out;
	a.out_bytes = op_out_need[op];
	a.table = op == OP_DOT ? src + (size_t)PER_ITEM_REPS * n : NULL;
	a.table_bytes = op == OP_DOT ? n : 0;
	a.abi = VYRE_OP_MODULE_ABI;
	a.scratch_bytes = VYRE_OP_DEV_SCRATCH_MIN;
	CUDA(cudaEventCreate(&e0));
	CUDA(cudaEventCreate(&e1));
	many_items<<<1, 1024, VYRE_OP_DEV_SCRATCH_MIN>>>(op, a, 2, n, d_o);
	CUDA(cudaEventRecord(e0));
	many_items<<<1, 1024, VYRE_OP_DEV_SCRATCH_MIN>>>(op, a, PER_ITEM_REPS, n, d_o);
	CUDA(cudaEventRecord(e1));
	CUDA(cudaEventSynchronize(e1));
	CUDA(cudaEventElapsedTime(&ms, e0, e1));
	CUDA(cudaEventDestroy(e0));
	CUDA(cudaEventDestroy(e1));
	return ms * 1000.0f / PER_ITEM_REPS;
}

/* Each op's device time an item at 4 KiB and 64 KiB, from device and from host memory. */
static void print_per_item(void)
{
	static const uint32_t sizes[] = {4096, 65536};
	const size_t bytes = (size_t)2 * PER_ITEM_REPS * 65536;
	unsigned char *dev = NULL, *host = NULL, *host_dev = NULL;
	void *out = NULL;

	CUDA(cudaMalloc(&out, 1024));
	CUDA(cudaMalloc(&dev, bytes));
	CUDA(cudaMemset(dev, 0x5a, bytes));
	CUDA(cudaHostAlloc((void **)&host, bytes, cudaHostAllocMapped));
	memset(host, 0x5a, bytes);
	CUDA(cudaHostGetDevicePointer((void **)&host_dev, host, 0));
	for (int op = 0; op < N_OPS; op++)
		for (uint32_t k = 0; k < 2; k++)
			printf("test_opmod_device: %s: a %u-byte item alone on one block of 1024: "
			       "%.2f us from device memory, %.2f us from host memory\n",
			       op_names[op], sizes[k], per_item_us(op, dev, sizes[k], out),
			       per_item_us(op, host_dev, sizes[k], out));
	cudaFree(dev);
	cudaFree(out);
	cudaFreeHost(host);
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
	print_per_item();
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
