/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/crc32c/device.cu - the device code of the example op module
 * `crc32c` (docs/design.md 6.7), the same CRC32C as host.c: one block an
 * item. CRC is linear over GF(2), so the block splits the input into one
 * contiguous piece a thread: thread t computes the CRC register of its
 * piece from 0, shifts it over the bytes after the piece (a multiplication
 * by x^(8m) modulo the polynomial), and the block XORs the shifted
 * registers together with the initial register shifted over all n bytes.
 * Scratch: the byte table (1 KiB) and one word a thread.
 *
 * Build: nvcc -std=c++17 -rdc=true -ptx -arch=compute_75 -Iinclude
 */
#include "../op_device.h"

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

/*
 * In the reflected form bit 31 is x^0 and bit 0 is x^31. x times a
 * polynomial shifts it right, folding x^32 back in as the polynomial.
 */
static __device__ uint32_t times_x(uint32_t b)
{
	return b >> 1 ^ (POLY & (0u - (b & 1u)));
}

/* a * b modulo the polynomial: b * x^k added for every term x^k of a. */
static __device__ uint32_t mul_mod(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	for (int k = 0; k < 32; k++) {
		if (a & (0x80000000u >> k))
			p ^= b;
		b = times_x(b);
	}
	return p;
}

/* x^(8 * bytes) modulo the polynomial: what the register is multiplied by over zero bytes. */
static __device__ uint32_t x_pow_bytes(uint64_t bytes)
{
	uint32_t r = 0x80000000u, sq = 0x00800000u; /* 1 and x^8 */

	for (; bytes; bytes >>= 1) {
		if (bytes & 1u)
			r = mul_mod(r, sq);
		sq = mul_mod(sq, sq);
	}
	return r;
}

extern "C" __device__ int vyre_op_crc32c_device(const struct vyre_op_dev_args *a,
						unsigned long long *result)
{
	const uint32_t t = a->thread, nt = a->threads;
	uint32_t *table = (uint32_t *)a->scratch, *part = table + 256;
	const uint8_t *p = (const uint8_t *)a->in;
	const uint64_t n = a->in_bytes;

	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 4 || (!p && n) || nt == 0 || nt > 1024 ||
	    a->scratch_bytes < 4u * (256u + nt) || ((uintptr_t)a->scratch & 3u))
		return VYRE_E_INVAL;
	for (uint32_t i = t; i < 256; i += nt) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = times_x(c);
		table[i] = c;
	}
	__syncthreads();

	const uint64_t per = (n + nt - 1) / nt;
	const uint64_t begin = per * t < n ? per * t : n;
	const uint64_t end = n - begin > per ? begin + per : n;
	uint32_t c = 0;

	for (uint64_t i = begin; i < end; i++)
		c = c >> 8 ^ table[(c ^ p[i]) & 0xffu];
	part[t] = c ? mul_mod(c, x_pow_bytes(n - end)) : 0;
	__syncthreads();
	for (uint32_t s = 1; s < nt; s *= 2) {
		if (t % (2 * s) == 0 && t + s < nt)
			part[t] ^= part[t + s];
		__syncthreads();
	}
	if (t == 0) {
		const uint32_t crc = ~(mul_mod(~a->param, x_pow_bytes(n)) ^ part[0]);
		uint8_t *out = (uint8_t *)a->out;

		for (int k = 0; k < 4; k++)
			out[k] = (uint8_t)(crc >> 8 * k);
		*result = crc;
	}
	return 0;
}
