/* SPDX-License-Identifier: MIT */
/*
 * vyre-submit: the item statement - its op, operands and options - and the
 * names of the ops.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../../ring/proto.h"
#include "numbers.h"
#include "parse_item.h"

static const char *const op_names[VYRE_OP_COUNT] = {
    [VYRE_OP_NOP] = "NOP",
    [VYRE_OP_FILL] = "FILL",
    [VYRE_OP_COPY] = "COPY",
    [VYRE_OP_ADD] = "ADD",
    [VYRE_OP_XOR] = "XOR",
    [VYRE_OP_MUL] = "MUL",
    [VYRE_OP_SUM] = "SUM",
    [VYRE_OP_MAX] = "MAX",
    [VYRE_OP_DFA_SCAN] = "DFA_SCAN",
    [VYRE_OP_BASE64_DECODE] = "BASE64_DECODE",
    [VYRE_OP_HEX_DECODE] = "HEX_DECODE",
    [VYRE_OP_BYTEMAP] = "BYTEMAP",
    [VYRE_OP_DFA_SCAN_COUNTED] = "DFA_SCAN_COUNTED",
    [VYRE_OP_DFA_REPORT] = "DFA_REPORT",
    [VYRE_OP_DFA_REPORT_COUNTED] = "DFA_REPORT_COUNTED",
};

const char *vyre_submit_op_name(uint32_t op)
{
	return op < VYRE_OP_COUNT ? op_names[op] : NULL;
}

/* 1 + the index of module op name @s in the program's table, added if new; or an error. */
static int module_op(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
		     uint32_t *op_name)
{
	struct vyre_submit_program *p = ps->p;

	for (uint32_t i = 0; i < p->n_op_names; i++)
		if (strcmp(p->op_names[i].name, t->s) == 0) {
			*op_name = i + 1;
			return 0;
		}
	int rc = vyre_submit_grow((void **)&p->op_names, &ps->cap_op_names, p->n_op_names + 1,
				  sizeof(*p->op_names), VYRE_SUBMIT_MAX_OP_NAMES);

	if (rc)
		return rc == VYRE_E_INVAL ? vyre_submit_perr(ps, t, "more than %u module op names",
							     VYRE_SUBMIT_MAX_OP_NAMES)
					  : rc;
	snprintf(p->op_names[p->n_op_names].name, sizeof(p->op_names[0].name), "%s", t->s);
	*op_name = ++p->n_op_names;
	return 0;
}

static int parse_op(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
		    struct vyre_submit_item *it)
{
	for (uint32_t i = 0; i < VYRE_OP_COUNT; i++)
		if (!t->quoted && strcasecmp(t->s, op_names[i]) == 0) {
			it->op = i;
			return 0;
		}
	if (!t->quoted && strcasecmp(t->s, "DFA") == 0) {
		it->op = VYRE_OP_DFA_SCAN;
		return 0;
	}
	uint64_t v;

	if (!t->quoted && vyre_msg_op_name_ok(t->s, t->len))
		return module_op(ps, t, &it->op_name);
	if (t->quoted || vyre_submit_number(t->s, UINT32_MAX, &v))
		return vyre_submit_perr(
		    ps, t,
		    "unknown op '%s' (NOP FILL COPY ADD XOR MUL SUM MAX DFA_SCAN "
		    "BASE64_DECODE HEX_DECODE BYTEMAP DFA_SCAN_COUNTED DFA_REPORT "
		    "DFA_REPORT_COUNTED, a module op's "
		    "name in lower case, or a number)",
		    t->s);
	it->op = (uint32_t)v;
	return 0;
}

/* A buffer name or @HANDLE; @param_ok also accepts any number. */
static int parse_operand(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
			 int param_ok, struct vyre_submit_operand *o)
{
	uint64_t v;

	o->buffer = 0;
	o->value = 0;
	if (!t->quoted && t->s[0] == '@') {
		if (vyre_submit_number(t->s + 1, UINT32_MAX, &v))
			return vyre_submit_perr(ps, t, "'%s' is not a handle (@ and a number)",
						t->s);
		o->value = (uint32_t)v;
		return 0;
	}
	if (vyre_submit_valid_name(t)) {
		int b = vyre_submit_lookup_buffer(ps, t->s);

		if (!b)
			return vyre_submit_perr(ps, t, "unknown buffer '%s'", t->s);
		o->buffer = (uint32_t)b;
		return 0;
	}
	if (param_ok)
		return vyre_submit_word(ps, t, &o->value);
	if (!t->quoted && strcmp(t->s, "0") == 0)
		return 0;
	return vyre_submit_perr(ps, t, "'%s' is not a buffer (a name, @handle or 0)", t->s);
}

/* A token that names the item's flags, id or ranges, not its PARAM. */
static int item_option(const struct vyre_submit_token *t)
{
	return vyre_submit_is_keyword(t->s) || strncmp(t->s, "id=", 3) == 0 ||
	       strncmp(t->s, "in=", 3) == 0 || strncmp(t->s, "out=", 4) == 0 ||
	       strncmp(t->s, "stream=", 7) == 0;
}

/* in=OFF+LEN / out=OFF+LEN (docs/design.md 6.6): the byte range of an operand. */
static int parse_range(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
		       const char *at, uint64_t *off, uint32_t *len)
{
	char num[64];
	const char *plus = strchr(at, '+');
	uint64_t l;

	if (!plus || (size_t)(plus - at) >= sizeof(num))
		return vyre_submit_perr(ps, t, "'%s' needs OFFSET+LENGTH", t->s);
	memcpy(num, at, (size_t)(plus - at));
	num[plus - at] = 0;
	if (vyre_submit_number(num, UINT64_MAX, off) ||
	    vyre_submit_number(plus + 1, UINT32_MAX, &l))
		return vyre_submit_perr(ps, t, "'%s' needs a 64-bit offset and a 32-bit length",
					t->s);
	*len = (uint32_t)l;
	return 0;
}

/* stream=NAME or stream=@HANDLE (docs/design.md 6.8): the item's stream buffer. */
static int parse_stream(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
			struct vyre_submit_item *it)
{
	struct vyre_submit_token name = *t;

	name.s += 7;
	name.len -= 7;
	name.column += 7;
	if (it->op != VYRE_OP_DFA_REPORT && it->op != VYRE_OP_DFA_REPORT_COUNTED)
		return vyre_submit_perr(ps, t, "stream= is for DFA_REPORT and DFA_REPORT_COUNTED");
	return parse_operand(ps, &name, 0, &it->stream);
}

/* One of an item's options: fence, nodedupe, id=N, in=OFF+LEN, out=OFF+LEN, stream=NAME. */
static int parse_item_option(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
			     struct vyre_submit_item *it, uint32_t *seen)
{
	static const char *const names[] = {"fence", "nodedupe", "id=", "in=", "out=", "stream="};
	uint32_t which = 0;

	while (which < 6 && (t->quoted || strncmp(t->s, names[which], strlen(names[which])) != 0 ||
			     (which < 2 && strcmp(t->s, names[which]) != 0)))
		which++;
	if (which == 6)
		return vyre_submit_perr(ps, t,
					"unexpected '%s' (fence, nodedupe, id=N, in=OFF+LEN, "
					"out=OFF+LEN or stream=NAME)",
					t->s);
	if (*seen & (1u << which))
		return vyre_submit_perr(ps, t, "'%s' given twice", names[which]);
	*seen |= 1u << which;
	switch (which) {
	case 0:
		it->flags |= VYRE_SQE_FENCE;
		return 0;
	case 1:
		it->flags |= VYRE_SQE_NODEDUPE;
		return 0;
	case 2:
		if (vyre_submit_number(t->s + 3, UINT64_MAX, &it->user_data))
			return vyre_submit_perr(ps, t, "'%s' needs a 64-bit number", t->s);
		return 0;
	case 3:
		it->flags |= VYRE_SQE_RANGE;
		return parse_range(ps, t, t->s + 3, &it->range.in_offset, &it->range.in_length);
	case 5:
		return parse_stream(ps, t, it);
	default:
		it->flags |= VYRE_SQE_RANGE;
		return parse_range(ps, t, t->s + 4, &it->range.out_offset, &it->range.out_length);
	}
}

/* item OP IN OUT [PARAM] [fence] [nodedupe] [id=N] [in=OFF+LEN] [out=OFF+LEN] [stream=NAME] */
int vyre_submit_parse_item(struct vyre_submit_parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	struct vyre_submit_program *p = ps->p;
	struct vyre_submit_item it = {.user_data = ps->lineno, .line = ps->lineno};
	uint32_t i = 4, seen = 0;
	int rc;

	if (l->n < 4)
		return vyre_submit_perr(ps, &l->tok[0],
					"usage: item OP IN OUT [PARAM] [fence] [nodedupe] "
					"[id=N] [in=OFF+LEN] [out=OFF+LEN] [stream=NAME]");
	rc = parse_op(ps, &l->tok[1], &it);
	if (!rc)
		rc = parse_operand(ps, &l->tok[2], 0, &it.in);
	if (!rc)
		rc = parse_operand(ps, &l->tok[3], 0, &it.out);
	if (!rc && i < l->n && !item_option(&l->tok[i]))
		rc = parse_operand(ps, &l->tok[i++], 1, &it.param);
	for (; !rc && i < l->n; i++)
		rc = parse_item_option(ps, &l->tok[i], &it, &seen);
	if (rc)
		return rc;
	rc = vyre_submit_grow((void **)&p->items, &ps->cap_items, p->n_items + 1, sizeof(*p->items),
			      VYRE_SUBMIT_MAX_ITEMS);
	if (rc)
		return rc == VYRE_E_INVAL
			   ? vyre_submit_perr(ps, NULL, "more than %u items", VYRE_SUBMIT_MAX_ITEMS)
			   : rc;
	p->items[p->n_items++] = it;
	return vyre_submit_add_stmt(ps, VYRE_SUBMIT_STMT_ITEM, p->n_items - 1, 0);
}
