/* SPDX-License-Identifier: MIT */
/* A host model of gpu/mk_dfa.cuh's units (see test_cuda_dfa_model.h). */
#include "test_cuda_dfa_model.h"

#include <string.h>

#include "vyre/abi.h"

#define BLOCK_CHUNK_MIN 256u
#define WARP_CHUNK_MIN	128u
#define REC_BAD		1u

uint64_t model_dfa_rounds;

struct mtable {
	const uint32_t *next, *accept;
	uint32_t n, start;
};

static uint32_t word_at(uint64_t addr)
{
	uint32_t v;

	memcpy(&v, (const void *)(uintptr_t)addr, 4);
	return v;
}

static int counted(const struct vyre_mk_unit *u)
{
	return (u->op & VYRE_MK_OP_MASK) == VYRE_OP_DFA_SCAN_COUNTED;
}

static uint64_t max_bytes(const struct vyre_mk_unit *u)
{
	return counted(u) ? (u->count >= 4 ? u->count - 4 : 0) : u->count;
}

/* The header as the kernel's read_header sees it; 0 when invalid. */
static int header(const struct vyre_mk_unit *u, struct mtable *m, uint64_t *bytes)
{
	if (u->aux < 8)
		return 0;
	m->n = word_at(u->table);
	m->start = word_at(u->table + 4);
	const uint64_t need =
	    m->n == 0 ? 0 : 4 * (2 + ((uint64_t)m->n + 31) / 32 + 256 * (uint64_t)m->n);
	int ok = need != 0 && need <= u->aux && m->start < m->n;

	*bytes = u->count;
	if (counted(u)) {
		const uint32_t len = u->count >= 4 ? word_at(u->in) : 0;
		ok = ok && u->count >= 4 && len <= u->count - 4;
		*bytes = len;
	}
	m->accept = (const uint32_t *)(uintptr_t)(u->table + 8);
	m->next = m->accept + (m->n + 31) / 32;
	return ok;
}

static int entries_bad(const struct mtable *m, uint64_t lo, uint64_t hi)
{
	for (uint64_t i = lo; i < hi; i++)
		if (m->next[i] >= m->n)
			return 1;
	return 0;
}

/* The kernel's global_table step: clamped, so equal to the table's for a valid one. */
static uint32_t walk(const struct mtable *m, const uint8_t *p, uint64_t a, uint64_t b, uint32_t s,
		     uint32_t *hits)
{
	uint32_t h = 0;

	for (uint64_t i = a; i < b; i++) {
		s = m->next[(uint64_t)s * 256 + p[i]];
		s = s < m->n ? s : m->n - 1;
		h += (m->accept[s / 32] >> (s % 32)) & 1u;
	}
	if (hits)
		*hits = h;
	return s;
}

static uint32_t guess(const struct mtable *m, const uint8_t *p, uint64_t at)
{
	const uint64_t back = at < VYRE_MK_DFA_WARMUP ? at : VYRE_MK_DFA_WARMUP;

	return walk(m, p, at - back, at, m->start, NULL);
}

/* The kernel's block_walk (or warp_walk: @threads 32) over [a, b). */
static uint32_t range_walk(const struct mtable *m, const uint8_t *p, uint64_t a, uint64_t b,
			   int known, uint32_t *first, uint32_t *count, uint32_t threads,
			   uint32_t min_bytes)
{
	static uint32_t g[VYRE_MK_THREADS], e[VYRE_MK_THREADS], c[VYRE_MK_THREADS];
	static uint32_t fix[VYRE_MK_THREADS];
	static int bad[VYRE_MK_THREADS];
	const uint64_t bytes = b - a;
	uint64_t len = 16, n = 0;

	if (bytes) {
		n = bytes / min_bytes;
		n = n < 1 ? 1 : (n > threads ? threads : n);
		len = ((bytes + n - 1) / n + 15) & ~(uint64_t)15;
		n = (bytes + len - 1) / len;
	}
	for (uint32_t t = 0; t < n; t++) {
		const uint64_t ca = a + t * len, cb = ca + len < b ? ca + len : b;

		g[t] = t == 0 && known ? *first : guess(m, p, ca);
		e[t] = walk(m, p, ca, cb, g[t], &c[t]);
	}
	for (;;) {
		int any = 0;

		/* every thread reads, then the barrier, then the bad ones write */
		for (uint32_t t = 1; t < n; t++) {
			bad[t] = g[t] != e[t - 1];
			fix[t] = e[t - 1];
			any |= bad[t];
		}
		if (!any)
			break;
		model_dfa_rounds++;
		for (uint32_t t = 1; t < n; t++) {
			if (!bad[t])
				continue;
			const uint64_t ca = a + t * len, cb = ca + len < b ? ca + len : b;
			g[t] = fix[t];
			e[t] = walk(m, p, ca, cb, g[t], &c[t]);
		}
	}
	uint32_t sum = 0;

	for (uint32_t t = 0; t < n; t++)
		sum += c[t];
	*count = sum;
	if (n == 0) {
		if (!known)
			*first = m->start;
		return *first;
	}
	*first = g[0];
	return e[n - 1];
}

static void finish(const struct vyre_mk_unit *u, struct vyre_mk_result *results, int bad,
		   uint32_t count)
{
	results[u->slot].status = bad ? VYRE_E_INVAL : 0;
	results[u->slot].result = bad ? 0 : count;
	if (!bad)
		memcpy((void *)(uintptr_t)u->out, &count, 4);
}

static const uint8_t *first_byte(const struct vyre_mk_unit *u)
{
	return (const uint8_t *)(uintptr_t)(u->in + (counted(u) ? 4 : 0));
}

static void item(const struct vyre_mk_unit *u, struct vyre_mk_result *results, int block)
{
	struct mtable m;
	uint64_t bytes;
	int bad = !header(u, &m, &bytes);
	uint32_t first, count = 0;

	if (!bad && !(u->op & VYRE_MK_TABLE_TRUSTED))
		bad = entries_bad(&m, 0, 256ull * m.n);
	if (!bad) {
		first = m.start;
		range_walk(&m, first_byte(u), 0, bytes, 1, &first, &count,
			   block ? VYRE_MK_THREADS : 32, block ? BLOCK_CHUNK_MIN : WARP_CHUNK_MIN);
	}
	finish(u, results, bad, count);
}

struct record {
	uint32_t first, end, count, flags;
};

static void part(const struct vyre_mk_unit *u, struct vyre_mk_result *results)
{
	struct mtable m;
	uint64_t bytes;
	int bad = !header(u, &m, &bytes) || u->reserved == 0;
	const uint64_t limit = max_bytes(u), pb = u->reserved;
	const uint64_t parts = pb ? (limit + pb - 1) / pb : 1;
	uint64_t b = ((uint64_t)u->param + 1) * pb;
	uint32_t first = m.start, count = 0, end = m.start;

	b = b < limit ? b : limit;
	b = b < bytes ? b : bytes;
	const uint64_t a = (uint64_t)u->param * pb < b ? (uint64_t)u->param * pb : b;

	if (!bad && !(u->op & VYRE_MK_TABLE_TRUSTED)) {
		const uint64_t entries = 256ull * m.n;
		bad = entries_bad(&m, entries * u->param / parts, entries * (u->param + 1) / parts);
	}
	if (!bad)
		end = range_walk(&m, first_byte(u), a, b, u->param == 0, &first, &count,
				 VYRE_MK_THREADS, BLOCK_CHUNK_MIN);
	const struct record r = {first, end, count, bad ? REC_BAD : 0};

	memcpy(&results[u->slot + 1 + u->param], &r, sizeof(r));
}

static void join(const struct vyre_mk_unit *u, struct vyre_mk_result *results)
{
	struct mtable m;
	uint64_t bytes;
	const uint32_t parts = u->param < VYRE_MK_DFA_MAX_PARTS ? u->param : VYRE_MK_DFA_MAX_PARTS;
	/* the parts' bytes, as mk_dfa.cuh's join finds them again */
	const uint64_t pb = parts ? ((max_bytes(u) + parts - 1) / parts + 15) & ~15ull : 0;
	int bad = !header(u, &m, &bytes) || pb == 0;
	uint32_t s = m.start, total = 0;

	for (uint32_t i = 0; i < parts; i++) {
		struct record r;

		memcpy(&r, &results[u->slot + 1 + i], sizeof(r));
		bad |= (r.flags & REC_BAD) != 0;
	}
	for (uint32_t i = 0; !bad && i < parts && i * pb < bytes; i++) {
		struct record r;

		memcpy(&r, &results[u->slot + 1 + i], sizeof(r));
		if (r.first == s) {
			s = r.end;
			total += r.count;
			continue;
		}
		const uint64_t b = (i + 1) * pb < bytes ? (i + 1) * pb : bytes;
		uint32_t first = s, count;

		s = range_walk(&m, first_byte(u), i * pb, b, 1, &first, &count, VYRE_MK_THREADS,
			       BLOCK_CHUNK_MIN);
		total += count;
	}
	finish(u, results, bad, total);
}

void model_dfa_unit(const struct vyre_mk_unit *u, struct vyre_mk_result *results, int block)
{
	if (u->op & VYRE_MK_DFA_PART)
		part(u, results);
	else if (u->op & VYRE_MK_DFA_JOIN)
		join(u, results);
	else
		item(u, results, block);
}
