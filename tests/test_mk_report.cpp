// SPDX-License-Identifier: MIT
//
// The device code of DFA_REPORT and DFA_REPORT_COUNTED (gpu/mk_report.cuh)
// without a GPU: the .cuh is compiled for the host, a "block" is a set of
// threads meeting at a pthread barrier, and every report must equal a
// brute-force reference written here: the table walked byte by byte from
// the start (design.md 6.8's definition), and for literal sets also every
// occurrence of every pattern found by string comparison. Tables: random
// automata with random report sections (guesses often wrong: the rounds),
// and literal sets built here as Aho-Corasick automata (guesses right).
// Blocks of 1 to 64 threads and tiles of 16 bytes to 4 KiB, so chunk and
// tile boundaries fall everywhere; capacities from 0 to more than the
// total; whole and counted inputs at any alignment; streams: a text cut
// into random pieces gives the whole text's records and end state; and
// malformed tables, stream states, counted lengths: VYRE_E_INVAL with
// nothing written (and a malformed report section claimed trusted: records
// within the output only). Every item runs on a block or on a warp (the
// warp path: 32 lanes, device input in place or host input staged), and
// blocks of 1 to 4 warps run several items at once. Then BASE64_DECODE -> DFA_REPORT_COUNTED runs
// on chip (block_fused_run of gpu/mk_fuse.cuh) against the decoder followed by the reference.
// VYRE_TEST_SCALE multiplies the rounds.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <pthread.h>
#include <string>
#include <vector>

#define __device__
#define __forceinline__ inline
#define __noinline__
#define _Static_assert static_assert
#include "vyre/abi.h"
#include "cuda_abi.h"
#include "digits.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
extern "C" {
#include "ops.h"
}
#pragma GCC diagnostic pop
#undef _Static_assert
#include "test_counted.h"
#include "test_rand.h"

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

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "mk_decode.cuh"
#include "mk_report.cuh"
#include "mk_fuse.cuh"
#pragma GCC diagnostic pop

int failures;

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);               \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			if (++failures > 10)                                                       \
				exit(1);                                                           \
		}                                                                                  \
	} while (0)

uint64_t rng;

uint64_t pick(uint64_t n)
{
	return n ? splitmix64(&rng) % n : 0;
}

void put32(std::vector<uint8_t> &v, size_t at, uint32_t x)
{
	memcpy(v.data() + at, &x, 4);
}

uint32_t get32(const uint8_t *p)
{
	uint32_t x;
	memcpy(&x, p, 4);
	return x;
}

uint64_t get64(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, 8);
	return x;
}

struct entry {
	uint32_t id, len;
};

// A table with its report section, kept apart for the reference.
struct table {
	uint32_t n, start;
	std::vector<uint32_t> next;	       // n * 256
	std::vector<std::vector<entry>> lists; // per state
	std::vector<uint8_t> bytes;	       // the table as the device reads it
};

void serialize(table &t)
{
	const uint64_t sec = vyre_dfa_table_bytes(t.n);
	uint32_t n_out = 0;

	for (const auto &l : t.lists)
		// cppcheck-suppress useStlAlgorithm
		n_out += (uint32_t)l.size();
	t.bytes.assign(sec + 8 + 4 * (t.n + 1) + 8 * (uint64_t)n_out, 0);
	put32(t.bytes, 0, t.n);
	put32(t.bytes, 4, t.start);
	// a state with a list accepts; one without may, too (the walks must not
	// take an accept bit for a list)
	for (uint32_t s = 0; s < t.n; s++)
		if (!t.lists[s].empty() || pick(4) == 0)
			t.bytes[8 + s / 8] |= (uint8_t)(1u << (s % 8));
	const size_t next_at = 4 * (2 + (t.n + 31) / 32);
	for (size_t i = 0; i < t.next.size(); i++)
		put32(t.bytes, next_at + 4 * i, t.next[i]);
	put32(t.bytes, sec, VYRE_DFA_REPORT_MAGIC);
	put32(t.bytes, sec + 4, n_out);
	uint32_t at = 0;
	for (uint32_t s = 0; s <= t.n; s++) {
		put32(t.bytes, sec + 8 + 4 * s, at);
		if (s == t.n)
			break;
		for (const entry &e : t.lists[s]) {
			const size_t o = sec + 8 + 4 * (t.n + 1) + 8 * (size_t)at++;
			put32(t.bytes, o, e.id);
			put32(t.bytes, o + 4, e.len);
		}
	}
}

table random_table(uint32_t n)
{
	table t;

	t.n = n;
	t.start = (uint32_t)pick(n);
	t.next.resize(256 * (size_t)n);
	for (auto &x : t.next)
		// cppcheck-suppress useStlAlgorithm
		x = (uint32_t)pick(n);
	t.lists.resize(n);
	for (auto &l : t.lists) {
		if (pick(3))
			continue;
		uint32_t id = (uint32_t)pick(5);
		for (uint32_t k = 1 + (uint32_t)pick(3); k > 0; k--) {
			l.push_back(entry{id, 1 + (uint32_t)pick(40)});
			id += 1 + (uint32_t)pick(1000);
		}
	}
	serialize(t);
	return t;
}

struct pattern {
	std::string s;
	uint32_t id;
};

// The Aho-Corasick automaton of pats, by brute force: a state per prefix,
// the next state the longest suffix that is a prefix, the lists from the
// patterns that are suffixes of the state's string.
table literal_table(const std::vector<pattern> &pats)
{
	std::vector<std::string> prefixes{""};
	std::map<std::string, uint32_t> index{{"", 0}};
	table t;

	for (const pattern &p : pats)
		for (size_t k = 1; k <= p.s.size(); k++)
			if (index.emplace(p.s.substr(0, k), (uint32_t)prefixes.size()).second)
				prefixes.push_back(p.s.substr(0, k));
	t.n = (uint32_t)prefixes.size();
	t.start = 0;
	t.next.resize(256 * (size_t)t.n);
	t.lists.resize(t.n);
	for (uint32_t s = 0; s < t.n; s++) {
		for (uint32_t b = 0; b < 256; b++) {
			const std::string w = prefixes[s] + (char)b;
			uint32_t to = 0;
			for (size_t k = 0; k < w.size(); k++) {
				const auto it = index.find(w.substr(k));
				if (it != index.end()) {
					to = it->second;
					break;
				}
			}
			t.next[256 * (size_t)s + b] = to;
		}
		std::map<uint32_t, uint32_t> ids;
		const std::string &w = prefixes[s];
		for (const pattern &p : pats)
			if (p.s.size() <= w.size() &&
			    w.compare(w.size() - p.s.size(), p.s.size(), p.s) == 0)
				ids[p.id] = max(ids[p.id], (uint32_t)p.s.size());
		for (const auto &kv : ids)
			t.lists[s].push_back(entry{kv.first, kv.second});
	}
	serialize(t);
	return t;
}

struct record {
	uint32_t id;
	uint64_t start, end;
	bool operator==(const record &o) const
	{
		return id == o.id && start == o.start && end == o.end;
	}
};

// design.md 6.8 by definition: the walk from s, p[0] at stream offset off.
uint32_t ref_walk(const table &t, const uint8_t *p, size_t len, uint32_t s, uint64_t off,
		  std::vector<record> &out)
{
	for (size_t i = 0; i < len; i++) {
		s = t.next[256 * (size_t)s + p[i]];
		const uint64_t end = off + i + 1;
		for (const entry &e : t.lists[s])
			// cppcheck-suppress useStlAlgorithm
			out.push_back(record{e.id, end >= e.len ? end - e.len : 0, end});
	}
	return s;
}

// Every occurrence of every pattern, by string comparison: (end, id), the longest.
std::vector<record> ref_literal(const std::vector<pattern> &pats, const std::string &text)
{
	std::map<std::pair<uint64_t, uint32_t>, uint64_t> m;

	for (const pattern &p : pats)
		for (size_t at = text.find(p.s); at != std::string::npos;
		     at = text.find(p.s, at + 1)) {
			const uint64_t end = at + p.s.size();
			auto &len = m[{end, p.id}];
			len = max(len, (uint64_t)p.s.size());
		}
	std::vector<record> r;
	for (const auto &kv : m)
		// cppcheck-suppress useStlAlgorithm
		r.push_back(record{kv.first.second, kv.first.first - kv.second, kv.first.first});
	return r;
}

// What every thread of a block runs: a report unit, a handoff run of m, or
// (g == nullptr) m report units on the block's warps.
struct job {
	const vyre_mk_unit *u;
	uint32_t m; // 0: a report unit; else a handoff run of m
	uint64_t results;
	uint32_t *scratch, scratch_words, *g, *e;
	uint64_t *cnt;
};

void run_unit(void *arg, uint32_t tid)
{
	const job *j = static_cast<const job *>(arg);

	if (j->g == nullptr) {
		// warp units: warp w takes units w, w + warps, ..., as the megakernel does
		const uint32_t w = tid / 32, n_warps = blockDim.x / 32;
		for (uint32_t i = w; i < j->m; i += n_warps)
			mk_report::warp_report(j->u[i], j->results,
					       j->scratch + (uint64_t)w * j->scratch_words,
					       j->scratch_words);
	} else if (j->m)
		block_fused_run(j->u, j->m, j->results, j->scratch, j->scratch_words, j->g, j->e,
				j->cnt, nullptr);
	else
		mk_report::report_unit(*j->u, j->results, j->scratch, j->scratch_words, j->g, j->e,
				       j->cnt, nullptr);
}

void run_block(const vyre_mk_unit *u, uint32_t m, vyre_mk_result *rec, uint32_t threads,
	       uint32_t scratch_words)
{
	std::vector<uint32_t> scratch(scratch_words, 0xdeadbeef), g(threads), e(threads);
	std::vector<uint64_t> cnt(mk_report::cnt_words(threads));
	job j = {u,
		 m,
		 reinterpret_cast<uint64_t>(rec),
		 scratch.data(),
		 scratch_words,
		 g.data(),
		 e.data(),
		 cnt.data()};

	host_block_run(threads, false, run_unit, &j);
}

// m report units on `n_warps` warps of one block, each warp with scratch_words of its own.
void run_warps(const vyre_mk_unit *u, uint32_t m, vyre_mk_result *rec, uint32_t n_warps,
	       uint32_t scratch_words)
{
	std::vector<uint32_t> scratch((size_t)scratch_words * n_warps, 0xdeadbeef);
	job j = {u,
		 m,
		 reinterpret_cast<uint64_t>(rec),
		 scratch.data(),
		 scratch_words,
		 nullptr,
		 nullptr,
		 nullptr};

	host_block_run(32 * n_warps, true, run_unit, &j);
}

uint32_t pick_threads()
{
	static const uint32_t sizes[] = {1, 2, 3, 7, 32, 33, 64};
	return sizes[pick(7)];
}

// Scratch words for a tile of about `tile` bytes.
uint32_t scratch_for(uint32_t tile)
{
	return mk_report::kHdrWords + 4 + tile / 4;
}

// The report at out (of out_bytes) against want: header, records, and the
// bytes past the last record still `fill`.
void check_report(const uint8_t *out, uint32_t out_bytes, const std::vector<record> &want,
		  const char *what)
{
	const uint64_t cap = (out_bytes - 16) / 24, total = want.size();
	const uint64_t kept = min(cap, total);

	CHECK(get32(out) == kept, "%s: kept %u want %llu", what, get32(out),
	      (unsigned long long)kept);
	CHECK(get32(out + 4) == (total > cap ? VYRE_REPORT_OVERFLOW : 0u), "%s: flags %u", what,
	      get32(out + 4));
	CHECK(get64(out + 8) == total, "%s: total %llu want %llu", what,
	      (unsigned long long)get64(out + 8), (unsigned long long)total);
	for (uint64_t i = 0; i < kept; i++) {
		const uint8_t *r = out + 16 + 24 * i;
		const record got{get32(r), get64(r + 8), get64(r + 16)};
		CHECK(got == want[i] && get32(r + 4) == 0,
		      "%s: record %llu: {%u, %llu, %llu} want {%u, %llu, %llu}", what,
		      (unsigned long long)i, got.id, (unsigned long long)got.start,
		      (unsigned long long)got.end, want[i].id, (unsigned long long)want[i].start,
		      (unsigned long long)want[i].end);
	}
	for (uint64_t b = 16 + 24 * kept; b < out_bytes; b++)
		CHECK(out[b] == 0xab, "%s: byte %llu past the records written", what,
		      (unsigned long long)b);
}

struct item {
	const table *t;
	std::vector<uint8_t> in_buf; // with room for misalignment
	uint32_t in_at = 0, in_bytes = 0;
	bool counted = false;
	std::vector<uint8_t> out_buf;
	uint32_t out_at = 0, out_bytes = 0;
	std::vector<uint8_t> tbl_buf;
	uint8_t stream[16 + 4];
	uint32_t stream_at = 0;
	bool has_stream = false;
	uint32_t flags = 0;
};

vyre_mk_unit unit_of(item &it)
{
	vyre_mk_unit u = {};

	u.op = (it.counted ? VYRE_OP_DFA_REPORT_COUNTED : VYRE_OP_DFA_REPORT) | it.flags;
	u.count = it.in_bytes;
	u.aux = (uint32_t)it.t->bytes.size();
	u.param = it.out_bytes;
	u.in = reinterpret_cast<uint64_t>(it.in_buf.data() + it.in_at);
	u.out = reinterpret_cast<uint64_t>(it.out_buf.data() + it.out_at);
	u.table = reinterpret_cast<uint64_t>(it.tbl_buf.data() + (it.in_at & 3));
	return u;
}

// Lays out an item scanning text (counted or whole), every operand at a
// random alignment when unaligned.
void make_item(item &it, const table &t, const std::string &text, bool counted, uint32_t cap,
	       bool unaligned)
{
	const uint32_t a = unaligned ? (uint32_t)pick(4) : 0;
	// a whole input is a multiple of 4 bytes, all scanned
	counted = counted || text.size() % 4 != 0;
	const uint32_t body = (uint32_t)((text.size() + 3) & ~(size_t)3);

	it.t = &t;
	it.counted = counted;
	it.in_at = a;
	it.in_bytes = counted ? 4 + body + 4 * (uint32_t)pick(3) : body;
	it.in_buf.assign(it.in_at + it.in_bytes + 4, 0x5a);
	if (counted) {
		const uint32_t len = (uint32_t)text.size();
		memcpy(it.in_buf.data() + it.in_at, &len, 4);
	}
	memcpy(it.in_buf.data() + it.in_at + (counted ? 4 : 0), text.data(), text.size());
	// 4-, 8- and 16-byte aligned outputs take different stores
	it.out_at = unaligned ? (uint32_t)pick(4) : 4 * (uint32_t)pick(4);
	it.out_bytes = 16 + 24 * cap + 4 * (uint32_t)pick(6);
	it.out_buf.assign(it.out_at + it.out_bytes, 0xab);
	it.tbl_buf.assign(t.bytes.size() + 4, 0);
	memcpy(it.tbl_buf.data() + (it.in_at & 3), t.bytes.data(), t.bytes.size());
	it.stream_at = unaligned ? (uint32_t)pick(4) : 0;
	memset(it.stream, 0, sizeof(it.stream));
}

// cppcheck-suppress constParameter
uint8_t *stream_ptr(item &it)
{
	return it.stream + it.stream_at;
}

uint64_t n_records, n_overflow, n_streams, n_invalid, n_fused, n_warp_items, n_warp_blocks, n_lies;

// Runs it on a block or a warp; returns the record's status and result.
vyre_mk_result run_item(item &it, uint32_t threads, uint32_t tile)
{
	vyre_mk_unit u = unit_of(it);
	vyre_mk_result rec[2];

	rec[1].status = 0;
	rec[1].reserved = 0;
	rec[1].result = it.has_stream ? reinterpret_cast<uint64_t>(stream_ptr(it)) : 0;
	u.op |= it.has_stream ? VYRE_MK_REPORT_STREAM : 0u;
	u.slot = 1;
	if (pick(2)) {
		run_block(&u, 0, rec, threads, scratch_for(tile));
	} else {
		// the warp path: device input in place, host input staged in tiles
		u.op |= pick(2) ? VYRE_MK_DFA_HOST_IN : 0u;
		run_warps(&u, 1, rec, 1, scratch_for(tile));
		n_warp_items++;
	}
	return rec[1];
}

std::string random_text(size_t len, const char *alphabet)
{
	std::string s(len, 'a');
	const size_t k = strlen(alphabet);

	for (auto &c : s)
		// cppcheck-suppress useStlAlgorithm
		c = (char)(pick(20) == 0 ? (uint8_t)pick(256) : (uint8_t)alphabet[pick(k)]);
	return s;
}

std::vector<pattern> random_patterns()
{
	std::vector<pattern> pats;
	const uint32_t n = 1 + (uint32_t)pick(8);

	for (uint32_t i = 0; i < n; i++) {
		const size_t len = 1 + pick(pick(4) == 0 ? 40 : 5);
		pats.push_back(pattern{random_text(len, "abc"), (uint32_t)pick(6)});
	}
	return pats;
}

// One table, one text: whole and counted, a few capacities, and a stream cut
// into pieces.
void round_trip(const table &t, const std::string &text, const std::vector<record> *literal)
{
	std::vector<record> want;
	const uint32_t end = ref_walk(t, reinterpret_cast<const uint8_t *>(text.data()),
				      text.size(), t.start, 0, want);

	if (literal)
		CHECK(*literal == want,
		      "the table's walk differs from the patterns' matches (%zu, %zu)",
		      literal->size(), want.size());
	n_records += want.size();
	for (int k = 0; k < 3; k++) {
		const uint32_t cap = k == 0   ? (uint32_t)want.size() + (uint32_t)pick(3)
				     : k == 1 ? (uint32_t)pick(want.size() + 1)
					      : (uint32_t)pick(3);
		item it;
		const bool counted = pick(2) != 0;
		const uint32_t threads = pick_threads(), tile = 16 << pick(9);

		make_item(it, t, text, counted, cap, pick(4) == 0);
		it.has_stream = pick(2);
		// a valid table gives the same records trusted or not
		it.flags = (pick(2) ? VYRE_MK_TABLE_TRUSTED : 0u) |
			   (pick(2) ? VYRE_MK_REPORT_TRUSTED : 0u);
		const bool was_counted = it.counted;
		const vyre_mk_result r = run_item(it, threads, tile);
		char what[160];
		snprintf(what, sizeof(what), "len %zu n %u cap %u threads %u tile %u counted %d",
			 text.size(), t.n, cap, threads, tile, was_counted);
		CHECK(r.status == 0 && r.result == want.size(),
		      "%s: status %d result %llu want %zu", what, r.status,
		      (unsigned long long)r.result, want.size());
		check_report(it.out_buf.data() + it.out_at, it.out_bytes, want, what);
		n_overflow += want.size() > cap;
		if (it.has_stream) {
			const uint8_t *sp = stream_ptr(it);
			CHECK(get32(sp) == 1 && get32(sp + 4) == end &&
				  get64(sp + 8) == text.size(),
			      "%s: stream {%u, %u, %llu}", what, get32(sp), get32(sp + 4),
			      (unsigned long long)get64(sp + 8));
		}
	}
	// the text cut at random offsets into one stream's items
	std::vector<record> got;
	uint8_t state[16] = {0};
	size_t at = 0;
	while (at < text.size() || at == 0) {
		const size_t piece =
		    min(text.size() - at, (size_t)pick(pick(2) ? 8 : text.size() + 1));
		item it;
		make_item(it, t, text.substr(at, piece), pick(2), (uint32_t)want.size() + 1,
			  pick(4) == 0);
		it.has_stream = true;
		memcpy(stream_ptr(it), state, 16);
		const vyre_mk_result r = run_item(it, pick_threads(), 16 << pick(9));
		const uint8_t *out = it.out_buf.data() + it.out_at;
		CHECK(r.status == 0, "stream piece at %zu: status %d", at, r.status);
		for (uint32_t i = 0; i < get32(out); i++) {
			const uint8_t *q = out + 16 + 24 * i;
			got.push_back(record{get32(q), get64(q + 8), get64(q + 16)});
		}
		memcpy(state, stream_ptr(it), 16);
		at += piece;
		n_streams++;
		if (text.empty())
			break;
	}
	CHECK(got == want, "stream records %zu want %zu (len %zu)", got.size(), want.size(),
	      text.size());
	CHECK(get32(state) == 1 && get32(state + 4) == end && get64(state + 8) == text.size(),
	      "stream end {%u, %u, %llu}", get32(state), get32(state + 4),
	      (unsigned long long)get64(state + 8));
}

// A malformed item: VYRE_E_INVAL, the output and stream unchanged.
void invalid_case(const table &good)
{
	table t = good;
	item it;
	const std::string text = random_text(pick(300), "abc");
	const uint64_t sec = vyre_dfa_table_bytes(t.n);
	const uint32_t kind = (uint32_t)pick(10);
	uint32_t n_out = 0;

	for (const auto &l : t.lists)
		// cppcheck-suppress useStlAlgorithm
		n_out += (uint32_t)l.size();
	make_item(it, t, text, kind == 6 || pick(2), 4, pick(3) == 0);
	it.has_stream = true;
	std::vector<uint8_t> b = t.bytes;
	switch (kind) {
	case 0: // bad magic
		put32(b, sec, VYRE_DFA_REPORT_MAGIC ^ (1u << pick(32)));
		break;
	case 1: // no report section
		b.resize(sec + 4 * pick(3));
		break;
	case 2: // out_first out of order or not ending at n_out
		put32(b, sec + 8 + 4 * (pick(t.n) + 1), n_out + 1 + (uint32_t)pick(3));
		break;
	case 3: // a transition out of range
		put32(b, 4 * (2 + (t.n + 31) / 32) + 4 * pick(256 * (uint64_t)t.n),
		      t.n + (uint32_t)pick(4));
		break;
	case 4: // a stream state beyond the table
		memset(stream_ptr(it), 0, 16);
		stream_ptr(it)[0] = 1;
		memcpy(stream_ptr(it) + 4, &t.n, 4);
		break;
	case 5: // started neither 0 nor 1, or 0 with a state or bytes seen
		if (pick(2))
			stream_ptr(it)[0] = (uint8_t)(2 + pick(200));
		else
			stream_ptr(it)[4 + pick(12)] = (uint8_t)(1 + pick(255));
		break;
	case 6: { // a counted length past the input
		const uint32_t len = it.in_bytes - 4 + 1 + (uint32_t)pick(9);
		memcpy(it.in_buf.data() + it.in_at, &len, 4);
		break;
	}
	case 7: { // a list's ids not increasing (else a len of 0)
		uint32_t at = 0, j = UINT32_MAX;
		for (uint32_t st = 0; st < t.n && j == UINT32_MAX; st++) {
			if (t.lists[st].size() >= 2)
				j = at + 1;
			at += (uint32_t)t.lists[st].size();
		}
		const size_t o = sec + 8 + 4 * (t.n + 1) + 8 * (size_t)j;
		if (j != UINT32_MAX)
			put32(b, o,
			      get32(b.data() + o - 8) -
				  (get32(b.data() + o - 8) ? (uint32_t)pick(2) : 0u));
		else if (n_out)
			put32(b, sec + 8 + 4 * (t.n + 1) + 8 * pick(n_out) + 4, 0);
		else
			put32(b, sec + 4, 1); // n_out 1 with out_first ending at 0
		break;
	}
	case 8: // a len of 0
		if (n_out)
			put32(b, sec + 8 + 4 * (t.n + 1) + 8 * pick(n_out) + 4, 0);
		else
			b.resize(sec + 4);
		break;
	case 9: { // a list on a state that does not accept
		uint32_t st = (uint32_t)pick(t.n);
		for (uint32_t k = 0; k < t.n && t.lists[st].empty(); k++)
			st = (st + 1) % t.n;
		if (t.lists[st].empty())
			b.resize(sec + 4);
		else
			b[8 + st / 8] &= (uint8_t) ~(1u << (st % 8));
		break;
	}
	}
	t.bytes = b;
	it.t = &t;
	it.tbl_buf.assign(t.bytes.size() + 4, 0);
	memcpy(it.tbl_buf.data() + (it.in_at & 3), t.bytes.data(), t.bytes.size());
	uint8_t before[16];
	memcpy(before, stream_ptr(it), 16);
	const vyre_mk_result r = run_item(it, pick_threads(), 16 << pick(9));
	CHECK(r.status == VYRE_E_INVAL && r.result == 0, "invalid kind %u: status %d", kind,
	      r.status);
	CHECK(memcmp(before, stream_ptr(it), 16) == 0, "invalid kind %u: stream written", kind);
	for (uint32_t i = 0; i < it.out_bytes; i++)
		CHECK(it.out_buf[it.out_at + i] == 0xab, "invalid kind %u: out byte %u written",
		      kind, i);
	n_invalid++;
	if (kind != 2 && kind != 7 && kind != 8 && kind != 9)
		return;
	// the same section claimed trusted (a lie): its lists are not checked, but
	// every lookup stays clamped: wrong records at most, all within the output
	it.flags = VYRE_MK_REPORT_TRUSTED;
	std::fill(it.out_buf.begin(), it.out_buf.end(), 0xab);
	const vyre_mk_result l = run_item(it, pick_threads(), 16 << pick(9));
	const uint8_t *out = it.out_buf.data() + it.out_at;
	const uint32_t cap = (it.out_bytes - 16) / 24;
	CHECK(l.status == 0 || l.status == VYRE_E_INVAL, "lie kind %u: status %d", kind, l.status);
	if (l.status == 0) {
		const uint32_t kept = get32(out);
		CHECK(kept <= cap && get64(out + 8) == l.result, "lie kind %u: kept %u of %u", kind,
		      kept, cap);
		for (uint64_t k = 16 + 24 * (uint64_t)min(kept, cap); k < it.out_bytes; k++)
			CHECK(out[k] == 0xab, "lie kind %u: byte %llu past the records", kind,
			      (unsigned long long)k);
		n_lies++;
	}
}

// Several small items on the warps of one block at once (each warp several
// in turn), as a stage of warp units runs: each gets its own records.
void warp_batch_case(const table &t)
{
	const uint32_t n_warps = 1 + (uint32_t)pick(4), m = n_warps * (1 + (uint32_t)pick(3));
	std::vector<item> its(m);
	std::vector<std::string> texts(m);
	std::vector<vyre_mk_unit> us(m);
	std::vector<vyre_mk_result> rec(m);
	const uint32_t tile = 16 << pick(9);

	for (uint32_t i = 0; i < m; i++) {
		std::vector<record> want;
		texts[i] = random_text(pick(pick(2) ? 300 : 5000), "abc");
		ref_walk(t, reinterpret_cast<const uint8_t *>(texts[i].data()), texts[i].size(),
			 t.start, 0, want);
		make_item(its[i], t, texts[i], pick(2), (uint32_t)want.size() + (uint32_t)pick(2),
			  pick(4) == 0);
		us[i] = unit_of(its[i]);
		us[i].op |= pick(2) ? VYRE_MK_DFA_HOST_IN : 0u;
		us[i].slot = i;
		rec[i] = vyre_mk_result{0, 0, 0};
	}
	run_warps(us.data(), m, rec.data(), n_warps, scratch_for(tile));
	for (uint32_t i = 0; i < m; i++) {
		std::vector<record> want;
		char what[96];
		ref_walk(t, reinterpret_cast<const uint8_t *>(texts[i].data()), texts[i].size(),
			 t.start, 0, want);
		snprintf(what, sizeof(what), "warp batch: item %u of %u on %u warps, tile %u", i, m,
			 n_warps, tile);
		CHECK(rec[i].status == 0 && rec[i].result == want.size(),
		      "%s: status %d result %llu want %zu", what, rec[i].status,
		      (unsigned long long)rec[i].result, want.size());
		check_report(its[i].out_buf.data() + its[i].out_at, its[i].out_bytes, want, what);
	}
	n_warp_blocks++;
}

// BASE64_DECODE -> DFA_REPORT_COUNTED on chip against the decoder through
// the oracle, then the reference on its output.
void fused_case(const table &t, const std::string &text)
{
	const uint32_t enc_room = (uint32_t)(((text.size() + 2) / 3) * 4 + 8);
	std::vector<uint8_t> w_in(4 + enc_room + 4, 0);
	const uint32_t enc = test_base64_encode(reinterpret_cast<const uint8_t *>(text.data()),
						(uint32_t)text.size(), w_in.data() + 4);
	const uint32_t w_in_bytes = (4 + enc + 3) & ~3u;
	const uint32_t d_bytes = (uint32_t)((4 + text.size() + 3) & ~(size_t)3);
	const bool bad = pick(8) == 0 && enc > 0;
	std::vector<record> want;
	const uint32_t end = ref_walk(t, reinterpret_cast<const uint8_t *>(text.data()),
				      text.size(), t.start, 0, want);

	memcpy(w_in.data(), &enc, 4);
	if (bad)
		w_in[4 + pick(enc)] = '!';
	const uint32_t cap = (uint32_t)pick(want.size() + 2);
	std::vector<uint8_t> out(16 + 24 * cap, 0xab), tbl = t.bytes, dmem(d_bytes, 0x77);
	uint8_t stream[16] = {0};
	vyre_mk_unit run[2] = {};

	run[0].op = VYRE_OP_BASE64_DECODE | VYRE_MK_HANDOFF_OUT;
	run[0].count = w_in_bytes;
	run[0].aux = d_bytes;
	run[0].slot = 0;
	run[0].in = reinterpret_cast<uint64_t>(w_in.data());
	run[0].out = reinterpret_cast<uint64_t>(dmem.data());
	run[1].op = VYRE_OP_DFA_REPORT_COUNTED | VYRE_MK_HANDOFF_IN | VYRE_MK_REPORT_STREAM;
	run[1].count = d_bytes;
	run[1].aux = (uint32_t)tbl.size();
	run[1].param = (uint32_t)out.size();
	run[1].slot = 1;
	run[1].in = reinterpret_cast<uint64_t>(dmem.data());
	run[1].out = reinterpret_cast<uint64_t>(out.data());
	run[1].table = reinterpret_cast<uint64_t>(tbl.data());
	vyre_mk_result rec[2];
	rec[1] = vyre_mk_result{0, 0, reinterpret_cast<uint64_t>(stream)};
	const uint32_t threads = pick_threads();
	// room for the fused tile, as fused_unit gives (a few tiles for long inputs)
	run_block(run, 2, rec, threads, mk_fuse::kTileAt + 4 * threads + 64);
	for (uint32_t i = 0; i < d_bytes; i++)
		CHECK(dmem[i] == 0x77, "fused: the transient buffer written at %u", i);
	if (bad) {
		CHECK(rec[0].status == VYRE_E_INVAL && rec[1].status == VYRE_E_CANCELED,
		      "fused bad input: %d %d", rec[0].status, rec[1].status);
		for (auto c : out)
			CHECK(c == 0xab, "fused bad input: out written");
		return;
	}
	CHECK(rec[0].status == 0 && rec[0].result == text.size(), "fused decode: %d %llu",
	      rec[0].status, (unsigned long long)rec[0].result);
	CHECK(rec[1].status == 0 && rec[1].result == want.size(), "fused report: %d %llu want %zu",
	      rec[1].status, (unsigned long long)rec[1].result, want.size());
	check_report(out.data(), (uint32_t)out.size(), want, "fused");
	CHECK(get32(stream) == 1 && get32(stream + 4) == end && get64(stream + 8) == text.size(),
	      "fused stream");
	n_fused++;
}

} // namespace

int main()
{
	const char *sc = getenv("VYRE_TEST_SCALE");
	const int scale = sc ? max(1, atoi(sc)) : 1;

	rng = 0x7265706f7274ull;
	for (int round = 0; round < 150 * scale; round++) {
		const bool literal = pick(2);
		std::vector<pattern> pats;
		const table t = literal ? literal_table(pats = random_patterns())
					: random_table(1 + (uint32_t)pick(pick(2) ? 4 : 40));
		const size_t len = pick(4) == 0 ? pick(40) : pick(pick(2) ? 600 : 5000);
		const std::string text = random_text(len, "abc");
		std::vector<record> lit;

		if (literal)
			lit = ref_literal(pats, text);
		round_trip(t, text, literal ? &lit : nullptr);
		invalid_case(t);
		fused_case(t, text);
		warp_batch_case(t);
	}
	printf("%llu records, %llu overflowed items, %llu stream pieces, %llu invalid, %llu fused "
	       "runs, %llu items on a warp, %llu blocks of warp items, %llu trusted lies: %s\n",
	       (unsigned long long)n_records, (unsigned long long)n_overflow,
	       (unsigned long long)n_streams, (unsigned long long)n_invalid,
	       (unsigned long long)n_fused, (unsigned long long)n_warp_items,
	       (unsigned long long)n_warp_blocks, (unsigned long long)n_lies,
	       failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
