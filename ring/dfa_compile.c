/* SPDX-License-Identifier: MIT */
/*
 * vyre_dfa_compile (include/vyre/dfa.h, docs/design.md 6.8): checks the
 * patterns, splits them into case-sensitive and caseless, and builds one
 * Aho-Corasick automaton straight into the table when only one kind is
 * there, else both automata and their product.
 */
#include <stdlib.h>
#include <string.h>

#include "dfa_build.h"
#include "vyre/abi.h"

/* The most states any table below 4 GiB can hold. */
static uint32_t states_that_fit(void)
{
	uint64_t n = UINT32_MAX / (4 * VYRE_DFA_ALPHABET + 5);

	while (vyre_dfa_table_size(n + 1, 0, NULL) <= UINT32_MAX)
		n++;
	return (uint32_t)n;
}

static int valid(const struct vyre_dfa_pattern *p, uint32_t n)
{
	if (!p || n == 0)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (!p[i].bytes || p[i].len == 0 || p[i].len > VYRE_DFA_PATTERN_MAX ||
		    (p[i].flags & ~(uint32_t)VYRE_DFA_VALID_FLAGS))
			return 0;
	return 1;
}

static uint32_t *rows_alloc(uint64_t states)
{
	/* states is below the limit, so the product cannot overflow */
	return calloc((size_t)states * VYRE_DFA_ALPHABET, sizeof(uint32_t));
}

/* One kind only: the automaton is the table, built where its rows belong. */
static int compile_one(const struct vyre_dfa_set *s, uint8_t **table, uint32_t *bytes,
		       struct vyre_dfa_info *got)
{
	uint64_t rows_off;
	struct vyre_dfa_ac ac;

	vyre_dfa_table_size(s->nodes, 0, &rows_off);
	uint8_t *buf = calloc(1, (size_t)rows_off + (size_t)s->nodes * 4 * VYRE_DFA_ALPHABET);

	if (!buf)
		return VYRE_E_NOMEM;
	int err = vyre_dfa_ac_build(s, (uint32_t *)(void *)(buf + rows_off), &ac);

	if (err) {
		free(buf);
		return err;
	}
	got->states = ac.n;
	got->report_entries = ac.out.n_ent;
	err = vyre_dfa_table_finish(buf, rows_off, ac.n, &ac.out, table, bytes);
	vyre_dfa_ac_free(&ac);
	return err;
}

static int compile_mixed(const struct vyre_dfa_set *sens, const struct vyre_dfa_set *nocase,
			 uint32_t max, uint8_t **table, uint32_t *bytes, struct vyre_dfa_info *got)
{
	struct vyre_dfa_ac a = {0}, b = {0};
	uint32_t *ra = rows_alloc(sens->nodes), *rb = rows_alloc(nocase->nodes);
	int err = ra && rb ? 0 : VYRE_E_NOMEM;

	if (!err)
		err = vyre_dfa_ac_build(sens, ra, &a);
	if (!err)
		err = vyre_dfa_ac_build(nocase, rb, &b);
	if (!err)
		err = vyre_dfa_product(&a, &b, max, table, bytes, got);
	vyre_dfa_ac_free(&a);
	vyre_dfa_ac_free(&b);
	free(ra);
	free(rb);
	return err;
}

int vyre_dfa_compile(const struct vyre_dfa_pattern *patterns, uint32_t n, uint32_t max_states,
		     uint8_t **table, uint32_t *bytes, struct vyre_dfa_info *info)
{
	struct vyre_dfa_set sens, nocase;
	struct vyre_dfa_info got = {0};
	uint32_t max = max_states ? max_states : VYRE_DFA_DEFAULT_MAX_STATES;
	uint32_t fit = states_that_fit();

	if (info)
		memset(info, 0, sizeof(*info));
	if (!table || !bytes || !valid(patterns, n))
		return VYRE_E_INVAL;
	max = max < fit ? max : fit;
	int err = vyre_dfa_set_init(&sens, patterns, n, 0);
	int err2 = vyre_dfa_set_init(&nocase, patterns, n, 1);

	if (err || err2) {
		err = VYRE_E_NOMEM;
	} else if (sens.nodes > max || nocase.nodes > max) {
		/*
		 * Each trie's nodes are states of the automaton (each is reached
		 * by its own string, in the product too): a cheap lower bound,
		 * exact when only one kind of pattern is there.
		 */
		got.states = sens.nodes > nocase.nodes ? sens.nodes : nocase.nodes;
		err = VYRE_E_NOMEM;
	} else if (nocase.n == 0 || sens.n == 0) {
		err = compile_one(nocase.n ? &nocase : &sens, table, bytes, &got);
	} else {
		err = compile_mixed(&sens, &nocase, max, table, bytes, &got);
	}
	vyre_dfa_set_free(&sens);
	vyre_dfa_set_free(&nocase);
	got.table_bytes = vyre_dfa_table_size(got.states, got.report_entries, NULL);
	if (info && (err == 0 || err == VYRE_E_NOMEM))
		*info = got;
	return err;
}

void vyre_dfa_free(uint8_t *table)
{
	free(table);
}
