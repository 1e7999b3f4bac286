/* SPDX-License-Identifier: MIT */
/*
 * The module ops a process knows (op_modules.h, docs/design.md 6.7): a table
 * sorted by number, filled once before any thread asks and read without
 * locks after. vyre_op_operands asks it for every op past the built-in
 * ones, so a lookup is a binary search over at most a few thousand
 * entries, and only module ops pay it.
 */
#include <stdlib.h>
#include <string.h>

#include "op_modules.h"

static struct vyre_op_module_entry *table;
static uint32_t n_table;

static int by_number(const void *a, const void *b)
{
	const uint32_t x = ((const struct vyre_op_module_entry *)a)->number;
	const uint32_t y = ((const struct vyre_op_module_entry *)b)->number;

	return x < y ? -1 : x > y;
}

int vyre_op_modules_register(const struct vyre_op_module_entry *e, uint32_t n)
{
	struct vyre_op_module_entry *t = NULL;

	if (n > VYRE_OP_MODULES_MAX)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < n; i++)
		if (!(e[i].number & VYRE_OP_MODULE_BIT) || !e[i].host ||
		    !(e[i].mask & (VYRE_OPERAND_IN | VYRE_OPERAND_OUT)) ||
		    (e[i].mask &
		     ~(uint32_t)(VYRE_OPERAND_IN | VYRE_OPERAND_OUT | VYRE_OPERAND_TABLE |
				 VYRE_OPERAND_WORD0 | VYRE_OPERAND_COUNTED)))
			return VYRE_E_INVAL;
	if (n) {
		t = malloc((size_t)n * sizeof(*t));
		if (!t)
			return VYRE_E_NOMEM;
		memcpy(t, e, (size_t)n * sizeof(*t));
		qsort(t, n, sizeof(*t), by_number);
		for (uint32_t i = 1; i < n; i++)
			if (t[i].number == t[i - 1].number) {
				free(t);
				return VYRE_E_INVAL;
			}
	}
	free(table);
	table = t;
	n_table = n;
	return 0;
}

const struct vyre_op_module_entry *vyre_op_modules_all(uint32_t *n)
{
	*n = n_table;
	return table;
}

int32_t vyre_op_module_index(uint32_t op)
{
	const struct vyre_op_module_entry *m = vyre_op_module(op);

	return m ? (int32_t)(m - table) : -1;
}

const struct vyre_op_module_entry *vyre_op_module(uint32_t op)
{
	uint32_t lo = 0, hi = n_table;

	while (lo < hi) {
		const uint32_t mid = lo + (hi - lo) / 2;

		if (table[mid].number == op)
			return &table[mid];
		if (table[mid].number < op)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
