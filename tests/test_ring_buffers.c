/* SPDX-License-Identifier: MIT */
/*
 * vyred's buffer bookkeeping: domain heaps (alignment, zero fill, 0-byte
 * buffers, exhaustion, coalescing, sealing), the global handle table
 * (uniqueness, generations, domains) and resolve.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../ring/handles.h"
#include "../ring/heap.h"
#include "../ring/resolve.h"
#include "../ring/ring.h"

static void test_heap_alloc_free(void **state)
{
	struct vyre_heap h;
	uint64_t off[64];

	(void)state;
	assert_int_equal(vyre_heap_create(0, &h), VYRE_E_INVAL);
	assert_int_equal(vyre_heap_create(64 * 1024, &h), 0);
	assert_int_equal(h.bytes, 64 * 1024);
	assert_int_not_equal(ftruncate(h.fd, 4096), 0); /* sealed */

	/* Zero-byte buffers take no space. */
	assert_int_equal(vyre_heap_alloc(&h, 0, &off[0]), 0);
	assert_int_equal(off[0], 0);
	assert_int_equal(h.used, 0);

	for (uint32_t i = 0; i < 64; i++) {
		assert_int_equal(vyre_heap_alloc(&h, 4 + 4 * i, &off[i]), 0);
		assert_int_equal(off[i] % VYRE_HEAP_ALIGN, 0);
		for (uint32_t j = 0; j < 4 + 4 * i; j++)
			assert_int_equal(h.base[off[i] + j], 0);
		memset(h.base + off[i], 0xab, 4 + 4 * i);
	}
	/* 64 x 256 = 16 KiB used; 48 KiB left. */
	uint64_t big;

	assert_int_equal(vyre_heap_alloc(&h, 48 * 1024 + 4, &big), VYRE_E_NOMEM);
	assert_int_equal(vyre_heap_alloc(&h, 48 * 1024, &big), 0);
	uint64_t none;

	assert_int_equal(vyre_heap_alloc(&h, 4, &none), VYRE_E_NOMEM);

	/* Free every other one, then the rest: the free list coalesces back to one extent. */
	for (uint32_t i = 0; i < 64; i += 2)
		vyre_heap_free(&h, off[i], 4 + 4 * i);
	assert_int_equal(h.n_free, 32);
	/* A freed buffer comes back zero-filled. */
	assert_int_equal(vyre_heap_alloc(&h, 8, &off[0]), 0);
	assert_int_equal(h.base[off[0]], 0);
	vyre_heap_free(&h, off[0], 8);
	for (uint32_t i = 1; i < 64; i += 2)
		vyre_heap_free(&h, off[i], 4 + 4 * i);
	vyre_heap_free(&h, big, 48 * 1024);
	assert_int_equal(h.n_free, 1);
	assert_int_equal(h.used, 0);
	assert_int_equal(vyre_heap_alloc(&h, 64 * 1024, &big), 0);
	assert_int_equal(big, 0);
	vyre_heap_destroy(&h);
}

/* Random alloc/free against a shadow map: never two live buffers overlap. */
static void test_heap_random(void **state)
{
	struct vyre_heap h;
	struct {
		uint64_t off;
		uint32_t bytes;
		int live;
	} b[200];
	uint32_t seed = 12345;

	(void)state;
	memset(b, 0, sizeof(b));
	assert_int_equal(vyre_heap_create(256 * 1024, &h), 0);
	for (int step = 0; step < 20000; step++) {
		seed = seed * 1103515245u + 12345u;
		uint32_t k = (seed >> 8) % 200;

		if (b[k].live) {
			vyre_heap_free(&h, b[k].off, b[k].bytes);
			b[k].live = 0;
			continue;
		}
		uint32_t bytes = 4 * ((seed >> 16) % 1024);

		if (vyre_heap_alloc(&h, bytes, &b[k].off) != 0)
			continue;
		b[k].bytes = bytes;
		b[k].live = 1;
		assert_true(b[k].off + bytes <= h.bytes);
		for (uint32_t j = 0; j < 200; j++) {
			if (j == k || !b[j].live || b[j].bytes == 0 || bytes == 0)
				continue;
			assert_true(b[j].off + b[j].bytes <= b[k].off ||
				    b[k].off + bytes <= b[j].off);
		}
	}
	for (uint32_t j = 0; j < 200; j++)
		if (b[j].live)
			vyre_heap_free(&h, b[j].off, b[j].bytes);
	assert_int_equal(h.n_free, 1);
	assert_int_equal(h.used, 0);
	vyre_heap_destroy(&h);
}

static void test_handles(void **state)
{
	struct vyre_handle_table t;
	struct vyre_buffer_ref r = {.off = 256, .bytes = 16, .domain = 1}, got;
	uint32_t a, b, c;

	(void)state;
	assert_int_equal(vyre_handles_init(&t, 0), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_init(&t, 3), 0);
	assert_int_equal(vyre_handles_add(&t, &r, &a), 0);
	r.domain = 2;
	assert_int_equal(vyre_handles_add(&t, &r, &b), 0);
	assert_int_not_equal(a, 0);
	assert_int_not_equal(a, b);
	assert_int_equal(vyre_handles_get(&t, a, 1, &got), 0);
	assert_int_equal(got.off, 256);
	assert_int_equal(got.bytes, 16);
	/* Another domain's handle does not resolve, nor does 0 or garbage. */
	assert_int_equal(vyre_handles_get(&t, a, 2, &got), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_get(&t, 0, 1, &got), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_get(&t, 0xffffffffu, 1, &got), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_get(&t, a + (1u << VYRE_HANDLE_SLOT_BITS), 1, &got),
			 VYRE_E_INVAL);
	assert_int_equal(vyre_handles_remove(&t, a, 2, &got), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_remove(&t, a, 1, &got), 0);
	/* Freed: stale forever, even when its slot is reused. */
	assert_int_equal(vyre_handles_get(&t, a, 1, &got), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_remove(&t, a, 1, &got), VYRE_E_INVAL);
	r.domain = 1;
	assert_int_equal(vyre_handles_add(&t, &r, &c), 0);
	assert_int_not_equal(c, a);
	assert_int_equal(vyre_handles_get(&t, a, 1, &got), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_get(&t, c, 1, &got), 0);
	/* The limit holds. */
	assert_int_equal(vyre_handles_add(&t, &r, &a), 0);
	assert_int_equal(vyre_handles_add(&t, &r, &a), VYRE_E_NOMEM);
	assert_int_equal(vyre_handles_drop_domain(&t, 1, NULL, NULL), 2);
	assert_int_equal(vyre_handles_get(&t, c, 1, &got), VYRE_E_INVAL);
	assert_int_equal(vyre_handles_get(&t, b, 2, &got), 0);
	vyre_handles_fini(&t);
}

/* Many add/remove cycles: every live handle is distinct, the table grows. */
static void test_handles_churn(void **state)
{
	struct vyre_handle_table t;
	struct vyre_buffer_ref r = {.domain = 5}, got;
	static uint32_t live[5000];

	(void)state;
	assert_int_equal(vyre_handles_init(&t, 5000), 0);
	for (uint32_t i = 0; i < 5000; i++) {
		r.off = i;
		assert_int_equal(vyre_handles_add(&t, &r, &live[i]), 0);
	}
	for (int round = 0; round < 20; round++) {
		for (uint32_t i = (uint32_t)round % 3; i < 5000; i += 3) {
			uint32_t old = live[i];

			assert_int_equal(vyre_handles_remove(&t, old, 5, &got), 0);
			assert_int_equal(got.off, i);
			r.off = i;
			assert_int_equal(vyre_handles_add(&t, &r, &live[i]), 0);
			assert_int_not_equal(live[i], old);
			assert_int_equal(vyre_handles_get(&t, old, 5, &got), VYRE_E_INVAL);
		}
	}
	for (uint32_t i = 0; i < 5000; i++) {
		assert_int_equal(vyre_handles_get(&t, live[i], 5, &got), 0);
		assert_int_equal(got.off, i);
	}
	vyre_handles_fini(&t);
}

static void test_resolve(void **state)
{
	struct vyre_handle_table t;
	struct vyre_exec_item x;
	uint32_t in, out, tiny, table, other, devh;
	struct vyre_buffer_ref r;

	(void)state;
	assert_int_equal(vyre_handles_init(&t, 100), 0);
	r = (struct vyre_buffer_ref){.off = 0, .bytes = 64, .domain = 1};
	assert_int_equal(vyre_handles_add(&t, &r, &in), 0);
	r = (struct vyre_buffer_ref){.off = 256, .bytes = 32, .domain = 1};
	assert_int_equal(vyre_handles_add(&t, &r, &out), 0);
	r = (struct vyre_buffer_ref){.off = 512, .bytes = 0, .domain = 1};
	assert_int_equal(vyre_handles_add(&t, &r, &tiny), 0);
	r = (struct vyre_buffer_ref){.off = 768, .bytes = 8, .domain = 1};
	assert_int_equal(vyre_handles_add(&t, &r, &table), 0);
	r = (struct vyre_buffer_ref){.off = 0, .bytes = 64, .domain = 2};
	assert_int_equal(vyre_handles_add(&t, &r, &other), 0);
	const struct vyre_buffer_ref dev = {
	    .bytes = 128, .domain = 1, .heap = 9, .flags = VYRE_BUF_DEVICE};

	struct vyre_work_item it = {VYRE_OP_ADD, in, out, 7};

	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), 0);
	assert_int_equal(x.op, VYRE_OP_ADD);
	assert_int_equal(x.in_heap, 4);
	assert_int_equal(x.out_heap, 4);
	assert_int_equal(x.table_heap, 0); /* ADD has no table */
	assert_int_equal(x.flags, 0);
	assert_int_equal(x.param, 7);
	assert_int_equal(x.in_off, 0);
	assert_int_equal(x.in_bytes, 64);
	assert_int_equal(x.out_off, 256);
	assert_int_equal(x.out_bytes, 32);

	it = (struct vyre_work_item){VYRE_OP_DFA_SCAN, in, out, table};
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), 0);
	assert_int_equal(x.table_off, 768);
	assert_int_equal(x.table_bytes, 8); /* malformed, but that is checked at execution */
	assert_int_equal(x.param, 0);

	/* a device buffer is a heap of its own, whichever operand names it */
	assert_int_equal(vyre_handles_add(&t, &dev, &devh), 0);
	it = (struct vyre_work_item){VYRE_OP_DFA_SCAN, devh, out, devh};
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), 0);
	assert_int_equal(x.in_heap, 9);
	assert_int_equal(x.in_off, 0);
	assert_int_equal(x.in_bytes, 128);
	assert_int_equal(x.out_heap, 4);
	assert_int_equal(x.table_heap, 9);
	it = (struct vyre_work_item){VYRE_OP_COPY, in, devh, 0};
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), 0);
	assert_int_equal(x.in_heap, 4);
	assert_int_equal(x.out_heap, 9);

	it = (struct vyre_work_item){VYRE_OP_COUNT, 0, 0, 0}; /* unknown op */
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), VYRE_E_INVAL);
	it = (struct vyre_work_item){VYRE_OP_COPY, in, 12345, 0}; /* unknown handle */
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), VYRE_E_INVAL);
	it = (struct vyre_work_item){VYRE_OP_COPY, other, out, 0}; /* another domain's */
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), VYRE_E_INVAL);
	it = (struct vyre_work_item){VYRE_OP_SUM, in, tiny, 0}; /* short output */
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), VYRE_E_INVAL);
	it = (struct vyre_work_item){VYRE_OP_DFA_SCAN, in, out, other}; /* foreign table */
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), VYRE_E_INVAL);
	it = (struct vyre_work_item){VYRE_OP_NOP, in, 0, 0}; /* NOP takes no handles */
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), VYRE_E_INVAL);
	it = (struct vyre_work_item){VYRE_OP_FILL, in, out, 1}; /* FILL reads nothing */
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), VYRE_E_INVAL);
	it = (struct vyre_work_item){VYRE_OP_NOP, 0, 0, 99};
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), 0);

	assert_int_equal(vyre_handles_remove(&t, in, 1, &r), 0);
	it = (struct vyre_work_item){VYRE_OP_COPY, in, out, 0}; /* freed */
	assert_int_equal(vyre_resolve(&t, 1, 4, &it, &x), VYRE_E_INVAL);
	vyre_handles_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_heap_alloc_free), cmocka_unit_test(test_heap_random),
	    cmocka_unit_test(test_handles),	    cmocka_unit_test(test_handles_churn),
	    cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
