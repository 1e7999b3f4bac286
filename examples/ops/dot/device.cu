/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/dot/device.cu - the device code of the example op module
 * `dot` (docs/design.md 6.7): the float32 dot product in the order host.c
 * defines. 1024 lanes, lane l in scratch word l: thread t runs lanes t,
 * t + threads, ... (with 1024 threads, lane t), each lane fmaf over its
 * elements i = l, l + 1024, ... in order, then the pairwise tree s = 512
 * .. 1 with a barrier a level; thread 0 writes lane 0 (a NaN as
 * 0x7fc00000). Build without --use_fast_math or -ftz: subnormals count.
 * Scratch: 4 KiB.
 *
 * Build: nvcc -std=c++17 -rdc=true -ptx -arch=compute_75 -Iinclude
 */
#include "../op_device.h"

#define LANES 1024u

/* The float at element @i of @p, from its little-endian bytes when @p is not 4-aligned. */
static __device__ float load_float(const uint8_t *p, uint64_t i, bool aligned)
{
	if (aligned)
		return ((const float *)p)[i];
	const uint8_t *q = p + 4 * i;

	return __uint_as_float((uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
			       (uint32_t)q[3] << 24);
}

extern "C" __device__ int vyre_op_dot_device(const struct vyre_op_dev_args *a,
					     unsigned long long *result)
{
	const uint32_t t = a->thread, nt = a->threads;
	float *lane = (float *)a->scratch;
	const uint8_t *x = (const uint8_t *)a->in, *y = (const uint8_t *)a->table;
	const uint64_t n = a->in_bytes / 4;

	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 4 || a->in_bytes % 4 ||
	    a->table_bytes != a->in_bytes || (n && (!x || !y)) || nt == 0 ||
	    a->scratch_bytes < 4 * LANES || ((uintptr_t)a->scratch & 3u))
		return VYRE_E_INVAL;

	const bool aligned = (((uintptr_t)x | (uintptr_t)y) & 3u) == 0;

	for (uint32_t l = t; l < LANES; l += nt) {
		float acc = 0.0f;

		for (uint64_t i = l; i < n; i += LANES)
			acc = __fmaf_rn(load_float(x, i, aligned), load_float(y, i, aligned), acc);
		lane[l] = acc;
	}
	__syncthreads();
	for (uint32_t s = LANES / 2; s >= 1; s /= 2) {
		for (uint32_t l = t; l < s; l += nt)
			lane[l] = __fadd_rn(lane[l], lane[l + s]);
		__syncthreads();
	}
	if (t == 0) {
		const float f = lane[0];
		const uint32_t bits = f != f ? 0x7fc00000u : __float_as_uint(f);
		uint8_t *out = (uint8_t *)a->out;

		for (int k = 0; k < 4; k++)
			out[k] = (uint8_t)(bits >> 8 * k);
		*result = bits;
	}
	return 0;
}
