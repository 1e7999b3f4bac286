/* SPDX-License-Identifier: MIT */
/*
 * IMMEDIATE launches without a GPU (gpu/cuda_immediate.h, cuda_abi.h): which
 * batches of k items qualify, at the size limits; and thousands of random
 * batches (one item of the general generator, or 1..k small items of one
 * group) carried through the doorbell words, a host model of the
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

#define ONE_MAX 32u

struct one {
	struct vyre_exec_item items[ONE_MAX];
	struct vyre_exec_result results[ONE_MAX];
	uint32_t order[ONE_MAX], group_end[ONE_MAX], launch_end[1];
	struct vyre_exec_batch b;
	uint32_t cls[ONE_MAX];
	struct vyre_cuda_layout lay;
	struct vyre_cuda_launch launches[ONE_MAX];
	uint32_t order_slot[ONE_MAX];
	struct vyre_cuda_item_state st[ONE_MAX];
	uint8_t slab[4096] __attribute__((aligned(64)));
};

static const struct vyre_cuda_heap heaps[1] = {{0x100000, 1u << 20, 1, 0}};

/*
 * Lower @n items as @groups groups (the items split evenly) of one launch;
 * 1 when the batch runs IMMEDIATE.
 */
static int qualifies_in(struct one *o, const struct vyre_exec_item *items, uint32_t n,
			uint32_t groups, struct vyre_cuda_immediate *imm)
{
	assert_true(n <= ONE_MAX && groups >= 1 && groups <= n);
	memset(o, 0, sizeof(*o));
	memcpy(o->items, items, n * sizeof(*items));
	for (uint32_t i = 0; i < n; i++)
		o->order[i] = i;
	for (uint32_t g = 0; g < groups; g++)
		o->group_end[g] = g + 1 == groups ? n : (g + 1) * (n / groups);
	o->launch_end[0] = groups;
	o->b = (struct vyre_exec_batch){
	    .items = o->items,
	    .n_items = n,
	    .plan = {o->order, n, o->group_end, groups, o->launch_end, 1},
	    .results = o->results,
	};
	assert_int_equal(vyre_cuda_lower_measure(&o->b, heaps, 1, 132, o->cls, o->st, &o->lay), 0);
	assert_true(o->lay.bytes <= sizeof(o->slab));
	vyre_cuda_lower_fill(&o->b, heaps, o->cls, o->st, &o->lay, o->slab, 132, o->order_slot,
			     o->launches);
	return vyre_cuda_lower_immediate(&o->b, o->cls, &o->lay, imm);
}

static int qualifies(struct one *o, const struct vyre_exec_item *items, uint32_t n,
		     struct vyre_cuda_immediate *imm)
{
	return qualifies_in(o, items, n, 1, imm);
}

/* @n items of @op over @words words each, item i at 4096 * i. */
static void small_items(struct vyre_exec_item *items, uint32_t n, uint32_t op, uint32_t words)
{
	const int reduce = op == VYRE_OP_SUM || op == VYRE_OP_MAX;

	for (uint32_t i = 0; i < n; i++)
		items[i] = (struct vyre_exec_item){
		    .op = op,
		    .param = i,
		    .in_off = 4096 * i,
		    .in_bytes = op == VYRE_OP_FILL ? 0 : 4 * words,
		    .out_off = 4096 * i + 2048,
		    .out_bytes = reduce ? 4 : 4 * words,
		};
}

static void test_which_batches(void **state)
{
	struct one *o = malloc(sizeof(*o));
	struct vyre_cuda_immediate imm;
	const uint32_t in_max = VYRE_MK_IMM_IN_WORDS, out_max = VYRE_MK_IMM_OUT_WORDS;
	struct vyre_exec_item it, many[ONE_MAX];

	(void)state;
	assert_non_null(o);
	it = (struct vyre_exec_item){.op = VYRE_OP_ADD,
				     .param = 3,
				     .in_off = 0,
				     .in_bytes = 4 * in_max,
				     .out_off = 4096,
				     .out_bytes = 4 * in_max};
	assert_int_equal(qualifies(o, &it, 1, &imm), 1);
	assert_int_equal(imm.n_items, 1);
	assert_int_equal(imm.item[0].count, in_max);
	assert_int_equal(imm.item[0].in_words, in_max);
	assert_int_equal(imm.item[0].out_off, 4096);
	/* one item: descriptor at 8, input right after it, completion from 0 */
	assert_int_equal(imm.item[0].in_at, VYRE_MK_HEADER_WORDS + VYRE_MK_IMM_DESC_WORDS);
	assert_int_equal(imm.item[0].cpl_at, 0);
	assert_int_equal(imm.cpl_words, VYRE_MK_CPL_HEADER_WORDS + in_max);
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
	assert_int_equal(imm.item[0].in_words, 0);
	assert_int_equal(imm.item[0].count, out_max);
	it.out_bytes += 4;
	assert_int_equal(qualifies(o, &it, 1, &imm), 0);

	it = (struct vyre_exec_item){
	    .op = VYRE_OP_SUM, .in_bytes = 4 * in_max, .out_off = 1024, .out_bytes = 4};
	assert_int_equal(qualifies(o, &it, 1, &imm), 1);
	it.op = VYRE_OP_DFA_SCAN;
	it.table_off = 2048;
	it.table_bytes = 1032;
	assert_int_equal(qualifies(o, &it, 1, &imm), 0);

	/* two device items of one group; a statically invalid neighbour takes no room */
	struct vyre_exec_item two[2] = {
	    {.op = VYRE_OP_FILL, .out_bytes = 16},
	    {.op = VYRE_OP_FILL, .out_off = 64, .out_bytes = 16},
	};
	assert_int_equal(qualifies(o, two, 2, &imm), 1);
	assert_int_equal(imm.n_items, 2);
	assert_int_equal(imm.item[1].order_pos, 1);
	assert_int_equal(imm.item[1].cpl_at, VYRE_MK_CPL_HEADER_WORDS + 4);
	assert_int_equal(imm.cpl_words, 2 * (VYRE_MK_CPL_HEADER_WORDS + 4));
	/* ... but not in two groups: a barrier between them */
	assert_int_equal(qualifies_in(o, two, 2, 2, &imm), 0);
	two[0].in_bytes = 3;
	two[0].op = VYRE_OP_COPY;
	assert_int_equal(qualifies(o, two, 2, &imm), 1);
	assert_int_equal(imm.n_items, 1);
	assert_int_equal(imm.item[0].order_pos, 1);
	assert_int_equal(imm.item[0].in_at, VYRE_MK_HEADER_WORDS + VYRE_MK_IMM_DESC_WORDS);

	/* descriptors come first: item j's input follows all k descriptors and earlier inputs */
	small_items(many, 3, VYRE_OP_ADD, 5);
	assert_int_equal(qualifies(o, many, 3, &imm), 1);
	for (uint32_t j = 0; j < 3; j++) {
		assert_int_equal(imm.item[j].in_at,
				 VYRE_MK_HEADER_WORDS + 3 * VYRE_MK_IMM_DESC_WORDS + 5 * j);
		assert_int_equal(imm.item[j].cpl_at, (VYRE_MK_CPL_HEADER_WORDS + 5) * j);
	}
	assert_int_equal(imm.data_words, 3 * (VYRE_MK_IMM_DESC_WORDS + 5));

	/* k items: descriptors and inputs fill the doorbell's data words exactly */
	const uint32_t data = VYRE_MK_IMM_DATA_WORDS;
	for (uint32_t k = 1; k <= 4; k++) {
		const uint32_t per = (data - k * VYRE_MK_IMM_DESC_WORDS) / k;

		small_items(many, k, VYRE_OP_SUM, per);
		many[k - 1].in_bytes += 4 * ((data - k * VYRE_MK_IMM_DESC_WORDS) % k);
		assert_int_equal(qualifies(o, many, k, &imm), 1);
		assert_int_equal(imm.n_items, k);
		assert_int_equal(imm.data_words, data);
		many[k - 1].in_bytes += 4;
		assert_int_equal(qualifies(o, many, k, &imm), 0);
	}
	/* ... and outputs the completion words: FILL takes no doorbell input */
	for (uint32_t k = 1; k <= 4; k++) {
		const uint32_t per = (VYRE_MK_SLOT_WORDS - k * VYRE_MK_CPL_HEADER_WORDS) / k;

		small_items(many, k, VYRE_OP_FILL, per);
		many[k - 1].out_bytes +=
		    4 * ((VYRE_MK_SLOT_WORDS - k * VYRE_MK_CPL_HEADER_WORDS) % k);
		assert_int_equal(qualifies(o, many, k, &imm), 1);
		assert_int_equal(imm.cpl_words, VYRE_MK_SLOT_WORDS);
		many[k - 1].out_bytes += 4;
		assert_int_equal(qualifies(o, many, k, &imm), 0);
	}
	/* at most VYRE_MK_IMM_MAX_ITEMS descriptors: SUMs of nothing take no input words */
	small_items(many, VYRE_MK_IMM_MAX_ITEMS + 1, VYRE_OP_SUM, 0);
	assert_int_equal(qualifies(o, many, VYRE_MK_IMM_MAX_ITEMS, &imm), 1);
	assert_int_equal(imm.n_items, VYRE_MK_IMM_MAX_ITEMS);
	assert_int_equal(qualifies(o, many, VYRE_MK_IMM_MAX_ITEMS + 1, &imm), 0);
	/* one ineligible item (DFA, unaligned, too big) keeps the whole batch on the slab */
	small_items(many, 3, VYRE_OP_XOR, 4);
	assert_int_equal(qualifies(o, many, 3, &imm), 1);
	many[1].op = VYRE_OP_DFA_SCAN;
	many[1].table_off = 8192;
	many[1].table_bytes = 1032;
	assert_int_equal(qualifies(o, many, 3, &imm), 0);
	small_items(many, 3, VYRE_OP_XOR, 4);
	many[2].out_off += 2;
	assert_int_equal(qualifies(o, many, 3, &imm), 0);
	small_items(many, 3, VYRE_OP_XOR, 4);
	many[0].in_bytes = many[0].out_bytes = 4 * 4096;
	many[0].out_off = 65536;
	assert_int_equal(qualifies(o, many, 3, &imm), 0);
	free(o);
}

/*
 * The megakernel's run_immediate, on the doorbell data words, as the ABI
 * (cuda_abi.h) describes them; returns the completion words written.
 */
static uint32_t model_device(const uint32_t *data, uint32_t *cpl_data)
{
	const uint32_t n_items = data[7];
	uint32_t written = 0;

	assert_true(n_items >= 1 && n_items <= VYRE_MK_IMM_MAX_ITEMS);
	assert_int_equal(data[4] + VYRE_MK_HEADER_WORDS <= VYRE_MK_SLOT_WORDS, 1);
	memset(cpl_data, 0, VYRE_MK_SLOT_WORDS * sizeof(uint32_t));
	for (uint32_t j = 0; j < n_items; j++) {
		const uint32_t *desc = &data[VYRE_MK_HEADER_WORDS + VYRE_MK_IMM_DESC_WORDS * j];
		const uint32_t op = VYRE_MK_IMM_OP(desc[0]), count = VYRE_MK_IMM_COUNT(desc[0]);
		const uint32_t in_at = VYRE_MK_IMM_IN_AT(desc[0]);
		const uint32_t cpl_at = VYRE_MK_IMM_CPL_AT(desc[0]), param = desc[1];
		const int reduce = op == VYRE_OP_SUM || op == VYRE_OP_MAX;
		uint32_t *out = &cpl_data[cpl_at + VYRE_MK_CPL_HEADER_WORDS];
		const uint32_t *in = &data[in_at];
		uint32_t acc = 0;

		assert_true(cpl_at + VYRE_MK_CPL_HEADER_WORDS + (reduce ? 0 : count) <=
			    VYRE_MK_SLOT_WORDS);
		assert_true(op == VYRE_OP_FILL || in_at + count <= VYRE_MK_HEADER_WORDS + data[4]);
		for (uint32_t i = 0; i < count; i++) {
			switch (op) {
			case VYRE_OP_SUM:
				acc += in[i];
				break;
			case VYRE_OP_MAX:
				acc = in[i] > acc ? in[i] : acc;
				break;
			case VYRE_OP_FILL:
				out[i] = param;
				break;
			case VYRE_OP_ADD:
				out[i] = in[i] + param;
				break;
			case VYRE_OP_XOR:
				out[i] = in[i] ^ param;
				break;
			case VYRE_OP_MUL:
				out[i] = in[i] * param;
				break;
			default: /* COPY */
				out[i] = in[i];
				break;
			}
		}
		cpl_data[cpl_at] = 0;
		cpl_data[cpl_at + 1] = acc;
		written += VYRE_MK_CPL_HEADER_WORDS + (reduce ? 0 : count);
	}
	return written;
}

static void test_random_items(void **state)
{
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct vyre_cuda_heap h[2] = {{(uintptr_t)heap, HEAP_BYTES, 1, 0}, {0, 0, 0, 0}};
	uint32_t *cls = malloc(GEN_MAX_ITEMS * sizeof(*cls));
	uint32_t *order_slot = malloc(GEN_MAX_ITEMS * sizeof(*order_slot));
	struct vyre_cuda_item_state *st = malloc(GEN_MAX_ITEMS * sizeof(*st));
	struct vyre_cuda_launch *launches = malloc(GEN_MAX_ITEMS * sizeof(*launches));
	uint64_t *cpl = malloc(VYRE_MK_SLOT_WORDS * sizeof(uint64_t));
	uint8_t *slab = aligned_alloc(64, 1u << 16);
	struct gen_rng rng = {0x1e1e};
	uint32_t immediates = 0, by_k[VYRE_MK_IMM_MAX_ITEMS + 1] = {0};
	const uint32_t batches = 4000 * gen_scale();
	uint8_t *base[VYRE_MK_IMM_MAX_ITEMS];
	char msg[512];

	(void)state;
	assert_true(heap && want && g && expect && cls && order_slot && st && launches && cpl &&
		    slab);
	for (uint32_t j = 0; j < VYRE_MK_IMM_MAX_ITEMS; j++)
		base[j] = heap; /* every item names heap 0: an IMMEDIATE item is registered */
	for (uint32_t n = 0; n < batches; n++) {
		const uint32_t seq = (uint32_t)gen_next(&rng);
		struct vyre_cuda_layout lay;
		struct vyre_cuda_immediate imm;
		struct vyre_exec_result r[VYRE_MK_IMM_MAX_ITEMS];
		uint32_t data[VYRE_MK_SLOT_WORDS], out[VYRE_MK_SLOT_WORDS],
		    pending[VYRE_MK_SLOT_WORDS];

		/* a third one item of the general generator, else 1..k small items */
		if (n % 3 == 0)
			gen_batch(&rng, heap, HEAP_BYTES, GEN_PLAN_SERIAL, 1, g);
		else
			gen_small_batch(&rng, heap, HEAP_BYTES, 1 + n % 8, g);
		memcpy(want, heap, HEAP_BYTES);
		gen_oracle(want, HEAP_BYTES, g, expect);
		assert_int_equal(vyre_cuda_lower_measure(&g->batch, h, 2, 132, cls, st, &lay), 0);
		assert_true(lay.bytes <= (1u << 16));
		vyre_cuda_lower_fill(&g->batch, h, cls, st, &lay, slab, 132, order_slot, launches);
		if (!vyre_cuda_lower_immediate(&g->batch, cls, &lay, &imm))
			continue;
		immediates++;
		by_k[imm.n_items]++;
		const uint32_t words =
		    vyre_cuda_immediate_doorbell(&imm, (const uint8_t *const *)base, data);

		assert_true(words <= VYRE_MK_SLOT_WORDS);
		assert_int_equal(words, VYRE_MK_HEADER_WORDS + data[4]);
		assert_int_equal(data[6] >> 16, VYRE_MK_LAUNCH_IMMEDIATE);
		assert_int_equal(data[7], imm.n_items);
		assert_int_equal(model_device(data, out), imm.cpl_words);

		/* the completion words arrive one at a time, in random order */
		for (uint32_t w = 0; w < VYRE_MK_SLOT_WORDS; w++) {
			cpl[w] = (uint64_t)(seq - VYRE_MK_RING_SLOTS) << 32 | 0xdeadu;
			pending[w] = w;
		}
		for (uint32_t left = imm.cpl_words; left > 0; left--) {
			assert_int_equal(vyre_cuda_immediate_complete(&imm, seq, cpl, base, r), 0);
			const uint32_t j = gen_below(&rng, left), w = pending[j];

			pending[j] = pending[left - 1];
			cpl[w] = (uint64_t)seq << 32 | out[w];
		}
		assert_int_equal(vyre_cuda_immediate_complete(&imm, seq, cpl, base, r), 1);
		vyre_cuda_lower_results(&g->batch, order_slot,
					(const struct vyre_mk_result *)(slab + lay.results_off));
		for (uint32_t j = 0; j < imm.n_items; j++)
			g->batch.results[g->batch.plan.order[imm.item[j].order_pos]] = r[j];
		if (gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg)) != 0)
			fail_msg("batch %u (%u items, first %s): %s", n, imm.n_items,
				 gen_op_name(imm.item[0].op), msg);
	}
	printf("%u of %u batches ran IMMEDIATE; by items:", immediates, batches);
	for (uint32_t k = 1; k <= VYRE_MK_IMM_MAX_ITEMS; k++)
		if (by_k[k])
			printf(" %u:%u", k, by_k[k]);
	printf("\n");
	/* most small batches of up to 4 items fit */
	assert_true(immediates > batches / 4);
	for (uint32_t k = 1; k <= 4; k++)
		assert_true(by_k[k] > batches / 100);
	free(slab);
	free(cpl);
	free(launches);
	free(st);
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
