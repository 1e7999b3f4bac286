/* SPDX-License-Identifier: MIT */
/*
 * test_cuda_examples - the shipped example op modules (examples/ops: crc32c,
 * hash64, histogram, dot) with their PTX linked into the megakernel, against
 * their host functions run by the sequential oracle: random batches of
 * 1-64 items, each of random op and size (0 to 64 KiB, unaligned offsets
 * and lengths that are not whole words of the op's liking included, short
 * outputs, a dot table of the wrong size, NaN, infinities and subnormals in
 * the dot's floats, items in place), in one group or each in its own, in
 * persistent and launch mode: every status, result and heap byte equal.
 * Then crc32c's stream op crc32c_counted in the generator's random batches
 * (test_cuda_gen.h) in place of DFA_SCAN_COUNTED items, ending on-chip
 * handoff runs after BASE64_DECODE, HEX_DECODE and BYTEMAP among them.
 * Exits 77 without a GPU. VYRE_CUDA_DIFF_BATCHES sets the batches a mode
 * (default 200).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "ops.h"
#include "test_cuda_gen.h"

#define TEST_NAME "test_cuda_examples"
#include "test_check.h"

#define HEAP_BYTES   (16u << 20)
#define MAX_ITEMS    64u
#define SLICE	     (HEAP_BYTES / MAX_ITEMS / 2) /* an item's input, its table after it */
#define POLL_TIMEOUT 30000000000ll

int vyre_op_crc32c_host(const struct vyre_op_host_args *a, uint64_t *result);
int vyre_op_crc32c_counted_host(const struct vyre_op_host_args *a, uint64_t *result);
int vyre_op_hash64_host(const struct vyre_op_host_args *a, uint64_t *result);
int vyre_op_histogram_host(const struct vyre_op_host_args *a, uint64_t *result);
int vyre_op_dot_host(const struct vyre_op_host_args *a, uint64_t *result);

extern const unsigned char vyre_example_ptx_crc32c[], vyre_example_ptx_hash64[],
    vyre_example_ptx_histogram[], vyre_example_ptx_dot[];
extern const uint64_t vyre_example_ptx_crc32c_bytes, vyre_example_ptx_hash64_bytes,
    vyre_example_ptx_histogram_bytes, vyre_example_ptx_dot_bytes;

enum { CRC, HASH, HIST, DOT, N_OPS, CRC_COUNTED = N_OPS };
#define OP_NUMBER(k) (VYRE_OP_MODULE_BIT | 0x5e00u | (uint32_t)(k))

static const uint32_t out_need[N_OPS] = {4, 8, 1024, 4};

static int register_examples(void)
{
	const uint8_t io = VYRE_OPERAND_IN | VYRE_OPERAND_OUT;
	const struct vyre_op_module_entry e[N_OPS + 1] = {
	    {OP_NUMBER(CRC), io, 1, 0, vyre_op_crc32c_host, "crc32c", "crc32c",
	     "vyre_op_crc32c_device", vyre_example_ptx_crc32c, vyre_example_ptx_crc32c_bytes, NULL,
	     0},
	    {OP_NUMBER(HASH), io, 1, 0, vyre_op_hash64_host, "hash64", "hash64",
	     "vyre_op_hash64_device", vyre_example_ptx_hash64, vyre_example_ptx_hash64_bytes, NULL,
	     0},
	    {OP_NUMBER(HIST), io, 1, 0, vyre_op_histogram_host, "histogram", "histogram",
	     "vyre_op_histogram_device", vyre_example_ptx_histogram,
	     vyre_example_ptx_histogram_bytes, NULL, 0},
	    {OP_NUMBER(DOT), io | VYRE_OPERAND_TABLE, 1, 0, vyre_op_dot_host, "dot", "dot",
	     "vyre_op_dot_device", vyre_example_ptx_dot, vyre_example_ptx_dot_bytes, NULL, 0},
	    {.number = OP_NUMBER(CRC_COUNTED),
	     .mask = io | VYRE_OPERAND_WORD0 | VYRE_OPERAND_COUNTED,
	     .pure = 1,
	     .stream = 1,
	     .host = vyre_op_crc32c_counted_host,
	     .name = "crc32c_counted",
	     .module = "crc32c",
	     .device_fn = "vyre_op_crc32c_counted_device",
	     .ptx = vyre_example_ptx_crc32c,
	     .ptx_bytes = vyre_example_ptx_crc32c_bytes},
	};

	return vyre_op_modules_register(e, N_OPS + 1);
}

/* Floats the dot product must agree on bit for bit, specials now and then. */
static uint32_t float_word(struct gen_rng *r)
{
	static const uint32_t special[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x00000001u,
					   0x807fffffu, 0x80000000u, 0x7f7fffffu};
	const uint32_t roll = gen_below(r, 200);

	if (roll < 2)
		return special[gen_below(r, sizeof(special) / sizeof(special[0]))];
	/* magnitudes near 1, so that sums cancel and round */
	return (uint32_t)(gen_below(r, 2) << 31) | (uint32_t)(120u + gen_below(r, 14)) << 23 |
	       gen_below(r, 1u << 23);
}

/* Item @i of a batch: its input (and the dot's table) in slice i, outputs past every slice. */
static void make_item(struct gen_rng *r, uint8_t *heap, uint32_t i, struct vyre_exec_item *it)
{
	const uint32_t k = gen_below(r, N_OPS);
	const uint32_t max_in = SLICE / 2 - 64;
	uint32_t bytes = gen_below(r, 4) == 0 ? gen_below(r, 64) : gen_below(r, max_in);
	const uint64_t in_off = (uint64_t)i * SLICE + gen_below(r, 16);
	const uint64_t out_off = HEAP_BYTES / 2 + (uint64_t)i * 2048 + 4 * gen_below(r, 4);

	bytes &= ~3u; /* the oracle and the lowering want whole words of every operand */
	memset(it, 0, sizeof(*it));
	it->op = OP_NUMBER(k);
	it->param = gen_below(r, 3) ? (uint32_t)gen_next(r) : 0;
	it->in_off = in_off;
	it->in_bytes = bytes;
	it->out_off = out_off;
	it->out_bytes = gen_below(r, 16) ? out_need[k] + 4 * gen_below(r, 3) : out_need[k] - 4;
	for (uint32_t b = 0; b < bytes; b += 4) {
		const uint32_t w = k == DOT ? float_word(r) : (uint32_t)gen_next(r);

		memcpy(heap + in_off + b, &w, 4);
	}
	if (k == DOT) {
		it->table_off = in_off + bytes + 4 * gen_below(r, 4);
		it->table_bytes = gen_below(r, 20) ? bytes : bytes + 4;
		for (uint32_t b = 0; b < it->table_bytes; b += 4) {
			const uint32_t w = float_word(r);

			memcpy(heap + it->table_off + b, &w, 4);
		}
	}
	if (k != DOT && bytes >= out_need[k] && gen_below(r, 10) == 0) {
		/* in place: the output is the input's first bytes */
		it->out_off = in_off;
		it->out_bytes = out_need[k];
	}
}

static uint32_t batches(void)
{
	const char *s = getenv("VYRE_CUDA_DIFF_BATCHES");

	return s && atoi(s) > 0 ? (uint32_t)atoi(s) : 200u * gen_scale();
}

static void differential(int mode)
{
	const char *name = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	struct vyre_backend_config cfg = {.max_heaps = 1,
					  .max_items = MAX_ITEMS,
					  .cuda_mode = (enum vyre_cuda_mode)mode,
					  .device = 0};
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct vyre_exec_item items[MAX_ITEMS];
	struct vyre_exec_result got[MAX_ITEMS], expect[MAX_ITEMS];
	uint32_t order[MAX_ITEMS], group_end[MAX_ITEMS], launch_end[MAX_ITEMS];
	struct gen_rng rng = {0xe8a3 + (uint64_t)mode};
	uint32_t ok_items[N_OPS] = {0}, inval = 0, n_items = 0;
	struct vyre_backend *b = NULL;
	char why[2048];

	CHECK(register_examples() == 0, "register");
	CHECK(heap && want, "memory");
	if (!heap || !want || vyre_cuda_backend->init(&b, &cfg, why, sizeof(why)) != 0) {
		CHECK(0, "%s: init: %s", name, heap && want ? why : "no memory");
		free(want);
		return;
	}
	printf("%s: %s\n", name, vyre_cuda_describe(b));
	CHECK(vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES) == 0, "register_heap");
	for (uint32_t t = 0; t < batches() && test_failures < 5; t++) {
		const uint32_t n = 1 + gen_below(&rng, MAX_ITEMS);
		const int one_group = gen_below(&rng, 2);

		for (uint32_t i = 0; i < n; i++) {
			make_item(&rng, heap, i, &items[i]);
			order[i] = i;
			group_end[i] = i + 1;
		}
		if (one_group)
			group_end[0] = n;
		launch_end[0] = one_group ? 1 : n;
		const struct vyre_exec_batch batch = {
		    items, n, {order, n, group_end, one_group ? 1 : n, launch_end, 1}, got};
		const struct vyre_heap_view view = {want, HEAP_BYTES};

		memcpy(want, heap, HEAP_BYTES);
		vyre_exec_sequential(&view, items, n, expect);
		memset(got, 0x5a, sizeof(got));
		const int done = gen_run_one(b, &batch, POLL_TIMEOUT);

		CHECK(done == 1, "%s batch %u: submit/reap %d (%s)", name, t, done,
		      vyre_cuda_last_error(b));
		if (done != 1)
			break;
		for (uint32_t i = 0; i < n; i++) {
			const uint32_t k = items[i].op & 0xffu;

			CHECK(got[i].status == expect[i].status &&
				  got[i].result == expect[i].result,
			      "%s batch %u item %u (%s, %u bytes in, %u out, table %u): status %d "
			      "result %#llx, want %d %#llx",
			      name, t, i,
			      k == CRC	  ? "crc32c"
			      : k == HASH ? "hash64"
			      : k == HIST ? "histogram"
					  : "dot",
			      items[i].in_bytes, items[i].out_bytes, items[i].table_bytes,
			      got[i].status, (unsigned long long)got[i].result, expect[i].status,
			      (unsigned long long)expect[i].result);
			if (expect[i].status == 0)
				ok_items[k]++;
			else
				inval++;
		}
		n_items += n;
		CHECK(memcmp(heap, want, HEAP_BYTES) == 0, "%s batch %u: the heap differs", name,
		      t);
	}
	printf("%s: %u items: crc32c %u, hash64 %u, histogram %u, dot %u ok, %u invalid\n", name,
	       n_items, ok_items[CRC], ok_items[HASH], ok_items[HIST], ok_items[DOT], inval);
	for (uint32_t k = 0; k < N_OPS; k++)
		CHECK(ok_items[k] > 50, "%s: too few items of example %u ran", name, k);
	CHECK(inval > 0, "%s: no invalid item was tried", name);
	vyre_cuda_backend->shutdown(b);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

/*
 * The generator's random batches (hazards, chains, handoff runs), a
 * DFA_SCAN_COUNTED item made crc32c_counted now and then (its operands are
 * the same: a counted input, word 0 of the output; its param the CRC to
 * continue from), the last member of a handoff run included.
 */
static void stream_chains(int mode)
{
	const char *name = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	struct vyre_backend_config cfg = {.max_heaps = 1,
					  .max_items = GEN_MAX_ITEMS,
					  .cuda_mode = (enum vyre_cuda_mode)mode,
					  .device = 0};
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct gen_rng rng = {0xc2c3 + (uint64_t)mode};
	uint32_t crc_ok = 0, fused_ok = 0, n = 0;
	struct vyre_backend *b = NULL;
	char why[2048], msg[512];

	CHECK(register_examples() == 0, "register");
	CHECK(heap && want && g && expect, "memory");
	if (!heap || !want || !g || !expect ||
	    vyre_cuda_backend->init(&b, &cfg, why, sizeof(why)) != 0) {
		CHECK(0, "%s: init: %s", name, heap && want && g && expect ? why : "no memory");
		goto out;
	}
	CHECK(vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES) == 0, "register_heap");
	for (int plan = GEN_PLAN_SERIAL; plan <= GEN_PLAN_GROUPED; plan++)
		for (uint32_t t = 0; t < batches() && test_failures < 5; t++, n++) {
			gen_batch(&rng, heap, HEAP_BYTES, (enum gen_plan)plan,
				  t % 5 == 0 ? 1 : GEN_MAX_ITEMS, g);
			for (uint32_t i = 0; i < g->batch.n_items; i++) {
				struct vyre_exec_item *it = &g->items[i];

				if (it->op == VYRE_OP_DFA_SCAN_COUNTED &&
				    !(it->flags & VYRE_EXEC_HANDOFF_OUT) && gen_below(&rng, 3) < 2)
					it->op = OP_NUMBER(CRC_COUNTED);
			}
			memcpy(want, heap, HEAP_BYTES);
			gen_oracle(want, HEAP_BYTES, g, expect);
			const int done = gen_run_one(b, &g->batch, POLL_TIMEOUT);

			CHECK(done == 1, "%s chains batch %u: submit/reap %d (%s)", name, n, done,
			      vyre_cuda_last_error(b));
			if (done != 1)
				break;
			CHECK(!gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg)),
			      "%s chains batch %u (%s plan): %s", name, n,
			      plan ? "grouped" : "serial", msg);
			for (uint32_t i = 0; i < g->batch.n_items; i++)
				if (g->items[i].op == OP_NUMBER(CRC_COUNTED) &&
				    expect[i].status == 0) {
					crc_ok++;
					fused_ok += (g->items[i].flags & VYRE_EXEC_HANDOFF_IN) != 0;
				}
		}
	printf("%s: %u generated batches: crc32c_counted %u ok, %u of them ending a handoff run\n",
	       name, n, crc_ok, fused_ok);
	CHECK(crc_ok > 50, "%s: too few crc32c_counted items ran", name);
	CHECK(fused_ok > 10, "%s: too few handoff runs ended in crc32c_counted", name);
out:
	if (b)
		vyre_cuda_backend->shutdown(b);
	free(expect);
	free(g);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

static uint32_t failures;

static void scenario(int mode)
{
	differential(mode);
	stream_chains(mode);
	failures = (uint32_t)test_failures;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const int skip = gen_require_gpu_in_child();

	if (skip)
		return skip;
	for (int mode = VYRE_CUDA_PERSISTENT; mode <= VYRE_CUDA_LAUNCH; mode++)
		failures += gen_in_child(scenario, mode, &failures);
	printf("cuda examples: %u failure(s)\n", failures);
	return failures ? 1 : 0;
}
