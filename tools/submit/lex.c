/* SPDX-License-Identifier: MIT */
#include "lex.h"
#include "numbers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

__attribute__((format(printf, 3, 4))) static int fail(struct vyre_submit_error *err, size_t pos,
						      const char *fmt, ...)
{
	va_list ap;

	err->column = pos + 1 > UINT32_MAX ? 0 : (uint32_t)(pos + 1);
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return VYRE_E_INVAL;
}

static int push_token(struct vyre_submit_line *l, const char *s, size_t len, size_t pos, int quoted,
		      const char *label)
{
	if (len > UINT32_MAX || pos + 1 > UINT32_MAX)
		return VYRE_E_NOMEM;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;

		if (cap < l->cap)
			return VYRE_E_NOMEM;
		void *tok = realloc(l->tok, (size_t)cap * sizeof(*l->tok));

		if (!tok)
			return VYRE_E_NOMEM;
		l->tok = tok;
		l->cap = cap;
	}
	l->tok[l->n++] =
	    (struct vyre_submit_token){s, (uint32_t)len, (uint32_t)(pos + 1), quoted, label};
	return 0;
}

/* Decodes the string starting at the quote at line[*pos] into out; *pos ends past the close. */
static int lex_quoted(const char *line, size_t len, size_t *pos, char *out, size_t *out_len,
		      struct vyre_submit_error *err)
{
	size_t i = *pos + 1, n = 0;

	while (i < len && line[i] != '"') {
		unsigned char c = (unsigned char)line[i];

		if (c < 0x20 && c != '\t')
			return fail(err, i, "control byte 0x%02x inside a string", c);
		if (c != '\\') {
			out[n++] = (char)c;
			i++;
			continue;
		}
		if (i + 1 >= len)
			break;
		unsigned char e = (unsigned char)line[i + 1];
		i += 2;
		switch (e) {
		case '\\':
		case '"':
			out[n++] = (char)e;
			break;
		case 'n':
			out[n++] = '\n';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case '0':
			out[n++] = '\0';
			break;
		case 'x': {
			int hi = i < len ? vyre_submit_hex_digit((unsigned char)line[i]) : -1;
			int lo =
			    i + 1 < len ? vyre_submit_hex_digit((unsigned char)line[i + 1]) : -1;

			if (hi < 0 || lo < 0)
				return fail(err, i - 2, "\\x needs two hex digits");
			out[n++] = (char)(hi * 16 + lo);
			i += 2;
			break;
		}
		default:
			if (e > 0x20 && e < 0x7f)
				return fail(err, i - 2, "unknown escape \\%c", e);
			return fail(err, i - 2, "unknown escape of byte 0x%02x", e);
		}
	}
	if (i >= len)
		return fail(err, *pos, "unterminated string");
	*pos = i + 1;
	*out_len = n;
	return 0;
}

/* A quoted string, which ends its token. */
static int lex_string(const char *line, size_t len, size_t *pos, char *out, size_t *out_len,
		      struct vyre_submit_error *err)
{
	int rc = lex_quoted(line, len, pos, out, out_len, err);

	if (rc)
		return rc;
	if (*pos < len && !is_blank((unsigned char)line[*pos]) && line[*pos] != '#')
		return fail(err, *pos, "a string must be followed by a blank");
	return 0;
}

int vyre_submit_lex_line(const char *line, size_t len, struct vyre_submit_line *l,
			 struct vyre_submit_error *err)
{
	size_t pos = 0, used = 0;

	l->n = 0;
	if (len >= SIZE_MAX)
		return VYRE_E_NOMEM;
	if (l->scratch_cap < len + 1) {
		char *s = realloc(l->scratch, len + 1);

		if (!s)
			return VYRE_E_NOMEM;
		l->scratch = s;
		l->scratch_cap = len + 1;
	}
	/* Decoded tokens plus one NUL each never outgrow the raw bytes plus one. */
	while (pos < len) {
		unsigned char c = (unsigned char)line[pos];
		size_t start = pos, n = 0;
		char *out = l->scratch + used, *label = NULL;
		int quoted = c == '"', rc;

		if (is_blank(c)) {
			pos++;
			continue;
		}
		if (c == '#')
			break;
		if (quoted) {
			rc = lex_string(line, len, &pos, out, &n, err);
			if (rc)
				return rc;
		} else {
			while (pos < len && !is_blank((unsigned char)line[pos]) &&
			       line[pos] != '#') {
				c = (unsigned char)line[pos];
				if (c < 0x20 || c == 0x7f)
					return fail(err, pos, "control byte 0x%02x", c);
				if (c == '"' && n > 0 && out[n - 1] == ':')
					break;
				if (c == '"')
					return fail(err, pos, "quote inside a word");
				out[n++] = (char)c;
				pos++;
			}
		}
		if (!quoted && pos < len && line[pos] == '"') {
			/* LABEL:"...": the label ends where the colon was */
			label = out;
			out[n - 1] = '\0';
			out += n;
			used += n;
			quoted = 1;
			rc = lex_string(line, len, &pos, out, &n, err);
			if (rc)
				return rc;
		}
		out[n] = '\0';
		used += n + 1;
		rc = push_token(l, out, n, start, quoted, label);
		if (rc)
			return rc;
	}
	return 0;
}

void vyre_submit_line_free(struct vyre_submit_line *l)
{
	free(l->tok);
	free(l->scratch);
	memset(l, 0, sizeof(*l));
}
