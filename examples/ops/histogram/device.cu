/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/histogram/device.cu - the device code of the example op
 * module `histogram` (docs/design.md 6.7), the same counts as host.c: one
 * block an item. The block keeps up to 8 copies of the 256 bins in scratch
 * (warp w adds to copy w mod copies, which spreads the shared-memory
 * atomics), counts the input in a grid-stride loop over its bytes, then
 * thread b sums bin b over the copies and writes it. Scratch: 1 KiB a copy.
 *
 * Build: nvcc -std=c++17 -rdc=true -ptx -arch=compute_75 -Iinclude
 */
#include "../op_device.h"

extern "C" __device__ int vyre_op_histogram_device(const struct vyre_op_dev_args *a,
						   unsigned long long *result)
{
	const uint32_t t = a->thread, nt = a->threads;
	uint32_t *bins = (uint32_t *)a->scratch;
	const uint8_t *p = (const uint8_t *)a->in;
	const uint64_t n = a->in_bytes;
	uint32_t copies = a->scratch_bytes / 1024;

	if (copies > 8)
		copies = 8;
	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 1024 || (!p && n) || n > UINT32_MAX ||
	    nt == 0 || copies == 0 || ((uintptr_t)a->scratch & 3u))
		return VYRE_E_INVAL;
	for (uint32_t i = t; i < 256 * copies; i += nt)
		bins[i] = 0;
	__syncthreads();

	uint32_t *mine = bins + 256 * (t / 32 % copies);

	for (uint64_t i = t; i < n; i += nt)
		atomicAdd(&mine[p[i]], 1u);
	__syncthreads();
	for (uint32_t b = t; b < 256; b += nt) {
		uint32_t sum = 0;
		uint8_t *out = (uint8_t *)a->out + 4 * b;

		for (uint32_t k = 0; k < copies; k++)
			sum += bins[256 * k + b];
		for (int k = 0; k < 4; k++)
			out[k] = (uint8_t)(sum >> 8 * k);
	}
	if (t == 0)
		*result = n;
	return 0;
}
