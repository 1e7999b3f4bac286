// SPDX-License-Identifier: MIT
//
// The device code of the byte ops (gpu/mk_decode.cuh) without a GPU: the
// .cuh is compiled for the host, a "block" is a set of threads meeting at a
// pthread barrier for __syncthreads, and every unit's status, result and heap
// bytes must equal the oracle's (vyre_bytes_exec). Random counted inputs,
// valid and malformed, in place or not, unaligned, partly overlapping, with
// blocks of 1 to 64 threads and scratch small enough for many tiles.
// VYRE_TEST_SCALE multiplies the rounds.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <vector>

#define __device__
#define __forceinline__ inline
#define _Static_assert static_assert
#include "vyre/abi.h"
#undef _Static_assert
#include "cuda_abi.h"
#include "digits.h"
extern "C" {
#include "ops_bytes.h"
}
#include "test_counted.h"

namespace
{

using std::min;

#include "mk_host_block.h"

struct record {
	int32_t status;
	uint32_t value;
};

void put_result(uint64_t results, uint32_t slot, int32_t status, uint64_t value)
{
	record *r = reinterpret_cast<record *>(results) + slot;

	r->status = status;
	r->value = value;
}

void bump_progress(vyre_mk_devstate *)
{
}

#include "mk_decode.cuh"

struct thread_job {
	vyre_mk_unit u;
	uint64_t results;
	uint32_t *scratch;
	uint32_t scratch_words;
};

void run_unit(void *arg, uint32_t)
{
	const thread_job *j = static_cast<const thread_job *>(arg);

	block_bytes_unit(j->u, j->results, j->scratch, j->scratch_words, nullptr);
}

// Runs @u on a block of @threads threads.
void run_block(const vyre_mk_unit &u, record *rec, uint32_t threads, uint32_t scratch_words)
{
	std::vector<uint32_t> scratch(scratch_words);
	thread_job j = {u, reinterpret_cast<uint64_t>(rec), scratch.data(), scratch_words};

	host_block_run(threads, false, run_unit, &j);
}

uint64_t pick(uint64_t *s, uint64_t n)
{
	return splitmix64(s) % n;
}

} // namespace

int main()
{
	static const uint32_t ops[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE, VYRE_OP_BYTEMAP};
	static const uint32_t block_threads[] = {1, 3, 32, 64};
	const char *scale_env = getenv("VYRE_TEST_SCALE");
	const uint32_t scale = scale_env && atoi(scale_env) > 0 ? (uint32_t)atoi(scale_env) : 1;
	const uint32_t rounds = 1500 * scale, heap_bytes = 1u << 16;
	std::vector<uint8_t> heap(heap_bytes), want(heap_bytes);
	uint32_t ok = 0, inval = 0;

	for (uint32_t round = 0; round < rounds; round++) {
		uint64_t s = 0x6d6b6465636f6465ull + round;

		for (uint32_t i = 0; i < heap_bytes; i += 8) {
			const uint64_t v = splitmix64(&s);
			memcpy(&heap[i], &v, 8);
		}
		const uint32_t op = ops[pick(&s, 3)];
		const uint32_t in_bytes = 4 * (1 + (uint32_t)pick(&s, 1500));
		const uint32_t in_off = 64 + (pick(&s, 4) ? 0 : (uint32_t)pick(&s, 4));
		const bool in_place = pick(&s, 3) == 0;
		uint32_t out_off = 8192 + (pick(&s, 4) ? 0 : (uint32_t)pick(&s, 4));
		uint32_t out_bytes = 4 * (1 + (uint32_t)pick(&s, 1600));
		uint32_t table_off = 20000 + (pick(&s, 4) ? 0 : 1);
		uint32_t table_bytes = pick(&s, 10) ? 256 : 252;

		test_counted_fill(&heap[in_off], in_bytes, splitmix64(&s));
		if (in_place) {
			out_off = in_off;
			out_bytes = in_bytes;
		} else if (pick(&s, 8) == 0) {
			out_off = in_off + 4 * (1 + (uint32_t)pick(&s, 8)); /* partly overlapping */
		}
		if (pick(&s, 10) == 0) {
			table_off = out_off; /* the table is the output */
			table_bytes = 256;
		}
		want = heap;
		uint64_t want_result;
		const int want_status =
		    vyre_bytes_exec(op, &want[in_off], in_bytes, &want[out_off], out_bytes,
				    &want[table_off], table_bytes, &want_result);
		if (vyre_bytes_partial_overlap(&heap[in_off], in_bytes, &heap[out_off], out_bytes))
			continue; /* the lowering completes these with VYRE_E_INVAL on the host */

		vyre_mk_unit u = {};
		u.op = op;
		u.count = in_bytes;
		u.aux = out_bytes;
		u.param = table_bytes;
		u.in = reinterpret_cast<uint64_t>(&heap[in_off]);
		u.out = reinterpret_cast<uint64_t>(&heap[out_off]);
		u.table = reinterpret_cast<uint64_t>(&heap[table_off]);
		record rec = {0x7777, 0x7777};
		const uint32_t threads = block_threads[pick(&s, 4)];
		const uint32_t scratch_words = mk_bytes::kTileAt + 4 * (1 + (uint32_t)pick(&s, 40));

		run_block(u, &rec, threads, scratch_words);
		if (rec.status != want_status || (want_status == 0 && rec.value != want_result) ||
		    heap != want) {
			uint32_t at = 0;

			while (at < heap_bytes && heap[at] == want[at])
				at++;
			printf("FAIL round %u: op %u in %u@%u out %u@%u, %u threads, %u scratch "
			       "words: status %d result %u, want %d %llu; first heap difference at "
			       "%u\n",
			       round, op, in_bytes, in_off, out_bytes, out_off, threads,
			       scratch_words, rec.status, rec.value, want_status,
			       (unsigned long long)want_result, at);
			return 1;
		}
		ok += want_status == 0;
		inval += want_status != 0;
	}
	printf("%u units equal to the oracle: %u ok, %u E_INVAL\n", ok + inval, ok, inval);
	if (ok < rounds / 10 || inval < rounds / 10) {
		printf("FAIL: too few of one outcome\n");
		return 1;
	}
	return 0;
}
