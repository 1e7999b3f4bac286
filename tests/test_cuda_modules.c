/* SPDX-License-Identifier: MIT */
/*
 * test_cuda_modules - op modules on the GPU (docs/design.md 6.7): the
 * tests' module ops (tests/test_module_ops.cu, built to PTX) linked into the
 * megakernel at backend start, run in persistent and launch mode on random
 * planned batches (tests/test_cuda_gen.h) in which module ops replace
 * built-in ones of the same operands (hazards, chains, invalid, unaligned
 * and partially overlapping ranges, counted inputs, tables), each compared
 * with the sequential oracle, which runs the same ops' host functions. Then:
 * a module whose device function is missing, or whose PTX does not compile,
 * fails the start with the module and the linker's log; a module op that
 * faults fails its batch with VYRE_E_DEVICE as any device fault, and the
 * backend says it is unusable (vyred then restarts, losing nothing: the
 * restart tests show that part for every device fault). Last, small
 * batches of module items alone (1..6 of one group, as vyred's loops form
 * from a few producers) in persistent mode, which run in their doorbells
 * on the pollers' own blocks (VYRE_MK_LAUNCH_CPL) when they fit, and once
 * more with VYRE_CUDA_MODULE_IMM=0 down the slab path: every result and
 * heap byte against the oracle, the doorbell path's count, and the p50 of
 * a one-item batch's submit -> reap in both.
 *
 * Every scenario runs in a child process (the registry and CUDA state of
 * one do not leak into the next). Exits 77 without a GPU.
 * VYRE_CUDA_DIFF_BATCHES sets the batches a mode and plan (default 300),
 * and half the small module batches of each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_backend.h"
#include "ops.h"
#include "test_cuda_gen.h"
#include "test_module_ops.h"

#define TEST_NAME "test_cuda_modules"
#include "test_check.h"

#define HEAP_BYTES   (1u << 20)
#define POLL_TIMEOUT 30000000000ll
#define OP_FAULT     (OP_CRC + 5u)

extern const unsigned char vyre_test_module_ops_ptx[];
extern const uint64_t vyre_test_module_ops_ptx_bytes;

static struct vyre_op_module_entry entry(uint32_t number, uint8_t mask, uint8_t pure,
					 vyre_op_host_fn *host, const char *name, const char *fn)
{
	return (struct vyre_op_module_entry){.number = number,
					     .mask = mask,
					     .pure = pure,
					     .host = host,
					     .name = name,
					     .module = "test_ops",
					     .device_fn = fn,
					     .ptx = vyre_test_module_ops_ptx,
					     .ptx_bytes = vyre_test_module_ops_ptx_bytes};
}

static int fault_host(const struct vyre_op_host_args *a, uint64_t *result)
{
	(void)a;
	*result = 0;
	return 0;
}

/* The tests' ops, and entries[n - 1] replaced by @last when not NULL. */
static int register_ops(const struct vyre_op_module_entry *last)
{
	const uint8_t io = VYRE_OPERAND_IN | VYRE_OPERAND_OUT;
	const uint8_t scan = io | VYRE_OPERAND_TABLE | VYRE_OPERAND_WORD0;
	struct vyre_op_module_entry e[] = {
	    entry(OP_MADD, io, 1, test_madd_host, "madd", "test_madd_device"),
	    entry(OP_ACC, io, 0, test_acc_host, "acc", "test_acc_device"),
	    entry(OP_TSCAN, scan, 1, test_tscan_host, "tscan", "test_tscan_device"),
	    entry(OP_CSCAN, scan | VYRE_OPERAND_COUNTED, 1, test_tscan_host, "cscan",
		  "test_tscan_device"),
	    entry(OP_CFNV, io | VYRE_OPERAND_WORD0 | VYRE_OPERAND_COUNTED, 1, test_cfnv_host,
		  "cfnv", "test_cfnv_device"),
	    entry(OP_FAULT, io, 0, fault_host, "fault", "test_fault_device"),
	};
	const uint32_t n = sizeof(e) / sizeof(e[0]);

	e[4].stream = 1;

	if (last)
		e[n - 1] = *last;
	return vyre_op_modules_register(e, n);
}

/*
 * Module ops in place of built-in ones of the same operands; in a handoff
 * run only its last member, by the stream op (counted in *@fused).
 */
static uint32_t substitute(struct gen_rng *r, struct gen_batch *g, uint32_t *fused)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < g->batch.n_items; i++) {
		struct vyre_exec_item *it = &g->items[i];
		const uint32_t roll = gen_below(r, 3);
		uint32_t to = it->op;

		/* a handoff run's last member may become the stream op, no other member */
		if (it->flags & VYRE_EXEC_HANDOFF_OUT)
			continue;
		if (it->flags & VYRE_EXEC_HANDOFF_IN) {
			if (it->op == VYRE_OP_DFA_SCAN_COUNTED && roll < 2) {
				it->op = OP_CFNV;
				n++;
				*fused += 1;
			}
			continue;
		}
		switch (it->op) {
		case VYRE_OP_COPY:
		case VYRE_OP_ADD:
		case VYRE_OP_XOR:
		case VYRE_OP_MUL:
			to = roll == 0 ? OP_MADD : roll == 1 ? OP_ACC : it->op;
			break;
		case VYRE_OP_DFA_SCAN:
			to = roll < 2 ? OP_TSCAN : it->op;
			break;
		case VYRE_OP_DFA_SCAN_COUNTED:
			to = roll == 0 ? OP_CSCAN : roll == 1 ? OP_CFNV : it->op;
			break;
		default:
			break;
		}
		n += to != it->op;
		it->op = to;
	}
	return n;
}

static struct vyre_backend *open_backend(enum vyre_cuda_mode mode, char *why, uint32_t why_len,
					 int *err)
{
	struct vyre_backend_config cfg = {
	    .max_heaps = 2, .max_items = GEN_MAX_ITEMS, .cuda_mode = mode, .device = 0};
	struct vyre_backend *b = NULL;

	*err = vyre_cuda_backend->init(&b, &cfg, why, why_len);
	return *err ? NULL : b;
}

static const char *mode_name(int mode)
{
	return mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
}

static uint32_t batches(void)
{
	const char *s = getenv("VYRE_CUDA_DIFF_BATCHES");

	return s && atoi(s) > 0 ? (uint32_t)atoi(s) : 300u * gen_scale();
}

/* Random batches with module ops against the oracle, in @mode. */
static void differential(int mode)
{
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct gen_batch *g = malloc(sizeof(*g));
	struct vyre_exec_result *expect = malloc(GEN_MAX_ITEMS * sizeof(*expect));
	struct gen_rng rng = {0x0d5e + (uint64_t)mode};
	uint32_t module_items = 0, module_ok = 0, fused = 0, bad = 0, n = 0;
	char why[2048], msg[512];
	int err;

	CHECK(register_ops(NULL) == 0, "register");
	struct vyre_backend *b = open_backend((enum vyre_cuda_mode)mode, why, sizeof(why), &err);

	CHECK(heap && want && g && expect && b, "%s: init: %s", mode_name(mode), b ? "" : why);
	if (!b || !heap || !want || !g || !expect)
		goto out;
	printf("%s: %s\n", mode_name(mode), vyre_cuda_describe(b));
	CHECK(vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES) == 0, "register_heap");
	for (int plan = GEN_PLAN_SERIAL; plan <= GEN_PLAN_GROUPED; plan++)
		for (uint32_t i = 0; i < batches() && bad < 5; i++, n++) {
			gen_batch(&rng, heap, HEAP_BYTES, (enum gen_plan)plan,
				  i % 5 == 0 ? 1
				  : i % 10   ? 64
					     : GEN_MAX_ITEMS,
				  g);
			const uint32_t subs = substitute(&rng, g, &fused);

			memcpy(want, heap, HEAP_BYTES);
			gen_oracle(want, HEAP_BYTES, g, expect);
			const int done = gen_run_one(b, &g->batch, POLL_TIMEOUT);

			if (done != 1) {
				CHECK(0, "%s batch %u: submit/reap %d (%s)", mode_name(mode), n,
				      done, vyre_cuda_last_error(b));
				bad++;
				if (done == 0)
					break;
				continue;
			}
			if (gen_compare(g, expect, heap, want, HEAP_BYTES, msg, sizeof(msg))) {
				CHECK(0, "%s batch %u (%s plan, %u module ops of %u items): %s",
				      mode_name(mode), n, plan ? "grouped" : "serial", subs,
				      g->batch.n_items, msg);
				bad++;
			}
			module_items += subs;
			for (uint32_t k = 0; k < g->batch.plan.n_order; k++) {
				const uint32_t j = g->batch.plan.order[k];

				module_ok +=
				    (g->items[j].op & VYRE_OP_MODULE_BIT) && expect[j].status == 0;
			}
		}
	printf("%s: %u batches, %u module items (%u ran ok, %u ended a handoff run), %u bad\n",
	       mode_name(mode), n, module_items, module_ok, fused, bad);
	CHECK(module_ok > n, "%s: too few module items ran to show anything", mode_name(mode));
	CHECK(fused > 20, "%s: too few handoff runs ended in the stream op", mode_name(mode));
	CHECK(vyre_cuda_backend->unregister_heap(b, 0) == 0, "unregister_heap");
out:
	if (b)
		vyre_cuda_backend->shutdown(b);
	free(expect);
	free(g);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

/* A start that cannot link: missing symbol (0) or PTX that does not compile (1). */
static void link_errors(int what)
{
	static const char bad_ptx[] = ".version 7.0\n.target sm_75\n.address_size 64\nnot ptx\n";
	struct vyre_op_module_entry e = entry(OP_FAULT, VYRE_OPERAND_IN | VYRE_OPERAND_OUT, 0,
					      fault_host, "ghost", "test_ghost_device");
	char why[4096];
	int err;

	if (what == 1) {
		e.name = "broken";
		e.module = "broken_mod";
		e.device_fn = "test_broken_device";
		e.ptx = (const uint8_t *)bad_ptx;
		e.ptx_bytes = sizeof(bad_ptx) - 1;
	}
	CHECK(register_ops(&e) == 0, "register");
	struct vyre_backend *b = open_backend(VYRE_CUDA_PERSISTENT, why, sizeof(why), &err);

	printf("%s: init %d: %s\n", what ? "bad PTX" : "missing symbol", err, b ? "" : why);
	CHECK(!b && err < 0, "a module that cannot link started a backend");
	if (what == 0)
		CHECK(strstr(why, "test_ghost_device") && strstr(why, "link"),
		      "the error does not name the missing function and the link: %s", why);
	else
		CHECK(strstr(why, "broken_mod") && strstr(why, "broken"),
		      "the error does not name the module and op: %s", why);
	if (b)
		vyre_cuda_backend->shutdown(b);
}

/* One faulting module item: its batch fails as a device fault, the backend unusable. */
static void module_fault(int mode)
{
	uint8_t *heap = gen_heap_map(HEAP_BYTES);
	struct vyre_exec_item it = {.op = OP_FAULT,
				    .in_heap = 0,
				    .out_heap = 0,
				    .in_off = 0,
				    .out_off = 4096,
				    .in_bytes = 64,
				    .out_bytes = 64};
	struct vyre_exec_result r = {.status = 77, .result = 77};
	uint32_t order = 0, group_end = 1, launch_end = 1;
	const struct vyre_exec_batch batch = {
	    &it, 1, {&order, 1, &group_end, 1, &launch_end, 1}, &r};
	struct vyre_cuda_stats stats;
	char why[2048];
	int err;

	CHECK(heap && register_ops(NULL) == 0, "set-up");
	struct vyre_backend *b = open_backend((enum vyre_cuda_mode)mode, why, sizeof(why), &err);

	CHECK(b != NULL, "%s: init: %s", mode_name(mode), why);
	if (!b || !heap)
		return;
	CHECK(vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES) == 0, "register_heap");
	const int done = gen_run_one(b, &batch, POLL_TIMEOUT);

	vyre_cuda_get_stats(b, &stats);
	printf("%s fault: run %d, item status %d, %llu fault(s): %s\n", mode_name(mode), done,
	       r.status, (unsigned long long)stats.faults, vyre_cuda_last_error(b));
	CHECK(done != 0, "%s: the faulting batch hung", mode_name(mode));
	CHECK(r.status == VYRE_E_DEVICE && stats.faults == 1, "%s: fault not reported",
	      mode_name(mode));
	/* a sticky CUDA error, as any device fault: the backend says so (vyred restarts) */
	CHECK(!vyre_cuda_usable(b), "%s: still claims to be usable after the fault",
	      mode_name(mode));
	vyre_cuda_backend->shutdown(b);
	gen_heap_unmap(heap, HEAP_BYTES);
}

#define SMALL_REGION 16384u /* each item of a small batch has its own */
#define SMALL_ONE    512u   /* one-item batches timed */

/* Item @k of a small module batch: a random op over its own region, now and then invalid. */
static struct vyre_exec_item small_module_item(struct gen_rng *r, uint8_t *heap, uint32_t k)
{
	static const uint32_t ops[] = {OP_MADD, OP_ACC, OP_TSCAN, OP_CFNV};
	const uint64_t at = (uint64_t)SMALL_REGION * k + gen_below(r, 4); /* any alignment */
	const uint32_t op = ops[gen_below(r, 4)], roll = gen_below(r, 30);
	struct vyre_exec_item it = {
	    .op = op,
	    .param = (uint32_t)gen_next(r),
	    .in_off = at,
	    .in_bytes = 4 * gen_below(r, 1025),
	    .out_off = at + 8192,
	    .out_bytes = 4 + 4 * gen_below(r, 1024),
	};

	if (op == OP_TSCAN) {
		it.param = 0;
		it.table_off = at + 12288;
		it.table_bytes = 4 * gen_below(r, 32); /* an odd number of words fails */
	} else if (op == OP_CFNV) {
		/* a counted input: its length word, too long now and then */
		const uint32_t len = it.in_bytes < 4 ? 0
						     : gen_below(r, it.in_bytes - 4 + 1) +
							   (roll == 1 ? it.in_bytes : 0);

		it.in_bytes = it.in_bytes < 4 ? 4 : it.in_bytes;
		test_store_le(heap + it.in_off, len);
	}
	if (roll == 0 && op != OP_CFNV) /* in place */
		it.out_off = it.in_off;
	if (roll == 2) /* statically invalid */
		it.in_bytes += 2;
	return it;
}

static int by_ns(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * Small batches of module items alone, persistent mode: in the doorbell
 * (VYRE_MK_LAUNCH_CPL) when they fit, unless @off (VYRE_CUDA_MODULE_IMM=0).
 */
static void small_modules(int off)
{
	/* twice the differential's: VYRE_CUDA_DIFF_BATCHES shrinks both under a sanitizer */
	const uint32_t n_batches = 2 * batches();
	uint8_t *heap = gen_heap_map(HEAP_BYTES), *want = malloc(HEAP_BYTES);
	struct vyre_exec_item items[6];
	struct vyre_exec_result res[6], expect[6];
	uint32_t order[6], group_end[2], launch_end = 0, bad = 0, one = 0, fit = 0;
	int64_t *one_ns = malloc(SMALL_ONE * sizeof(*one_ns));
	struct gen_rng rng = {0x25ca + (uint64_t)off};
	struct vyre_cuda_stats st0, st1;
	const char *name = off ? "small, VYRE_CUDA_MODULE_IMM=0" : "small, in the doorbell";
	char why[2048];
	int err;

	if (off)
		setenv("VYRE_CUDA_MODULE_IMM", "0", 1);
	CHECK(heap && want && one_ns && register_ops(NULL) == 0, "set-up");
	struct vyre_backend *b = open_backend(VYRE_CUDA_PERSISTENT, why, sizeof(why), &err);

	CHECK(b != NULL, "%s: init: %s", name, why);
	if (!b || !heap || !want || !one_ns)
		goto out;
	CHECK(vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES) == 0, "register_heap");
	vyre_cuda_get_stats(b, &st0);
	for (uint32_t n = 0; n < n_batches && bad < 5; n++) {
		/* mostly 1..4 items (they fit a doorbell), some 5 or 6 (they do not) */
		const uint32_t k = n % 8 == 7 ? 5 + gen_below(&rng, 2) : 1 + gen_below(&rng, 4);
		const uint32_t groups = k > 1 && n % 16 == 5 ? 2 : 1;
		const struct vyre_heap_view view = {want, HEAP_BYTES};
		struct timespec t0, t1;

		for (uint32_t i = 0; i < 4096; i++)
			((uint64_t *)heap)[gen_below(&rng, HEAP_BYTES / 8)] = gen_next(&rng);
		for (uint32_t i = 0; i < k; i++) {
			items[i] = small_module_item(&rng, heap, i);
			order[i] = i;
		}
		group_end[0] = groups == 1 ? k : k / 2;
		group_end[1] = k;
		launch_end = groups;
		const struct vyre_exec_batch batch = {
		    items, k, {order, k, group_end, groups, &launch_end, 1}, res};

		memcpy(want, heap, HEAP_BYTES);
		for (uint32_t i = 0; i < k; i++) {
			expect[i] = (struct vyre_exec_result){0};
			expect[i].status = vyre_exec_one(&view, &items[i], &expect[i].result);
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		const int done = gen_run_one(b, &batch, POLL_TIMEOUT);
		clock_gettime(CLOCK_MONOTONIC, &t1);

		if (done != 1) {
			CHECK(0, "%s batch %u: submit/reap %d (%s)", name, n, done,
			      vyre_cuda_last_error(b));
			bad++;
			if (done == 0)
				break;
			continue;
		}
		/* statically invalid items (a length not a multiple of 4) take no room */
		uint32_t valid = 0;
		for (uint32_t i = 0; i < k; i++)
			valid += (items[i].in_bytes & 3u) == 0;
		fit += valid >= 1 && valid <= 4 && groups == 1;
		if (k == 1 && one < SMALL_ONE)
			one_ns[one++] =
			    (t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec);
		for (uint32_t i = 0; i < k; i++)
			if (res[i].status != expect[i].status ||
			    res[i].result != expect[i].result) {
				CHECK(0,
				      "%s batch %u item %u of %u (%s): status %d result %llx, want "
				      "%d %llx",
				      name, n, i, k, gen_op_name(items[i].op), res[i].status,
				      (unsigned long long)res[i].result, expect[i].status,
				      (unsigned long long)expect[i].result);
				bad++;
			}
		if (memcmp(heap, want, HEAP_BYTES) != 0) {
			CHECK(0, "%s batch %u (%u items): the heap differs from the oracle's", name,
			      n, k);
			bad++;
		}
	}
	vyre_cuda_get_stats(b, &st1);
	qsort(one_ns, one, sizeof(*one_ns), by_ns);
	const unsigned long long in_bell = (unsigned long long)(st1.module_imm - st0.module_imm);

	printf(
	    "%s: %u batches (%u of 1..4 valid items in one group), %llu in the doorbell, %u bad; "
	    "one item submit -> reap p50 %.1f us over %u\n",
	    name, n_batches, fit, in_bell, bad, one ? (double)one_ns[one / 2] / 1000.0 : 0.0, one);
	/* a batch of 1..4 valid module items in one group always fits */
	if (off)
		CHECK(in_bell == 0, "%s: %llu batches took the doorbell path", name, in_bell);
	else
		CHECK(in_bell >= fit, "%s: only %llu of %u batches that fit took the doorbell path",
		      name, in_bell, fit);
	CHECK(vyre_cuda_backend->unregister_heap(b, 0) == 0, "unregister_heap");
out:
	if (b)
		vyre_cuda_backend->shutdown(b);
	free(one_ns);
	free(want);
	gen_heap_unmap(heap, HEAP_BYTES);
}

/*
 * What a one-item batch's submit -> reap costs by path, persistent mode:
 * a built-in FILL of one word (the IMMEDIATE doorbell) on a backend
 * without modules and on one with them (the megakernel linked with module
 * code), and a module op over one word (a module batch in the doorbell,
 * unless VYRE_CUDA_MODULE_IMM=0). Printed, not checked (speed is the
 * bench's); each result is checked against the oracle.
 */
static void one_item_paths(int with_modules)
{
	uint8_t *heap = gen_heap_map(HEAP_BYTES);
	int64_t *ns = malloc(SMALL_ONE * sizeof(*ns));
	const char *name = with_modules ? "one item, modules linked" : "one item, no modules";
	char why[2048];
	int err;

	CHECK(heap && ns, "set-up");
	CHECK((with_modules ? register_ops(NULL) : vyre_op_modules_register(NULL, 0)) == 0,
	      "%s: register", name);
	struct vyre_backend *b = open_backend(VYRE_CUDA_PERSISTENT, why, sizeof(why), &err);

	CHECK(b != NULL, "%s: init: %s", name, why);
	if (!b || !heap || !ns)
		goto out;
	CHECK(vyre_cuda_backend->register_heap(b, 0, heap, HEAP_BYTES) == 0, "register_heap");
	for (int kind = 0; kind < 1 + with_modules; kind++) {
		struct vyre_exec_item it = {.op = kind ? OP_MADD : VYRE_OP_FILL,
					    .param = 0x5a5a0000u,
					    .in_off = 64,
					    .in_bytes = 4,
					    .out_off = 128,
					    .out_bytes = 4};
		struct vyre_exec_result res;
		const uint32_t order = 0, group_end = 1, launch_end = 1;
		uint32_t n = 0, bad = 0;

		for (uint32_t k = 0; k < SMALL_ONE + 32 && bad < 5; k++) {
			const struct vyre_exec_batch batch = {
			    &it, 1, {&order, 1, &group_end, 1, &launch_end, 1}, &res};
			struct timespec t0, t1;
			uint64_t want = 0;

			it.param++;
			test_store_le(heap + 64, k);
			uint8_t copy[256];

			memcpy(copy, heap, sizeof(copy));
			const struct vyre_heap_view cv = {copy, sizeof(copy)};
			const int want_status = vyre_exec_one(&cv, &it, &want);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			const int done = gen_run_one(b, &batch, POLL_TIMEOUT);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (done != 1 || res.status != want_status || res.result != want ||
			    memcmp(heap + 128, copy + 128, 4) != 0) {
				CHECK(0, "%s %s item %u: done %d status %d result %llx", name,
				      kind ? "module" : "fill", k, done, res.status,
				      (unsigned long long)res.result);
				bad++;
			}
			if (k >= 32) /* after a warm-up */
				ns[n++] = (t1.tv_sec - t0.tv_sec) * 1000000000ll +
					  (t1.tv_nsec - t0.tv_nsec);
		}
		qsort(ns, n, sizeof(*ns), by_ns);
		printf("%s: %s one-item batches submit -> reap p50 %.1f us, p90 %.1f us over %u\n",
		       name, kind ? "module (madd of one word)" : "FILL of one word",
		       n ? (double)ns[n / 2] / 1000.0 : 0.0,
		       n ? (double)ns[n * 9 / 10] / 1000.0 : 0.0, n);
	}
	CHECK(vyre_cuda_backend->unregister_heap(b, 0) == 0, "unregister_heap");
	vyre_cuda_backend->shutdown(b);
out:
	free(ns);
	if (heap)
		gen_heap_unmap(heap, HEAP_BYTES);
}

static uint32_t failures;

/*
 * Scenario @arg in a child: 0-1 differential, 2-3 link errors, 4-5 fault
 * (mode = arg % 2), 6-7 small module batches (persistent; 7 with the
 * doorbell path off), 8-9 one-item batches by path (9: modules linked).
 */
static void scenario(int arg)
{
	if (arg < 2)
		differential(arg);
	else if (arg < 4)
		link_errors(arg - 2);
	else if (arg < 6)
		module_fault(arg - 4);
	else if (arg < 8)
		small_modules(arg - 6);
	else
		one_item_paths(arg - 8);
	failures = (uint32_t)test_failures;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("VYRE_CUDA_WATCHDOG_MS", "2000", 1);
	const int skip = gen_require_gpu_in_child();

	if (skip)
		return skip;
	for (int arg = 0; arg < 10; arg++)
		failures += gen_in_child(scenario, arg, &failures);
	printf("cuda modules: %u failure(s)\n", failures);
	return failures ? 1 : 0;
}
