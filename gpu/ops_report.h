/* SPDX-License-Identifier: MIT */
/*
 * gpu/ops_report.h - DFA_REPORT and DFA_REPORT_COUNTED (docs/design.md
 * 6.8) as a function over plain pointers, called by vyre_exec_one (the
 * oracle) once it has checked the DFA part of the table.
 *
 * The table's report section, the stream and the operands' overlaps are
 * checked here before anything is stored, so an invalid item changes
 * nothing. The table may be rewritten concurrently by another process:
 * every count is read once and every lookup is bounded where it is used; a
 * lookup that a concurrent rewrite made invalid fails the item, and the
 * records stored before it stay (the racing writer broke the item anyway).
 */
#ifndef VYRE_GPU_OPS_REPORT_H
#define VYRE_GPU_OPS_REPORT_H

#include <stdint.h>

/* What DFA_REPORT reads: the table, already checked up to its next[][] part. */
struct vyre_report_table {
	const uint8_t *base;
	uint32_t bytes;
	uint32_t n_states; /* validated: every next entry read is bounded by it */
	uint64_t section;  /* offset of the report section: vyre_dfa_table_bytes(n_states) */
	int trusted;	   /* VYRE_EXEC_REPORT_TRUSTED: only the section's header is checked */
};

/*
 * Checks the report section of @t (design.md 6.8): magic, out_first from 0
 * to n_out and non-decreasing, ids strictly increasing per state, every len
 * >= 1, a non-empty list only on an accepting state, all inside the table;
 * when @t is trusted, only the magic and that out_first[] and out[] lie
 * inside the table. Stores n_out. Returns 0 or
 * VYRE_E_INVAL.
 */
int vyre_report_section_check(const struct vyre_report_table *t, uint32_t *n_out);

/*
 * The report of the @len bytes at @in into @out (@out_bytes), continuing the
 * stream at @stream (@stream_bytes; NULL: none). @in_whole/@in_whole_bytes
 * is the input operand as a whole (a counted one with its length word), for
 * the overlap rules. Returns 0 with the match count in *result, or
 * VYRE_E_INVAL with *result 0.
 */
int vyre_report_exec(const struct vyre_report_table *t, const uint8_t *in_whole,
		     uint32_t in_whole_bytes, const uint8_t *in, uint32_t len, uint8_t *out,
		     uint32_t out_bytes, uint8_t *stream, uint32_t stream_bytes, uint64_t *result);

#endif /* VYRE_GPU_OPS_REPORT_H */
