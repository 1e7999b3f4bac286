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
 * crc32c_counted is the same CRC over a counted input, as a stream op: it
 * is called a tile at a time (all of the input at once when it runs alone,
 * a decoded tile at a time when it ends an on-chip handoff run after
 * BASE64_DECODE, HEX_DECODE or BYTEMAP), and carries the CRC register in
 * state word 0: over a tile of m bytes the register becomes register *
 * x^(8m) XOR the tile's register from 0.
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

/*
 * The block's CRC register of p[0..n) started from 0: each thread's piece
 * from 0, shifted over the bytes after it, XORed together. Every thread
 * returns it. Scratch as the file's comment says; the caller checked it.
 */
static __device__ uint32_t block_register(const uint8_t *p, uint64_t n, uint32_t *scratch,
					  uint32_t t, uint32_t nt)
{
	uint32_t *table = scratch, *part = scratch + 256;

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
	const uint32_t r = part[0];
	/* the next call's table writes must wait until every thread read part[0] */
	__syncthreads();
	return r;
}

static __device__ bool operands_ok(const struct vyre_op_dev_args *a)
{
	return a->abi == VYRE_OP_MODULE_ABI && a->out_bytes >= 4 && (a->in || !a->in_bytes) &&
	       a->threads != 0 && a->threads <= 1024 &&
	       a->scratch_bytes >= 4u * (256u + a->threads) && !((uintptr_t)a->scratch & 3u);
}

static __device__ void store_crc(const struct vyre_op_dev_args *a, uint32_t crc,
				 unsigned long long *result)
{
	uint8_t *out = (uint8_t *)a->out;

	for (int k = 0; k < 4; k++)
		out[k] = (uint8_t)(crc >> 8 * k);
	*result = crc;
}

/*
 * The CRC register after a->in, from ~param (@stream: from state word 0
 * after tile 0), into *reg of thread 0; the same return value everywhere.
 */
static __device__ int block_crc(const struct vyre_op_dev_args *a, bool stream, uint32_t *reg)
{
	if (!operands_ok(a))
		return VYRE_E_INVAL;
	const uint64_t n = a->in_bytes;
	const uint32_t part = block_register((const uint8_t *)a->in, n, (uint32_t *)a->scratch,
					     a->thread, a->threads);

	if (a->thread == 0) {
		const uint32_t before = stream && a->tile != 0 ? a->state[0] : ~a->param;

		*reg = mul_mod(before, x_pow_bytes(n)) ^ part;
	}
	return 0;
}

extern "C" __device__ int vyre_op_crc32c_device(const struct vyre_op_dev_args *a,
						unsigned long long *result)
{
	uint32_t reg = 0;
	const int rc = block_crc(a, false, &reg);

	if (rc == 0 && a->thread == 0)
		store_crc(a, ~reg, result);
	return rc;
}

extern "C" __device__ int vyre_op_crc32c_counted_device(const struct vyre_op_dev_args *a,
							unsigned long long *result)
{
	uint32_t reg = 0;
	const int rc = block_crc(a, true, &reg);

	if (rc == 0 && a->thread == 0) {
		a->state[0] = reg;
		if (a->last_tile)
			store_crc(a, ~reg, result);
	}
	return rc;
}
