/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/dot/host.c - the host code of the example op module `dot`
 * (docs/design.md 6.7): the float32 dot product of the input (n floats,
 * little-endian IEEE 754 binary32) and the table (the same n floats), into
 * bytes 0-3 of the output; the result is the float's bits.
 *
 * Floating-point addition is not associative, so the op defines its order
 * of summation, the one a block of 1024 threads follows on the device:
 *   1. 1024 lanes: lane l starts at +0.0f and, for i = l, l + 1024,
 *      l + 2048, ... < n in that order, becomes fmaf(x[i], y[i], lane l)
 *      (one rounding a step, IEEE round to nearest even, subnormals kept);
 *   2. a pairwise tree: for s = 512, 256, ..., 1, lane l < s becomes
 *      lane l + lane (l + s) (one float addition, rounded to nearest);
 *   3. lane 0 is the dot product; a NaN is written as 0x7fc00000.
 * The host computes exactly these operations, so host and device agree bit
 * for bit. Pure. The output may be the input or the table.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "vyre/abi.h"
#include "vyre/op_module.h"

int vyre_op_dot_host(const struct vyre_op_host_args *a, uint64_t *result);

#define LANES 1024u

static float le_float(const uint8_t *p)
{
	const uint32_t u =
	    (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

int vyre_op_dot_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	const uint8_t *x = a->in, *y = a->table;
	const uint64_t n = a->in_bytes / 4;
	float lane[LANES];
	uint32_t bits;

	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 4 || a->in_bytes % 4 ||
	    a->table_bytes != a->in_bytes || (n && (!x || !y)))
		return VYRE_E_INVAL;
	for (uint32_t l = 0; l < LANES; l++) {
		float acc = 0.0f;

		for (uint64_t i = l; i < n; i += LANES)
			acc = fmaf(le_float(x + 4 * i), le_float(y + 4 * i), acc);
		lane[l] = acc;
	}
	for (uint32_t s = LANES / 2; s >= 1; s /= 2)
		for (uint32_t l = 0; l < s; l++)
			lane[l] = lane[l] + lane[l + s];
	if (isnan(lane[0]))
		bits = 0x7fc00000u;
	else
		memcpy(&bits, &lane[0], 4);
	const uint8_t le[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16),
			       (uint8_t)(bits >> 24)};

	memcpy(a->out, le, 4);
	*result = bits;
	return 0;
}
