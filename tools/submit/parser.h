/* SPDX-License-Identifier: MIT */
/*
 * tools/submit/parser.h - the vyre-submit parser's state, and the helpers its
 * statement parsers (parse.c, parse_buffer.c, parse_item.c) share.
 */
#ifndef VYRE_TOOLS_SUBMIT_PARSER_H
#define VYRE_TOOLS_SUBMIT_PARSER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lex.h"
#include "program.h"

/* Open-addressing index from buffer name to 1 + buffer index. */
struct vyre_submit_name_index {
	uint32_t *slot;
	uint32_t cap; /* power of two, more than twice the entries */
};

struct vyre_submit_parser {
	struct vyre_submit_program *p;
	uint32_t cap_buffers, cap_items, cap_stmts, cap_op_names;
	struct vyre_submit_name_index names;
	struct vyre_submit_line line;
	uint32_t lineno;
	struct vyre_submit_error *err;
};

/* Sets the error of the current line at token @t (NULL: no column); returns VYRE_E_INVAL. */
__attribute__((format(printf, 3, 4))) int vyre_submit_perr(struct vyre_submit_parser *ps,
							   const struct vyre_submit_token *t,
							   const char *fmt, ...);

/* Grows *arr (of *cap elements of @size) to hold @need; fails past @limit. */
int vyre_submit_grow(void **arr, uint32_t *cap, uint32_t need, size_t size, uint32_t limit);

/* 1 + the index of the buffer named @name, or 0. */
int vyre_submit_lookup_buffer(const struct vyre_submit_parser *ps, const char *name);

/* 1 when @s is a word an item takes as a flag (fence, nodedupe). */
int vyre_submit_is_keyword(const char *s);

/* 1 when @t may name a buffer. */
int vyre_submit_valid_name(const struct vyre_submit_token *t);

/* A u32 word: a number, or -N for its two's complement. */
int vyre_submit_word(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
		     uint32_t *out);

/* Appends a statement of @kind about buffer, item or print @index. */
int vyre_submit_add_stmt(struct vyre_submit_parser *ps, enum vyre_submit_stmt_kind kind,
			 uint32_t index, enum vyre_submit_print_format format);

/*
 * Appends a buffer named by token @t, made by a statement of @kind (BUFFER
 * or OPEN); on success *out points at it (data not yet set).
 */
int vyre_submit_add_buffer(struct vyre_submit_parser *ps, const struct vyre_submit_token *t,
			   enum vyre_submit_stmt_kind kind, struct vyre_submit_buffer **out);

/* 1 when @t is the bare word @w. */
static inline int vyre_submit_is_word(const struct vyre_submit_token *t, const char *w)
{
	return !t->quoted && strcmp(t->s, w) == 0;
}

#endif /* VYRE_TOOLS_SUBMIT_PARSER_H */
