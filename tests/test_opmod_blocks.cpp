/* SPDX-License-Identifier: MIT */
/*
 * test_opmod_blocks - the example op modules' device functions
 * (examples/ops/NAME/device.cu) compiled for the host and run as a block
 * of host threads (tests/mk_host_block.h: __syncthreads a barrier, the
 * scratch one shared array), against their host functions on
 * tests/opmod_device_cases.h's cases: the block-parallel CRC combination,
 * XXH64's staged stripes, the histogram's bin copies and the dot product's
 * lanes and tree are checked without a GPU. test_opmod_device runs the
 * same cases on one. crc32c's stream op crc32c_counted is called a tile at
 * a time with its state words carried, input cut at random points, against
 * the host function over the whole input.
 */
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <vector>

#define __device__
#define __forceinline__ inline

/* the CUDA intrinsics the examples use, as the host computes them */
static inline uint32_t atomicAdd(uint32_t *p, uint32_t v)
{
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline float __fmaf_rn(float a, float b, float c)
{
	return fmaf(a, b, c);
}
static inline float __fadd_rn(float a, float b)
{
	return a + b;
}
static inline float __uint_as_float(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}
static inline uint32_t __float_as_uint(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

#include "mk_host_block.h"

#include "../examples/ops/crc32c/device.cu"
#include "../examples/ops/dot/device.cu"
#include "../examples/ops/hash64/device.cu"
#include "../examples/ops/histogram/device.cu"
#include "opmod_device_cases.h"

namespace
{
alignas(16) unsigned char scratch[16384];

void to_host(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

typedef int device_fn(const struct vyre_op_dev_args *, unsigned long long *);

// One call of a device function on a block: every thread with args, its own
// thread index and the shared scratch; thread 0's outcome kept.
struct block_call {
	device_fn *fn;
	struct vyre_op_dev_args args; // thread, threads and scratch set here
	struct outcome *o;
};

void call_thread(void *arg, uint32_t t)
{
	const block_call *c = static_cast<const block_call *>(arg);
	struct vyre_op_dev_args b = c->args;
	unsigned long long result = 0x5eed5eed5eed5eedull;

	b.thread = t;
	const int rc = c->fn(&b, &result);

	if (t == 0) {
		c->o->rc = rc;
		c->o->result = result;
	}
}

device_fn *device_fn_of(int op)
{
	return op == OP_CRC32C	    ? vyre_op_crc32c_device
	       : op == OP_HASH64    ? vyre_op_hash64_device
	       : op == OP_HISTOGRAM ? vyre_op_histogram_device
				    : vyre_op_dot_device;
}

void block_item(int op, const struct vyre_op_dev_args *a, uint32_t threads, uint32_t scratch_bytes,
		struct outcome *o)
{
	block_call c = {device_fn_of(op), *a, o};

	c.args.threads = threads;
	c.args.scratch = scratch;
	c.args.scratch_bytes = scratch_bytes;
	memset(scratch, 0x77, sizeof(scratch)); /* what an earlier item left */
	host_block_run(threads, false, call_thread, &c);
}

/*
 * crc32c_counted over @n bytes cut into random tiles, a block of @threads
 * host threads a call, state words carried from call to call: the CRC of
 * the whole, written once, at the last tile.
 */
int stream_crc(const uint8_t *p, uint32_t n, uint32_t param, uint32_t threads, uint64_t *rng,
	       uint8_t out[8], unsigned long long *result)
{
	uint32_t state[VYRE_OP_STATE_WORDS] = {0};
	uint32_t done = 0, tile = 0;
	struct outcome o = {0, 0};

	do {
		const uint32_t left = n - done;
		const uint32_t len = left == 0 ? 0 : 1 + (uint32_t)(splitmix64(rng) % left);
		block_call c = {vyre_op_crc32c_counted_device, {}, &o};

		c.args.in = p + done;
		c.args.in_bytes = len;
		c.args.out = out;
		c.args.out_bytes = 4;
		c.args.param = param;
		c.args.abi = VYRE_OP_MODULE_ABI;
		c.args.threads = threads;
		c.args.scratch = scratch;
		c.args.scratch_bytes = sizeof(scratch);
		c.args.tile = tile;
		c.args.last_tile = done + len == n;
		c.args.state = state;
		host_block_run(threads, false, call_thread, &c);
		done += len;
		tile++;
	} while (o.rc == 0 && done < n);
	*result = o.result;
	return o.rc;
}

void stream_cases()
{
	static std::vector<uint8_t> text(70000);
	uint64_t rng = 0x73747265616dull;

	for (int i = 0; i < 40; i++) {
		const uint32_t n = i < 8 ? (uint32_t)i : (uint32_t)(splitmix64(&rng) % text.size());
		const uint32_t param = i % 3 ? 0 : (uint32_t)splitmix64(&rng);
		const uint32_t threads = i % 10 == 9 ? 1024u : 32u << (i % 3);
		uint8_t out[8], want_out[8];
		unsigned long long result = 0;
		uint64_t want = 0;

		for (uint32_t k = 0; k < n; k++)
			text[k] = (uint8_t)splitmix64(&rng);
		memset(out, CASES_CANARY, sizeof(out));
		memset(want_out, CASES_CANARY, sizeof(want_out));
		const struct vyre_op_host_args h = {text.data(), n, want_out, 4,
						    NULL,	 0, param,    VYRE_OP_MODULE_ABI};
		const int host_rc = vyre_op_crc32c_counted_host(&h, &want);
		const int rc = stream_crc(text.data(), n, param, threads, &rng, out, &result);

		if (rc != 0 || host_rc != 0 || result != want || memcmp(out, want_out, 8) != 0) {
			fprintf(
			    stderr,
			    "test_opmod_blocks: crc32c_counted %d: %u bytes in tiles, %u threads: "
			    "rc %d/%d, %08llx vs %08llx\n",
			    i, n, threads, rc, host_rc, result, (unsigned long long)want);
			case_failures++;
		}
	}
}
} // namespace

int main()
{
	static const uint32_t threads[] = {32, 96, 256, 1024};
	static std::vector<uint8_t> in(CASES_MAX_IN + CASES_SLACK),
	    table(CASES_MAX_IN + CASES_SLACK), out(CASES_OUT_MAX);
	const struct block_runner r = {
	    "test_opmod_blocks", in.data(), table.data(), out.data(), to_host, to_host, block_item};

	if (cases_init() != 0)
		return 1;
	/* host threads are slow to start and to meet: fewer items, and 1024 threads in 1 of 4 */
	for (int op = 0; op < N_OPS; op++) {
		case_random(&r, op, 60, CASES_MAX_IN / 4, threads, 4);
		case_refusals(&r, op);
	}
	stream_cases();
	cases_free();
	if (case_failures) {
		fprintf(stderr, "test_opmod_blocks: %d failures\n", case_failures);
		return 1;
	}
	printf("test_opmod_blocks: ok\n");
	return 0;
}
