/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend's lowering (gpu/cuda_lower.c) without a GPU: plans are
 * checked, layouts sized and aligned, big items chunked, odd ranges sent
 * down the sequential path, the byte ops as block units; and random batches, lowered and then run
 * by a host model of the megakernel's unit semantics (units of a stage in reverse order), match the
 * sequential oracle. VYRE_TEST_SCALE multiplies the number of random batches.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_lower.h"
#include "ops_bytes.h"
#include "vyre/dfa.h"
#include "test_cuda_dfa_model.h"
#include "test_cuda_gen.h"

#define HEAP_BYTES (1u << 20)

static uint32_t load_word(uint64_t addr)
{
	uint32_t v;

	memcpy(&v, (const void *)(uintptr_t)addr, 4);
	return v;
}

static void store_word(uint64_t addr, uint32_t v)
{
	memcpy((void *)(uintptr_t)addr, &v, 4);
}

static uint32_t apply(uint32_t op, uint32_t a, uint32_t p)
{
	switch (op) {
	case VYRE_OP_ADD:
		return a + p;
	case VYRE_OP_XOR:
		return a ^ p;
	case VYRE_OP_MUL:
		return a * p;
	default:
		return a;
	}
}

/* The sequential path's DFA_SCAN and DFA_SCAN_COUNTED (unaligned items): gpu/ops.c's loop. */
static int model_sequential_dfa(const struct vyre_mk_unit *u, uint32_t *hits)
{
	const int counted = (u->op & VYRE_MK_OP_MASK) == VYRE_OP_DFA_SCAN_COUNTED;
	const uint32_t len = counted ? load_word(u->in) : u->count;
	const uint64_t in = u->in + (counted ? 4 : 0);

	if (u->aux < 8 || (counted && len > u->count - 4))
		return VYRE_E_INVAL;
	const uint32_t n = load_word(u->table), start = load_word(u->table + 4);
	const uint64_t need = vyre_dfa_table_bytes(n);

	if (need == 0 || need > u->aux || start >= n)
		return VYRE_E_INVAL;
	const uint64_t accept = u->table + 8, next = accept + 4 * (((uint64_t)n + 31) / 32);
	for (uint64_t i = 0; i < 256 * (uint64_t)n; i++)
		if (load_word(next + 4 * i) >= n)
			return VYRE_E_INVAL;
	uint32_t s = start, h = 0;
	for (uint32_t i = 0; i < len; i++) {
		const uint8_t byte = *(const uint8_t *)(uintptr_t)(in + i);
		s = load_word(next + 4 * ((uint64_t)s * 256 + byte));
		h += (load_word(accept + 4 * (s / 32)) >> (s % 32)) & 1u;
	}
	*hits = h;
	return 0;
}

/*
 * What the megakernel assumes of a unit that is not SEQUENTIAL: word-aligned
 * addresses (it loads whole words), and elementwise in and out that are the
 * same range or disjoint (it batches loads before stores).
 */
static int is_dfa(uint32_t op)
{
	return op == VYRE_OP_DFA_SCAN || op == VYRE_OP_DFA_SCAN_COUNTED;
}

static void check_parallel_unit(const struct vyre_mk_unit *u, int block)
{
	const uint32_t op = u->op & VYRE_MK_OP_MASK;
	const uint64_t bytes = 4 * (uint64_t)u->count;

	/* the generator never sets VYRE_EXEC_TABLE_TRUSTED (cuda_lower.c, dfa_table_trust) */
	assert_int_equal(u->op & VYRE_MK_TABLE_TRUSTED, 0);
	if (u->op & (VYRE_MK_DFA_PART | VYRE_MK_DFA_JOIN))
		assert_true(block && is_dfa(op) && !(u->op & VYRE_MK_SEQUENTIAL));
	/* a part never checks a chain predecessor: its join does */
	if (u->op & VYRE_MK_DFA_PART)
		assert_int_equal(u->op & VYRE_MK_AFTER_PREV, 0);
	/* a handoff run's members: word-aligned block units, DFA_SCAN_COUNTED never split */
	if (u->op & (VYRE_MK_HANDOFF_IN | VYRE_MK_HANDOFF_OUT)) {
		assert_true(block &&
			    !(u->op & (VYRE_MK_SEQUENTIAL | VYRE_MK_DFA_PART | VYRE_MK_DFA_JOIN)));
		assert_int_equal((u->in | u->out | u->table) & 3u, 0);
		return;
	}
	if (u->op & VYRE_MK_SEQUENTIAL)
		return;
	if (op >= VYRE_OP_BASE64_DECODE && op <= VYRE_OP_BYTEMAP) {
		/* mk_decode.cuh: any alignment; in and out the same or disjoint */
		assert_true(u->in == u->out || u->in + u->count <= u->out ||
			    u->out + u->aux <= u->in);
		return;
	}
	assert_int_equal(u->out % 4, 0);
	if (op != VYRE_OP_FILL)
		assert_int_equal(u->in % 4, 0);
	if (is_dfa(op)) {
		assert_int_equal(u->table % 4, 0);
		/* a warp takes small items, a block larger ones */
		const uint32_t bytes_max = u->count - (op == VYRE_OP_DFA_SCAN_COUNTED ? 4 : 0);
		assert_true(block == (bytes_max > VYRE_MK_DFA_WARP_BYTES));
	}
	if (op >= VYRE_OP_COPY && op <= VYRE_OP_MUL)
		assert_true(u->in == u->out || u->in + bytes <= u->out || u->out + bytes <= u->in);
	if (op <= VYRE_OP_MUL)
		assert_true(u->count <= VYRE_MK_CHUNK_WORDS);
}

static int has_record(uint32_t op)
{
	return op >= VYRE_OP_SUM && op <= VYRE_OP_DFA_SCAN_COUNTED;
}

/* What one unit means, as gpu/megakernel.cu implements it (@block: a block unit). */
static void model_unit(const struct vyre_mk_unit *u, struct vyre_mk_result *results, int block)
{
	const uint32_t op = u->op & VYRE_MK_OP_MASK;
	uint32_t acc = 0;
	int status = 0;

	check_parallel_unit(u, block);
	/* a chain predecessor that failed: nothing runs, the record says CANCELED */
	if ((u->op & VYRE_MK_AFTER_PREV) && results[u->reserved].status != 0) {
		if (has_record(op))
			results[u->slot] = (struct vyre_mk_result){VYRE_E_CANCELED, 0, 0};
		return;
	}
	if (is_dfa(op) && !(u->op & VYRE_MK_SEQUENTIAL)) {
		model_dfa_unit(u, results, block);
		return;
	}
	switch (op) {
	case VYRE_OP_FILL:
		for (uint32_t i = 0; i < u->count; i++)
			store_word(u->out + 4 * (uint64_t)i, u->param);
		return;
	case VYRE_OP_COPY:
		memmove((void *)(uintptr_t)u->out, (const void *)(uintptr_t)u->in,
			4 * (uint64_t)u->count);
		return;
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		for (uint32_t i = 0; i < u->count; i++)
			store_word(u->out + 4 * (uint64_t)i,
				   apply(op, load_word(u->in + 4 * (uint64_t)i), u->param));
		return;
	case VYRE_OP_SUM:
	case VYRE_OP_MAX:
		for (uint32_t i = 0; i < u->count; i++) {
			uint32_t v = load_word(u->in + 4 * (uint64_t)i);
			acc = op == VYRE_OP_SUM ? acc + v : (v > acc ? v : acc);
		}
		break;
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_SCAN_COUNTED:
		/* the sequential path: one thread, the oracle's loop */
		status = model_sequential_dfa(u, &acc);
		break;
	case VYRE_OP_BASE64_DECODE:
	case VYRE_OP_HEX_DECODE:
	case VYRE_OP_BYTEMAP: {
		/* count, aux, param: in, out and table bytes */
		uint64_t r;

		results[u->slot].status = vyre_bytes_exec(
		    op, (const uint8_t *)(uintptr_t)u->in, u->count, (uint8_t *)(uintptr_t)u->out,
		    u->aux, (const uint8_t *)(uintptr_t)u->table, u->param, &r);
		results[u->slot].result = r;
		return;
	}
	default:
		fail_msg("unit with op %u", op);
	}
	results[u->slot].status = status;
	results[u->slot].result = status ? 0 : acc;
	if (!status)
		store_word(u->out, acc);
}

/*
 * A handoff run (units u[0] .. the first without HANDOFF_OUT) as
 * gpu/mk_fuse.cuh means it: the members one after the other, each
 * handed-off output in memory of the model's own, never in the heap. A
 * warp's run (@block 0) ends in a DFA_SCAN_COUNTED a warp item would take;
 * a block's in anything else. @left: the units left in its section.
 */
static uint32_t warp_runs; /* runs model_run_members met on warps */

static void model_run_members(const struct vyre_mk_unit *u, uint32_t left, int block,
			      struct vyre_mk_result *results)
{
	uint8_t *kept[VYRE_MK_FUSE_MAX] = {NULL};
	uint32_t m = 1;
	int failed = (u[0].op & VYRE_MK_AFTER_PREV) && results[u[0].reserved].status != 0;

	while (m < left && m < VYRE_MK_FUSE_MAX && (u[m - 1].op & VYRE_MK_HANDOFF_OUT))
		m++;
	const struct vyre_mk_unit *f = &u[m - 1];
	const int small_scan = (f->op & VYRE_MK_OP_MASK) == VYRE_OP_DFA_SCAN_COUNTED &&
			       f->count - 4 <= VYRE_MK_DFA_WARP_BYTES;

	assert_int_equal(block, !small_scan);
	warp_runs += !block;
	for (uint32_t j = 0; j < m; j++) {
		struct vyre_mk_unit x = u[j];
		const uint32_t op = x.op & VYRE_MK_OP_MASK;

		check_parallel_unit(&u[j], 1);
		assert_int_equal(!!(x.op & VYRE_MK_HANDOFF_IN), j > 0);
		assert_int_equal(!!(x.op & VYRE_MK_HANDOFF_OUT), j + 1 < m);
		if (failed) {
			results[x.slot] = (struct vyre_mk_result){VYRE_E_CANCELED, 0, 0};
			continue;
		}
		if (j > 0)
			x.in = (uintptr_t)kept[j - 1];
		if (j + 1 < m) {
			kept[j] = calloc(1, x.aux ? x.aux : 4);
			assert_non_null(kept[j]);
			x.out = (uintptr_t)kept[j];
		}
		if (op == VYRE_OP_DFA_SCAN_COUNTED) {
			uint32_t hits = 0;
			const int st = model_sequential_dfa(&x, &hits);

			results[x.slot] = (struct vyre_mk_result){st, 0, st ? 0 : hits};
			if (!st)
				store_word(x.out, hits);
		} else {
			uint64_t r;

			assert_true(op >= VYRE_OP_BASE64_DECODE && op <= VYRE_OP_BYTEMAP);
			results[x.slot].status =
			    vyre_bytes_exec(op, (const uint8_t *)(uintptr_t)x.in, x.count,
					    (uint8_t *)(uintptr_t)x.out, x.aux,
					    (const uint8_t *)(uintptr_t)x.table, x.param, &r);
			results[x.slot].reserved = 0;
			results[x.slot].result = results[x.slot].status ? 0 : r;
		}
		failed = results[x.slot].status != 0;
	}
	for (uint32_t j = 0; j < m; j++)
		free(kept[j]);
}

static void model_run(const struct vyre_cuda_layout *lay, const uint8_t *slab,
		      const struct vyre_cuda_launch *launches)
{
	const struct vyre_mk_unit *units = (const struct vyre_mk_unit *)(slab + lay->units_off);
	const struct vyre_mk_stage *stages = (const struct vyre_mk_stage *)(slab + lay->stages_off);
	struct vyre_mk_result *results = (struct vyre_mk_result *)(slab + lay->results_off);

	for (uint32_t l = 0; l < lay->n_launches; l++) {
		const struct vyre_cuda_launch *L = &launches[l];

		assert_true(L->n_stages > 0 && L->n_units > 0);
		for (uint32_t s = 0; s < L->n_stages; s++) {
			const struct vyre_mk_stage *st = &stages[L->first_stage + s];
			const uint32_t n = st->n_block_units + st->n_warp_units;

			assert_true(n > 0);
			assert_true(st->first_unit + n <= L->n_units);
			/* units of a stage are independent: run them backwards */
			for (uint32_t i = n; i > 0; i--) {
				const struct vyre_mk_unit *u =
				    &units[L->first_unit + st->first_unit + i - 1];

				/* a handoff run's later members run with its first */
				if (u->op & VYRE_MK_HANDOFF_IN)
					continue;
				/* a run's members lie in its section, blocks' or warps' */
				if (u->op & VYRE_MK_HANDOFF_OUT)
					model_run_members(u,
							  i - 1 < st->n_block_units
							      ? st->n_block_units - (i - 1)
							      : n - (i - 1),
							  i - 1 < st->n_block_units, results);
				else
					model_unit(u, results, i - 1 < st->n_block_units);
			}
		}
	}
}

struct lowered {
	struct vyre_cuda_layout lay;
	uint8_t *slab;
	uint32_t cls[GEN_MAX_ITEMS];
	uint32_t order_slot[GEN_MAX_ITEMS];
	struct vyre_cuda_item_state st[GEN_MAX_ITEMS];
	struct vyre_cuda_launch launches[GEN_MAX_ITEMS];
};

static int lower(const struct vyre_exec_batch *b, const struct vyre_cuda_heap *heaps,
		 uint32_t n_heaps, uint32_t grid, struct lowered *out)
{
	int err = vyre_cuda_lower_measure(b, heaps, n_heaps, grid, out->cls, out->st, &out->lay);

	if (err)
		return err;
	assert_int_equal(out->lay.units_off % 64, 0);
	assert_int_equal(out->lay.stages_off % 64, 0);
	assert_int_equal(out->lay.results_off % 64, 0);
	assert_int_equal(out->lay.bytes % 64, 0);
	assert_true(out->lay.stages_off >=
		    (uint64_t)out->lay.n_units * sizeof(struct vyre_mk_unit));
	assert_true(out->lay.results_off >= out->lay.stages_off + (uint64_t)out->lay.n_stages *
								      sizeof(struct vyre_mk_stage));
	assert_true(out->lay.bytes >= out->lay.results_off + (uint64_t)out->lay.n_results *
								 sizeof(struct vyre_mk_result));
	out->slab = aligned_alloc(64, out->lay.bytes ? out->lay.bytes : 64);
	assert_non_null(out->slab);
	memset(out->slab, 0xa5, out->lay.bytes);
	vyre_cuda_lower_fill(b, heaps, out->cls, out->st, &out->lay, out->slab, grid,
			     out->order_slot, out->launches);
	return 0;
}

/* The model runs what lower() made, and the lowering takes its records back into @b's results. */
static void run_lowered(const struct vyre_exec_batch *b, struct lowered *lw)
{
	model_run(&lw->lay, lw->slab, lw->launches);
	vyre_cuda_lower_results(b, lw->order_slot,
				(const struct vyre_mk_result *)(lw->slab + lw->lay.results_off));
}

/*
 * Random batches whose operands are spread over the heap and a device
 * buffer of the same size (heap 2, marked device): lowering must give each
 * operand its own heap's address, and the model's run over both equals the
 * oracle's over both.
 */
static void random_split_batches(enum gen_plan plan)
{
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	uint8_t *dev = malloc(HEAP_BYTES), *want_dev = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct lowered *lw = malloc(sizeof(*lw));
	struct gen_rng rng = {0x5177 + plan};
	char msg[512];

	assert_true(heap && want && dev && want_dev && g && expect && lw);
	const struct vyre_cuda_heap heaps[3] = {
	    {(uintptr_t)heap, HEAP_BYTES, 1, 0}, {0, 0, 0, 0}, {(uintptr_t)dev, HEAP_BYTES, 1, 1}};

	for (uint32_t n = 0; n < 500 * gen_scale(); n++) {
		gen_batch(&rng, heap, HEAP_BYTES, plan, n % 10 ? 64 : GEN_MAX_ITEMS, g);
		gen_split_heaps(&rng, g, 2);
		memcpy(dev, heap, HEAP_BYTES); /* its tables valid too, its data the same */
		for (uint32_t i = 0; i < 64; i++)
			dev[gen_below(&rng, HEAP_BYTES)] ^= (uint8_t)(1 + gen_below(&rng, 255));
		memcpy(want, heap, HEAP_BYTES);
		memcpy(want_dev, dev, HEAP_BYTES);
		const struct vyre_heap_view views[3] = {
		    {want, HEAP_BYTES}, {NULL, 0}, {want_dev, HEAP_BYTES}};

		gen_oracle_heaps(views, 3, g, expect);
		assert_int_equal(lower(&g->batch, heaps, 3, 1 + n % 200, lw), 0);
		run_lowered(&g->batch, lw);
		if (gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg)) != 0)
			fail_msg("split batch %u: %s", n, msg);
		if (memcmp(dev, want_dev, HEAP_BYTES) != 0)
			fail_msg("split batch %u: the device buffer differs from the oracle", n);
		free(lw->slab);
	}
	free(lw);
	free(expect);
	free(g);
	free(want_dev);
	free(dev);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

static void test_random_split_heaps(void **state)
{
	(void)state;
	random_split_batches(GEN_PLAN_SERIAL);
	random_split_batches(GEN_PLAN_GROUPED);
}

static void random_batches(enum gen_plan plan)
{
	const char *scale_env = getenv("VYRE_TEST_SCALE");
	const uint32_t scale = scale_env && atoi(scale_env) > 0 ? (uint32_t)atoi(scale_env) : 1;
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct lowered *lw = malloc(sizeof(*lw));
	struct vyre_cuda_heap heaps[2] = {{(uintptr_t)heap, HEAP_BYTES, 1, 0}, {0, 0, 0, 0}};
	struct gen_rng rng = {0x1234 + plan};
	uint32_t byte_ok = 0, byte_inval = 0, canceled = 0, checks = 0, runs = 0;
	warp_runs = 0;
	char msg[512];

	assert_true(heap && want && g && expect && lw);
	for (uint32_t n = 0; n < 1500 * scale; n++) {
		gen_batch(&rng, heap, HEAP_BYTES, plan, n % 10 ? 64 : GEN_MAX_ITEMS, g);
		memcpy(want, heap, HEAP_BYTES);
		gen_oracle(want, HEAP_BYTES, g, expect);
		for (uint32_t i = 0; i < g->batch.n_items; i++)
			if (g->items[i].op >= VYRE_OP_BASE64_DECODE &&
			    g->items[i].op <= VYRE_OP_BYTEMAP) {
				byte_ok += expect[i].status == 0;
				byte_inval += expect[i].status == VYRE_E_INVAL;
			}
		assert_int_equal(lower(&g->batch, heaps, 2, 1 + n % 200, lw), 0);
		const struct vyre_mk_unit *u =
		    (const struct vyre_mk_unit *)(lw->slab + lw->lay.units_off);
		for (uint32_t k = 0; k < lw->lay.n_units; k++) {
			runs += (u[k].op & (VYRE_MK_HANDOFF_OUT | VYRE_MK_HANDOFF_IN)) ==
				VYRE_MK_HANDOFF_OUT;
			checks += (u[k].op & VYRE_MK_AFTER_PREV) != 0;
		}
		run_lowered(&g->batch, lw);
		if (gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg)) != 0)
			fail_msg("batch %u (%s plan): %s", n,
				 plan == GEN_PLAN_SERIAL ? "serial" : "grouped", msg);
		for (uint32_t i = 0; i < g->batch.n_items; i++)
			canceled += expect[i].status == VYRE_E_CANCELED;
		free(lw->slab);
	}
	/* the generator gives the byte ops inputs they take and inputs they refuse */
	printf("byte ops: %u ok, %u E_INVAL; %u cancelled items, %u units that check a chain "
	       "record, %u handoff runs (%u on warps)\n",
	       byte_ok, byte_inval, canceled, checks, runs, warp_runs);
	assert_true(byte_ok > 100 && byte_inval > 100);
	assert_true(canceled > 100 && checks > 100 && runs > 100 && warp_runs > 50);
	free(lw);
	free(expect);
	free(g);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

static void test_random_serial(void **state)
{
	(void)state;
	random_batches(GEN_PLAN_SERIAL);
}

static void test_random_grouped(void **state)
{
	(void)state;
	random_batches(GEN_PLAN_GROUPED);
}

/*
 * Small batches as vyred forms them under load (one group of independent
 * elementwise items, NOPs and invalid ones, no chain, no block unit): the
 * lowering walks such a group once and writes trivial items' units inline
 * (cuda_lower.c, emit_trivial). Run by the model against the oracle.
 */
static void test_random_small(void **state)
{
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct lowered *lw = malloc(sizeof(*lw));
	struct vyre_cuda_heap heaps[2] = {{(uintptr_t)heap, HEAP_BYTES, 1, 0}, {0, 0, 0, 0}};
	struct gen_rng rng = {0x5eed};
	uint32_t one_pass = 0;
	char msg[512];

	(void)state;
	assert_true(heap && want && g && expect && lw);
	for (uint32_t n = 0; n < 2000; n++) {
		gen_small_batch(&rng, heap, HEAP_BYTES, 1 + n % GEN_SMALL_MAX_ITEMS, g);
		memcpy(want, heap, HEAP_BYTES);
		gen_oracle(want, HEAP_BYTES, g, expect);
		assert_int_equal(lower(&g->batch, heaps, 2, 1 + n % 200, lw), 0);
		one_pass += lw->lay.blocks == 0 && !lw->lay.chained;
		run_lowered(&g->batch, lw);
		if (gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg)) != 0)
			fail_msg("small batch %u: %s", n, msg);
		free(lw->slab);
	}
	assert_true(one_pass > 1000);
	free(lw);
	free(expect);
	free(g);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

/* A one-launch batch over @items, each item its own group. */
struct small_batch {
	struct vyre_exec_item items[8];
	struct vyre_exec_result results[8];
	uint32_t order[8], group_end[8], launch_end[1];
	struct vyre_exec_batch b;
};

static void small(struct small_batch *s, const struct vyre_exec_item *items, uint32_t n,
		  int one_group)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->items, items, n * sizeof(*items));
	for (uint32_t i = 0; i < n; i++) {
		s->order[i] = i;
		s->group_end[i] = i + 1;
	}
	if (one_group)
		s->group_end[0] = n;
	s->launch_end[0] = one_group ? 1 : n;
	s->b.items = s->items;
	s->b.n_items = n;
	s->b.results = s->results;
	s->b.plan =
	    (struct vyre_exec_plan){s->order, n, s->group_end, one_group ? 1 : n, s->launch_end, 1};
}

static const struct vyre_cuda_heap fake_heaps[2] = {{0x100000, 1u << 24, 1, 0}, {0, 0, 0, 0}};

/* Each operand at its own heap's address; a device buffer's item never IMMEDIATE. */
static void test_operand_heaps(void **state)
{
	const struct vyre_cuda_heap heaps[3] = {{0x100000, 1u << 20, 1, 0},
						{0x7f0000000000ull, 1u << 20, 1, 1},
						{0x900000, 1u << 20, 1, 0}};
	const struct vyre_exec_item items[5] = {
	    {.op = VYRE_OP_DFA_SCAN,
	     .in_heap = 0,
	     .out_heap = 2,
	     .table_heap = 1,
	     .in_bytes = 40,
	     .out_bytes = 4,
	     .table_bytes = 1032,
	     .in_off = 64,
	     .out_off = 128,
	     .table_off = 256},
	    /* the FILL's unused heaps name nothing registered: never looked at */
	    {.op = VYRE_OP_FILL, .in_heap = 9, .out_heap = 1, .table_heap = 9, .out_bytes = 16},
	    {.op = VYRE_OP_ADD, .in_heap = 1, .out_heap = 0, .in_bytes = 16, .out_bytes = 16},
	    /* an operand's heap not registered: invalid */
	    {.op = VYRE_OP_COPY, .in_heap = 0, .out_heap = 3, .in_bytes = 16, .out_bytes = 16},
	    /* out of its own heap's range, though inside another's */
	    {.op = VYRE_OP_COPY,
	     .in_heap = 1,
	     .out_heap = 0,
	     .in_off = (1u << 20) - 8,
	     .in_bytes = 16,
	     .out_bytes = 16},
	};
	struct vyre_cuda_immediate imm;
	struct small_batch s;
	struct lowered *lw = malloc(sizeof(*lw));

	(void)state;
	assert_non_null(lw);
	small(&s, items, 5, 1);
	assert_int_equal(lower(&s.b, heaps, 3, 132, lw), 0);
	const struct vyre_mk_unit *u = (const struct vyre_mk_unit *)(lw->slab + lw->lay.units_off);

	assert_int_equal(lw->lay.n_units, 3);
	assert_int_equal(u[0].op, VYRE_OP_DFA_SCAN | VYRE_MK_DFA_HOST_IN);
	assert_true(u[0].in == 0x100000 + 64);
	assert_true(u[0].out == 0x900000 + 128);
	assert_true(u[0].table == 0x7f0000000000ull + 256);
	assert_true(u[1].out == 0x7f0000000000ull && u[1].in == 0 && u[1].table == 0);
	assert_true(u[2].in == 0x7f0000000000ull && u[2].out == 0x100000);
	assert_int_equal(lw->order_slot[3], VYRE_CUDA_SLOT_INVAL);
	assert_int_equal(lw->order_slot[4], VYRE_CUDA_SLOT_INVAL);
	free(lw->slab);

	/* IMMEDIATE copies operands through host memory: not a device buffer's */
	for (uint32_t i = 1; i < 3; i++) {
		small(&s, &items[i], 1, 1);
		assert_int_equal(lower(&s.b, heaps, 3, 132, lw), 0);
		assert_int_equal(vyre_cuda_lower_immediate(&s.b, lw->cls, &lw->lay, &imm), 0);
		free(lw->slab);
	}
	/* two host heaps: the doorbell names one heap per item */
	struct vyre_exec_item two = {
	    .op = VYRE_OP_ADD, .in_heap = 0, .out_heap = 2, .in_bytes = 16, .out_bytes = 16};

	small(&s, &two, 1, 1);
	assert_int_equal(lower(&s.b, heaps, 3, 132, lw), 0);
	assert_int_equal(vyre_cuda_lower_immediate(&s.b, lw->cls, &lw->lay, &imm), 0);
	free(lw->slab);
	two.out_heap = 0;
	small(&s, &two, 1, 1);
	assert_int_equal(lower(&s.b, heaps, 3, 132, lw), 0);
	assert_int_equal(vyre_cuda_lower_immediate(&s.b, lw->cls, &lw->lay, &imm), 1);
	assert_int_equal(imm.item[0].heap, 0);
	free(lw->slab);
	free(lw);
}

static void test_plan_checks(void **state)
{
	struct vyre_exec_item it = {.op = VYRE_OP_FILL, .out_bytes = 64};
	struct vyre_cuda_layout lay;
	uint32_t cls[8];
	struct vyre_cuda_item_state st[8];
	struct small_batch s;

	(void)state;
	small(&s, &it, 1, 0);
	assert_int_equal(vyre_cuda_lower_measure(&s.b, fake_heaps, 2, 132, cls, st, &lay), 0);
	assert_int_equal(lay.n_launches, 1);

	s.order[0] = 1; /* beyond n_items */
	assert_int_equal(vyre_cuda_lower_measure(&s.b, fake_heaps, 2, 132, cls, st, &lay),
			 VYRE_E_INVAL);
	small(&s, &it, 1, 0);
	s.group_end[0] = 0; /* groups do not end at n_order */
	assert_int_equal(vyre_cuda_lower_measure(&s.b, fake_heaps, 2, 132, cls, st, &lay),
			 VYRE_E_INVAL);
	small(&s, &it, 1, 0);
	s.launch_end[0] = 2; /* launches past the last group */
	assert_int_equal(vyre_cuda_lower_measure(&s.b, fake_heaps, 2, 132, cls, st, &lay),
			 VYRE_E_INVAL);
	small(&s, &it, 1, 0);
	s.b.plan.n_groups = 0; /* an order without groups */
	s.b.plan.n_launches = 0;
	assert_int_equal(vyre_cuda_lower_measure(&s.b, fake_heaps, 2, 132, cls, st, &lay),
			 VYRE_E_INVAL);

	struct vyre_exec_item two[2] = {it, it};
	small(&s, two, 2, 0);
	s.group_end[0] = 2;
	s.group_end[1] = 1; /* decreasing */
	assert_int_equal(vyre_cuda_lower_measure(&s.b, fake_heaps, 2, 132, cls, st, &lay),
			 VYRE_E_INVAL);

	/* an empty plan is fine and needs nothing */
	small(&s, &it, 1, 0);
	s.b.plan = (struct vyre_exec_plan){NULL, 0, NULL, 0, NULL, 0};
	assert_int_equal(vyre_cuda_lower_measure(&s.b, fake_heaps, 2, 132, cls, st, &lay), 0);
	assert_int_equal(lay.n_launches, 0);
	assert_int_equal(lay.bytes, 0);
}

static void test_units(void **state)
{
	const uint64_t base = fake_heaps[0].dptr;
	const struct vyre_exec_item items[8] = {
	    /* 5000 words: chunks of 2048, 2048, 904 */
	    {.op = VYRE_OP_FILL, .param = 7, .out_off = 64, .out_bytes = 4 * 5000},
	    /* 9000 words: one block unit */
	    {.op = VYRE_OP_SUM,
	     .in_off = 65536,
	     .in_bytes = 4 * 9000,
	     .out_off = 0,
	     .out_bytes = 4},
	    /* DFA over more than VYRE_MK_DFA_WARP_BYTES: a block unit */
	    {.op = VYRE_OP_DFA_SCAN,
	     .in_off = 256,
	     .in_bytes = 20000,
	     .out_off = 128,
	     .out_bytes = 4,
	     .table_off = 4096,
	     .table_bytes = 1032},
	    /* unaligned: sequential */
	    {.op = VYRE_OP_ADD, .in_off = 1, .in_bytes = 16, .out_off = 200000, .out_bytes = 16},
	    /* partial overlap: sequential */
	    {.op = VYRE_OP_COPY,
	     .in_off = 300000,
	     .in_bytes = 64,
	     .out_off = 300008,
	     .out_bytes = 64},
	    /* static invalid, and NOP */
	    {.op = VYRE_OP_MAX, .in_off = 0, .in_bytes = 8, .out_off = 0, .out_bytes = 0},
	    {.op = VYRE_OP_NOP},
	    /* in place: chunked like any elementwise item */
	    {.op = VYRE_OP_XOR,
	     .in_off = 400000,
	     .in_bytes = 16,
	     .out_off = 400000,
	     .out_bytes = 16},
	};
	struct small_batch s;
	struct lowered *lw = malloc(sizeof(*lw));

	(void)state;
	assert_non_null(lw);
	small(&s, items, 8, 1);
	assert_int_equal(lower(&s.b, fake_heaps, 2, 132, lw), 0);
	assert_int_equal(lw->lay.n_launches, 1);
	assert_int_equal(lw->lay.n_stages, 1);
	assert_int_equal(lw->lay.n_results, 2);
	assert_int_equal(lw->lay.n_units, 3 + 1 + 1 + 1 + 1 + 1);

	const struct vyre_mk_unit *u = (const struct vyre_mk_unit *)(lw->slab + lw->lay.units_off);
	const struct vyre_mk_stage *st =
	    (const struct vyre_mk_stage *)(lw->slab + lw->lay.stages_off);

	assert_int_equal(st->first_unit, 0);
	assert_int_equal(st->n_block_units, 2);
	assert_int_equal(st->n_warp_units, 6);
	/* block units first, in order: SUM then DFA */
	assert_int_equal(u[0].op, VYRE_OP_SUM);
	assert_int_equal(u[0].count, 9000);
	assert_int_equal(u[0].slot, 0);
	assert_int_equal(u[1].op, VYRE_OP_DFA_SCAN | VYRE_MK_DFA_HOST_IN);
	assert_int_equal(u[1].count, 20000);
	assert_int_equal(u[1].aux, 1032);
	assert_true(u[1].table == base + 4096);
	assert_int_equal(u[1].slot, 1);
	/* then the FILL chunks */
	assert_int_equal(u[2].count, 2048);
	assert_int_equal(u[3].count, 2048);
	assert_int_equal(u[4].count, 904);
	assert_true(u[3].out == base + 64 + 4 * 2048);
	assert_true(u[4].out == base + 64 + 8 * 2048);
	assert_int_equal(u[5].op, VYRE_OP_ADD | VYRE_MK_SEQUENTIAL);
	assert_int_equal(u[6].op, VYRE_OP_COPY | VYRE_MK_SEQUENTIAL);
	assert_int_equal(u[6].count, 16);
	assert_int_equal(u[7].op, VYRE_OP_XOR);
	assert_int_equal(u[7].count, 4);
	assert_int_equal(lw->order_slot[0], VYRE_CUDA_SLOT_OK);
	assert_int_equal(lw->order_slot[1], 0);
	assert_int_equal(lw->order_slot[2], 1);
	assert_int_equal(lw->order_slot[5], VYRE_CUDA_SLOT_INVAL);
	assert_int_equal(lw->order_slot[6], VYRE_CUDA_SLOT_OK);
	/* two block units and six warp units want two blocks */
	assert_int_equal(lw->launches[0].n_blocks, 2);
	free(lw->slab);
	free(lw);
}

/*
 * The byte ops: block units of their own (any alignment) carrying in, out
 * and table bytes, each with a result record; static failures and partial
 * overlaps complete on the host; DFA_SCAN_COUNTED is not lowered yet; none
 * of them runs IMMEDIATE.
 */
static void test_byte_op_units(void **state)
{
	const uint64_t base = fake_heaps[0].dptr;
	const struct vyre_exec_item items[8] = {
	    {.op = VYRE_OP_BASE64_DECODE,
	     .in_off = 0,
	     .in_bytes = 64,
	     .out_off = 64,
	     .out_bytes = 52},
	    /* unaligned, in place */
	    {.op = VYRE_OP_HEX_DECODE,
	     .in_off = 1001,
	     .in_bytes = 40,
	     .out_off = 1001,
	     .out_bytes = 40},
	    {.op = VYRE_OP_BYTEMAP,
	     .in_off = 2048,
	     .in_bytes = 128,
	     .out_off = 4096,
	     .out_bytes = 132,
	     .table_off = 8192,
	     .table_bytes = 260},
	    /* partial overlap */
	    {.op = VYRE_OP_BASE64_DECODE,
	     .in_off = 0,
	     .in_bytes = 64,
	     .out_off = 8,
	     .out_bytes = 64},
	    /* a counted input or output shorter than 4 bytes */
	    {.op = VYRE_OP_HEX_DECODE, .in_off = 0, .in_bytes = 0, .out_off = 64, .out_bytes = 8},
	    {.op = VYRE_OP_BYTEMAP, .in_off = 0, .in_bytes = 8, .out_off = 64, .out_bytes = 0},
	    {.op = VYRE_OP_DFA_SCAN_COUNTED,
	     .in_off = 0,
	     .in_bytes = 0,
	     .out_off = 64,
	     .out_bytes = 4,
	     .table_off = 8192,
	     .table_bytes = 1032},
	    {.op = VYRE_OP_NOP},
	};
	struct small_batch s;
	struct lowered *lw = malloc(sizeof(*lw));
	struct vyre_cuda_immediate *imm = malloc(sizeof(*imm));

	(void)state;
	assert_non_null(lw);
	assert_non_null(imm);
	small(&s, items, 8, 1);
	assert_int_equal(lower(&s.b, fake_heaps, 2, 132, lw), 0);
	assert_int_equal(lw->lay.n_units, 3);
	assert_int_equal(lw->lay.n_results, 3);
	const struct vyre_mk_unit *u = (const struct vyre_mk_unit *)(lw->slab + lw->lay.units_off);
	const struct vyre_mk_stage *st =
	    (const struct vyre_mk_stage *)(lw->slab + lw->lay.stages_off);

	assert_int_equal(st->n_block_units, 3);
	assert_int_equal(st->n_warp_units, 0);
	assert_int_equal(u[0].op, VYRE_OP_BASE64_DECODE);
	assert_int_equal(u[0].count, 64);
	assert_int_equal(u[0].aux, 52);
	assert_true(u[0].in == base && u[0].out == base + 64);
	assert_int_equal(u[1].op, VYRE_OP_HEX_DECODE);
	assert_true(u[1].in == base + 1001 && u[1].out == u[1].in);
	assert_int_equal(u[2].op, VYRE_OP_BYTEMAP);
	assert_int_equal(u[2].param, 260);
	assert_true(u[2].table == base + 8192);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(lw->order_slot[k], k);
	for (uint32_t k = 3; k < 7; k++)
		assert_int_equal(lw->order_slot[k], VYRE_CUDA_SLOT_INVAL);
	assert_int_equal(lw->order_slot[7], VYRE_CUDA_SLOT_OK);
	assert_int_equal(vyre_cuda_lower_immediate(&s.b, lw->cls, &lw->lay, imm), 0);
	free(lw->slab);

	/* a lone small decode is still a block unit, never IMMEDIATE */
	small(&s, items, 1, 1);
	assert_int_equal(lower(&s.b, fake_heaps, 2, 132, lw), 0);
	assert_int_equal(vyre_cuda_lower_immediate(&s.b, lw->cls, &lw->lay, imm), 0);
	free(lw->slab);
	free(imm);
	free(lw);
}

static void test_blocks_and_empty_stages(void **state)
{
	struct vyre_exec_item items[130];
	struct vyre_exec_result results[130];
	uint32_t order[130], group_end[3] = {2, 4, 130}, launch_end[2] = {2, 3};
	struct lowered *lw = malloc(sizeof(*lw));

	(void)state;
	assert_non_null(lw);
	for (uint32_t i = 0; i < 130; i++) {
		order[i] = i;
		items[i] =
		    (struct vyre_exec_item){.op = VYRE_OP_FILL, .out_off = 4 * i, .out_bytes = 4};
	}
	/* the first launch is NOPs and invalid items only: no stage, no launch */
	items[0] = (struct vyre_exec_item){.op = VYRE_OP_NOP};
	items[1] = (struct vyre_exec_item){.op = VYRE_OP_NOP};
	items[2] = (struct vyre_exec_item){.op = 77};
	items[3] = (struct vyre_exec_item){.op = VYRE_OP_FILL, .out_heap = 1, .out_bytes = 4};
	const struct vyre_exec_batch b = {
	    items, 130, {order, 130, group_end, 3, launch_end, 2}, results};
	assert_int_equal(lower(&b, fake_heaps, 2, 132, lw), 0);
	assert_int_equal(lw->lay.n_launches, 1);
	assert_int_equal(lw->lay.n_stages, 1);
	assert_int_equal(lw->launches[0].first_stage, 0);
	assert_int_equal(lw->launches[0].n_units, 126);
	assert_int_equal(lw->launches[0].n_blocks, 4); /* 126 warp units / 32 */
	free(lw->slab);
	assert_int_equal(lower(&b, fake_heaps, 2, 3, lw), 0);
	assert_int_equal(lw->launches[0].n_blocks, 3); /* capped by the grid */
	free(lw->slab);
	free(lw);
}

static void test_too_big(void **state)
{
	static struct vyre_exec_item items[8193];
	static struct vyre_exec_result results[8193];
	static uint32_t order[8193], cls[8193];
	static struct vyre_cuda_item_state st[8193];
	const struct vyre_cuda_heap huge[1] = {{0x100000, 1ull << 33, 1, 0}};
	const uint32_t sizes[3] = {200, 8193, 4};
	const int want[3] = {VYRE_E_NOMEM, VYRE_E_NOMEM, 0};
	struct vyre_cuda_layout lay;

	(void)state;
	for (uint32_t i = 0; i < 8193; i++) {
		order[i] = i;
		items[i] = (struct vyre_exec_item){.op = VYRE_OP_FILL, .out_bytes = 0xfffffffcu};
	}
	/*
	 * 2^19 units per item: 200 items need a slab over 4 GiB, 8193 items more
	 * than 2^32 units; 4 items fit.
	 */
	for (int i = 0; i < 3; i++) {
		const uint32_t n = sizes[i], launch_end = 1;
		const struct vyre_exec_batch b = {
		    items, n, {order, n, &n, 1, &launch_end, 1}, results};

		assert_int_equal(vyre_cuda_lower_measure(&b, huge, 1, 132, cls, st, &lay), want[i]);
	}
	assert_int_equal(lay.n_units, 4u << 19);
}

static void test_dfa_split_sizes(void **state)
{
	static const struct {
		uint32_t bytes, blocks, parts;
	} cases[] = {
	    {VYRE_MK_DFA_BLOCK_BYTES, 132, 1},	    /* one block takes it */
	    {VYRE_MK_DFA_BLOCK_BYTES + 16, 1, 1},   /* one block is all there is */
	    {VYRE_MK_DFA_BLOCK_BYTES + 16, 132, 3}, /* parts of at least PART_MIN */
	    {64u << 20, 127, 127},		    /* one part a block */
	    {64u << 20, 132, 132},		    /* the same on a launch-mode grid */
	    {1u << 30, 132, 132},		    /* 8 MB a part */
	    {2u << 30, 132, 264},		    /* two a block: a block's share > PART_MAX */
	    {0xfffffffcu, 132, 528},		    /* four a block */
	    {0xfffffffcu, 2000, VYRE_MK_DFA_MAX_PARTS}, /* capped */
	};
	struct gen_rng rng = {77};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t parts, part_bytes;

		vyre_cuda_dfa_split(cases[i].bytes, cases[i].blocks, &parts, &part_bytes);
		assert_int_equal(parts, cases[i].parts);
	}
	/* what the kernel recomputes: ceil(bytes / part_bytes) parts, rounded sizes */
	for (uint32_t i = 0; i < 100000; i++) {
		const uint32_t bytes = (uint32_t)gen_next(&rng) >> gen_below(&rng, 20);
		const uint32_t blocks = 1 + gen_below(&rng, 300);
		uint32_t parts, pb;

		vyre_cuda_dfa_split(bytes, blocks, &parts, &pb);
		if (parts == 1)
			continue;
		assert_int_equal(pb % 16, 0);
		assert_true(parts >= 2 && parts <= VYRE_MK_DFA_MAX_PARTS);
		assert_int_equal(parts, ((uint64_t)bytes + pb - 1) / pb);
		assert_int_equal(pb, ((((uint64_t)bytes + parts - 1) / parts) + 15) & ~15ull);
	}
}

/* A split item: its parts in the group's stage, the join in a stage of its own. */
static void test_dfa_units(void **state)
{
	const uint64_t base = fake_heaps[0].dptr;
	const uint32_t big = VYRE_MK_DFA_BLOCK_BYTES + 4096;
	const struct vyre_exec_item items[6] = {
	    {.op = VYRE_OP_DFA_SCAN,
	     .in_off = 0,
	     .in_bytes = big,
	     .out_off = 8u << 20,
	     .out_bytes = 4,
	     .table_off = 9u << 20,
	     .table_bytes = 1032},
	    {.op = VYRE_OP_ADD, .in_off = 0, .in_bytes = 64, .out_off = 10u << 20, .out_bytes = 64},
	    /* counted: the length word is not scanned, so 16 KiB + 4 bytes stay on a warp */
	    {.op = VYRE_OP_DFA_SCAN_COUNTED,
	     .in_off = 0,
	     .in_bytes = VYRE_MK_DFA_WARP_BYTES + 4,
	     .out_off = 11u << 20,
	     .out_bytes = 4,
	     .table_off = 9u << 20,
	     .table_bytes = 1032},
	    /* a counted input without its length word */
	    {.op = VYRE_OP_DFA_SCAN_COUNTED,
	     .in_off = 0,
	     .in_bytes = 0,
	     .out_off = 12u << 20,
	     .out_bytes = 4,
	     .table_off = 9u << 20,
	     .table_bytes = 1032},
	    {.op = VYRE_OP_DFA_SCAN_COUNTED,
	     .in_off = 0,
	     .in_bytes = VYRE_MK_DFA_WARP_BYTES + 8,
	     .out_off = 12u << 20,
	     .out_bytes = 4,
	     .table_off = 9u << 20,
	     .table_bytes = 1032},
	    {.op = VYRE_OP_FILL, .out_off = 13u << 20, .out_bytes = 4},
	};
	uint32_t parts, pb;
	struct small_batch s;
	struct lowered *lw = malloc(sizeof(*lw));

	(void)state;
	assert_non_null(lw);
	vyre_cuda_dfa_split(big, 132, &parts, &pb);
	assert_int_equal(parts, 3);
	small(&s, items, 5, 1);
	/* the FILL in a group of its own, after the DFA group */
	s.items[5] = items[5];
	s.order[5] = 5;
	s.group_end[0] = 5;
	s.group_end[1] = 6;
	s.b.n_items = 6;
	s.b.plan.n_order = 6;
	s.b.plan.n_groups = 2;
	s.launch_end[0] = 2;
	assert_int_equal(lower(&s.b, fake_heaps, 2, 132, lw), 0);
	assert_int_equal(lw->lay.n_launches, 1);
	assert_int_equal(lw->lay.n_stages, 3);
	assert_int_equal(lw->lay.n_units, parts + 1 + 1 + 1 + 1 + 1);
	assert_int_equal(lw->lay.n_results, 1 + parts + 1 + 1);

	const struct vyre_mk_unit *u = (const struct vyre_mk_unit *)(lw->slab + lw->lay.units_off);
	const struct vyre_mk_stage *st =
	    (const struct vyre_mk_stage *)(lw->slab + lw->lay.stages_off);

	/* stage 0: the parts and the larger counted item (block units), then the ADD and the
	 * smaller counted item (warp units) */
	assert_int_equal(st[0].first_unit, 0);
	assert_int_equal(st[0].n_block_units, parts + 1);
	assert_int_equal(st[0].n_warp_units, 2);
	for (uint32_t i = 0; i < parts; i++) {
		assert_int_equal(u[i].op,
				 VYRE_OP_DFA_SCAN | VYRE_MK_DFA_PART | VYRE_MK_DFA_HOST_IN);
		assert_int_equal(u[i].param, i);
		assert_int_equal(u[i].count, big);
		assert_int_equal(u[i].reserved, pb);
		assert_int_equal(u[i].slot, 0);
		assert_true(u[i].in == base && u[i].table == base + (9u << 20));
	}
	assert_int_equal(u[parts].op, VYRE_OP_DFA_SCAN_COUNTED | VYRE_MK_DFA_HOST_IN);
	assert_int_equal(u[parts].count, VYRE_MK_DFA_WARP_BYTES + 8);
	assert_int_equal(u[parts].slot, 1 + parts);
	assert_int_equal(u[parts + 1].op, VYRE_OP_ADD);
	assert_int_equal(u[parts + 2].op, VYRE_OP_DFA_SCAN_COUNTED | VYRE_MK_DFA_HOST_IN);
	assert_int_equal(u[parts + 2].count, VYRE_MK_DFA_WARP_BYTES + 4);
	assert_int_equal(u[parts + 2].slot, 2 + parts);
	/* stage 1: the join alone */
	assert_int_equal(st[1].first_unit, parts + 3);
	assert_int_equal(st[1].n_block_units, 1);
	assert_int_equal(st[1].n_warp_units, 0);
	assert_int_equal(u[parts + 3].op,
			 VYRE_OP_DFA_SCAN | VYRE_MK_DFA_JOIN | VYRE_MK_DFA_HOST_IN);
	assert_int_equal(u[parts + 3].param, parts);
	assert_int_equal(u[parts + 3].reserved, 0); /* no chain record to check */
	assert_int_equal(u[parts + 3].slot, 0);
	assert_true(u[parts + 3].out == base + (8u << 20));
	/* stage 2: the FILL of the next group */
	assert_int_equal(st[2].first_unit, parts + 4);
	assert_int_equal(st[2].n_warp_units, 1);
	assert_int_equal(u[parts + 4].op, VYRE_OP_FILL);
	assert_int_equal(lw->order_slot[0], 0);
	assert_int_equal(lw->order_slot[2], 2 + parts);
	assert_int_equal(lw->order_slot[3], VYRE_CUDA_SLOT_INVAL);
	assert_int_equal(lw->order_slot[4], 1 + parts);
	assert_int_equal(lw->launches[0].n_blocks, parts + 1);
	free(lw->slab);
	free(lw);
}

/* ---- split DFA items through the host model, against the oracle -------------- */

#define DFA_HEAP (6u << 20)

static void put_word(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* A table of @n states at @p with next(s, b) from @kind; its bytes. */
enum table_kind { T_RANDOM, T_COUNTER, T_RESET, T_ONE_STATE };

#define RESET_BYTE 0xffu /* T_RESET: the one byte that sends the counter back to 0 */

static uint32_t make_table(struct gen_rng *r, uint8_t *p, uint32_t n, enum table_kind kind)
{
	const uint32_t accept_words = (n + 31) / 32;
	uint8_t *next = p + 8 + 4 * accept_words;

	put_word(p, n);
	put_word(p + 4, gen_below(r, n));
	for (uint32_t i = 0; i < accept_words; i++)
		put_word(p + 8 + 4 * i, (uint32_t)gen_next(r));
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t b = 0; b < 256; b++) {
			/*
			 * T_COUNTER: the bytes' sum mod n, every byte a permutation, never
			 * converging; T_RESET: bytes since the last RESET_BYTE mod n, which
			 * converges only where that byte is
			 */
			const uint32_t t = kind == T_COUNTER ? (s + b) % n
					   : kind == T_RESET ? (b == RESET_BYTE ? 0 : (s + 1) % n)
							     : gen_below(r, n);
			put_word(next + 4 * (256 * (uint64_t)s + b), t);
		}
	return (uint32_t)vyre_dfa_table_bytes(n);
}

/* Literals cut from @text: a literal-set automaton whose matches are dense there. */
static uint32_t make_literals(struct gen_rng *r, uint8_t *p, uint32_t room, const uint8_t *text,
			      uint32_t text_bytes, uint32_t count)
{
	struct vyre_dfa_pattern pats[64];
	uint8_t *table;
	uint32_t bytes;

	for (uint32_t i = 0; i < count; i++) {
		const uint32_t len = 1 + gen_below(r, 24);
		pats[i] =
		    (struct vyre_dfa_pattern){text + gen_below(r, text_bytes - len), len, i, 0};
	}
	assert_int_equal(vyre_dfa_compile(pats, count, 65536, &table, &bytes, NULL), 0);
	assert_true(bytes <= room);
	memcpy(p, table, bytes);
	free(table);
	return bytes;
}

/* The sequential walk over @len bytes at @in (any length, for DFA_SCAN_COUNTED). */
static uint32_t reference(const uint8_t *table, const uint8_t *in, uint32_t len)
{
	uint32_t n, s, hits = 0;

	memcpy(&n, table, 4);
	memcpy(&s, table + 4, 4);
	const uint8_t *accept = table + 8, *next = accept + 4 * ((n + 31) / 32);
	for (uint32_t i = 0; i < len; i++) {
		uint32_t w;
		memcpy(&s, next + 4 * (256 * (uint64_t)s + in[i]), 4);
		memcpy(&w, accept + 4 * (s / 32), 4);
		hits += (w >> (s % 32)) & 1u;
	}
	return hits;
}

static void test_dfa_model(void **state)
{
	uint8_t *heap = aligned_alloc(4096, DFA_HEAP);
	const uint32_t text_bytes = 4u << 20, table_off = text_bytes + 4096;
	const struct vyre_cuda_heap heaps[1] = {{(uintptr_t)heap, DFA_HEAP, 1, 0}};
	struct gen_rng rng = {0xdfa};
	struct lowered *lw = malloc(sizeof(*lw));
	uint64_t rounds = 0;

	(void)state;
	assert_true(heap && lw);
	for (uint32_t iter = 0; iter < 60 * gen_scale(); iter++) {
		/* text of a few letters (dense matches) or any bytes */
		const uint32_t letters = gen_below(&rng, 3) ? 2 + gen_below(&rng, 6) : 256;
		for (uint32_t i = 0; i < text_bytes; i++)
			heap[i] = (uint8_t)('a' + gen_next(&rng) % letters);

		const uint32_t kind = gen_below(&rng, 6);
		uint32_t table_bytes;

		if (kind == 0)
			table_bytes = make_literals(&rng, heap + table_off, DFA_HEAP - table_off,
						    heap, 1u << 20, 1 + gen_below(&rng, 64));
		else if (kind == 1)
			table_bytes =
			    make_table(&rng, heap + table_off, 2 + gen_below(&rng, 11), T_COUNTER);
		else if (kind == 2)
			table_bytes = make_table(&rng, heap + table_off, 1, T_ONE_STATE);
		else if (kind == 3) {
			/* a reset every 4 KiB or so: most guesses are wrong, parts too */
			table_bytes =
			    make_table(&rng, heap + table_off, 2 + gen_below(&rng, 11), T_RESET);
			for (uint32_t i = 0; i < text_bytes / 4096; i++)
				heap[gen_below(&rng, text_bytes)] = RESET_BYTE;
		} else
			table_bytes =
			    make_table(&rng, heap + table_off, 1 + gen_below(&rng, 400), T_RANDOM);
		if (gen_below(&rng, 4) == 0) {
			/* the start state accepts */
			uint32_t start;
			memcpy(&start, heap + table_off + 4, 4);
			heap[table_off + 8 + 4 * (start / 32) + (start % 32) / 8] |=
			    (uint8_t)(1u << (start % 8));
		}
		/* non-converging tables walk sequentially: keep them small on the host */
		const uint32_t most = kind == 1 ? 96u << 10 : text_bytes - 64;
		const uint32_t pick = gen_below(&rng, 4);
		uint32_t len = pick == 0   ? gen_below(&rng, 64)
			       : pick == 1 ? VYRE_MK_DFA_BLOCK_BYTES + gen_below(&rng, 64)
					   : gen_below(&rng, most);
		len = len > most ? most : len;
		const int is_counted = gen_below(&rng, 2);
		const uint32_t blocks = 1 + gen_below(&rng, 40);
		struct vyre_exec_item it = {
		    .op = is_counted ? VYRE_OP_DFA_SCAN_COUNTED : VYRE_OP_DFA_SCAN,
		    .out_off = DFA_HEAP - 64,
		    .out_bytes = 4,
		    .table_off = table_off,
		    .table_bytes = table_bytes,
		};
		uint32_t want = 0;
		int want_status = 0;

		if (is_counted) {
			/* the length word right before the bytes; sometimes too large */
			const uint32_t start = 4 * (1 + gen_below(&rng, 1000));
			const uint32_t room = (len + 3) & ~3u;
			const int bad = gen_below(&rng, 8) == 0;
			const uint32_t L = bad ? room + 1 + gen_below(&rng, 5) : len;

			it.in_off = start - 4;
			it.in_bytes = 4 + room;
			put_word(heap + it.in_off, L);
			want_status = bad ? VYRE_E_INVAL : 0;
			want = bad ? 0 : reference(heap + table_off, heap + start, L);
		} else {
			it.in_off = 4 * gen_below(&rng, 1000);
			it.in_bytes = len & ~3u;
			want = reference(heap + table_off, heap + it.in_off, it.in_bytes);
		}
		struct small_batch s;

		small(&s, &it, 1, 1);
		put_word(heap + it.out_off, 0xdeadbeef);
		assert_int_equal(lower(&s.b, heaps, 1, blocks, lw), 0);
		run_lowered(&s.b, lw);
		uint32_t out;

		memcpy(&out, heap + it.out_off, 4);
		if (s.results[0].status != want_status || s.results[0].result != want ||
		    out != (want_status ? 0xdeadbeefu : want))
			fail_msg("iteration %u: %s of %u bytes, table kind %u, %u blocks: got "
				 "status %d result %llu out %u, want status %d result %u",
				 iter, is_counted ? "DFA_SCAN_COUNTED" : "DFA_SCAN", it.in_bytes,
				 kind, blocks, s.results[0].status,
				 (unsigned long long)s.results[0].result, out, want_status, want);
		if (!is_counted) {
			/* and the oracle agrees with the reference */
			const struct vyre_heap_view view = {heap, DFA_HEAP};
			uint64_t r;
			assert_int_equal(vyre_exec_one(&view, &it, &r), 0);
			assert_int_equal(r, want);
		}
		free(lw->slab);
		rounds = model_dfa_rounds;
	}
	/* the counters and short warm-ups took rounds of walking again */
	assert_true(rounds > 0);
	free(lw);
	free(heap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plan_checks),	  cmocka_unit_test(test_units),
	    cmocka_unit_test(test_byte_op_units), cmocka_unit_test(test_blocks_and_empty_stages),
	    cmocka_unit_test(test_too_big),	  cmocka_unit_test(test_dfa_split_sizes),
	    cmocka_unit_test(test_dfa_units),	  cmocka_unit_test(test_dfa_model),
	    cmocka_unit_test(test_random_serial), cmocka_unit_test(test_random_grouped),
	    cmocka_unit_test(test_operand_heaps), cmocka_unit_test(test_random_split_heaps),
	    cmocka_unit_test(test_random_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
