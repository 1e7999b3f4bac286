// SPDX-License-Identifier: MIT
/*
 * tests/opmod_crc32c.cu - a device function for the example module's host
 * object (examples/ops/crc32c/host.c), so that test_ops_dir_cuda can run
 * crc32c through vyred on a GPU: the CRC32C of the input a bit at a time
 * by thread 0, continuing from the param word, into word 0 of the output.
 * Slow on purpose: the test compares outcomes, not speed.
 */
#include "vyre/op_module.h"

extern "C" __device__ int vyre_op_crc32c_device(const struct vyre_op_dev_args *a,
					       unsigned long long *result)
{
	const unsigned char *p = (const unsigned char *)a->in;
	unsigned char *o = (unsigned char *)a->out;
	unsigned int crc = ~a->param;

	if (a->abi != VYRE_OP_MODULE_ABI || a->out_bytes < 4 || (!p && a->in_bytes))
		return -1; /* VYRE_E_INVAL, as the host function */
	if (a->thread != 0)
		return 0; /* thread 0's outcome is the item's */
	for (unsigned long long i = 0; i < a->in_bytes; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = crc & 1u ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	crc = ~crc;
	for (int b = 0; b < 4; b++)
		o[b] = (unsigned char)(crc >> (8 * b));
	*result = crc;
	return 0;
}
