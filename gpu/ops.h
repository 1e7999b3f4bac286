/* SPDX-License-Identifier: MIT */
/*
 * gpu/ops.h - the semantics of vyre operations (docs/design.md section 6).
 *
 * This is the one definition of what an item does: the sequential CPU oracle
 * every test compares against, the read/write sets the planner builds its
 * hazards from, and the static checks vyred applies before planning. Backends
 * execute `struct vyre_exec_item`, an item whose handles were already resolved
 * to (heap, offset, length) by vyred; they never see handles.
 */
#ifndef VYRE_GPU_OPS_H
#define VYRE_GPU_OPS_H

#include <stdint.h>

#include "vyre/abi.h"
#include "op_modules.h"

/* One registered heap as this process maps it. */
struct vyre_heap_view {
	uint8_t *base;
	uint64_t bytes;
};

/* A heap index in an exec item has 16 bits: a backend has at most this many heaps (backend.h). */
#define VYRE_EXEC_MAX_HEAPS 65536u

/*
 * A resolved item. Each operand lives in a heap of its own index (a domain
 * heap, or a device buffer: docs/design.md section 6.2); offsets are in
 * bytes inside that heap and are multiples of 4, and every [off, off +
 * bytes) range lies inside it (vyred checked). Only the operands the op
 * uses (vyre_op_operands) are looked at; vyred gives unused ones heap,
 * offset and bytes 0.
 *
 * 64 bytes, one cache line: vyred writes one an item and the backend reads
 * it back, the largest per-item traffic of the host path (docs/fastpath.md,
 * session 17). So heap indices have 16 bits (VYRE_EXEC_MAX_HEAPS), prev and
 * flags share a word (a batch has fewer than 2^24 items, planner/batch.h),
 * and a stream's length shares param's word: only ops with a table have a
 * stream (tests/test_report.c checks), and their param is unused.
 */
struct vyre_exec_item {
	uint32_t op;
	union {
		uint32_t param;	    /* the immediate; unused for the ops with a table */
		uint32_t aux_bytes; /* VYRE_OPERAND_AUX ops: the stream's, 0 when none */
	};
	uint16_t in_heap;
	uint16_t out_heap;
	uint16_t table_heap;
	uint16_t aux_heap;
	uint32_t flags : 8; /* VYRE_EXEC_* */
	uint32_t prev : 24; /* VYRE_EXEC_AFTER_PREV: the batch index of the item it runs after */
	uint32_t in_bytes;
	uint32_t out_bytes;
	uint32_t table_bytes;
	uint64_t in_off;
	uint64_t out_off;
	uint64_t table_off;
	/* DFA_REPORT*: the stream buffer (design.md 6.8), aux_bytes 0 when the item has none */
	uint64_t aux_off;
};

_Static_assert(sizeof(struct vyre_exec_item) == 64, "exec item is one cache line");

/*
 * The item's DFA table is a device buffer that a DFA_SCAN already found
 * valid, and nothing has written it since (vyred tracks write generations,
 * docs/planner.md): the executor may skip the whole-table check, never a
 * per-lookup bound. Never set for a heap table, which clients may rewrite.
 */
#define VYRE_EXEC_TABLE_TRUSTED (1u << 0)

/*
 * DFA_REPORT*: besides VYRE_EXEC_TABLE_TRUSTED, the table's report section
 * (design.md 6.8) was found valid by an earlier DFA_REPORT* item that
 * completed with status 0, and nothing has written the table since: the
 * executor may skip the whole-section check (out_first in order from 0 to
 * n_out, ids increasing, len >= 1), never the section's header or a
 * per-lookup bound, so a table that lies yields wrong records, never a
 * stray access. A DFA_SCAN checks only next[], so it never earns this.
 */
#define VYRE_EXEC_REPORT_TRUSTED (1u << 4)

/*
 * The item continues a chain (docs/design.md section 6.3) after the batch's
 * item `prev`, which the plan runs in an earlier group: when that one
 * failed (any non-zero status, VYRE_E_CANCELED included), this one does not
 * run and completes with VYRE_E_CANCELED, result 0.
 */
#define VYRE_EXEC_AFTER_PREV (1u << 1)

/*
 * On-chip handoff (docs/design.md 7.6), marked by the planner on
 * consecutive items of one chain: an item with VYRE_EXEC_HANDOFF_OUT
 * writes a transient buffer that the next batch item (index + 1, marked
 * VYRE_EXEC_HANDOFF_IN, VYRE_EXEC_AFTER_PREV) reads as its input and that
 * nothing else reads. A backend may run such a run of items as one unit,
 * one after the other, as soon as the first one's group runs, keeping each
 * handed-off buffer in on-chip memory instead of the heap (whose bytes it
 * then never touches). A backend that does not may ignore both marks: the
 * plan's groups stay valid.
 */
#define VYRE_EXEC_HANDOFF_OUT (1u << 2)
#define VYRE_EXEC_HANDOFF_IN  (1u << 3)

/* Each op's operand mask (gpu/ops.c); read through vyre_op_operands. */
extern const uint8_t vyre_op_operand_mask[VYRE_OP_COUNT];

/* 1 when items of @op may be deduplicated: every built-in op, a module op whose manifest says pure.
 */
static inline int vyre_op_pure(uint32_t op)
{
	const struct vyre_op_module_entry *m;

	if (op < VYRE_OP_COUNT)
		return 1;
	m = vyre_op_module(op);
	return m && m->pure;
}

/*
 * Operand mask of @op, or 0 for NOP; VYRE_E_INVAL for an unknown op. Inline:
 * every stage of vyred asks it of every item.
 */
static inline int vyre_op_operands(uint32_t op)
{
	if (op < VYRE_OP_COUNT)
		return vyre_op_operand_mask[op];
	const struct vyre_op_module_entry *m =
	    (op & VYRE_OP_MODULE_BIT) ? vyre_op_module(op) : NULL;

	return m ? m->mask : (int)VYRE_E_INVAL;
}

/*
 * Read and write sets of a work item, as buffer handles (0 = none). An
 * unknown op has empty sets. Used for hazard analysis: a DFA table is a read.
 */
struct vyre_op_access {
	uint32_t reads[2];
	uint32_t n_reads;
	uint32_t write; /* 0 when the op writes nothing */
	uint32_t aux;	/* the stream (design.md 6.8), read and written; 0: none */
};

/*
 * vyre_op_access of an item whose SQE carries @aux (its aux_handle): a
 * DFA_REPORT's stream is a second buffer the item reads and writes.
 */
static inline void vyre_op_access_aux(const struct vyre_work_item *it, uint32_t aux,
				      struct vyre_op_access *acc)
{
	const int mask = vyre_op_operands(it->op_handle);

	acc->n_reads = 0;
	acc->write = 0;
	acc->aux = 0;
	acc->reads[0] = acc->reads[1] = 0;
	if (mask <= 0)
		return;
	if (mask & VYRE_OPERAND_AUX)
		acc->aux = aux;
	if (mask & VYRE_OPERAND_IN)
		acc->reads[acc->n_reads++] = it->input_handle;
	if (mask & VYRE_OPERAND_TABLE)
		acc->reads[acc->n_reads++] = it->param;
	if (mask & VYRE_OPERAND_OUT)
		acc->write = it->output_handle;
}

static inline void vyre_op_access(const struct vyre_work_item *it, struct vyre_op_access *acc)
{
	vyre_op_access_aux(it, 0, acc);
}

/* The stream handle of @sqe's item: its aux_handle when the op takes one, else 0. */
static inline uint32_t vyre_sqe_aux(const struct vyre_sqe *sqe)
{
	const int mask = vyre_op_operands(sqe->item.op_handle);

	return mask > 0 && (mask & VYRE_OPERAND_AUX) ? sqe->aux_handle : 0;
}

/*
 * True when running @it twice in a row gives the same buffers and result as
 * running it once: false for ops that read their own output (in == out for
 * ADD/XOR/MUL/SUM/MAX and the byte ops, or a DFA or BYTEMAP table or input
 * equal to the output).
 */
int vyre_op_idempotent(const struct vyre_work_item *it);
/* vyre_op_idempotent of an item whose stream is @aux (0: none): never with a stream. */
int vyre_op_idempotent_aux(const struct vyre_work_item *it, uint32_t aux);

/*
 * Static checks that need only lengths: NOP with non-zero handles, unused
 * handles that are not 0, an output too short for a WORD0 op, an input or
 * output shorter than 4 bytes for a COUNTED op. Handle
 * existence and domain are vyred's to check. Returns 0 or VYRE_E_INVAL.
 * Inline: vyred's resolve asks it of every item.
 */
static inline int vyre_op_check_lengths(uint32_t op, const struct vyre_work_item *it,
					uint32_t in_bytes, uint32_t out_bytes)
{
	int mask = vyre_op_operands(op);

	if (mask < 0)
		return VYRE_E_INVAL;
	if (!(mask & VYRE_OPERAND_IN) && it->input_handle != 0)
		return VYRE_E_INVAL;
	if (!(mask & VYRE_OPERAND_OUT) && it->output_handle != 0)
		return VYRE_E_INVAL;
	if ((mask & VYRE_OPERAND_IN) && it->input_handle == 0)
		return VYRE_E_INVAL;
	if ((mask & VYRE_OPERAND_OUT) && it->output_handle == 0)
		return VYRE_E_INVAL;
	if ((mask & VYRE_OPERAND_TABLE) && it->param == 0)
		return VYRE_E_INVAL;
	if ((in_bytes | out_bytes) & 3u)
		return VYRE_E_INVAL;
	if ((mask & (VYRE_OPERAND_WORD0 | VYRE_OPERAND_COUNTED)) && out_bytes < 4)
		return VYRE_E_INVAL;
	if ((mask & VYRE_OPERAND_COUNTED) && in_bytes < 4)
		return VYRE_E_INVAL;
	return 0;
}

/*
 * Validate a DFA table of @bytes bytes: n_states >= 1, start < n_states,
 * long enough, every transition < n_states. Returns 0 or VYRE_E_INVAL.
 */
int vyre_dfa_validate(const uint8_t *table, uint32_t bytes);

/* Bytes a DFA table of @n_states needs, or 0 on overflow or n_states 0. */
uint64_t vyre_dfa_table_bytes(uint32_t n_states);

/*
 * Execute one resolved item against @heaps (the sequential oracle), each
 * operand in heaps[its heap index]; the caller has checked that every heap
 * the op uses exists. Returns the CQE status (0 or VYRE_E_INVAL) and stores
 * the CQE result. An invalid item writes nothing. Safe against a heap that
 * another process rewrites concurrently: every table lookup is bounded at
 * the point of use. The byte ops of design.md 6.1 run in gpu/ops_bytes.c;
 * for them an input and output range that overlap without starting at the
 * same byte (no pair of handles gives one) is VYRE_E_INVAL.
 */
int vyre_exec_one(const struct vyre_heap_view *heaps, const struct vyre_exec_item *it,
		  uint64_t *result);

/*
 * 1 when every byte that @r reads of its input, the output of @w, is one
 * that @w writes when it succeeds (docs/design.md sections 6 and 6.1), so
 * that handing the output over in a fresh buffer gives @r what the heap
 * would (docs/design.md 7.6): for instance a decoder's counted output read
 * by a counted reader, or a FILL.
 */
int vyre_exec_handoff_exact(const struct vyre_exec_item *w, const struct vyre_exec_item *r);

/* 1 when every heap @it's op uses is below @n_heaps and mapped in @heaps. */
int vyre_exec_heaps_ok(const struct vyre_heap_view *heaps, uint32_t n_heaps,
		       const struct vyre_exec_item *it);

#endif /* VYRE_GPU_OPS_H */
