/* SPDX-License-Identifier: MIT */
/*
 * DFA_REPORT (docs/design.md 6.8): the scan of DFA_SCAN, which after each
 * byte lists the patterns its state ends, as 24-byte records ordered by end
 * then id (a state's list holds its ids in increasing order).
 */
#include "ops_report.h"

#include <string.h>

#include "vyre/abi.h"

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void store32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void store64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* The two byte ranges share a byte. */
static int overlap(const uint8_t *a, uint64_t a_bytes, const uint8_t *b, uint64_t b_bytes)
{
	const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}

/* Whether state @s (below n_states) accepts: only such a state may have a list. */
static int accepts(const struct vyre_report_table *t, uint64_t s)
{
	return (load32(t->base + 8 + 4 * (s / 32)) >> (s % 32)) & 1u;
}

/* Offsets in the table of out_first[] and out[]. */
static uint64_t first_at(const struct vyre_report_table *t)
{
	return t->section + 8;
}

static uint64_t out_at(const struct vyre_report_table *t)
{
	return first_at(t) + 4 * ((uint64_t)t->n_states + 1);
}

int vyre_report_section_check(const struct vyre_report_table *t, uint32_t *n_out)
{
	const uint64_t n = t->n_states;

	if (t->section > t->bytes || t->bytes - t->section < 8 ||
	    load32(t->base + t->section) != VYRE_DFA_REPORT_MAGIC)
		return VYRE_E_INVAL;
	const uint32_t outs = load32(t->base + t->section + 4);

	if (out_at(t) + 8 * (uint64_t)outs > t->bytes)
		return VYRE_E_INVAL;
	if (t->trusted) {
		/* found valid since the last write: the walk still bounds every lookup */
		*n_out = outs;
		return 0;
	}
	const uint8_t *first = t->base + first_at(t), *out = t->base + out_at(t);
	uint32_t prev = load32(first);

	if (prev != 0)
		return VYRE_E_INVAL;
	for (uint64_t s = 0; s < n; s++) {
		const uint32_t end = load32(first + 4 * (s + 1));

		if (end < prev || end > outs || (end > prev && !accepts(t, s)))
			return VYRE_E_INVAL;
		for (uint64_t j = prev; j < end; j++) {
			/* ids strictly increase: one entry per id, in the order records take */
			if (load32(out + 8 * j + 4) == 0 ||
			    (j > prev && load32(out + 8 * j) <= load32(out + 8 * (j - 1))))
				return VYRE_E_INVAL;
		}
		prev = end;
	}
	if (prev != outs)
		return VYRE_E_INVAL;
	*n_out = outs;
	return 0;
}

/* The stream's state at @stream: started streams continue, a zeroed one starts anew. */
static int stream_load(const uint8_t *stream, uint32_t stream_bytes, uint32_t n_states,
		       uint32_t *state, uint64_t *seen)
{
	if (stream_bytes < sizeof(struct vyre_stream_state))
		return VYRE_E_INVAL;
	const uint32_t started = load32(stream), s = load32(stream + 4);
	const uint64_t b = load64(stream + 8);

	if (started > 1 || (started == 0 && (s != 0 || b != 0)) || (started && s >= n_states))
		return VYRE_E_INVAL;
	if (started) {
		*state = s;
		*seen = b;
	}
	return 0;
}

int vyre_report_exec(const struct vyre_report_table *t, const uint8_t *in_whole,
		     uint32_t in_whole_bytes, const uint8_t *in, uint32_t len, uint8_t *out,
		     uint32_t out_bytes, uint8_t *stream, uint32_t stream_bytes, uint64_t *result)
{
	const uint32_t n = t->n_states;
	uint32_t n_out, state = load32(t->base + 4);
	uint64_t seen = 0, total = 0;

	*result = 0;
	if (out_bytes < sizeof(struct vyre_report_header) || state >= n ||
	    overlap(in_whole, in_whole_bytes, out, out_bytes) ||
	    overlap(t->base, t->bytes, out, out_bytes) || vyre_report_section_check(t, &n_out) != 0)
		return VYRE_E_INVAL;
	if (stream &&
	    (overlap(stream, stream_bytes, in_whole, in_whole_bytes) ||
	     overlap(stream, stream_bytes, out, out_bytes) ||
	     overlap(stream, stream_bytes, t->base, t->bytes) ||
	     stream_load(stream, stream_bytes, n, &state, &seen) != 0 || seen > UINT64_MAX - len))
		return VYRE_E_INVAL;

	const uint8_t *next = t->base + 8 + 4 * (((uint64_t)n + 31) / 32);
	const uint8_t *first = t->base + first_at(t), *outs = t->base + out_at(t);
	const uint64_t capacity =
	    (out_bytes - sizeof(struct vyre_report_header)) / sizeof(struct vyre_report_record);
	uint8_t *rec = out + sizeof(struct vyre_report_header);

	for (uint32_t i = 0; i < len; i++) {
		state = load32(next + 4 * ((uint64_t)state * 256 + in[i]));
		if (state >= n)
			return VYRE_E_INVAL;
		/* a trusted section that lies about it gives other records, as on the GPU */
		if (!accepts(t, state))
			continue;
		const uint32_t lo = load32(first + 4 * (uint64_t)state);
		const uint32_t hi = load32(first + 4 * ((uint64_t)state + 1));

		if (lo == hi)
			continue;
		if (lo > hi || hi > n_out)
			return VYRE_E_INVAL;
		const uint64_t end = seen + i + 1;

		for (uint32_t j = lo; j < hi; j++, total++) {
			if (total >= capacity)
				continue;
			const uint32_t id = load32(outs + 8 * (uint64_t)j);
			const uint32_t plen = load32(outs + 8 * (uint64_t)j + 4);
			uint8_t *r = rec + sizeof(struct vyre_report_record) * total;

			store32(r, id);
			store32(r + 4, 0);
			store64(r + 8, plen > end ? 0 : end - plen);
			store64(r + 16, end);
		}
	}
	store32(out, (uint32_t)(total < capacity ? total : capacity));
	store32(out + 4, total > capacity ? VYRE_REPORT_OVERFLOW : 0);
	store64(out + 8, total);
	if (stream) {
		store32(stream, 1);
		store32(stream + 4, state);
		store64(stream + 8, seen + len);
	}
	*result = total;
	return 0;
}
