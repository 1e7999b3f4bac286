/* SPDX-License-Identifier: MIT */
/*
 * IMMEDIATE launches without a GPU (gpu/cuda_immediate.h, cuda_abi.h): which
 * batches of k items qualify, at the size limits; and thousands of random
 * batches (one item of the general generator, or 1..k small items of one
 * group) carried through the doorbell words, a host model of the
 * megakernel's run_immediate, and the completion words delivered in random
 * order, compared with the sequential oracle. The completion must not be
 * taken while any word it needs is still stale.
 *
 * Module batches (VYRE_MK_LAUNCH_CPL): which qualify (1..4 module items of
 * one group without chains, in host or device memory) and which keep the
 * slab path; their doorbell words; and random batches of module items run
 * from the doorbell's units by a host model of the poller block
 * (mk_pool.cuh: cpl_launch_to_shared, module_unit, pool_self_cpl), their
 * completion words decoded in random order, against the oracle.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_immediate.h"
#include "ops.h"
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

/* Lower @n items over @h as @groups groups (the items split evenly) of one launch. */
static void lower_in(struct one *o, const struct vyre_exec_item *items, uint32_t n, uint32_t groups,
		     const struct vyre_cuda_heap *h, uint32_t n_heaps)
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
	assert_int_equal(vyre_cuda_lower_measure(&o->b, h, n_heaps, 132, o->cls, o->st, &o->lay),
			 0);
	assert_true(o->lay.bytes <= sizeof(o->slab));
	vyre_cuda_lower_fill(&o->b, h, o->cls, o->st, &o->lay, o->slab, 132, o->order_slot,
			     o->launches);
}

/* lower_in over heaps[]; 1 when the batch runs IMMEDIATE. */
static int qualifies_in(struct one *o, const struct vyre_exec_item *items, uint32_t n,
			uint32_t groups, struct vyre_cuda_immediate *imm)
{
	lower_in(o, items, n, groups, heaps, 1);
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

/*
 * Completion slot words @out of launch @seq arrive one at a time in random
 * order over stale ones: the completion is not taken until the last, then
 * it is (vyre_cuda_immediate_complete with @base, outcomes into @r).
 */
static void deliver(struct gen_rng *rng, const struct vyre_cuda_immediate *imm, uint32_t seq,
		    const uint32_t *out, uint8_t *const *base, struct vyre_exec_result *r)
{
	uint64_t cpl[VYRE_MK_SLOT_WORDS];
	uint32_t pending[VYRE_MK_SLOT_WORDS];

	for (uint32_t w = 0; w < VYRE_MK_SLOT_WORDS; w++) {
		cpl[w] = (uint64_t)(seq - VYRE_MK_RING_SLOTS) << 32 | 0xdeadu;
		pending[w] = w;
	}
	for (uint32_t left = imm->cpl_words; left > 0; left--) {
		assert_int_equal(vyre_cuda_immediate_complete(imm, seq, cpl, base, r), 0);
		const uint32_t j = gen_below(rng, left), w = pending[j];

		pending[j] = pending[left - 1];
		cpl[w] = (uint64_t)seq << 32 | out[w];
	}
	assert_int_equal(vyre_cuda_immediate_complete(imm, seq, cpl, base, r), 1);
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
	uint8_t *slab = aligned_alloc(64, 1u << 16);
	struct gen_rng rng = {0x1e1e};
	uint32_t immediates = 0, by_k[VYRE_MK_IMM_MAX_ITEMS + 1] = {0};
	const uint32_t batches = 4000 * gen_scale();
	uint8_t *base[VYRE_MK_IMM_MAX_ITEMS];
	char msg[512];

	(void)state;
	assert_true(heap && want && g && expect && cls && order_slot && st && launches && slab);
	for (uint32_t j = 0; j < VYRE_MK_IMM_MAX_ITEMS; j++)
		base[j] = heap; /* every item names heap 0: an IMMEDIATE item is registered */
	for (uint32_t n = 0; n < batches; n++) {
		const uint32_t seq = (uint32_t)gen_next(&rng);
		struct vyre_cuda_layout lay;
		struct vyre_cuda_immediate imm;
		struct vyre_exec_result r[VYRE_MK_IMM_MAX_ITEMS];
		uint32_t data[VYRE_MK_SLOT_WORDS], out[VYRE_MK_SLOT_WORDS];

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

		deliver(&rng, &imm, seq, out, base, r);
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
	free(launches);
	free(st);
	free(order_slot);
	free(cls);
	free(expect);
	free(g);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

/* The module ops of these tests (bit 31: no enum). */
#define OP_M_MADD  (VYRE_OP_MODULE_BIT | 0x7001u)
#define OP_M_HASH  (VYRE_OP_MODULE_BIT | 0x7002u)
#define OP_M_TSUM  (VYRE_OP_MODULE_BIT | 0x7003u)
#define OP_M_NODEV (VYRE_OP_MODULE_BIT | 0x7004u)

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* out[i] = in[i] * 3 + param over the shorter; result the words; VYRE_E_INVAL for param 13 */
static int madd_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	const uint64_t n = (a->in_bytes < a->out_bytes ? a->in_bytes : a->out_bytes) / 4;

	if (a->param == 13)
		return VYRE_E_INVAL;
	for (uint64_t i = 0; i < n; i++) {
		const uint32_t v = ld32((const uint8_t *)a->in + 4 * i) * 3u + a->param;

		memcpy((uint8_t *)a->out + 4 * i, &v, 4);
	}
	*result = n;
	return 0;
}

/* out[0] = FNV-1a of the input seeded by param; result: that in the high half, bytes low */
static int hash_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	uint32_t h = 2166136261u ^ a->param;

	for (uint64_t i = 0; i < a->in_bytes; i++)
		h = (h ^ ((const uint8_t *)a->in)[i]) * 16777619u;
	memcpy(a->out, &h, 4);
	*result = (uint64_t)h << 32 | a->in_bytes;
	return 0;
}

/* a table param: out[0] = the table's words summed plus the input's first word */
static int tsum_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	uint32_t t = a->in_bytes >= 4 ? ld32(a->in) : 0;

	for (uint64_t i = 0; i + 4 <= a->table_bytes; i += 4)
		t += ld32((const uint8_t *)a->table + i);
	memcpy(a->out, &t, 4);
	*result = t;
	return 0;
}

static void register_module_ops(void)
{
	const uint8_t io = VYRE_OPERAND_IN | VYRE_OPERAND_OUT;
	const struct vyre_op_module_entry e[] = {
	    {.number = OP_M_MADD,
	     .mask = io,
	     .pure = 1,
	     .host = madd_host,
	     .name = "madd",
	     .module = "t",
	     .device_fn = "t_madd"},
	    {.number = OP_M_HASH,
	     .mask = io | VYRE_OPERAND_WORD0,
	     .pure = 1,
	     .host = hash_host,
	     .name = "hash",
	     .module = "t",
	     .device_fn = "t_hash"},
	    {.number = OP_M_TSUM,
	     .mask = io | VYRE_OPERAND_WORD0 | VYRE_OPERAND_TABLE,
	     .pure = 1,
	     .host = tsum_host,
	     .name = "tsum",
	     .module = "t",
	     .device_fn = "t_tsum"},
	    /* no device code: such an item is invalid on the GPU */
	    {.number = OP_M_NODEV,
	     .mask = io,
	     .pure = 1,
	     .host = madd_host,
	     .name = "nodev",
	     .module = "t"},
	};

	assert_int_equal(vyre_op_modules_register(e, sizeof(e) / sizeof(e[0])), 0);
}

/* @n module items of @op (madd: @words words in, out), item i at 4096 * i of heap @heap. */
static void module_items(struct vyre_exec_item *items, uint32_t n, uint32_t op, uint32_t words,
			 uint32_t heap)
{
	for (uint32_t i = 0; i < n; i++)
		items[i] = (struct vyre_exec_item){
		    .op = op,
		    .param = i,
		    .in_heap = heap,
		    .out_heap = heap,
		    .table_heap = heap,
		    .in_off = 4096 * i,
		    .in_bytes = 4 * words,
		    .out_off = 4096 * i + 2048,
		    .out_bytes = op == OP_M_MADD ? 4 * words : 4,
		};
}

/* A host heap and a device buffer, for the module batches. */
static const struct vyre_cuda_heap mod_heaps[2] = {{0x100000, 1u << 20, 1, 0},
						   {0x900000, 1u << 20, 1, 1}};

/*
 * Lower @n items as @groups groups of one launch (qualifies_in's plan)
 * over mod_heaps; 1 when the batch runs as a module batch in the doorbell.
 */
static int module_qualifies(struct one *o, const struct vyre_exec_item *items, uint32_t n,
			    uint32_t groups, struct vyre_cuda_immediate *imm)
{
	lower_in(o, items, n, groups, mod_heaps, 2);
	/* never both: an IMMEDIATE batch has no block unit, a module batch only block units */
	struct vyre_cuda_immediate plain;
	const int mod = vyre_cuda_lower_module_imm(&o->b, o->cls, o->order_slot, &o->lay, imm);

	assert_false(mod && vyre_cuda_lower_immediate(&o->b, o->cls, &o->lay, &plain));
	return mod;
}

static void test_module_batches(void **state)
{
	struct one *o = malloc(sizeof(*o));
	struct vyre_cuda_immediate imm;
	struct vyre_exec_item many[ONE_MAX];
	uint32_t data[VYRE_MK_SLOT_WORDS];

	(void)state;
	assert_non_null(o);
	register_module_ops();
	/* 1..4 items of one group: each unit in the doorbell, its outcome 3 completion words */
	for (uint32_t k = 1; k <= VYRE_MK_INLINE_UNITS; k++) {
		module_items(many, k, k % 2 ? OP_M_MADD : OP_M_HASH, 256, 0);
		assert_int_equal(module_qualifies(o, many, k, 1, &imm), 1);
		assert_int_equal(imm.modules, 1);
		assert_int_equal(imm.n_items, k);
		assert_int_equal(imm.cpl_words, VYRE_MK_CPL_MODULE_WORDS * k);
		for (uint32_t j = 0; j < k; j++) {
			assert_int_equal(imm.item[j].order_pos, j);
			assert_int_equal(imm.item[j].op, many[j].op);
			assert_int_equal(imm.item[j].cpl_at, VYRE_MK_CPL_MODULE_WORDS * j);
		}
		const struct vyre_mk_unit *units = (const struct vyre_mk_unit *)o->slab;
		const uint32_t words =
		    vyre_cuda_module_doorbell(&imm, &o->lay, 0x7f0012340000ull, units, data);

		/* the words the poller reads for an INLINE launch (read_slot) */
		assert_int_equal(words, VYRE_MK_HEADER_WORDS + VYRE_MK_UNIT_WORDS * k);
		assert_true(words <= VYRE_MK_SLOT_WORDS);
		assert_int_equal(data[0], 0x12340000u);
		assert_int_equal(data[1], 0x7f00u);
		assert_int_equal(data[3], k);
		assert_int_equal(data[5], 1);
		assert_int_equal(data[6], 1u | (VYRE_MK_LAUNCH_INLINE | VYRE_MK_LAUNCH_CPL) << 16);
		assert_int_equal(data[7], k);
		for (uint32_t j = 0; j < k; j++) {
			struct vyre_mk_unit u;

			memcpy(&u, &data[VYRE_MK_HEADER_WORDS + VYRE_MK_UNIT_WORDS * j], sizeof(u));
			assert_int_equal(u.slot, j);
			u.slot = units[j].slot;
			assert_memory_equal(&u, &units[j], sizeof(u));
			assert_int_equal(u.op & VYRE_MK_OP_MASK, VYRE_MK_OP_MODULE);
			assert_int_equal(u.in, mod_heaps[0].dptr + 4096 * j);
		}
	}
	/* five do not fit the doorbell; two groups are two stages */
	module_items(many, VYRE_MK_INLINE_UNITS + 1, OP_M_MADD, 16, 0);
	assert_int_equal(module_qualifies(o, many, VYRE_MK_INLINE_UNITS + 1, 1, &imm), 0);
	assert_int_equal(module_qualifies(o, many, 2, 2, &imm), 0);
	/* operands in a device buffer and a table param stay where they are */
	module_items(many, 3, OP_M_HASH, 64, 1);
	many[1].op = OP_M_TSUM;
	many[1].table_off = 65536;
	many[1].table_bytes = 64;
	many[2].in_heap = 0;
	assert_int_equal(module_qualifies(o, many, 3, 1, &imm), 1);
	assert_int_equal(imm.n_items, 3);
	/* a statically invalid neighbour takes no room; an op without device code is one */
	module_items(many, 3, OP_M_MADD, 16, 0);
	many[0].in_bytes = 6;
	many[2].op = OP_M_NODEV;
	assert_int_equal(module_qualifies(o, many, 3, 1, &imm), 1);
	assert_int_equal(imm.n_items, 1);
	assert_int_equal(imm.item[0].order_pos, 1);
	assert_int_equal(imm.item[0].cpl_at, 0);
	/* a built-in neighbour keeps the whole batch on the slab, as it does IMMEDIATE */
	module_items(many, 3, OP_M_MADD, 16, 0);
	many[1].op = VYRE_OP_ADD;
	assert_int_equal(module_qualifies(o, many, 3, 1, &imm), 0);
	many[1].op = VYRE_OP_BASE64_DECODE;
	assert_int_equal(module_qualifies(o, many, 3, 1, &imm), 0);
	/* built-in items alone are not a module batch (IMMEDIATE takes them) */
	small_items(many, 3, VYRE_OP_ADD, 4);
	assert_int_equal(module_qualifies(o, many, 3, 1, &imm), 0);
	/* a chained batch reads records of the slab: never in the doorbell */
	module_items(many, 2, OP_M_MADD, 16, 0);
	many[0].op = VYRE_OP_NOP;
	many[1].flags = VYRE_EXEC_AFTER_PREV;
	assert_int_equal(module_qualifies(o, many, 2, 2, &imm), 0);
	assert_int_equal(o->lay.n_stages, 1);
	assert_int_equal(o->lay.chained, 1);
	/* an item with a partial overlap is invalid, its neighbours still qualify */
	module_items(many, 2, OP_M_MADD, 16, 0);
	many[0].out_off = many[0].in_off + 4;
	assert_int_equal(module_qualifies(o, many, 2, 1, &imm), 1);
	assert_int_equal(imm.n_items, 1);
	assert_int_equal(imm.item[0].order_pos, 1);
	free(o);
}

/*
 * The poller block on a module batch's doorbell (mk_pool.cuh): each unit j
 * as module_unit runs it (host addresses here, heap dptr is the mapping),
 * its record at j whatever its slot says, VYRE_E_INVAL until it ran; then
 * completion word l of pool_self_cpl. Returns the words written.
 */
static uint32_t model_module_device(const uint32_t *data, uint32_t *cpl_data)
{
	const uint32_t n = data[7];
	const struct vyre_op_module_entry *all;
	uint32_t n_ops;

	all = vyre_op_modules_all(&n_ops);
	assert_int_equal(data[6] >> 16, VYRE_MK_LAUNCH_INLINE | VYRE_MK_LAUNCH_CPL);
	assert_true(n >= 1 && n <= VYRE_MK_INLINE_UNITS && data[3] == n && data[5] == 1);
	for (uint32_t j = 0; j < n; j++) {
		struct vyre_mk_unit u;
		struct vyre_op_host_args a = {.abi = VYRE_OP_MODULE_ABI};
		uint64_t r = 0;

		memcpy(&u, &data[VYRE_MK_HEADER_WORDS + VYRE_MK_UNIT_WORDS * j], sizeof(u));
		assert_int_equal(u.op & VYRE_MK_OP_MASK, VYRE_MK_OP_MODULE);
		assert_int_equal(
		    u.op & (VYRE_MK_AFTER_PREV | VYRE_MK_HANDOFF_OUT | VYRE_MK_HANDOFF_IN), 0);
		assert_false(u.op & VYRE_MK_MODULE_COUNTED); /* none of these ops is counted */
		const uint32_t index = u.op >> VYRE_MK_MODULE_SHIFT;

		assert_true(index < n_ops);
		a.in = (const void *)(uintptr_t)u.in;
		a.in_bytes = u.in ? u.count : 0;
		a.out = (void *)(uintptr_t)u.out;
		a.out_bytes = u.out ? u.aux : 0;
		if (u.op & VYRE_MK_MODULE_TABLE) {
			a.table = (const void *)(uintptr_t)u.table;
			a.table_bytes = u.param;
		} else {
			a.param = u.param;
		}
		const int rc = all[index].host(&a, &r);
		const uint64_t v = rc ? 0 : r;

		cpl_data[VYRE_MK_CPL_MODULE_WORDS * j] = rc ? (uint32_t)VYRE_E_INVAL : 0u;
		cpl_data[VYRE_MK_CPL_MODULE_WORDS * j + 1] = (uint32_t)v;
		cpl_data[VYRE_MK_CPL_MODULE_WORDS * j + 2] = (uint32_t)(v >> 32);
	}
	return VYRE_MK_CPL_MODULE_WORDS * n;
}

/* Item @k of a random module batch: its own 8 KiB of the heap, a random op and size. */
static struct vyre_exec_item random_module_item(struct gen_rng *r, uint32_t k)
{
	/* not OP_M_NODEV: the oracle runs its host function, the GPU cannot */
	static const uint32_t ops[] = {OP_M_MADD, OP_M_HASH, OP_M_TSUM};
	const uint32_t roll = gen_below(r, 40);
	const uint32_t op = ops[gen_below(r, 3)];
	const uint32_t words = gen_below(r, 300);
	struct vyre_exec_item it = {
	    .op = op,
	    .param = roll == 1 ? 13u : (uint32_t)gen_next(r),
	    .in_off = 8192ull * k,
	    .in_bytes = 4 * words,
	    .out_off = 8192ull * k + 4096,
	    .out_bytes = op == OP_M_MADD ? 4 * gen_below(r, 300) : 4,
	};

	if (op == OP_M_TSUM) {
		it.param = 0;
		it.table_off = 8192ull * k + 6144;
		it.table_bytes = 4 * gen_below(r, 64);
	}
	if (roll == 2) /* in place */
		it.out_off = it.in_off;
	if (roll == 3) /* a length not a multiple of 4: statically invalid */
		it.in_bytes += 2;
	return it;
}

static void test_random_module_batches(void **state)
{
	const uint32_t heap_bytes = 1u << 20, batches = 3000 * gen_scale();
	uint8_t *heap = aligned_alloc(4096, heap_bytes), *want = malloc(heap_bytes);
	const struct vyre_cuda_heap h[1] = {{(uintptr_t)heap, heap_bytes, 1, 0}};
	const struct vyre_heap_view view = {want, heap_bytes};
	struct one *o = malloc(sizeof(*o));
	struct gen_rng rng = {0x25c9};
	uint32_t ran = 0, by_k[VYRE_MK_INLINE_UNITS + 1] = {0};

	(void)state;
	assert_true(heap && want && o);
	register_module_ops();
	for (uint32_t b = 0; b < batches; b++) {
		const uint32_t n = 1 + gen_below(&rng, 6), seq = (uint32_t)gen_next(&rng);
		/* mostly one group; now and then two, or a built-in item among them */
		const uint32_t groups = n > 1 && gen_below(&rng, 8) == 0 ? 2 : 1;
		struct vyre_cuda_immediate imm;
		struct vyre_exec_item items[6];
		struct vyre_exec_result expect[6], r[VYRE_MK_IMM_MAX_ITEMS];
		uint32_t data[VYRE_MK_SLOT_WORDS], out[VYRE_MK_SLOT_WORDS];

		for (uint32_t i = 0; i < heap_bytes / 8; i++)
			((uint64_t *)heap)[i] = gen_next(&rng);
		for (uint32_t k = 0; k < n; k++)
			items[k] = random_module_item(&rng, k);
		if (gen_below(&rng, 10) == 0)
			items[gen_below(&rng, n)].op = VYRE_OP_XOR;
		/* the oracle: the items in order (one group's are independent) */
		memcpy(want, heap, heap_bytes);
		for (uint32_t k = 0; k < n; k++) {
			expect[k] = (struct vyre_exec_result){0};
			expect[k].status = vyre_exec_one(&view, &items[k], &expect[k].result);
		}
		lower_in(o, items, n, groups, h, 1);
		if (!vyre_cuda_lower_module_imm(&o->b, o->cls, o->order_slot, &o->lay, &imm))
			continue;
		/* two groups qualify when one holds only invalid items */
		assert_true(imm.n_items <= n);
		ran++;
		by_k[imm.n_items]++;
		vyre_cuda_module_doorbell(&imm, &o->lay, h[0].dptr,
					  (const struct vyre_mk_unit *)o->slab, data);
		memset(out, 0, sizeof(out));
		assert_int_equal(model_module_device(data, out), imm.cpl_words);

		deliver(&rng, &imm, seq, out, NULL, r);
		/* as the backend finishes it: records for the rest, the completion for these */
		vyre_cuda_lower_results(
		    &o->b, o->order_slot,
		    (const struct vyre_mk_result *)(o->slab + o->lay.results_off));
		for (uint32_t j = 0; j < imm.n_items; j++)
			o->results[o->order[imm.item[j].order_pos]] = r[j];
		for (uint32_t k = 0; k < n; k++)
			if (o->results[k].status != expect[k].status ||
			    o->results[k].result != expect[k].result)
				fail_msg("batch %u item %u (op %x): status %d result %llx, want %d "
					 "%llx",
					 b, k, o->items[k].op, o->results[k].status,
					 (unsigned long long)o->results[k].result, expect[k].status,
					 (unsigned long long)expect[k].result);
		assert_memory_equal(heap, want, heap_bytes);
	}
	printf("%u of %u module batches ran in the doorbell; by items:", ran, batches);
	for (uint32_t k = 1; k <= VYRE_MK_INLINE_UNITS; k++)
		printf(" %u:%u", k, by_k[k]);
	printf("\n");
	for (uint32_t k = 1; k <= VYRE_MK_INLINE_UNITS; k++)
		assert_true(by_k[k] > batches / 50);
	free(o);
	free(want);
	free(heap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_which_batches),
	    cmocka_unit_test(test_random_items),
	    cmocka_unit_test(test_module_batches),
	    cmocka_unit_test(test_random_module_batches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
