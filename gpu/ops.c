/* SPDX-License-Identifier: MIT */
/*
 * The sequential semantics of every vyre operation. Buffers are arrays of
 * little-endian u32 words; arithmetic wraps.
 */
#include "ops.h"

#include <string.h>

#include "ops_bytes.h"
#include "ops_report.h"

const uint8_t vyre_op_operand_mask[VYRE_OP_COUNT] = {
    [VYRE_OP_NOP] = 0,
    [VYRE_OP_FILL] = VYRE_OPERAND_OUT,
    [VYRE_OP_COPY] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT,
    [VYRE_OP_ADD] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT,
    [VYRE_OP_XOR] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT,
    [VYRE_OP_MUL] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT,
    [VYRE_OP_SUM] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_WORD0,
    [VYRE_OP_MAX] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_WORD0,
    [VYRE_OP_DFA_SCAN] =
	VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE | VYRE_OPERAND_WORD0,
    [VYRE_OP_BASE64_DECODE] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_COUNTED,
    [VYRE_OP_HEX_DECODE] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_COUNTED,
    [VYRE_OP_BYTEMAP] =
	VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE | VYRE_OPERAND_COUNTED,
    [VYRE_OP_DFA_SCAN_COUNTED] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE |
				 VYRE_OPERAND_WORD0 | VYRE_OPERAND_COUNTED,
    [VYRE_OP_DFA_REPORT] =
	VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE | VYRE_OPERAND_AUX,
    [VYRE_OP_DFA_REPORT_COUNTED] = VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE |
				   VYRE_OPERAND_COUNTED | VYRE_OPERAND_AUX,
};

int vyre_op_idempotent(const struct vyre_work_item *it)
{
	return vyre_op_idempotent_aux(it, 0);
}

int vyre_op_idempotent_aux(const struct vyre_work_item *it, uint32_t aux)
{
	struct vyre_op_access acc;

	/* a module op that is not pure may give other bytes each time it runs */
	if (!vyre_op_pure(it->op_handle))
		return 0;
	vyre_op_access_aux(it, aux, &acc);
	/* a stream moves on each time: never the same twice */
	if (acc.aux)
		return 0;
	for (uint32_t i = 0; i < acc.n_reads; i++)
		if (acc.write != 0 && acc.reads[i] == acc.write)
			return 0;
	return 1;
}

uint64_t vyre_dfa_table_bytes(uint32_t n_states)
{
	if (n_states == 0)
		return 0;
	uint64_t accept_words = ((uint64_t)n_states + 31) / 32;
	/* n_states < 2^32, so 256 * n_states + accept_words + 2 < 2^41: no overflow in u64 */
	return 4 * (2 + accept_words + 256 * (uint64_t)n_states);
}

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void store32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* The O(1) part of the check: header, length; returns n_states. */
static int dfa_header(const uint8_t *table, uint32_t bytes, uint32_t *n_out)
{
	if (bytes < 8)
		return VYRE_E_INVAL;
	uint32_t n_states = load32(table);
	uint32_t start = load32(table + 4);
	uint64_t need = vyre_dfa_table_bytes(n_states);

	if (need == 0 || need > bytes || start >= n_states)
		return VYRE_E_INVAL;
	*n_out = n_states;
	return 0;
}

/* Validates the table and returns the n_states it was validated against. */
static int dfa_check(const uint8_t *table, uint32_t bytes, uint32_t *n_out)
{
	uint32_t n_states;

	if (dfa_header(table, bytes, &n_states) != 0)
		return VYRE_E_INVAL;
	const uint8_t *next = table + 4 * (2 + ((uint64_t)n_states + 31) / 32);
	uint64_t entries = 256 * (uint64_t)n_states;

	for (uint64_t i = 0; i < entries; i++)
		if (load32(next + 4 * i) >= n_states)
			return VYRE_E_INVAL;
	*n_out = n_states;
	return 0;
}

int vyre_dfa_validate(const uint8_t *table, uint32_t bytes)
{
	uint32_t n_states;

	return dfa_check(table, bytes, &n_states);
}

/*
 * Runs the DFA over @in. @n_states is the validated count, not re-read, so a
 * table rewritten concurrently can never index past what was validated.
 */
static int dfa_scan(const uint8_t *table, uint32_t n_states, const uint8_t *in, uint32_t in_bytes,
		    uint32_t *count)
{
	uint32_t state = load32(table + 4);
	const uint8_t *accept = table + 8;
	const uint8_t *next = accept + 4 * (((uint64_t)n_states + 31) / 32);
	uint32_t hits = 0;

	if (state >= n_states)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < in_bytes; i++) {
		state = load32(next + 4 * ((uint64_t)state * 256 + in[i]));
		if (state >= n_states)
			return VYRE_E_INVAL;
		hits += (load32(accept + 4 * (state / 32)) >> (state % 32)) & 1u;
	}
	*count = hits;
	return 0;
}

static int range_ok(const struct vyre_heap_view *h, uint64_t off, uint32_t bytes)
{
	return off <= h->bytes && bytes <= h->bytes - off;
}

static uint32_t combine(uint32_t op, uint32_t a, uint32_t param)
{
	switch (op) {
	case VYRE_OP_ADD:
		return a + param;
	case VYRE_OP_XOR:
		return a ^ param;
	case VYRE_OP_MUL:
		return a * param;
	default:
		return a;
	}
}

int vyre_exec_heaps_ok(const struct vyre_heap_view *heaps, uint32_t n_heaps,
		       const struct vyre_exec_item *it)
{
	int mask = vyre_op_operands(it->op);

	if (mask < 0)
		return 1; /* vyre_exec_one refuses the op itself */
	if ((mask & VYRE_OPERAND_IN) && (it->in_heap >= n_heaps || !heaps[it->in_heap].base))
		return 0;
	if ((mask & VYRE_OPERAND_OUT) && (it->out_heap >= n_heaps || !heaps[it->out_heap].base))
		return 0;
	if ((mask & VYRE_OPERAND_TABLE) &&
	    (it->table_heap >= n_heaps || !heaps[it->table_heap].base))
		return 0;
	if ((mask & VYRE_OPERAND_AUX) && it->aux_bytes &&
	    (it->aux_heap >= n_heaps || !heaps[it->aux_heap].base))
		return 0;
	return 1;
}

/*
 * A module op's item through its host function (design.md 6.7): the
 * counted bytes of a counted input, the table for a table param, else the
 * param word. Anything but 0 from the function makes the item invalid.
 */
static int module_exec(const struct vyre_exec_item *it, const uint8_t *in, uint8_t *out,
		       const struct vyre_heap_view *ht, uint64_t *result)
{
	const struct vyre_op_module_entry *m = vyre_op_module(it->op);
	struct vyre_op_host_args a = {.abi = VYRE_OP_MODULE_ABI};
	uint64_t r = 0;

	if (!m)
		return VYRE_E_INVAL;
	/* a block runs an item on the GPU: which of in and out a partial overlap reads first is not
	 * defined */
	if (in && out && vyre_bytes_partial_overlap(in, it->in_bytes, out, it->out_bytes))
		return VYRE_E_INVAL;
	a.in = in;
	a.in_bytes = in ? it->in_bytes : 0;
	if (in && (m->mask & VYRE_OPERAND_COUNTED)) {
		uint32_t len;

		if (vyre_counted_len(in, it->in_bytes, &len) != 0)
			return VYRE_E_INVAL;
		a.in = in + 4;
		a.in_bytes = len;
	}
	a.out = out;
	a.out_bytes = out ? it->out_bytes : 0;
	if (ht) {
		a.table = ht->base + it->table_off;
		a.table_bytes = it->table_bytes;
	} else {
		a.param = it->param;
	}
	if (m->host(&a, &r) != 0)
		return VYRE_E_INVAL;
	*result = r;
	return 0;
}

/* DFA_REPORT*: the DFA part of the table is checked as for DFA_SCAN, the rest in ops_report.c. */
static int report_exec(const struct vyre_exec_item *it, const uint8_t *in, uint8_t *out,
		       const struct vyre_heap_view *ht, const struct vyre_heap_view *hx,
		       uint64_t *result)
{
	struct vyre_report_table t = {.base = ht->base + it->table_off,
				      .bytes = it->table_bytes,
				      .trusted = (it->flags & VYRE_EXEC_REPORT_TRUSTED) != 0};
	uint32_t len = it->in_bytes;
	const uint8_t *bytes = in;
	int bad = (it->flags & VYRE_EXEC_TABLE_TRUSTED) ? dfa_header(t.base, t.bytes, &t.n_states)
							: dfa_check(t.base, t.bytes, &t.n_states);

	if (bad != 0)
		return VYRE_E_INVAL;
	if (it->op == VYRE_OP_DFA_REPORT_COUNTED) {
		if (vyre_counted_len(in, it->in_bytes, &len) != 0)
			return VYRE_E_INVAL;
		bytes = in + 4;
	}
	t.section = vyre_dfa_table_bytes(t.n_states);
	return vyre_report_exec(&t, in, it->in_bytes, bytes, len, out, it->out_bytes,
				hx ? hx->base + it->aux_off : NULL, it->aux_bytes, result);
}

int vyre_exec_one(const struct vyre_heap_view *heaps, const struct vyre_exec_item *it,
		  uint64_t *result)
{
	int mask = vyre_op_operands(it->op);

	*result = 0;
	if (mask < 0 || ((it->in_bytes | it->out_bytes | it->table_bytes) & 3u))
		return VYRE_E_INVAL;
	/* only the operands the op uses name a heap */
	const struct vyre_heap_view *hi = (mask & VYRE_OPERAND_IN) ? &heaps[it->in_heap] : NULL;
	const struct vyre_heap_view *ho = (mask & VYRE_OPERAND_OUT) ? &heaps[it->out_heap] : NULL;
	const struct vyre_heap_view *ht =
	    (mask & VYRE_OPERAND_TABLE) ? &heaps[it->table_heap] : NULL;

	if ((hi && !range_ok(hi, it->in_off, it->in_bytes)) ||
	    (ho && !range_ok(ho, it->out_off, it->out_bytes)) ||
	    (ht && !range_ok(ht, it->table_off, it->table_bytes)))
		return VYRE_E_INVAL;
	const struct vyre_heap_view *hx =
	    ((mask & VYRE_OPERAND_AUX) && it->aux_bytes) ? &heaps[it->aux_heap] : NULL;

	if (hx && !range_ok(hx, it->aux_off, it->aux_bytes))
		return VYRE_E_INVAL;
	if ((mask & (VYRE_OPERAND_WORD0 | VYRE_OPERAND_COUNTED)) && it->out_bytes < 4)
		return VYRE_E_INVAL;

	const uint8_t *in = hi ? hi->base + it->in_off : NULL;
	uint8_t *out = ho ? ho->base + it->out_off : NULL;
	uint32_t in_words = it->in_bytes / 4, out_words = it->out_bytes / 4;
	uint32_t n = in_words < out_words ? in_words : out_words;
	uint32_t acc = 0;

	switch (it->op) {
	case VYRE_OP_NOP:
		return 0;
	case VYRE_OP_FILL:
		for (uint32_t i = 0; i < out_words; i++)
			store32(out + 4 * (uint64_t)i, it->param);
		return 0;
	case VYRE_OP_COPY:
		memmove(out, in, 4 * (uint64_t)n);
		return 0;
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		for (uint32_t i = 0; i < n; i++)
			store32(out + 4 * (uint64_t)i,
				combine(it->op, load32(in + 4 * (uint64_t)i), it->param));
		return 0;
	case VYRE_OP_SUM:
		for (uint32_t i = 0; i < in_words; i++)
			acc += load32(in + 4 * (uint64_t)i);
		break;
	case VYRE_OP_MAX:
		for (uint32_t i = 0; i < in_words; i++) {
			uint32_t v = load32(in + 4 * (uint64_t)i);
			acc = v > acc ? v : acc;
		}
		break;
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_SCAN_COUNTED: {
		const uint8_t *table = ht->base + it->table_off;
		uint32_t n_states, len = it->in_bytes;
		/* a trusted table was validated at its last write: only the header is read again */
		int bad = (it->flags & VYRE_EXEC_TABLE_TRUSTED)
			      ? dfa_header(table, it->table_bytes, &n_states)
			      : dfa_check(table, it->table_bytes, &n_states);

		if (it->op == VYRE_OP_DFA_SCAN_COUNTED) {
			if (vyre_counted_len(in, it->in_bytes, &len) != 0)
				return VYRE_E_INVAL;
			in += 4;
		}
		if (bad != 0 || dfa_scan(table, n_states, in, len, &acc) != 0)
			return VYRE_E_INVAL;
		break;
	}
	case VYRE_OP_DFA_REPORT:
	case VYRE_OP_DFA_REPORT_COUNTED:
		return report_exec(it, in, out, ht, hx, result);
	case VYRE_OP_BASE64_DECODE:
	case VYRE_OP_HEX_DECODE:
	case VYRE_OP_BYTEMAP:
		return vyre_bytes_exec(it->op, in, it->in_bytes, out, it->out_bytes,
				       ht ? ht->base + it->table_off : NULL, it->table_bytes,
				       result);
	default:
		return module_exec(it, in, out, ht, result);
	}
	store32(out, acc);
	*result = acc;
	return 0;
}
