/* SPDX-License-Identifier: MIT */
/*
 * IMMEDIATE launches without a GPU (gpu/cuda_immediate.h, cuda_abi.h): which
 * batches qualify, at the size limits; and thousands of random one-item
 * batches carried through the doorbell words, a host model of the
 * megakernel's run_immediate, and the completion words delivered in random
 * order, compared with the sequential oracle. The completion must not be
 * taken while any word it needs is still stale.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_immediate.h"
#include "test_cuda_gen.h"

#define HEAP_BYTES (1u << 20)

struct one {
	struct vyre_exec_item items[2];
	struct vyre_exec_result results[2];
	uint32_t order[2], group_end[2], launch_end[1];
	struct vyre_exec_batch b;
	uint32_t cls[2];
	struct vyre_cuda_layout lay;
	struct vyre_cuda_launch launches[2];
	uint32_t order_slot[2];
	uint8_t slab[4096] __attribute__((aligned(64)));
};

static const struct vyre_cuda_heap heaps[1] = {{0x100000, 1u << 20, 1}};

/* Lower @n items as one group of one launch; 1 when the batch runs IMMEDIATE. */
static int qualifies(struct one *o, const struct vyre_exec_item *items, uint32_t n,
		     struct vyre_cuda_immediate *imm)
{
	memset(o, 0, sizeof(*o));
	memcpy(o->items, items, n * sizeof(*items));
	for (uint32_t i = 0; i < n; i++)
		o->order[i] = i;
	o->group_end[0] = n;
	o->launch_end[0] = 1;
	o->b = (struct vyre_exec_batch){
	    .items = o->items,
	    .n_items = n,
	    .plan = {o->order, n, o->group_end, 1, o->launch_end, 1},
	    .results = o->results,
	};
	assert_int_equal(vyre_cuda_lower_measure(&o->b, heaps, 1, o->cls, &o->lay), 0);
	assert_true(o->lay.bytes <= sizeof(o->slab));
	vyre_cuda_lower_fill(&o->b, heaps, o->cls, &o->lay, o->slab, 132, o->order_slot,
			     o->launches);
	return vyre_cuda_lower_immediate(&o->b, o->cls, &o->lay, imm);
}

static void test_which_batches(void **state)
{
	struct one *o = malloc(sizeof(*o));
	struct vyre_cuda_immediate imm;
	const uint32_t in_max = VYRE_MK_IMM_IN_WORDS, out_max = VYRE_MK_IMM_OUT_WORDS;
	struct vyre_exec_item it;

	(void)state;
	assert_non_null(o);
	it = (struct vyre_exec_item){.op = VYRE_OP_ADD,
				     .param = 3,
				     .in_off = 0,
				     .in_bytes = 4 * in_max,
				     .out_off = 4096,
				     .out_bytes = 4 * in_max};
	assert_int_equal(qualifies(o, &it, 1, &imm), 1);
	assert_int_equal(imm.count, in_max);
	assert_int_equal(imm.in_words, in_max);
	assert_int_equal(imm.out_off, 4096);
	it.in_bytes = it.out_bytes = 4 * (in_max + 1);
	assert_int_equal(qualifies(o, &it, 1, &imm), 0);

	/* in place is fine; a partial overlap runs sequentially, never IMMEDIATE */
	it = (struct vyre_exec_item){.op = VYRE_OP_XOR, .in_bytes = 64, .out_bytes = 64};
	assert_int_equal(qualifies(o, &it, 1, &imm), 1);
	it.out_off = 4;
	assert_int_equal(qualifies(o, &it, 1, &imm), 0);
	it.out_off = 2; /* unaligned */
	it.in_off = 256;
	assert_int_equal(qualifies(o, &it, 1, &imm), 0);

	it = (struct vyre_exec_item){.op = VYRE_OP_FILL, .out_bytes = 4 * out_max};
	assert_int_equal(qualifies(o, &it, 1, &imm), 1);
	assert_int_equal(imm.in_words, 0);
	assert_int_equal(imm.count, out_max);
	it.out_bytes += 4;
	assert_int_equal(qualifies(o, &it, 1, &imm), 0);

	it = (struct vyre_exec_item){
	    .op = VYRE_OP_SUM, .in_bytes = 4 * in_max, .out_off = 1024, .out_bytes = 4};
	assert_int_equal(qualifies(o, &it, 1, &imm), 1);
	it.op = VYRE_OP_DFA_SCAN;
	it.table_off = 2048;
	it.table_bytes = 1032;
	assert_int_equal(qualifies(o, &it, 1, &imm), 0);

	/* two device items are two units; a statically invalid neighbour is not */
	struct vyre_exec_item two[2] = {
	    {.op = VYRE_OP_FILL, .out_bytes = 16},
	    {.op = VYRE_OP_FILL, .out_off = 64, .out_bytes = 16},
	};
	assert_int_equal(qualifies(o, two, 2, &imm), 0);
	two[0].in_bytes = 3;
	two[0].op = VYRE_OP_COPY;
	assert_int_equal(qualifies(o, two, 2, &imm), 1);
	assert_int_equal(imm.order_pos, 1);
	free(o);
}

/* The megakernel's run_immediate, on the doorbell data words. */
static void model_device(const uint32_t *data, uint32_t *cpl_data)
{
	const uint32_t op = data[8], param = data[9], count = data[10];
	const uint32_t *in = &data[VYRE_MK_HEADER_WORDS + VYRE_MK_IMM_DESC_WORDS];
	uint32_t acc = 0;

	memset(cpl_data, 0, VYRE_MK_SLOT_WORDS * sizeof(uint32_t));
	for (uint32_t i = 0; i < count; i++) {
		switch (op) {
		case VYRE_OP_SUM:
			acc += in[i];
			break;
		case VYRE_OP_MAX:
			acc = in[i] > acc ? in[i] : acc;
			break;
		case VYRE_OP_FILL:
			cpl_data[VYRE_MK_CPL_HEADER_WORDS + i] = param;
			break;
		case VYRE_OP_ADD:
			cpl_data[VYRE_MK_CPL_HEADER_WORDS + i] = in[i] + param;
			break;
		case VYRE_OP_XOR:
			cpl_data[VYRE_MK_CPL_HEADER_WORDS + i] = in[i] ^ param;
			break;
		case VYRE_OP_MUL:
			cpl_data[VYRE_MK_CPL_HEADER_WORDS + i] = in[i] * param;
			break;
		default: /* COPY */
			cpl_data[VYRE_MK_CPL_HEADER_WORDS + i] = in[i];
			break;
		}
	}
	cpl_data[1] = acc;
}

static void test_random_items(void **state)
{
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct vyre_cuda_heap h[2] = {{(uintptr_t)heap, HEAP_BYTES, 1}, {0, 0, 0}};
	uint32_t *cls = malloc(GEN_MAX_ITEMS * sizeof(*cls));
	uint32_t *order_slot = malloc(GEN_MAX_ITEMS * sizeof(*order_slot));
	struct vyre_cuda_launch *launches = malloc(GEN_MAX_ITEMS * sizeof(*launches));
	uint64_t *cpl = malloc(VYRE_MK_SLOT_WORDS * sizeof(uint64_t));
	uint8_t *slab = aligned_alloc(64, 1u << 16);
	struct gen_rng rng = {0x1e1e};
	uint32_t immediates = 0, batches = 1500 * gen_scale();
	char msg[512];

	(void)state;
	assert_true(heap && want && g && expect && cls && order_slot && launches && cpl && slab);
	for (uint32_t n = 0; n < batches; n++) {
		const uint32_t seq = (uint32_t)gen_next(&rng);
		struct vyre_cuda_layout lay;
		struct vyre_cuda_immediate imm;
		struct vyre_exec_result r;
		uint32_t data[VYRE_MK_SLOT_WORDS], out[VYRE_MK_SLOT_WORDS],
		    pending[VYRE_MK_SLOT_WORDS];

		gen_batch(&rng, heap, HEAP_BYTES, GEN_PLAN_SERIAL, 1, g);
		memcpy(want, heap, HEAP_BYTES);
		gen_oracle(want, HEAP_BYTES, g, expect);
		assert_int_equal(vyre_cuda_lower_measure(&g->batch, h, 2, cls, &lay), 0);
		assert_true(lay.bytes <= (1u << 16));
		vyre_cuda_lower_fill(&g->batch, h, cls, &lay, slab, 132, order_slot, launches);
		if (!vyre_cuda_lower_immediate(&g->batch, cls, &lay, &imm))
			continue;
		immediates++;
		const uint32_t words = vyre_cuda_immediate_doorbell(&imm, heap, data);

		assert_true(words <= VYRE_MK_SLOT_WORDS);
		assert_int_equal(data[6] >> 16, VYRE_MK_LAUNCH_IMMEDIATE);
		model_device(data, out);

		/* the completion words arrive one at a time, in random order */
		const uint32_t need =
		    VYRE_MK_CPL_HEADER_WORDS +
		    (imm.op == VYRE_OP_SUM || imm.op == VYRE_OP_MAX ? 0 : imm.count);
		for (uint32_t w = 0; w < VYRE_MK_SLOT_WORDS; w++) {
			cpl[w] = (uint64_t)(seq - VYRE_MK_RING_SLOTS) << 32 | 0xdeadu;
			pending[w] = w;
		}
		for (uint32_t left = need; left > 0; left--) {
			assert_int_equal(vyre_cuda_immediate_complete(&imm, seq, cpl, heap, &r), 0);
			const uint32_t j = gen_below(&rng, left), w = pending[j];

			pending[j] = pending[left - 1];
			cpl[w] = (uint64_t)seq << 32 | out[w];
		}
		assert_int_equal(vyre_cuda_immediate_complete(&imm, seq, cpl, heap, &r), 1);
		vyre_cuda_lower_results(&g->batch, order_slot,
					(const struct vyre_mk_result *)(slab + lay.results_off));
		g->batch.results[g->batch.plan.order[imm.order_pos]] = r;
		if (gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg)) != 0)
			fail_msg("batch %u (%s): %s", n, gen_op_name(imm.op), msg);
	}
	printf("%u of %u one-item batches ran IMMEDIATE\n", immediates, batches);
	/* about a fifth of the generator's one-item batches are small enough */
	assert_true(immediates > batches / 8);
	free(slab);
	free(cpl);
	free(launches);
	free(order_slot);
	free(cls);
	free(expect);
	free(g);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_which_batches),
	    cmocka_unit_test(test_random_items),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
