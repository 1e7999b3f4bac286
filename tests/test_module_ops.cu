// SPDX-License-Identifier: MIT
//
// tests/test_module_ops.cu - the tests' module ops as device functions
// (include/vyre/op_module.h), equal to tests/test_module_ops.c's host
// functions byte for byte. Operands may be unaligned, so bytes are loaded
// one at a time. Built to PTX (-rdc, so the functions stay visible) and
// linked into the megakernel by test_cuda_modules.
#include <stdint.h>

// vyre/abi.h is C17; C++ spells its static assertions static_assert
#define _Static_assert static_assert
#include "vyre/abi.h"
#undef _Static_assert
#include "vyre/op_module.h"

__device__ static uint32_t load_le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

__device__ static void store_le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

extern "C" __device__ int test_madd_device(const struct vyre_op_dev_args *a,
					   unsigned long long *result)
{
	const uint64_t n = (a->in_bytes < a->out_bytes ? a->in_bytes : a->out_bytes) / 4;
	const uint8_t *in = (const uint8_t *)a->in;
	uint8_t *out = (uint8_t *)a->out;

	// every word is read before any is written: in and out may be the same memory
	for (uint64_t i = a->thread; i < n; i += a->threads) {
		const uint32_t v = load_le(in + 4 * i) * 3u + a->param;

		store_le(out + 4 * i, v);
	}
	*result = n;
	return 0;
}

extern "C" __device__ int test_acc_device(const struct vyre_op_dev_args *a,
					  unsigned long long *result)
{
	const uint64_t n = (a->in_bytes < a->out_bytes ? a->in_bytes : a->out_bytes) / 4;
	const uint8_t *in = (const uint8_t *)a->in;
	uint8_t *out = (uint8_t *)a->out;
	uint32_t *sums = (uint32_t *)a->scratch;
	uint32_t sum = 0;

	for (uint64_t i = a->thread; i < n; i += a->threads) {
		const uint32_t v = load_le(out + 4 * i) + (load_le(in + 4 * i) ^ a->param);

		store_le(out + 4 * i, v);
		sum += v;
	}
	sums[a->thread] = sum;
	__syncthreads();
	if (a->thread == 0) {
		uint32_t total = 0;

		for (uint32_t t = 0; t < a->threads; t++)
			total += sums[t];
		*result = total;
	}
	__syncthreads();
	return 0;
}

extern "C" __device__ int test_tscan_device(const struct vyre_op_dev_args *a,
					    unsigned long long *result)
{
	uint32_t h = 2166136261u ^ (uint32_t)a->table_bytes;
	const uint8_t *in = (const uint8_t *)a->in;

	if (a->out_bytes < 4 || a->param != 0 || !a->table)
		return VYRE_E_INVAL;
	if ((a->table_bytes / 4) % 2)
		return VYRE_E_INVAL;
	if (a->thread != 0)
		return 0;
	if (a->table_bytes > 0)
		h ^= *(const uint8_t *)a->table;
	for (uint64_t i = 0; i < a->in_bytes; i++)
		h = (h ^ in[i]) * 16777619u;
	store_le((uint8_t *)a->out, h);
	*result = h;
	return 0;
}

// The stream op: thread 0 folds each tile into the carried hash (state[0])
// and length (state[1]); the last tile stores them. Called whole (one tile,
// the last) outside a fused run.
extern "C" __device__ int test_cfnv_device(const struct vyre_op_dev_args *a,
					   unsigned long long *result)
{
	const uint8_t *in = (const uint8_t *)a->in;

	if (a->out_bytes < 4)
		return VYRE_E_INVAL;
	if (a->thread != 0)
		return 0;
	uint32_t h = a->tile == 0 ? 2166136261u ^ a->param : a->state[0];
	const uint32_t len = (a->tile == 0 ? 0u : a->state[1]) + (uint32_t)a->in_bytes;

	for (uint64_t i = 0; i < a->in_bytes; i++)
		h = (h ^ in[i]) * 16777619u;
	a->state[0] = h;
	a->state[1] = len;
	if (a->last_tile) {
		store_le((uint8_t *)a->out, h);
		*result = h | (unsigned long long)len << 32;
	}
	return 0;
}

// A module that faults: a store to an address no context maps.
extern "C" __device__ int test_fault_device(const struct vyre_op_dev_args *a,
					    unsigned long long *result)
{
	if (a->thread == 0)
		*(volatile uint32_t *)(uintptr_t)0x10 = 1u;
	*result = 0;
	return 0;
}
