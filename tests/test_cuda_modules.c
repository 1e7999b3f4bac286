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
 * restart tests show that part for every device fault).
 *
 * Every scenario runs in a child process (the registry and CUDA state of
 * one do not leak into the next). Exits 77 without a GPU.
 * VYRE_CUDA_DIFF_BATCHES sets the batches a mode and plan (default 300).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static uint32_t failures;

/* Scenario @arg in a child: 0-1 differential, 2-3 link errors, 4-5 fault (mode = arg % 2). */
static void scenario(int arg)
{
	if (arg < 2)
		differential(arg);
	else if (arg < 4)
		link_errors(arg - 2);
	else
		module_fault(arg - 4);
	failures = (uint32_t)test_failures;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("VYRE_CUDA_WATCHDOG_MS", "2000", 1);
	const int skip = gen_require_gpu_in_child();

	if (skip)
		return skip;
	for (int arg = 0; arg < 6; arg++)
		failures += gen_in_child(scenario, arg, &failures);
	printf("cuda modules: %u failure(s)\n", failures);
	return failures ? 1 : 0;
}
