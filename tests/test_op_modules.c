/* SPDX-License-Identifier: MIT */
/*
 * test_op_modules - module ops (docs/design.md 6.7) in the core library:
 * the registry refuses bad entries; vyre_exec_one gives a module's host
 * function the operands the manifest kinds promise (the counted bytes of a
 * counted input, the table of a table param, else the param word) and
 * makes any failure VYRE_E_INVAL; an unregistered module number is an
 * unknown op; and random batches of the planner world (hazards, chains,
 * handoffs, dedupe, ranges) in which module ops replace built-in ones of
 * the same operands, planned and run on the CPU backend, equal the
 * sequential oracle. One module op reads what it writes and is not pure,
 * so deduplicating it would show; the CRC32C is the shipped example's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu/backend.h"
#include "../gpu/ops.h"
#include "test_planner_world.h"

#define TEST_NAME "test_op_modules"
#include "test_check.h"

#define BATCHES	  300u
#define MAX_BATCH 512u

#include "test_module_ops.h"

static const struct vyre_op_module_entry entries[] = {
    {.number = OP_CRC,
     .mask = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_WORD0,
     .pure = 1,
     .host = vyre_op_crc32c_host},
    {.number = OP_MADD, .mask = VYRE_OPERAND_IN | VYRE_OPERAND_OUT, .pure = 1, .host = test_madd_host},
    {.number = OP_ACC, .mask = VYRE_OPERAND_IN | VYRE_OPERAND_OUT, .pure = 0, .host = test_acc_host},
    {.number = OP_TSCAN,
     .mask = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE | VYRE_OPERAND_WORD0,
     .pure = 1,
     .host = test_tscan_host},
    {.number = OP_CSCAN,
     .mask = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE | VYRE_OPERAND_WORD0 |
	     VYRE_OPERAND_COUNTED,
     .pure = 1,
     .host = test_tscan_host},
};
#define N_ENTRIES (sizeof(entries) / sizeof(entries[0]))

static void registry(void)
{
	struct vyre_op_module_entry bad[2] = {entries[0], entries[1]};

	bad[0].number = 0x1001;
	CHECK(vyre_op_modules_register(bad, 1) == VYRE_E_INVAL, "a number without the module bit");
	bad[0] = entries[0];
	bad[1].number = bad[0].number;
	CHECK(vyre_op_modules_register(bad, 2) == VYRE_E_INVAL, "a number twice");
	bad[1] = entries[1];
	bad[1].host = NULL;
	CHECK(vyre_op_modules_register(bad, 2) == VYRE_E_INVAL, "no host function");
	bad[1] = entries[1];
	bad[1].mask = VYRE_OPERAND_TABLE;
	CHECK(vyre_op_modules_register(bad, 2) == VYRE_E_INVAL, "neither input nor output");
	bad[1].mask = VYRE_OPERAND_IN | 0x80;
	CHECK(vyre_op_modules_register(bad, 2) == VYRE_E_INVAL, "an unknown operand bit");
	CHECK(vyre_op_modules_register(entries, N_ENTRIES) == 0, "the test's ops");
	CHECK(vyre_op_operands(OP_TSCAN) == entries[3].mask && vyre_op_module(OP_ACC) &&
		  !vyre_op_module(OP_CSCAN + 1) && vyre_op_operands(OP_CSCAN + 1) == VYRE_E_INVAL &&
		  vyre_op_operands(VYRE_OP_COUNT) == VYRE_E_INVAL &&
		  vyre_op_operands(VYRE_OP_ADD) == (VYRE_OPERAND_IN | VYRE_OPERAND_OUT),
	      "masks");
	const struct vyre_work_item acc = {OP_ACC, 1, 2, 0}, madd = {OP_MADD, 1, 2, 0};

	CHECK(!vyre_op_idempotent(&acc) && vyre_op_idempotent(&madd), "purity");
}

/* vyre_exec_one on module ops: what the host function gets, and its failures. */
static void exec_one(void)
{
	uint8_t heap[256] = {0};
	struct vyre_heap_view views[2] = {{NULL, 0}, {heap, sizeof(heap)}};
	uint64_t result = 0;

	/* a counted input of 9 bytes "123456789" at 0, output at 64 */
	test_store_le(heap, 9);
	memcpy(heap + 4, "123456789", 9);
	struct vyre_exec_item it = {.op = OP_CRC,
				    .in_heap = 1,
				    .in_bytes = 16,
				    .out_heap = 1,
				    .out_off = 64,
				    .out_bytes = 4};

	CHECK(vyre_exec_one(views, &it, &result) == 0, "crc32c of 16 raw bytes");
	/* counted: the host gets only the 9 bytes after the length word */
	it.op = OP_CSCAN;
	it.table_heap = 1;
	it.table_off = 128;
	it.table_bytes = 8;
	heap[128] = 7;
	CHECK(vyre_exec_one(views, &it, &result) == 0, "cscan");
	struct vyre_op_host_args a = {heap + 4, 9, NULL, 4, heap + 128, 8, 0, VYRE_OP_MODULE_ABI};
	uint8_t want_out[4];
	uint64_t want = 0;

	a.out = want_out;
	test_tscan_host(&a, &want);
	CHECK(result == want && test_load_le(heap + 64) == (uint32_t)want,
	      "cscan saw the counted bytes and the table: %llx vs %llx", (unsigned long long)result,
	      (unsigned long long)want);
	it.table_bytes = 12; /* odd words: the host refuses */
	CHECK(vyre_exec_one(views, &it, &result) == VYRE_E_INVAL && result == 0,
	      "a refusal is VYRE_E_INVAL");
	test_store_le(heap, 200); /* a counted length past the input */
	it.table_bytes = 8;
	CHECK(vyre_exec_one(views, &it, &result) == VYRE_E_INVAL, "a bad counted length");
	it.op = OP_CSCAN + 1;
	CHECK(vyre_exec_one(views, &it, &result) == VYRE_E_INVAL, "an unregistered module op");
}

/* Module ops in place of built-in ones with the same operands. */
static uint32_t substitute(struct batch *b, uint64_t seed, uint32_t *acc_items)
{
	uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
	uint32_t n_mod = 0;

	for (uint32_t k = 0; k < b->n; k++) {
		const uint32_t op = b->items[k].op_handle, roll = (uint32_t)(splitmix64(&rng) % 4);
		uint32_t to = op;

		/* an invalid item runs as an unknown op in the oracle (test_planner_world.c) */
		if (b->flags[k] & VYRE_PLAN_F_INVALID)
			continue;

		switch (op) {
		case VYRE_OP_COPY:
		case VYRE_OP_ADD:
		case VYRE_OP_XOR:
		case VYRE_OP_MUL:
			to = roll == 0 ? OP_MADD : roll == 1 ? OP_ACC : op;
			break;
		case VYRE_OP_SUM:
		case VYRE_OP_MAX:
			to = roll < 2 ? OP_CRC : op;
			break;
		case VYRE_OP_DFA_SCAN:
			to = roll < 2 ? OP_TSCAN : op;
			break;
		case VYRE_OP_DFA_SCAN_COUNTED:
			to = roll < 2 ? OP_CSCAN : op;
			break;
		default:
			break;
		}
		b->items[k].op_handle = to;
		b->exec[k].op = to;
		n_mod += to != op;
		*acc_items += to == OP_ACC;
	}
	return n_mod;
}

int main(void)
{
	struct vyre_planner_config cfg;
	struct vyre_planner *planner;
	struct vyre_backend_config bcfg = {.max_heaps = WORLD_DOMAINS,
					   .max_items = 4096,
					   .cpu_threads = 2,
					   .cpu_parallel_min_bytes = 1};
	struct vyre_backend *backend;
	struct planned_run stats = {0};
	struct batch b;
	char why[128], what[96];
	uint32_t n_mod = 0, acc_items = 0, mod_ok = 0, mod_inval = 0;
	int rc = 0;

	registry();
	exec_one();
	vyre_planner_config_default(&cfg);
	cfg.handoff_bytes = 1u << 20;
	if (vyre_planner_create(&cfg, &planner, NULL) || batch_alloc(&b, MAX_BATCH))
		return 1;
	if (vyre_cpu_backend.init(&backend, &bcfg, why, sizeof(why))) {
		printf("cpu backend: %s\n", why);
		return 1;
	}
	const struct batch_mix *mixes[] = {&mix_heavy, &mix_light, &mix_chains, &mix_tables};

	for (uint64_t seed = 0; seed < BATCHES * (uint64_t)test_scale() && rc == 0; seed++) {
		struct world w;
		const uint32_t n = 8 + (uint32_t)(seed * 37 % (MAX_BATCH - 8));

		world_init(&w, seed);
		batch_generate(&b, &w, seed, n, mixes[seed % 4]);
		n_mod += substitute(&b, seed, &acc_items);
		world_run_oracle(&w, &b);
		for (uint32_t k = 0; k < b.n; k++)
			if (b.items[k].op_handle & VYRE_OP_MODULE_BIT) {
				mod_ok += b.expect[k].status == 0;
				mod_inval += b.expect[k].status == VYRE_E_INVAL;
			}
		snprintf(what, sizeof(what), "seed %llu (%u items)", (unsigned long long)seed, n);
		rc = world_run_planned(&w, &b, planner, cfg.budget_bytes - cfg.resident_bytes,
				       &vyre_cpu_backend, backend, &stats, what);
		if (rc == 0)
			rc = world_compare(&w, &b, what);
		world_fini(&w);
		CHECK(rc == 0, "%s differs from the oracle", what);
	}
	printf("%u module items (%u of the impure one), %u ran, %u invalid; %u deduplicated of "
	       "all items, %u handoffs\n",
	       n_mod, acc_items, mod_ok, mod_inval, stats.deduped, stats.handoffs);
	CHECK(mod_ok > 1000 && mod_inval > 10 && acc_items > 100 && stats.deduped > 0,
	      "the batches did not exercise module ops enough");
	vyre_cpu_backend.shutdown(backend);
	vyre_planner_destroy(planner);
	batch_free(&b);
	vyre_op_modules_register(NULL, 0);
	if (test_failures)
		return 1;
	printf("test_op_modules: ok\n");
	return 0;
}
