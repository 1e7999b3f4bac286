/* SPDX-License-Identifier: MIT */
/*
 * tests/test_module_ops.h - the module ops of the tests (docs/design.md
 * 6.7): host functions here (tests/test_module_ops.c), the same ops as
 * device functions in tests/test_module_ops.cu, so that the CPU tests
 * (test_op_modules) and the GPU test (test_cuda_modules) run one set.
 */
#ifndef VYRE_TEST_MODULE_OPS_H
#define VYRE_TEST_MODULE_OPS_H

#include <stdint.h>

#include "vyre/op_module.h"

int vyre_op_crc32c_host(const struct vyre_op_host_args *a, uint64_t *result);

/* module op numbers of the test (bit 31 set: no enum, which holds ints) */
#define OP_CRC	 (VYRE_OP_MODULE_BIT | 0x1001u)
#define OP_MADD	 (OP_CRC + 1u)
#define OP_ACC	 (OP_CRC + 2u)
#define OP_TSCAN (OP_CRC + 3u)
#define OP_CSCAN (OP_CRC + 4u)
#define OP_CFNV	 (OP_CRC + 6u)

uint32_t test_load_le(const uint8_t *p);
void test_store_le(uint8_t *p, uint32_t v);

/* out[i] = in[i] * 3 + param over the shorter, a word at a time: pure, works in place. */
int test_madd_host(const struct vyre_op_host_args *a, uint64_t *result);
/* out[i] += in[i] ^ param, result the sum of the new words: reads its output, not pure. */
int test_acc_host(const struct vyre_op_host_args *a, uint64_t *result);
/*
 * out[0] = FNV-1a-32 of the input bytes seeded by the table's size and first
 * byte (a table param); VYRE_E_INVAL for a table of an odd number of words.
 */
int test_tscan_host(const struct vyre_op_host_args *a, uint64_t *result);

/*
 * A stream op (`in counted`, `stream yes`): out[0] = FNV-1a-32 of the input
 * seeded by param; result = that | the input's bytes << 32.
 */
int test_cfnv_host(const struct vyre_op_host_args *a, uint64_t *result);

#endif /* VYRE_TEST_MODULE_OPS_H */
