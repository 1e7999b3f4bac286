/* SPDX-License-Identifier: MIT */
/*
 * The vyre-submit parser's state, and what its statement parsers share:
 * errors, growing arrays, the buffer-name index, names and numbers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numbers.h"
#include "parser.h"

int vyre_submit_perr(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
		     const char *fmt, ...)
{
	va_list ap;

	ps->err->line = ps->lineno;
	ps->err->column = t ? t->column : 0;
	va_start(ap, fmt);
	vsnprintf(ps->err->msg, sizeof(ps->err->msg), fmt, ap);
	va_end(ap);
	return VYRE_E_INVAL;
}

int vyre_submit_grow(void **arr, uint32_t *cap, uint32_t need, size_t size, uint32_t limit)
{
	if (need <= *cap)
		return 0;
	if (need > limit)
		return VYRE_E_INVAL;
	uint32_t cap2 = *cap ? *cap : 16;

	while (cap2 < need)
		cap2 = cap2 > limit / 2 ? limit : cap2 * 2;
	void *a = realloc(*arr, (size_t)cap2 * size);

	if (!a)
		return VYRE_E_NOMEM;
	*arr = a;
	*cap = cap2;
	return 0;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Slot holding @name, or the empty slot where it would go. */
static uint32_t *name_slot(const struct vyre_submit_parser *ps, const char *name)
{
	uint32_t mask = ps->names.cap - 1;

	for (uint32_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
		uint32_t *s = &ps->names.slot[i];

		if (*s == 0 || strcmp(ps->p->buffers[*s - 1].name, name) == 0)
			return s;
	}
}

static int name_index_reserve(struct vyre_submit_parser *ps, uint32_t entries)
{
	if ((uint64_t)entries * 2 < ps->names.cap)
		return 0;
	uint32_t cap = ps->names.cap ? ps->names.cap * 2 : 64;
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return VYRE_E_NOMEM;
	uint32_t *old = ps->names.slot;

	ps->names.slot = slot;
	ps->names.cap = cap;
	for (uint32_t i = 0; i < ps->p->n_buffers; i++)
		*name_slot(ps, ps->p->buffers[i].name) = i + 1;
	free(old);
	return 0;
}

int vyre_submit_lookup_buffer(const struct vyre_submit_parser *ps, const char *name)
{
	if (ps->names.cap == 0)
		return 0;
	return (int)*name_slot(ps, name);
}

int vyre_submit_is_keyword(const char *s)
{
	return strcmp(s, "fence") == 0 || strcmp(s, "nodedupe") == 0;
}

int vyre_submit_valid_name(const struct vyre_submit_token *t)
{
	if (t->quoted || t->len == 0 || t->len > VYRE_SUBMIT_NAME_MAX ||
	    vyre_submit_is_keyword(t->s))
		return 0;
	for (uint32_t i = 0; i < t->len; i++) {
		char c = t->s[i];
		int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';

		if (!alpha && !(i > 0 && ((c >= '0' && c <= '9') || c == '-' || c == '.')))
			return 0;
	}
	return 1;
}

/* Unsigned decimal or 0x-hex number that fits in @max. */
/* A u32 word: a number, or -N for its two's complement. */
int vyre_submit_word(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
		     uint32_t *out)
{
	uint64_t v;
	int neg = !t->quoted && t->s[0] == '-';

	if (t->quoted || vyre_submit_number(t->s + neg, UINT32_MAX, &v))
		return vyre_submit_perr(ps, t, "'%s' is not a 32-bit number", t->s);
	*out = neg ? (uint32_t)(0u - (uint32_t)v) : (uint32_t)v;
	return 0;
}

int vyre_submit_add_stmt(struct vyre_submit_parser *ps, enum vyre_submit_stmt_kind kind,
			 uint32_t index, enum vyre_submit_print_format format)
{
	struct vyre_submit_program *p = ps->p;
	int rc = vyre_submit_grow((void **)&p->stmts, &ps->cap_stmts, p->n_stmts + 1,
				  sizeof(*p->stmts), UINT32_MAX / 2);

	if (rc)
		return rc == VYRE_E_INVAL ? vyre_submit_perr(ps, NULL, "too many statements") : rc;
	p->stmts[p->n_stmts++] = (struct vyre_submit_stmt){kind, index, format, ps->lineno};
	return 0;
}

int vyre_submit_add_buffer(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
			   enum vyre_submit_stmt_kind kind, struct vyre_submit_buffer **out)
{
	struct vyre_submit_program *p = ps->p;
	int rc;

	if (!vyre_submit_valid_name(t))
		return vyre_submit_perr(ps, t,
					"'%s' is not a valid buffer name (letter or _, then "
					"letters, digits, _ - .; at most %u bytes)",
					t->s, VYRE_SUBMIT_NAME_MAX);
	int prev = vyre_submit_lookup_buffer(ps, t->s);

	if (prev)
		return vyre_submit_perr(ps, t, "buffer '%s' already declared on line %u", t->s,
					p->buffers[prev - 1].line);
	rc = vyre_submit_grow((void **)&p->buffers, &ps->cap_buffers, p->n_buffers + 1,
			      sizeof(*p->buffers), VYRE_SUBMIT_MAX_BUFFERS);
	if (rc)
		return rc == VYRE_E_INVAL ? vyre_submit_perr(ps, t, "more than %u buffers",
							     VYRE_SUBMIT_MAX_BUFFERS)
					  : rc;
	rc = name_index_reserve(ps, p->n_buffers + 1);
	if (rc)
		return rc;
	struct vyre_submit_buffer *b = &p->buffers[p->n_buffers];

	memset(b, 0, sizeof(*b));
	memcpy(b->name, t->s, t->len + 1);
	b->line = ps->lineno;
	*name_slot(ps, b->name) = ++p->n_buffers;
	*out = b;
	return vyre_submit_add_stmt(ps, kind, p->n_buffers - 1, 0);
}
