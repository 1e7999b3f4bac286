/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/dfa_compile.h - compile literal patterns into a DFA_SCAN table.
 *
 * The table (docs/design.md section 6: u32 n_states, u32 start, u32
 * accept[ceil(n_states/32)], u32 next[n_states][256]) is an Aho-Corasick
 * automaton with its failure links folded into the transitions: after each
 * input byte it is in an accepting state exactly when some pattern ends at
 * that byte. DFA_SCAN over a text therefore counts the byte positions where at
 * least one pattern ends (two patterns ending at one position count once; an
 * empty pattern ends everywhere).
 */
#ifndef VYRE_TOOLS_DFA_COMPILE_H
#define VYRE_TOOLS_DFA_COMPILE_H

#include <stdint.h>

struct vyre_dfa_pattern {
	const uint8_t *bytes;
	uint32_t len;
};

/* Largest automaton vyre_dfa_compile builds unless told otherwise (64 MiB table). */
#define VYRE_DFA_DEFAULT_MAX_STATES 65536u

/*
 * vyre_dfa_compile - build the table for @n patterns. At most @max_states
 * states are built (the trie has at most 1 + total pattern length). On success
 * *table is a malloc'd table of *bytes bytes owned by the caller (free()).
 * Returns 0, VYRE_E_INVAL (NULL arguments, max_states 0) or VYRE_E_NOMEM
 * (allocation failed or more than @max_states states needed).
 */
int vyre_dfa_compile(const struct vyre_dfa_pattern *patterns, uint32_t n, uint32_t max_states,
		     uint8_t **table, uint32_t *bytes);

#endif /* VYRE_TOOLS_DFA_COMPILE_H */
