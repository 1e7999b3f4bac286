/* SPDX-License-Identifier: MIT */
/* The tests' module ops on the host (test_module_ops.h). */
#include "test_module_ops.h"

#include "vyre/abi.h"

uint32_t test_load_le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void test_store_le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int test_madd_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	const uint64_t n = (a->in_bytes < a->out_bytes ? a->in_bytes : a->out_bytes) / 4;

	for (uint64_t i = 0; i < n; i++)
		test_store_le((uint8_t *)a->out + 4 * i,
			      test_load_le((const uint8_t *)a->in + 4 * i) * 3u + a->param);
	*result = n;
	return 0;
}

int test_acc_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	const uint64_t n = (a->in_bytes < a->out_bytes ? a->in_bytes : a->out_bytes) / 4;
	uint32_t sum = 0;

	for (uint64_t i = 0; i < n; i++) {
		const uint32_t v = test_load_le((uint8_t *)a->out + 4 * i) +
				   (test_load_le((const uint8_t *)a->in + 4 * i) ^ a->param);

		test_store_le((uint8_t *)a->out + 4 * i, v);
		sum += v;
	}
	*result = sum;
	return 0;
}

int test_tscan_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	uint32_t h = 2166136261u ^ (uint32_t)a->table_bytes;

	if (a->out_bytes < 4 || a->param != 0 || !a->table)
		return VYRE_E_INVAL;
	if (a->table_bytes > 0)
		h ^= *(const uint8_t *)a->table;
	for (uint64_t i = 0; i < a->in_bytes; i++)
		h = (h ^ ((const uint8_t *)a->in)[i]) * 16777619u;
	/* a table of an odd number of words is refused, so failures happen too */
	if ((a->table_bytes / 4) % 2)
		return VYRE_E_INVAL;
	test_store_le(a->out, h);
	*result = h;
	return 0;
}

int test_cfnv_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	uint32_t h = 2166136261u ^ a->param;

	if (a->out_bytes < 4)
		return VYRE_E_INVAL;
	for (uint64_t i = 0; i < a->in_bytes; i++)
		h = (h ^ ((const uint8_t *)a->in)[i]) * 16777619u;
	test_store_le(a->out, h);
	*result = h | a->in_bytes << 32;
	return 0;
}
