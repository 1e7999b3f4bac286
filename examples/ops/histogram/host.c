/* SPDX-License-Identifier: MIT */
/*
 * examples/ops/histogram/host.c - the host code of the example op module
 * `histogram` (docs/design.md 6.7): how many times each byte value occurs
 * in the input, as 256 little-endian u32 counts in bytes 0-1023 of the
 * output (count of byte value b at bytes 4b..4b+3); the result is the
 * number of bytes counted. Pure. The output may be the input: the counts
 * are written after every byte was read.
 */
#include <stdint.h>
#include <string.h>

#include "vyre/abi.h"
#include "vyre/op_module.h"

int vyre_op_histogram_host(const struct vyre_op_host_args *a, uint64_t *result);

int vyre_op_histogram_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	const uint8_t *p = a->in;
	uint32_t bins[256] = {0};
	uint8_t le[1024];

	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < sizeof(le) || (!p && a->in_bytes) ||
	    a->in_bytes > UINT32_MAX)
		return VYRE_E_INVAL;
	for (uint64_t i = 0; i < a->in_bytes; i++)
		bins[p[i]]++;
	for (int b = 0; b < 256; b++)
		for (int k = 0; k < 4; k++)
			le[4 * b + k] = (uint8_t)(bins[b] >> 8 * k);
	memcpy(a->out, le, sizeof(le));
	*result = a->in_bytes;
	return 0;
}
