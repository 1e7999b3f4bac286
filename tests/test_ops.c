/* SPDX-License-Identifier: MIT */
/* The sequential semantics of every operation (docs/design.md section 6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../gpu/ops.h"

#define HEAP_BYTES 8192u
static _Alignas(64) uint8_t heap_mem[HEAP_BYTES];
static struct vyre_heap_view heap = {heap_mem, HEAP_BYTES};

static uint32_t *words(uint64_t off)
{
	return (uint32_t *)(void *)(heap_mem + off);
}

static struct vyre_exec_item item(uint32_t op, uint64_t in, uint32_t in_bytes, uint64_t out,
				  uint32_t out_bytes, uint32_t param)
{
	struct vyre_exec_item it = {.op = op, .param = param, .in_off = in, .in_bytes = in_bytes,
				    .out_off = out, .out_bytes = out_bytes};
	return it;
}

static void test_elementwise(void **state)
{
	(void)state;
	memset(heap_mem, 0, sizeof(heap_mem));
	for (uint32_t i = 0; i < 8; i++)
		words(0)[i] = 0xfffffff0u + i;
	uint64_t r = 7;
	struct vyre_exec_item it = item(VYRE_OP_ADD, 0, 32, 64, 16, 0x20);
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(r, 0);
	assert_int_equal(words(64)[0], 0x10);
	assert_int_equal(words(64)[3], 0x13);
	it = item(VYRE_OP_MUL, 0, 8, 0, 32, 3); /* in place, n = 2 */
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(words(0)[0], (uint32_t)(0xfffffff0u * 3));
	assert_int_equal(words(0)[2], 0xfffffff2u);
	it = item(VYRE_OP_XOR, 0, 32, 128, 32, 0xffffffffu);
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(words(128)[7], ~0xfffffff7u);
	it = item(VYRE_OP_FILL, 0, 0, 128, 32, 0xabcd);
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(words(128)[7], 0xabcd);
	it = item(VYRE_OP_COPY, 128, 32, 192, 8, 0);
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(words(192)[1], 0xabcd);
	assert_int_equal(words(192)[2], 0);
}

static void test_reductions(void **state)
{
	(void)state;
	memset(heap_mem, 0, sizeof(heap_mem));
	words(0)[0] = 0xffffffffu;
	words(0)[1] = 2;
	words(0)[2] = 5;
	uint64_t r;
	struct vyre_exec_item it = item(VYRE_OP_SUM, 0, 12, 64, 4, 0);
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(r, 6); /* wraps */
	assert_int_equal(words(64)[0], 6);
	it = item(VYRE_OP_MAX, 0, 12, 0, 12, 0); /* in place */
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(r, 0xffffffffu);
	it = item(VYRE_OP_MAX, 0, 0, 64, 4, 0); /* empty input */
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(r, 0);
	it = item(VYRE_OP_SUM, 0, 12, 64, 0, 0); /* short output */
	words(0)[0] = 1;
	assert_int_equal(vyre_exec_one(&heap, &it, &r), VYRE_E_INVAL);
}

/* A two-state DFA accepting after every 'a' byte: state 1 = "last byte was a". */
static uint32_t build_dfa(uint64_t off)
{
	uint32_t *t = words(off);
	t[0] = 2;
	t[1] = 0;
	t[2] = 1u << 1;
	for (uint32_t s = 0; s < 2; s++)
		for (uint32_t b = 0; b < 256; b++)
			t[3 + s * 256 + b] = b == 'a';
	return (uint32_t)vyre_dfa_table_bytes(2);
}

static void test_dfa(void **state)
{
	(void)state;
	memset(heap_mem, 0, sizeof(heap_mem));
	uint32_t tb = build_dfa(1024);
	assert_int_equal(tb, 4 * (3 + 512));
	memcpy(heap_mem, "abaacaaa", 8);
	uint64_t r;
	struct vyre_exec_item it = item(VYRE_OP_DFA_SCAN, 0, 8, 64, 4, 0);
	it.table_off = 1024;
	it.table_bytes = tb;
	assert_int_equal(vyre_exec_one(&heap, &it, &r), 0);
	assert_int_equal(r, 6);
	assert_int_equal(words(64)[0], 6);

	words(64)[0] = 99;
	words(1024)[3 + 256 + 'z'] = 2; /* transition out of range */
	assert_int_equal(vyre_exec_one(&heap, &it, &r), VYRE_E_INVAL);
	assert_int_equal(words(64)[0], 99);
	words(1024)[3 + 256 + 'z'] = 0;
	words(1024)[1] = 2; /* start out of range */
	assert_int_equal(vyre_exec_one(&heap, &it, &r), VYRE_E_INVAL);
	words(1024)[1] = 0;
	it.table_bytes = tb - 4; /* truncated */
	assert_int_equal(vyre_exec_one(&heap, &it, &r), VYRE_E_INVAL);
	words(1024)[0] = 0xffffffffu; /* table size overflow attempt */
	it.table_bytes = tb;
	assert_int_equal(vyre_exec_one(&heap, &it, &r), VYRE_E_INVAL);
	assert_int_equal(words(64)[0], 99);
}

static void test_static_checks(void **state)
{
	(void)state;
	struct vyre_work_item w = {VYRE_OP_NOP, 0, 0, 5};
	assert_int_equal(vyre_op_check_lengths(w.op_handle, &w, 0, 0), 0);
	w.input_handle = 3;
	assert_int_equal(vyre_op_check_lengths(w.op_handle, &w, 0, 0), VYRE_E_INVAL);
	w = (struct vyre_work_item){VYRE_OP_FILL, 1, 2, 0};
	assert_int_equal(vyre_op_check_lengths(w.op_handle, &w, 4, 4), VYRE_E_INVAL);
	w = (struct vyre_work_item){VYRE_OP_SUM, 1, 2, 0};
	assert_int_equal(vyre_op_check_lengths(w.op_handle, &w, 4, 0), VYRE_E_INVAL);
	assert_int_equal(vyre_op_check_lengths(w.op_handle, &w, 4, 4), 0);
	w = (struct vyre_work_item){VYRE_OP_DFA_SCAN, 1, 2, 0};
	assert_int_equal(vyre_op_check_lengths(w.op_handle, &w, 4, 4), VYRE_E_INVAL);
	assert_int_equal(vyre_op_check_lengths(42, &w, 4, 4), VYRE_E_INVAL);

	struct vyre_op_access acc;
	w = (struct vyre_work_item){VYRE_OP_DFA_SCAN, 1, 2, 9};
	vyre_op_access(&w, &acc);
	assert_int_equal(acc.n_reads, 2);
	assert_int_equal(acc.reads[1], 9);
	assert_int_equal(acc.write, 2);
	assert_true(vyre_op_idempotent(&w));
	w.param = 2;
	assert_false(vyre_op_idempotent(&w));
	w = (struct vyre_work_item){VYRE_OP_COPY, 4, 4, 0};
	assert_false(vyre_op_idempotent(&w));
	w = (struct vyre_work_item){VYRE_OP_FILL, 0, 4, 1};
	assert_true(vyre_op_idempotent(&w));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elementwise),
		cmocka_unit_test(test_reductions),
		cmocka_unit_test(test_dfa),
		cmocka_unit_test(test_static_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
