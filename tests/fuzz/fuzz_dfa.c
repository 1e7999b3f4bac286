/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: DFA table validation (vyre_dfa_validate) and DFA_SCAN
 * execution (vyre_exec_one), against an independent reference; and the
 * pattern compiler (vyre_dfa_compile, ring/dfa_*.c).
 *
 * Input: u8 mode, u16 table length, the table bytes, then the bytes to scan.
 * mode bit 0 leaves no room for the output word, bit 1 makes the input
 * length unaligned; both must be refused. With mode bit 2 the table bytes
 * are patterns instead, records of u8 len (1 + len % 16 bytes follow the
 * record's head), u8 id, u8 flags (bit 0: caseless; bit 7 sets an unknown
 * flag), which vyre_dfa_compile turns into the table (at most 4096 states);
 * its report section must then list at every offset of the text what a
 * brute-force search finds. The heap is allocated to the exact byte, so
 * AddressSanitizer sees any read or write outside it. Each input runs twice:
 * checked, and with VYRE_EXEC_TABLE_TRUSTED.
 */
#include <stdlib.h>
#include <string.h>

#include "../../gpu/ops.h"
#include "fuzz.h"
#include "vyre/dfa.h"

#define MODE_NO_OUTPUT	  1u
#define MODE_UNALIGNED	  2u
#define MODE_COMPILE	  4u
#define SENTINEL	  0xa5a5a5a5u
#define FUZZ_MAX_STATES	  4096u
#define FUZZ_MAX_PATTERNS 256u

/* docs/design.md section 6, written independently of gpu/ops.c. */
static int reference_valid(const uint8_t *t, uint32_t bytes)
{
	if (bytes < 8)
		return 0;
	uint32_t n = fuzz_le32(t), start = fuzz_le32(t + 4);

	if (n == 0 || start >= n)
		return 0;
	uint64_t next_off = 8 + 4 * (((uint64_t)n + 31) / 32);

	if (next_off + 1024 * (uint64_t)n > bytes)
		return 0;
	for (uint64_t i = 0; i < 256 * (uint64_t)n; i++)
		if (fuzz_le32(t + next_off + 4 * i) >= n)
			return 0;
	return 1;
}

static uint32_t reference_scan(const uint8_t *t, const uint8_t *in, uint32_t len)
{
	uint32_t n = fuzz_le32(t), state = fuzz_le32(t + 4), hits = 0;
	uint64_t next_off = 8 + 4 * (((uint64_t)n + 31) / 32);

	for (uint32_t i = 0; i < len; i++) {
		state = fuzz_le32(t + next_off + 4 * ((uint64_t)state * 256 + in[i]));
		hits += (fuzz_le32(t + 8 + 4 * (state / 32)) >> (state % 32)) & 1u;
	}
	return hits;
}

static uint8_t fold(uint8_t b)
{
	return b >= 'A' && b <= 'Z' ? (uint8_t)(b + 32) : b;
}

/* Decodes the pattern records of @p; returns how many (0 when none fit). */
static uint32_t decode_patterns(const uint8_t *p, uint32_t bytes, struct vyre_dfa_pattern *out,
				int *bad_flags)
{
	uint32_t n = 0, at = 0;

	*bad_flags = 0;
	while (n < FUZZ_MAX_PATTERNS && at + 3 < bytes) {
		uint32_t len = 1 + p[at] % 16;

		if (at + 3 + len > bytes)
			break;
		out[n].id = p[at + 1];
		out[n].flags = (p[at + 2] & 1u) | (p[at + 2] & 0x80u ? 0x100u : 0);
		*bad_flags |= (p[at + 2] & 0x80u) != 0;
		out[n].bytes = p + at + 3;
		out[n].len = len;
		n++;
		at += 3 + len;
	}
	return n;
}

/* The longest len of pattern id @id ending at @end of @text, 0 for none (design.md 6.8). */
static uint32_t longest_ending(const struct vyre_dfa_pattern *p, uint32_t n, uint32_t id,
			       const uint8_t *text, uint32_t end)
{
	uint32_t best = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t ok = p[k].id == id && p[k].len <= end && p[k].len > best;

		for (uint32_t i = 0; ok && i < p[k].len; i++) {
			uint8_t a = text[end - p[k].len + i], b = p[k].bytes[i];

			ok = p[k].flags & VYRE_DFA_CASELESS ? fold(a) == fold(b) : a == b;
		}
		if (ok)
			best = p[k].len;
	}
	return best;
}

/* Walks the compiled @t over @text: every offset's report list equals brute force. */
static void check_report(const uint8_t *t, uint32_t bytes, const struct vyre_dfa_pattern *p,
			 uint32_t n, const uint8_t *text, uint32_t len)
{
	uint32_t states = fuzz_le32(t), s = fuzz_le32(t + 4);
	uint64_t next = 8 + 4 * (((uint64_t)states + 31) / 32);
	uint64_t rep = next + 1024 * (uint64_t)states;

	FUZZ_CHECK(rep + 8 <= bytes && fuzz_le32(t + rep) == VYRE_DFA_REPORT_MAGIC);
	uint64_t first = rep + 8, ent = first + 4 * ((uint64_t)states + 1);

	FUZZ_CHECK(ent + 8 * (uint64_t)fuzz_le32(t + rep + 4) == bytes);
	for (uint32_t e = 1; e <= len && e <= 4096; e++) {
		s = fuzz_le32(t + next + 4 * ((uint64_t)s * 256 + text[e - 1]));
		uint32_t lo = fuzz_le32(t + first + 4 * (uint64_t)s);
		uint32_t hi = fuzz_le32(t + first + 4 * (uint64_t)s + 4), listed = 0;

		FUZZ_CHECK(lo <= hi && ent + 8 * (uint64_t)hi <= bytes);
		for (uint32_t k = lo; k < hi; k++) {
			uint32_t id = fuzz_le32(t + ent + 8 * (uint64_t)k);

			FUZZ_CHECK(k == lo || id > fuzz_le32(t + ent + 8 * (uint64_t)k - 8));
			FUZZ_CHECK(fuzz_le32(t + ent + 8 * (uint64_t)k + 4) ==
				   longest_ending(p, n, id, text, e));
		}
		/* and no id is missing: count the ids brute force finds */
		for (uint32_t id = 0; id < 256; id++)
			listed += longest_ending(p, n, id, text, e) != 0;
		FUZZ_CHECK(listed == hi - lo);
	}
}

/* MODE_COMPILE: the table compiled from the pattern records, or NULL when it must not compile. */
static uint8_t *compile_table(const uint8_t *rec, uint32_t rec_bytes, uint32_t *table_bytes,
			      struct vyre_dfa_pattern *pats, uint32_t *n)
{
	int bad_flags;
	uint8_t *table = NULL;
	uint32_t bytes = 0;
	struct vyre_dfa_info info;

	*n = decode_patterns(rec, rec_bytes, pats, &bad_flags);
	int rc = vyre_dfa_compile(pats, *n, FUZZ_MAX_STATES, &table, &bytes, &info);

	if (*n == 0 || bad_flags) {
		FUZZ_CHECK(rc == VYRE_E_INVAL && info.states == 0);
		return NULL;
	}
	if (rc == VYRE_E_NOMEM) {
		FUZZ_CHECK(info.states > FUZZ_MAX_STATES);
		return NULL;
	}
	FUZZ_CHECK(rc == 0 && info.states <= FUZZ_MAX_STATES && info.table_bytes == bytes);
	*table_bytes = bytes;
	return table;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	if (size < 3 || size > (1u << 20))
		return 0;
	uint32_t mode = data[0];
	uint32_t table_bytes = fuzz_le16(data + 1);

	data += 3;
	size -= 3;
	if (table_bytes > size)
		table_bytes = (uint32_t)size;
	table_bytes &= ~3u;
	uint32_t in_bytes = (uint32_t)(size - table_bytes) & ~3u;

	if ((mode & MODE_UNALIGNED) && in_bytes + table_bytes < size)
		in_bytes += (uint32_t)(size - table_bytes - in_bytes);
	uint32_t out_bytes = (mode & MODE_NO_OUTPUT) ? 0 : 4;
	const uint8_t *table_src = data, *in_src = data + table_bytes;
	static struct vyre_dfa_pattern pats[FUZZ_MAX_PATTERNS];
	uint8_t *compiled = NULL;
	uint32_t n_pats = 0;

	if (mode & MODE_COMPILE) {
		compiled = compile_table(data, table_bytes, &table_bytes, pats, &n_pats);
		if (!compiled)
			return 0;
		table_src = compiled;
	}
	size_t heap_bytes = (size_t)table_bytes + in_bytes + out_bytes;
	uint8_t *heap = malloc(heap_bytes ? heap_bytes : 1);

	if (!heap) {
		vyre_dfa_free(compiled);
		return 0;
	}
	memcpy(heap, table_src, table_bytes);
	memcpy(heap + table_bytes, in_src, in_bytes);
	if (compiled) {
		FUZZ_CHECK(reference_valid(heap, table_bytes));
		check_report(heap, table_bytes, pats, n_pats, heap + table_bytes, in_bytes);
	}
	vyre_dfa_free(compiled);
	if (out_bytes)
		memcpy(heap + table_bytes + in_bytes, &(uint32_t){SENTINEL}, 4);

	int valid = reference_valid(heap, table_bytes);

	FUZZ_CHECK((vyre_dfa_validate(heap, table_bytes) == 0) == valid);

	struct vyre_heap_view view = {heap, heap_bytes};
	struct vyre_exec_item it = {
	    .op = VYRE_OP_DFA_SCAN,
	    .table_off = 0,
	    .table_bytes = table_bytes,
	    .in_off = table_bytes,
	    .in_bytes = in_bytes,
	    .out_off = (uint64_t)table_bytes + in_bytes,
	    .out_bytes = out_bytes,
	};
	uint64_t result = 1;
	int status = vyre_exec_one(&view, &it, &result);
	int runnable = valid && out_bytes == 4 && (in_bytes & 3u) == 0;
	uint32_t out = SENTINEL;

	if (out_bytes)
		memcpy(&out, heap + table_bytes + in_bytes, 4);
	if (runnable) {
		uint32_t want = reference_scan(heap, heap + table_bytes, in_bytes);

		FUZZ_CHECK(status == 0);
		FUZZ_CHECK(result == want);
		FUZZ_CHECK(out == want);
	} else {
		FUZZ_CHECK(status == VYRE_E_INVAL);
		FUZZ_CHECK(result == 0);
		FUZZ_CHECK(out == SENTINEL);
	}
	/*
	 * A trusted table skips the whole-table check but no bound: a valid
	 * table scans the same, and any other reads and writes nothing outside
	 * its buffers (AddressSanitizer watches) and writes nothing on failure.
	 */
	if (out_bytes)
		memcpy(heap + table_bytes + in_bytes, &(uint32_t){SENTINEL}, 4);
	it.flags = VYRE_EXEC_TABLE_TRUSTED;
	result = 1;
	status = vyre_exec_one(&view, &it, &result);
	if (out_bytes)
		memcpy(&out, heap + table_bytes + in_bytes, 4);
	if (runnable) {
		FUZZ_CHECK(status == 0);
		FUZZ_CHECK(result == reference_scan(heap, heap + table_bytes, in_bytes));
	} else {
		FUZZ_CHECK(status == 0 || status == VYRE_E_INVAL);
		FUZZ_CHECK(status == 0 || (result == 0 && out == SENTINEL));
	}
	free(heap);
	return 0;
}
