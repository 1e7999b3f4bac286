/* SPDX-License-Identifier: MIT */
/*
 * The vyre-submit parser: one statement per line, checked completely before
 * the caller sends anything. Grammar and meaning: docs/vyre-submit.md. This
 * file reads the lines, picks each statement's parser (the buffer statements
 * are parse_buffer.c's, the item parse_item.c's; print, wait and names are
 * here) and checks the whole program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_buffer.h"
#include "parse_item.h"
#include "parser.h"

/* print NAME [words|hex|text|counted|report] */
static int parse_print(struct vyre_submit_parser *ps)
{
	const struct vyre_submit_line *l = &ps->line;
	enum vyre_submit_print_format f = VYRE_SUBMIT_PRINT_WORDS;

	if (l->n < 2 || l->n > 3)
		return vyre_submit_perr(ps, &l->tok[0],
					"usage: print NAME [words|hex|text|counted|report]");
	int b = vyre_submit_lookup_buffer(ps, l->tok[1].s);

	if (l->tok[1].quoted || !b)
		return vyre_submit_perr(ps, &l->tok[1], "unknown buffer '%s'", l->tok[1].s);
	if (ps->p->buffers[b - 1].device)
		return vyre_submit_perr(
		    ps, &l->tok[1],
		    "'%s' is a device buffer: COPY it into a heap buffer to print it", l->tok[1].s);
	if (l->n == 3) {
		const struct vyre_submit_token *t = &l->tok[2];

		if (!t->quoted && strcmp(t->s, "hex") == 0)
			f = VYRE_SUBMIT_PRINT_HEX;
		else if (!t->quoted && strcmp(t->s, "text") == 0)
			f = VYRE_SUBMIT_PRINT_TEXT;
		else if (!t->quoted && strcmp(t->s, "counted") == 0)
			f = VYRE_SUBMIT_PRINT_COUNTED;
		else if (!t->quoted && strcmp(t->s, "report") == 0)
			f = VYRE_SUBMIT_PRINT_REPORT;
		else if (t->quoted || strcmp(t->s, "words") != 0)
			return vyre_submit_perr(
			    ps, t, "unknown format '%s' (words, hex, text, counted or report)",
			    t->s);
	}
	return vyre_submit_add_stmt(ps, VYRE_SUBMIT_STMT_PRINT, (uint32_t)b - 1, f);
}

static int parse_statement(struct vyre_submit_parser *ps)
{
	const struct vyre_submit_token *t = &ps->line.tok[0];

	if (t->quoted)
		return vyre_submit_perr(ps, t, "a line starts with a statement, not a string");
	if (strcmp(t->s, "dfa") == 0)
		return vyre_submit_parse_dfa(ps);
	for (uint32_t i = 1; i < ps->line.n; i++)
		if (ps->line.tok[i].label)
			return vyre_submit_perr(ps, &ps->line.tok[i],
						"only dfa patterns take a label (%s:\"...\")",
						ps->line.tok[i].label);
	if (strcmp(t->s, "buffer") == 0)
		return vyre_submit_parse_buffer(ps);
	if (strcmp(t->s, "item") == 0)
		return vyre_submit_parse_item(ps);
	if (strcmp(t->s, "print") == 0)
		return parse_print(ps);
	if (strcmp(t->s, "open") == 0)
		return vyre_submit_parse_open(ps);
	if (strcmp(t->s, "wait") == 0)
		return ps->line.n == 1
			   ? vyre_submit_add_stmt(ps, VYRE_SUBMIT_STMT_WAIT, 0, 0)
			   : vyre_submit_perr(ps, &ps->line.tok[1], "'wait' takes no arguments");
	if (strcmp(t->s, "names") == 0)
		return ps->line.n == 1
			   ? vyre_submit_add_stmt(ps, VYRE_SUBMIT_STMT_NAMES, 0, 0)
			   : vyre_submit_perr(ps, &ps->line.tok[1], "'names' takes no arguments");
	return vyre_submit_perr(
	    ps, t, "unknown statement '%s' (buffer, dfa, open, item, wait, print or names)", t->s);
}

struct id_line {
	uint64_t id;
	uint32_t line;
};

static int cmp_id_line(const void *a, const void *b)
{
	const struct id_line *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* CQEs are matched to items by user_data, so ids must be unique. */
static int check_unique_ids(struct vyre_submit_parser *ps)
{
	const struct vyre_submit_program *p = ps->p;

	if (p->n_items < 2)
		return 0;
	struct id_line *ids = malloc((size_t)p->n_items * sizeof(*ids));

	if (!ids)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < p->n_items; i++)
		ids[i] = (struct id_line){p->items[i].user_data, p->items[i].line};
	qsort(ids, p->n_items, sizeof(*ids), cmp_id_line);
	int rc = 0;

	for (uint32_t i = 1; i < p->n_items && !rc; i++)
		if (ids[i].id == ids[i - 1].id) {
			ps->lineno = ids[i].line;
			rc = vyre_submit_perr(ps, NULL, "item id %llu already used on line %u",
					      (unsigned long long)ids[i].id, ids[i - 1].line);
		}
	free(ids);
	return rc;
}

void vyre_submit_program_free(struct vyre_submit_program *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n_buffers; i++)
		free(p->buffers[i].data);
	free(p->buffers);
	free(p->items);
	free(p->stmts);
	free(p->op_names);
	free(p);
}

static int parse_lines(struct vyre_submit_parser *ps, const char *text, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (ps->lineno == UINT32_MAX)
			return vyre_submit_perr(ps, NULL, "too many lines");
		ps->lineno++;
		if (memchr(text + pos, '\0', end - pos))
			return vyre_submit_perr(ps, NULL, "NUL byte in the input");
		int rc = vyre_submit_lex_line(text + pos, end - pos, &ps->line, ps->err);

		if (rc == VYRE_E_INVAL)
			ps->err->line = ps->lineno;
		if (rc)
			return rc;
		if (ps->line.n) {
			rc = parse_statement(ps);
			if (rc)
				return rc;
		}
		pos = end + 1;
	}
	return check_unique_ids(ps);
}

int vyre_submit_parse(const char *text, size_t len, struct vyre_submit_program **out,
		      struct vyre_submit_error *err)
{
	struct vyre_submit_error scratch_err = {0};
	struct vyre_submit_parser ps = {.err = err ? err : &scratch_err};
	int rc;

	memset(ps.err, 0, sizeof(*ps.err));
	if (!out || (!text && len))
		return VYRE_E_INVAL;
	*out = NULL;
	ps.p = calloc(1, sizeof(*ps.p));
	if (!ps.p)
		return VYRE_E_NOMEM;
	rc = parse_lines(&ps, text, len);
	if (rc == VYRE_E_NOMEM) {
		memset(ps.err, 0, sizeof(*ps.err));
		snprintf(ps.err->msg, sizeof(ps.err->msg), "out of memory");
	}
	vyre_submit_line_free(&ps.line);
	free(ps.names.slot);
	if (rc) {
		vyre_submit_program_free(ps.p);
		return rc;
	}
	*out = ps.p;
	return 0;
}
