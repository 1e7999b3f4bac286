/* SPDX-License-Identifier: MIT */
/*
 * tests/opmod_device_cases.h - the cases the example op modules' device
 * functions (examples/ops/NAME/device.cu) must pass against their host
 * functions, whatever runs the block: test_opmod_device on a GPU,
 * test_opmod_blocks on host threads. Random sizes from 0 to 1 MiB,
 * unaligned operands, blocks of 1024 threads and of others, scratch of the
 * minimum and more, the output in place, operands both refuse; the output's
 * bytes past what the op writes must stay. C++ (CUDA or not), included once.
 */
#ifndef VYRE_TESTS_OPMOD_DEVICE_CASES_H
#define VYRE_TESTS_OPMOD_DEVICE_CASES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_rand.h"
#include "vyre/op_module.h"

extern "C" {
vyre_op_host_fn vyre_op_crc32c_host, vyre_op_crc32c_counted_host, vyre_op_hash64_host,
    vyre_op_histogram_host, vyre_op_dot_host;
}

enum { OP_CRC32C, OP_HASH64, OP_HISTOGRAM, OP_DOT, N_OPS };
static const char *const op_names[N_OPS] = {"crc32c", "hash64", "histogram", "dot"};
static vyre_op_host_fn *const op_hosts[N_OPS] = {vyre_op_crc32c_host, vyre_op_hash64_host,
						 vyre_op_histogram_host, vyre_op_dot_host};
static const uint32_t op_out_need[N_OPS] = {4, 8, 1024, 4};

/* Op @op's device function on @a (declared or defined before this header). */
#define OPMOD_DEVICE_CALL(op, a, result)                                                           \
	((op) == OP_CRC32C	? vyre_op_crc32c_device(a, result)                                 \
	 : (op) == OP_HASH64	? vyre_op_hash64_device(a, result)                                 \
	 : (op) == OP_HISTOGRAM ? vyre_op_histogram_device(a, result)                              \
				: vyre_op_dot_device(a, result))

#define CASES_MAX_IN  (1u << 20)
#define CASES_OUT_MAX 2048u
#define CASES_SLACK   64u
#define CASES_CANARY  0xa5

struct outcome {
	int rc;
	unsigned long long result;
};

/*
 * What runs the block: three buffers of CASES_MAX_IN + CASES_SLACK bytes
 * (out: CASES_OUT_MAX) in its memory, copies to and from them, and one item
 * of op @op with operands @a (thread, threads and scratch left to it).
 */
struct block_runner {
	const char *test;
	uint8_t *in, *table, *out;
	void (*to)(void *dst, const void *src, size_t n);
	void (*from)(void *dst, const void *src, size_t n);
	void (*item)(int op, const struct vyre_op_dev_args *a, uint32_t threads, uint32_t scratch,
		     struct outcome *o);
};

struct item {
	int op;
	uint32_t n, in_off, table_n, table_off, out_n, param, threads, scratch;
	int in_place; /* the output is the input */
};

static int case_failures;
static uint8_t *h_in, *h_table, *h_out, *dev_view;
static uint64_t case_rng = 0x6f70646576ull;

/* Runs @it through @r and through the host function over the same bytes; compares. */
static void case_compare(const struct block_runner *r, const struct item *it, const char *what)
{
	struct vyre_op_dev_args a;
	struct outcome o;
	uint64_t host_result = 0;
	const int dot = it->op == OP_DOT;

	memset(&a, 0, sizeof(a));
	r->to(r->in, h_in, CASES_MAX_IN + CASES_SLACK);
	r->to(r->table, h_table, CASES_MAX_IN + CASES_SLACK);
	memset(h_out, CASES_CANARY, CASES_OUT_MAX);
	r->to(r->out, h_out, CASES_OUT_MAX);
	a.in = it->n || !dot ? r->in + it->in_off : NULL;
	a.in_bytes = it->n;
	a.out = it->in_place ? r->in + it->in_off : r->out;
	a.out_bytes = it->out_n;
	a.table = dot ? r->table + it->table_off : NULL;
	a.table_bytes = dot ? it->table_n : 0;
	a.param = it->param;
	a.abi = VYRE_OP_MODULE_ABI;
	r->item(it->op, &a, it->threads, it->scratch, &o);

	const uint8_t *dev_out = dev_view;

	if (it->in_place) {
		r->from(dev_view, r->in, CASES_MAX_IN + CASES_SLACK);
		dev_out += it->in_off;
	} else {
		r->from(dev_view, r->out, CASES_OUT_MAX);
	}
	uint8_t *host_out = it->in_place ? h_in + it->in_off : h_out;
	const struct vyre_op_host_args h = {a.in ? h_in + it->in_off : NULL,
					    it->n,
					    host_out,
					    it->out_n,
					    dot ? h_table + it->table_off : NULL,
					    dot ? it->table_n : 0,
					    it->param,
					    VYRE_OP_MODULE_ABI};
	const int host_rc = op_hosts[it->op](&h, &host_result);
	const int same = memcmp(dev_out, host_out, it->in_place ? it->n : it->out_n) == 0;

	if (o.rc != host_rc || (host_rc == 0 && o.result != host_result) || !same) {
		fprintf(
		    stderr,
		    "%s: %s %s: %u bytes (+%u) table %u (+%u) out %u param %08x, %u threads, %u "
		    "scratch%s: rc %d/%d, result %016llx/%016llx, output %s\n",
		    r->test, op_names[it->op], what, it->n, it->in_off, it->table_n, it->table_off,
		    it->out_n, it->param, it->threads, it->scratch, it->in_place ? " in place" : "",
		    o.rc, host_rc, o.result, (unsigned long long)host_result,
		    same ? "equal" : "differs");
		case_failures++;
	}
}

static uint32_t case_size(int i, uint32_t max)
{
	if (i < 70)
		return (uint32_t)i;
	switch (splitmix64(&case_rng) % 4) {
	case 0:
		return (uint32_t)(splitmix64(&case_rng) % 4096);
	case 1:
		return (uint32_t)(splitmix64(&case_rng) % 70000);
	case 2:
		return max - (uint32_t)(splitmix64(&case_rng) % 64);
	default:
		return (uint32_t)(splitmix64(&case_rng) % (max + 1));
	}
}

/* Random bytes; as floats, of many scales with zeros, subnormals, infinities and NaNs. */
static void case_fill(uint8_t *p, uint32_t n, int floats)
{
	for (uint32_t k = 0; k < n; k += 4) {
		const uint64_t x = splitmix64(&case_rng);
		uint32_t w = (uint32_t)x;

		if (floats) {
			const float f =
			    ldexpf((float)((int64_t)(x >> 8) % 2000001 - 1000000) / 1e6f,
				   (int)((x >> 40) % 40) - 20);

			memcpy(&w, &f, 4);
			if (x % 97 == 0)
				w &= 0x807fffffu; /* subnormal */
			else if (x % 89 == 0)
				w = x & 64 ? 0x7f800000u : 0x7fc00001u;
		}
		for (uint32_t b = 0; b < 4 && k + b < n; b++)
			p[k + b] = (uint8_t)(w >> 8 * b);
	}
}

/* @count random items of @op, sizes up to @max, block sizes from @threads (@n_threads of them). */
static void case_random(const struct block_runner *r, int op, int count, uint32_t max,
			const uint32_t *threads, int n_threads)
{
	for (int i = 0; i < count; i++) {
		struct item it;

		memset(&it, 0, sizeof(it));
		it.op = op;
		it.n = case_size(i, max);
		if (op == OP_DOT)
			it.n &= ~3u;
		it.in_off = i % 5 == 4 ? (uint32_t)(splitmix64(&case_rng) % 8) : 0;
		it.table_n = it.n;
		it.table_off = i % 7 == 6 ? (uint32_t)(splitmix64(&case_rng) % 8) : 0;
		it.out_n = op_out_need[op] + (uint32_t)(splitmix64(&case_rng) % 16);
		it.param = op <= OP_HASH64 && i % 2 ? (uint32_t)splitmix64(&case_rng) : 0;
		it.threads = threads[i % n_threads];
		it.scratch = i % 3 == 2 ? 16384 : VYRE_OP_DEV_SCRATCH_MIN;
		it.in_place = i % 11 == 10 && it.n >= op_out_need[op];
		if (it.in_place)
			it.out_n = it.n;
		case_fill(h_in, it.in_off + it.n + 8, op == OP_DOT);
		case_fill(h_table, it.table_off + it.n + 8, 1);
		case_compare(r, &it, "random");
	}
}

/* Operands the op refuses, on the device as on the host. */
static void case_refusals(const struct block_runner *r, int op)
{
	struct item it;

	memset(&it, 0, sizeof(it));
	it.op = op;
	it.n = 64;
	it.table_n = 64;
	it.threads = 1024;
	it.scratch = VYRE_OP_DEV_SCRATCH_MIN;
	it.out_n = op_out_need[op] - 1;
	case_compare(r, &it, "output too small");
	if (op == OP_DOT) {
		it.out_n = 4;
		it.table_n = 60;
		case_compare(r, &it, "unequal lengths");
		it.n = it.table_n = 62;
		case_compare(r, &it, "not whole floats");
	}
}

/* The host-side buffers: 0, or -1. */
static int cases_init(void)
{
	h_in = (uint8_t *)calloc(1, CASES_MAX_IN + CASES_SLACK);
	h_table = (uint8_t *)calloc(1, CASES_MAX_IN + CASES_SLACK);
	h_out = (uint8_t *)calloc(1, CASES_OUT_MAX);
	dev_view = (uint8_t *)calloc(1, CASES_MAX_IN + CASES_SLACK);
	return h_in && h_table && h_out && dev_view ? 0 : -1;
}

static void cases_free(void)
{
	free(h_in);
	free(h_table);
	free(h_out);
	free(dev_view);
}

#endif /* VYRE_TESTS_OPMOD_DEVICE_CASES_H */
