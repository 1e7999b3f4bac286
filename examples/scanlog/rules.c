/* SPDX-License-Identifier: MIT */
/*
 * examples/scanlog/rules.c - the rule file of scanlog: one rule a line,
 *
 *	ID PATTERN        a literal, case-sensitive
 *	ID/i PATTERN      a literal, ASCII letters in either case
 *
 * ID is a decimal u32; PATTERN is every byte after the one space up to the
 * end of the line (a trailing CR is dropped), with escapes \xHH, \\, \t,
 * \r, \n, \0 and \s (a space, for a pattern that ends in one). Blank lines
 * and lines starting with '#' are skipped.
 */
#include "rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Unescapes [s, e) into @out (room for e - s bytes); its length, or -1 for a bad escape. */
static long unescape(const char *s, const char *e, uint8_t *out)
{
	long n = 0;

	while (s < e) {
		if (*s != '\\') {
			out[n++] = (uint8_t)*s++;
			continue;
		}
		if (++s == e)
			return -1;
		const char c = *s++;

		switch (c) {
		case '\\':
			out[n++] = '\\';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case 'n':
			out[n++] = '\n';
			break;
		case '0':
			out[n++] = 0;
			break;
		case 's':
			out[n++] = ' ';
			break;
		case 'x': {
			const int hi = e - s >= 2 ? hex_digit(s[0]) : -1;
			const int lo = hi >= 0 ? hex_digit(s[1]) : -1;

			if (lo < 0)
				return -1;
			out[n++] = (uint8_t)(hi << 4 | lo);
			s += 2;
			break;
		}
		default:
			return -1;
		}
	}
	return n;
}

/* Parses one non-blank rule line [s, e) into @r; 0, or -1 with @why set. */
static int parse_line(const char *s, const char *e, struct scanlog_rule *r, const char **why)
{
	char *end = NULL;

	errno = 0;
	const unsigned long id = strtoul(s, &end, 10);

	if (end == s || errno || id > UINT32_MAX || end >= e) {
		*why = "expected ID PATTERN";
		return -1;
	}
	r->flags = 0;
	if (e - end >= 2 && end[0] == '/' && end[1] == 'i') {
		r->flags = VYRE_DFA_CASELESS;
		end += 2;
	}
	if (end >= e || *end != ' ' || end + 1 == e) {
		*why = "expected one space, then the pattern";
		return -1;
	}
	end++;
	r->bytes = malloc((size_t)(e - end));
	if (!r->bytes) {
		*why = "out of memory";
		return -1;
	}
	const long n = unescape(end, e, r->bytes);

	if (n <= 0 || (unsigned long)n > VYRE_DFA_PATTERN_MAX) {
		free(r->bytes);
		r->bytes = NULL;
		*why = n < 0 ? "bad escape (\\xHH \\\\ \\t \\r \\n \\0 \\s)" : "pattern too long";
		return -1;
	}
	r->len = (uint32_t)n;
	r->id = (uint32_t)id;
	return 0;
}

int scanlog_rules_load(const char *path, struct scanlog_rules *out)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	unsigned lineno = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!f) {
		fprintf(stderr, "scanlog: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((got = getline(&line, &cap, f)) >= 0) {
		const char *e = line + got;
		const char *why = NULL;

		lineno++;
		if (e > line && e[-1] == '\n')
			e--;
		if (e > line && e[-1] == '\r')
			e--;
		if (e == line || line[0] == '#')
			continue;
		if (out->n == out->cap) {
			const uint32_t cap2 = out->cap ? out->cap * 2 : 64;
			void *p = cap2 > out->cap ? realloc(out->r, (size_t)cap2 * sizeof(*out->r))
						  : NULL;

			if (!p) {
				fprintf(stderr, "scanlog: %s: out of memory\n", path);
				rc = -1;
				break;
			}
			out->r = p;
			out->cap = cap2;
		}
		if (parse_line(line, e, &out->r[out->n], &why) != 0) {
			fprintf(stderr, "scanlog: %s:%u: %s\n", path, lineno, why);
			rc = -1;
			break;
		}
		out->n++;
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "scanlog: %s: read error\n", path);
		rc = -1;
	}
	if (rc == 0 && out->n == 0) {
		fprintf(stderr, "scanlog: %s: no rules\n", path);
		rc = -1;
	}
	free(line);
	fclose(f);
	if (rc)
		scanlog_rules_free(out);
	return rc;
}

void scanlog_rules_free(struct scanlog_rules *rs)
{
	for (uint32_t i = 0; i < rs->n; i++)
		free(rs->r[i].bytes);
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}
