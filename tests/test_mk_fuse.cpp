// SPDX-License-Identifier: MIT
//
// The device code of on-chip handoff runs (gpu/mk_fuse.cuh) without a GPU:
// the .cuh is compiled for the host, a "block" is a set of threads meeting
// at a pthread barrier for __syncthreads, and every run's records and heap
// bytes must equal the oracle's: the members one after the other through
// the heap (vyre_exec_one, with the chain rule), except the transient
// buffers between them, whose bytes the run must leave as they were.
// Random runs of 2 to 4 members (a decoder or BYTEMAP, BYTEMAPs, a BYTEMAP
// or DFA_SCAN_COUNTED), inputs valid and malformed, outputs too short,
// short tables, bad and good DFA tables (in shared memory or not), the last
// output in place over the first input, a failed chain predecessor; blocks
// of 1 to 64 threads and scratch small enough for many tiles.
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
#include "cuda_abi.h"
#include "digits.h"
// ops.h is C: its function vyre_op_access shares its struct's name
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
extern "C" {
#include "ops.h"
}
#pragma GCC diagnostic pop
#undef _Static_assert
#include "test_counted.h"

namespace
{

using std::max;
using std::min;

#include "mk_host_block.h"

void put_result(uint64_t results, uint32_t slot, int32_t status, uint64_t value)
{
	vyre_mk_result *r = reinterpret_cast<vyre_mk_result *>(results) + slot;

	r->status = status;
	r->reserved = 0;
	r->result = value;
}

void bump_progress(vyre_mk_devstate *)
{
}

// the byte ops' own units are test_mk_decode's
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "mk_decode.cuh"
#pragma GCC diagnostic pop
#define __noinline__
// the report unit alone is test_mk_report's
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "mk_report.cuh"
#pragma GCC diagnostic pop
#include "mk_fuse.cuh"

struct block_job {
	const vyre_mk_unit *run;
	uint32_t m;
	uint64_t results;
	uint32_t *scratch, scratch_words, *g, *e;
	uint64_t *cnt;
	uint32_t tid;
};

void *run_thread(void *arg)
{
	const block_job *j = static_cast<const block_job *>(arg);

	threadIdx.x = j->tid;
	vote_phase = 0;
	block_fused_run(j->run, j->m, j->results, j->scratch, j->scratch_words, j->g, j->e, j->cnt,
			nullptr);
	return nullptr;
}

void run_block(const vyre_mk_unit *run, uint32_t m, vyre_mk_result *rec, uint32_t threads,
	       uint32_t scratch_words)
{
	std::vector<uint32_t> scratch(scratch_words, 0xdeadbeef), g(threads), e(threads);
	std::vector<uint64_t> cnt(mk_report::cnt_words(threads));
	std::vector<pthread_t> th(threads);
	std::vector<block_job> jobs(threads);

	blockDim.x = threads;
	if (pthread_barrier_init(&barrier, nullptr, threads) != 0) {
		fprintf(stderr, "pthread_barrier_init failed\n");
		exit(1);
	}
	for (uint32_t t = 0; t < threads; t++) {
		jobs[t] = {run,
			   m,
			   reinterpret_cast<uint64_t>(rec),
			   scratch.data(),
			   scratch_words,
			   g.data(),
			   e.data(),
			   cnt.data(),
			   t};
		if (pthread_create(&th[t], nullptr, run_thread, &jobs[t]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	}
	for (uint32_t t = 0; t < threads; t++)
		pthread_join(th[t], nullptr);
	pthread_barrier_destroy(&barrier);
}

uint64_t pick(uint64_t *s, uint64_t n)
{
	return splitmix64(s) % n;
}

void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

// A DFA table of n states at p; malformed when bad. Returns its bytes.
uint32_t write_dfa(uint64_t *s, uint8_t *p, uint32_t n, bool bad)
{
	const uint32_t accept_words = (n + 31) / 32;
	uint8_t *next = p + 8 + 4 * accept_words;

	put32(p, n);
	put32(p + 4, (uint32_t)pick(s, n));
	for (uint32_t i = 0; i < accept_words; i++)
		put32(p + 8 + 4 * i, (uint32_t)splitmix64(s));
	for (uint32_t i = 0; i < 256 * n; i++)
		put32(next + 4 * i, (uint32_t)pick(s, n));
	if (bad) {
		if (pick(s, 2))
			put32(next + 4 * pick(s, 256 * n), n + (uint32_t)pick(s, 5));
		else
			put32(p + 4, n + (uint32_t)pick(s, 3));
	}
	return (uint32_t)vyre_dfa_table_bytes(n);
}

// Counted input of op at p (bytes of room): usually valid for the op.
void fill_input(uint64_t *s, uint8_t *p, uint32_t bytes, uint32_t op)
{
	const uint32_t room = bytes - 4;

	if (pick(s, 3) == 0 || op == VYRE_OP_BYTEMAP) {
		test_counted_fill(p, bytes, splitmix64(s));
		return;
	}
	uint8_t *t = p + 4;
	uint32_t len;

	if (op == VYRE_OP_BASE64_DECODE) {
		const uint32_t n = (uint32_t)pick(s, room / 4 * 3 + 1);
		std::vector<uint8_t> raw(n + 3);

		for (auto &b : raw)
			b = (uint8_t)splitmix64(s);
		len = test_base64_encode(raw.data(), n, t);
	} else {
		len = 2 * (uint32_t)pick(s, room / 2 + 1);
		for (uint32_t i = 0; i < len; i++)
			t[i] = (uint8_t) "0123456789abcdefABCDEF"[pick(s, 22)];
	}
	if (len && pick(s, 6) == 0)
		t[pick(s, len)] = (uint8_t) "=!g \xff"[pick(s, 5)];
	put32(p, len);
}

constexpr uint32_t kHeap = 1u << 17;
constexpr uint32_t kMaxM = 4;

struct layout {
	uint32_t m, op[kMaxM];
	vyre_exec_item item[kMaxM];
};

vyre_exec_item counted_item(uint32_t op, uint32_t in_off, uint32_t in_bytes, uint32_t out_off,
			    uint32_t out_bytes)
{
	vyre_exec_item it = {};

	it.op = op;
	it.in_off = in_off;
	it.in_bytes = in_bytes;
	it.out_off = out_off;
	it.out_bytes = out_bytes;
	return it;
}

// A run and its buffers in heap, all 16-byte aligned regions of their own.
void make_run(uint64_t *s, uint8_t *heap, layout *L)
{
	static const uint32_t writers[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE,
					   VYRE_OP_BYTEMAP};
	uint32_t at = 64;
	auto take = [&](uint32_t bytes) {
		const uint32_t o = at;
		at += (bytes + 15) & ~15u;
		return o;
	};
	const uint32_t in_bytes = 4 * (1 + (uint32_t)pick(s, 2000));
	const uint32_t in_off = take(in_bytes);

	L->m = 2 + (uint32_t)pick(s, 3);
	L->op[0] = writers[pick(s, 3)];
	for (uint32_t j = 1; j + 1 < L->m; j++)
		L->op[j] = VYRE_OP_BYTEMAP;
	L->op[L->m - 1] = pick(s, 3) ? VYRE_OP_DFA_SCAN_COUNTED : VYRE_OP_BYTEMAP;
	fill_input(s, heap + in_off, in_bytes, L->op[0]);

	uint32_t prev_off = in_off, prev_bytes = in_bytes;
	for (uint32_t j = 0; j < L->m; j++) {
		const uint32_t op = L->op[j];
		const bool last = j + 1 == L->m;
		// room for what it writes, now and then too little
		uint32_t out_bytes = 4 + (prev_bytes & ~3u);
		if (pick(s, 12) == 0)
			out_bytes = 4 * (1 + (uint32_t)pick(s, out_bytes / 8 + 1));
		uint32_t out_off;

		if (last && op == VYRE_OP_DFA_SCAN_COUNTED) {
			out_bytes = 4;
			out_off = take(4);
		} else if (last && pick(s, 3) == 0) {
			out_off = in_off; // in place over the run's input
			out_bytes = in_bytes;
		} else {
			out_off = take(out_bytes);
		}
		vyre_exec_item it = counted_item(op, prev_off, prev_bytes, out_off, out_bytes);

		if (op == VYRE_OP_BYTEMAP) {
			it.table_bytes = pick(s, 10) ? 256 : 252;
			it.table_off = take(256);
			for (uint32_t b = 0; b < 256; b++)
				heap[it.table_off + b] = (uint8_t)splitmix64(s);
		} else if (op == VYRE_OP_DFA_SCAN_COUNTED) {
			const uint32_t n =
			    pick(s, 5) ? 1 + (uint32_t)pick(s, 8) : 30 + (uint32_t)pick(s, 8);
			it.table_bytes = (uint32_t)vyre_dfa_table_bytes(n);
			it.table_off = take(it.table_bytes);
			write_dfa(s, heap + it.table_off, n, pick(s, 6) == 0);
		}
		L->item[j] = it;
		prev_off = out_off;
		prev_bytes = out_bytes;
	}
	if (at > kHeap) {
		fprintf(stderr, "layout past the heap\n");
		exit(1);
	}
}

// What the lowering gives member j (cuda_lower.c's result unit, as a run member).
vyre_mk_unit unit_of(const layout &L, uint32_t j, uint8_t *heap)
{
	const vyre_exec_item &it = L.item[j];
	vyre_mk_unit u = {};
	const uint64_t base = reinterpret_cast<uint64_t>(heap);

	u.op = it.op | (j ? VYRE_MK_HANDOFF_IN : 0u) | (j + 1 < L.m ? VYRE_MK_HANDOFF_OUT : 0u);
	u.count = it.in_bytes;
	u.slot = 1 + j;
	u.in = base + it.in_off;
	u.out = base + it.out_off;
	u.table = it.table_bytes ? base + it.table_off : 0;
	if (it.op == VYRE_OP_DFA_SCAN_COUNTED) {
		u.aux = it.table_bytes;
	} else {
		u.aux = it.out_bytes;
		u.param = it.table_bytes;
	}
	return u;
}

} // namespace

int main()
{
	static const uint32_t block_threads[] = {1, 3, 32, 64};
	const char *scale_env = getenv("VYRE_TEST_SCALE");
	const uint32_t scale = scale_env && atoi(scale_env) > 0 ? (uint32_t)atoi(scale_env) : 1;
	const uint32_t rounds = 1200 * scale;
	std::vector<uint8_t> heap(kHeap), want(kHeap);
	uint32_t last_ok = 0, failed = 0, canceled = 0, shared_scans = 0;

	for (uint32_t round = 0; round < rounds; round++) {
		uint64_t s = 0x6d6b66757365ull + round;
		layout L;

		for (uint32_t i = 0; i < kHeap; i += 8) {
			const uint64_t v = splitmix64(&s);
			memcpy(&heap[i], &v, 8);
		}
		make_run(&s, heap.data(), &L);
		const bool after_failed = pick(&s, 15) == 0;

		// the oracle: the members in order through the heap, with the chain rule
		want = heap;
		vyre_mk_result expect[1 + kMaxM] = {};
		const vyre_heap_view view = {want.data(), kHeap};
		for (uint32_t j = 0; j < L.m; j++) {
			uint64_t r = 0;
			int st = VYRE_E_CANCELED;

			if (!after_failed && (j == 0 || expect[j].status == 0))
				st = vyre_exec_one(&view, &L.item[j], &r);
			expect[1 + j] = {st, 0, st ? 0 : r};
		}
		// the transient buffers keep their bytes
		for (uint32_t j = 0; j + 1 < L.m; j++)
			memcpy(&want[L.item[j].out_off], &heap[L.item[j].out_off],
			       L.item[j].out_bytes);

		vyre_mk_unit run[kMaxM];
		for (uint32_t j = 0; j < L.m; j++)
			run[j] = unit_of(L, j, heap.data());
		vyre_mk_result rec[1 + kMaxM];
		for (auto &r : rec)
			r = {0x7777, 0, 0x7777};
		// record 0 is the chain predecessor's
		rec[0].status = after_failed ? VYRE_E_INVAL : 0;
		if (pick(&s, 2) || after_failed) {
			run[0].op |= VYRE_MK_AFTER_PREV;
			run[0].reserved = 0;
		}
		const uint32_t threads = block_threads[pick(&s, 4)];
		const uint32_t table_room = pick(&s, 2) ? 128 * 40 : 0;
		const uint32_t scratch_words =
		    mk_fuse::kTileAt + 4 * (1 + (uint32_t)pick(&s, 300)) + table_room;

		run_block(run, L.m, rec, threads, scratch_words);
		bool same = heap == want;
		for (uint32_t j = 0; j < L.m; j++)
			same = same && rec[1 + j].status == expect[1 + j].status &&
			       rec[1 + j].result == expect[1 + j].result;
		if (!same) {
			uint32_t at = 0;

			while (at < kHeap && heap[at] == want[at])
				at++;
			printf("FAIL round %u: %u members, %u threads, %u scratch words, "
			       "predecessor %s; first heap difference at %u\n",
			       round, L.m, threads, scratch_words, after_failed ? "failed" : "ok",
			       at);
			for (uint32_t j = 0; j < L.m; j++)
				printf(
				    "  member %u op %u in %u@%llu out %u@%llu table %u: status %d "
				    "result %llu, want %d %llu\n",
				    j, L.item[j].op, L.item[j].in_bytes,
				    (unsigned long long)L.item[j].in_off, L.item[j].out_bytes,
				    (unsigned long long)L.item[j].out_off, L.item[j].table_bytes,
				    rec[1 + j].status, (unsigned long long)rec[1 + j].result,
				    expect[1 + j].status, (unsigned long long)expect[1 + j].result);
			return 1;
		}
		const int32_t last = expect[L.m].status;
		last_ok += last == 0;
		failed += last != 0 && last != VYRE_E_CANCELED;
		canceled += last == VYRE_E_CANCELED;
		shared_scans += last == 0 && L.op[L.m - 1] == VYRE_OP_DFA_SCAN_COUNTED &&
				table_room &&
				256 * L.item[L.m - 1].table_bytes / 1032 <= expect[1].result;
	}
	printf("%u runs equal to the oracle: last member ok %u, failed %u, cancelled %u (%u "
	       "scans likely from shared memory)\n",
	       rounds, last_ok, failed, canceled, shared_scans);
	if (last_ok < rounds / 10 || failed < rounds / 20 || canceled < rounds / 10) {
		printf("FAIL: too few of one outcome\n");
		return 1;
	}
	return 0;
}
