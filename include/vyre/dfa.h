/* SPDX-License-Identifier: MIT */
/*
 * vyre/dfa.h - compile literal patterns into a DFA table (docs/design.md
 * sections 6 and 6.8), in libvyre for every client.
 *
 * The table serves DFA_SCAN (it accepts after a byte exactly when some
 * pattern ends there) and DFA_REPORT (its report section lists which
 * pattern ids end in each state, each with its longest length).
 */
#ifndef VYRE_DFA_H
#define VYRE_DFA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* vyre_dfa_pattern.flags */
#define VYRE_DFA_CASELESS    (1u << 0) /* ASCII letters match either case */
#define VYRE_DFA_VALID_FLAGS VYRE_DFA_CASELESS

/* Longest pattern, in bytes. */
#define VYRE_DFA_PATTERN_MAX 65535u

/* Largest automaton vyre_dfa_compile builds unless told otherwise (a 64 MiB table). */
#define VYRE_DFA_DEFAULT_MAX_STATES 65536u

struct vyre_dfa_pattern {
	const uint8_t *bytes; /* any byte values, NUL included */
	uint32_t len;	      /* 1 to VYRE_DFA_PATTERN_MAX */
	uint32_t id;	      /* reported in DFA_REPORT records; need not be distinct */
	uint32_t flags;	      /* VYRE_DFA_* */
};

/*
 * What a compile built, or on VYRE_E_NOMEM at least what the set needs: the
 * node count of the larger of the two tries (case-sensitive, caseless) when
 * that alone is over the limit (exact for a set of one kind; table_bytes then
 * counts no report entries), else max_states + 1 when the product of the two
 * automata reached the limit. All zero for VYRE_E_INVAL.
 */
struct vyre_dfa_info {
	uint64_t states;      /* DFA states */
	uint64_t table_bytes; /* the whole table, report section included */
	uint64_t report_entries;
};

/*
 * vyre_dfa_compile - build the table for @n patterns. At most @max_states
 * states (0: VYRE_DFA_DEFAULT_MAX_STATES) and a table under 4 GiB. On
 * success *table is a malloc'd table of *bytes bytes owned by the caller
 * (free() or vyre_dfa_free()). @info (may be NULL) says what was built, or
 * on VYRE_E_NOMEM at least how many states and bytes the set needs.
 * Returns 0, VYRE_E_INVAL (NULL arguments, n 0, a pattern of 0 or more
 * than VYRE_DFA_PATTERN_MAX bytes, unknown flags) or VYRE_E_NOMEM (too
 * many states, a table of 4 GiB or more, or allocation failed).
 */
int vyre_dfa_compile(const struct vyre_dfa_pattern *patterns, uint32_t n, uint32_t max_states,
		     uint8_t **table, uint32_t *bytes, struct vyre_dfa_info *info);

/* vyre_dfa_free - free a table from vyre_dfa_compile (for bindings without free()). */
void vyre_dfa_free(uint8_t *table);

#ifdef __cplusplus
}
#endif

#endif /* VYRE_DFA_H */
