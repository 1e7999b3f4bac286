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
// short tables, bad and good DFA tables (random, or literal sets from
// vyre_dfa_compile; in shared memory or not), the last output in place over
// the first input, a failed chain predecessor; blocks of 1 to 64 threads and
// scratch small enough for many tiles. Runs that end in DFA_SCAN_COUNTED
// also run on warps (warp_fused_run), 1 to 4 runs side by side on the warps
// of one block, each with a room of its own, inputs of up to 64 KiB.
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
#include "vyre/dfa.h"

struct block_job {
	const vyre_mk_unit *run;
	uint32_t m;
	uint64_t results;
	uint32_t *scratch, scratch_words, *g, *e;
	uint64_t *cnt;
};

void run_fused(void *arg, uint32_t)
{
	const block_job *j = static_cast<const block_job *>(arg);

	block_fused_run(j->run, j->m, j->results, j->scratch, j->scratch_words, j->g, j->e, j->cnt,
			nullptr);
}

void run_block(const vyre_mk_unit *run, uint32_t m, vyre_mk_result *rec, uint32_t threads,
	       uint32_t scratch_words)
{
	std::vector<uint32_t> scratch(scratch_words, 0xdeadbeef), g(threads), e(threads);
	std::vector<uint64_t> cnt(mk_report::cnt_words(threads));
	block_job j = {run,
		       m,
		       reinterpret_cast<uint64_t>(rec),
		       scratch.data(),
		       scratch_words,
		       g.data(),
		       e.data(),
		       cnt.data()};

	host_block_run(threads, false, run_fused, &j);
}

// Warp w of one block runs runs[w] (ms[w] members, records recs[w]) with buf_words of its own.
struct warps_job {
	const std::vector<const vyre_mk_unit *> *runs;
	const std::vector<uint32_t> *ms;
	const std::vector<vyre_mk_result *> *recs;
	uint32_t *buf, buf_words;
};

void run_warp_fused(void *arg, uint32_t tid)
{
	const warps_job *j = static_cast<const warps_job *>(arg);
	const uint32_t w = tid / 32;

	warp_fused_run((*j->runs)[w], (*j->ms)[w], reinterpret_cast<uint64_t>((*j->recs)[w]),
		       j->buf + (size_t)w * j->buf_words, j->buf_words);
}

void run_warps(const std::vector<const vyre_mk_unit *> &runs, const std::vector<uint32_t> &ms,
	       const std::vector<vyre_mk_result *> &recs, uint32_t buf_words)
{
	const uint32_t n_warps = (uint32_t)runs.size();
	std::vector<uint32_t> buf((size_t)buf_words * n_warps, 0xdeadbeef);
	warps_job j = {&runs, &ms, &recs, buf.data(), buf_words};

	host_block_run(32 * n_warps, true, run_warp_fused, &j);
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

// A literal set's table (vyre_dfa_compile) at p, at most `room` bytes: its
// bytes, or 0 when it does not fit. Short patterns over few byte values, so
// that random decoded bytes match them now and then.
uint32_t write_literals(uint64_t *s, uint8_t *p, uint32_t room)
{
	uint8_t pat[8][6];
	vyre_dfa_pattern pats[8];
	const uint32_t n = 1 + (uint32_t)pick(s, 8);
	uint8_t *table = nullptr;
	uint32_t bytes = 0;

	for (uint32_t i = 0; i < n; i++) {
		pats[i] = {pat[i], 1 + (uint32_t)pick(s, 6), i, 0};
		for (uint32_t k = 0; k < 6; k++)
			pat[i][k] = (uint8_t)(pick(s, 2) ? pick(s, 4) : splitmix64(s));
	}
	if (vyre_dfa_compile(pats, n, 0, &table, &bytes, nullptr) != 0)
		return 0;
	if (bytes > room) {
		free(table);
		return 0;
	}
	memcpy(p, table, bytes);
	free(table);
	return bytes;
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

constexpr uint32_t kHeap = 1u << 19;
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

// A run and its buffers in heap, all 16-byte aligned regions of their own;
// one that ends in DFA_SCAN_COUNTED when scan.
void make_run(uint64_t *s, uint8_t *heap, layout *L, bool scan)
{
	static const uint32_t writers[] = {VYRE_OP_BASE64_DECODE, VYRE_OP_HEX_DECODE,
					   VYRE_OP_BYTEMAP};
	uint32_t at = 64;
	auto take = [&](uint32_t bytes) {
		const uint32_t o = at;
		at += (bytes + 15) & ~15u;
		return o;
	};
	// now and then up to 64 KiB, and 0 to 3 characters
	const uint32_t in_bytes = 4 * (1 + (uint32_t)(pick(s, 8)   ? pick(s, 2000)
						      : pick(s, 2) ? pick(s, 16384)
								   : pick(s, 4)));
	const uint32_t in_off = take(in_bytes);

	L->m = 2 + (uint32_t)pick(s, 3);
	L->op[0] = writers[pick(s, 3)];
	for (uint32_t j = 1; j + 1 < L->m; j++)
		L->op[j] = VYRE_OP_BYTEMAP;
	L->op[L->m - 1] = scan || pick(s, 3) ? VYRE_OP_DFA_SCAN_COUNTED : VYRE_OP_BYTEMAP;
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
			it.table_off = take((uint32_t)vyre_dfa_table_bytes(64));
			it.table_bytes = pick(s, 3)
					     ? 0
					     : write_literals(s, heap + it.table_off,
							      (uint32_t)vyre_dfa_table_bytes(64));
			if (it.table_bytes == 0) {
				it.table_bytes = (uint32_t)vyre_dfa_table_bytes(n);
				write_dfa(s, heap + it.table_off, n, pick(s, 6) == 0);
			}
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

// One run in a heap of its own, with what the oracle left.
struct one_run {
	std::vector<uint8_t> heap, want;
	layout L;
	bool after_failed;
	vyre_mk_unit run[kMaxM];
	vyre_mk_result rec[1 + kMaxM], expect[1 + kMaxM];
};

void prepare(uint64_t *s, one_run *c, bool scan)
{
	c->heap.resize(kHeap);
	for (uint32_t i = 0; i < kHeap; i += 8) {
		const uint64_t v = splitmix64(s);
		memcpy(&c->heap[i], &v, 8);
	}
	make_run(s, c->heap.data(), &c->L, scan);
	c->after_failed = pick(s, 15) == 0;

	// the oracle: the members in order through the heap, with the chain rule
	c->want = c->heap;
	const vyre_heap_view view = {c->want.data(), kHeap};
	for (uint32_t j = 0; j < c->L.m; j++) {
		uint64_t r = 0;
		int st = VYRE_E_CANCELED;

		if (!c->after_failed && (j == 0 || c->expect[j].status == 0))
			st = vyre_exec_one(&view, &c->L.item[j], &r);
		c->expect[1 + j] = {st, 0, st ? 0 : r};
	}
	// the transient buffers keep their bytes
	for (uint32_t j = 0; j + 1 < c->L.m; j++)
		memcpy(&c->want[c->L.item[j].out_off], &c->heap[c->L.item[j].out_off],
		       c->L.item[j].out_bytes);

	for (uint32_t j = 0; j < c->L.m; j++)
		c->run[j] = unit_of(c->L, j, c->heap.data());
	for (auto &r : c->rec)
		r = {0x7777, 0, 0x7777};
	// record 0 is the chain predecessor's
	c->rec[0].status = c->after_failed ? VYRE_E_INVAL : 0;
	if (pick(s, 2) || c->after_failed) {
		c->run[0].op |= VYRE_MK_AFTER_PREV;
		c->run[0].reserved = 0;
	}
}

bool same_as_oracle(const one_run &c, uint32_t round, const char *how)
{
	bool same = c.heap == c.want;

	for (uint32_t j = 0; j < c.L.m; j++)
		same = same && c.rec[1 + j].status == c.expect[1 + j].status &&
		       c.rec[1 + j].result == c.expect[1 + j].result;
	if (same)
		return true;
	uint32_t at = 0;

	while (at < kHeap && c.heap[at] == c.want[at])
		at++;
	printf("FAIL round %u: %u members, %s, predecessor %s; first heap difference at %u\n",
	       round, c.L.m, how, c.after_failed ? "failed" : "ok", at);
	for (uint32_t j = 0; j < c.L.m; j++)
		printf("  member %u op %u in %u@%llu out %u@%llu table %u: status %d "
		       "result %llu, want %d %llu\n",
		       j, c.L.item[j].op, c.L.item[j].in_bytes,
		       (unsigned long long)c.L.item[j].in_off, c.L.item[j].out_bytes,
		       (unsigned long long)c.L.item[j].out_off, c.L.item[j].table_bytes,
		       c.rec[1 + j].status, (unsigned long long)c.rec[1 + j].result,
		       c.expect[1 + j].status, (unsigned long long)c.expect[1 + j].result);
	return false;
}

} // namespace

int main()
{
	static const uint32_t block_threads[] = {1, 3, 32, 64};
	const char *scale_env = getenv("VYRE_TEST_SCALE");
	const uint32_t scale = scale_env && atoi(scale_env) > 0 ? (uint32_t)atoi(scale_env) : 1;
	const uint32_t rounds = 1000 * scale;
	uint32_t last_ok = 0, failed = 0, canceled = 0, shared_scans = 0, on_warps = 0;
	uint32_t warp_ok = 0, warp_failed = 0, big = 0;
	char how[128];

	for (uint32_t round = 0; round < rounds; round++) {
		uint64_t s = 0x6d6b66757365ull + round;
		// every other round: 1 to 4 runs that end in a scan, on the warps of one block
		const bool warp = pick(&s, 2) != 0;
		const uint32_t k = warp ? 1 + (uint32_t)pick(&s, 4) : 1;
		std::vector<one_run> cs(k);

		for (auto &c : cs)
			prepare(&s, &c, warp);
		if (warp) {
			// a warp's room: 2 KiB less the run on the H100, and smaller, for many
			// tiles
			const uint32_t buf_words = 128 + 4 * (uint32_t)pick(&s, 120);
			std::vector<const vyre_mk_unit *> runs;
			std::vector<uint32_t> ms;
			std::vector<vyre_mk_result *> recs;

			for (auto &c : cs) {
				runs.push_back(c.run);
				ms.push_back(c.L.m);
				recs.push_back(c.rec);
			}
			run_warps(runs, ms, recs, buf_words);
			snprintf(how, sizeof(how), "warp run of %u, %u room words", k, buf_words);
		} else {
			const uint32_t threads = block_threads[pick(&s, 4)];
			const uint32_t table_room = pick(&s, 2) ? 128 * 40 : 0;
			const uint32_t scratch_words =
			    mk_fuse::kTileAt + 4 * (1 + (uint32_t)pick(&s, 300)) + table_room;

			run_block(cs[0].run, cs[0].L.m, cs[0].rec, threads, scratch_words);
			snprintf(how, sizeof(how), "%u threads, %u scratch words", threads,
				 scratch_words);
		}
		for (const auto &c : cs) {
			if (!same_as_oracle(c, round, how))
				return 1;
			const int32_t last = c.expect[c.L.m].status;
			last_ok += last == 0;
			failed += last != 0 && last != VYRE_E_CANCELED;
			canceled += last == VYRE_E_CANCELED;
			on_warps += warp;
			warp_ok += warp && last == 0;
			warp_failed += warp && last != 0 && last != VYRE_E_CANCELED;
			big += warp && last == 0 && c.expect[1].result > 16384;
			shared_scans +=
			    !warp && last == 0 && c.L.op[c.L.m - 1] == VYRE_OP_DFA_SCAN_COUNTED &&
			    256 * c.L.item[c.L.m - 1].table_bytes / 1032 <= c.expect[1].result;
		}
	}
	printf("%u rounds equal to the oracle: last member ok %u, failed %u, cancelled %u (%u "
	       "scans likely from shared memory); %u runs on warps (ok %u, failed %u, %u over "
	       "16 KiB)\n",
	       rounds, last_ok, failed, canceled, shared_scans, on_warps, warp_ok, warp_failed,
	       big);
	if (last_ok < rounds / 10 || failed < rounds / 20 || canceled < rounds / 10 ||
	    warp_ok < rounds / 10 || warp_failed < rounds / 20 || big == 0) {
		printf("FAIL: too few of one outcome\n");
		return 1;
	}
	return 0;
}
