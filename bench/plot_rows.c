/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_rows.c - reads the rows vyre-bench --json writes back: one flat
 * JSON object a line, string fields suite/name/metric/unit and a number (or
 * null) value. Strict enough that a truncated or foreign file is refused
 * with its line number rather than drawn wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_rows.h"

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* A JSON string into @out (NULL when malformed or longer than @cap - 1 bytes). */
static const char *read_string(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		unsigned char c = (unsigned char)*p++;

		if (c == '\0' || c < 0x20)
			return NULL;
		if (c == '\\') {
			static const char esc[] = "\"\\/bfnrt", val[] = "\"\\/\b\f\n\r\t";
			const char *e;

			c = (unsigned char)*p++;
			if (c == 'u') {
				char hex[5] = {0};
				char *end;

				memcpy(hex, p, 4);
				unsigned long u = strtoul(hex, &end, 16);

				if (end != hex + 4)
					return NULL;
				p += 4;
				c = u < 0x80 ? (unsigned char)u : '?';
			} else if (c && (e = strchr(esc, c))) {
				c = (unsigned char)val[e - esc];
			} else {
				return NULL;
			}
		}
		if (n + 1 >= cap)
			return NULL;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return p + 1;
}

static const char *read_number(const char *p, double *v)
{
	char *end;

	if (*p != '-' && (*p < '0' || *p > '9'))
		return NULL;
	*v = strtod(p, &end);
	return end == p || !isfinite(*v) ? NULL : end;
}

static int parse_line(const char *line, struct vyre_bench_row *r)
{
	const char *p = skip_ws(line);
	unsigned seen = 0;

	memset(r, 0, sizeof(*r));
	r->value = NAN;
	if (*p++ != '{')
		return -1;
	for (p = skip_ws(p); *p != '}'; p = skip_ws(p)) {
		char key[16], sval[128];

		if (seen && *p++ != ',')
			return -1;
		p = read_string(skip_ws(p), key, sizeof(key));
		if (!p || *(p = skip_ws(p)) != ':')
			return -1;
		p = skip_ws(p + 1);
		if (*p == '"') {
			static const char *const keys[] = {"suite", "name", "metric", "unit"};
			char *const dst[] = {r->suite, r->name, r->metric, r->unit};
			const size_t caps[] = {sizeof(r->suite), sizeof(r->name), sizeof(r->metric),
					       sizeof(r->unit)};

			p = read_string(p, sval, sizeof(sval));
			if (!p)
				return -1;
			for (unsigned k = 0; k < 4; k++) {
				if (strcmp(key, keys[k]) != 0)
					continue;
				if (strlen(sval) >= caps[k])
					return -1;
				strcpy(dst[k], sval);
				seen |= 1u << k;
			}
		} else if (strncmp(p, "null", 4) == 0) {
			p += 4;
			seen |= strcmp(key, "value") == 0 ? 1u << 4 : 0;
		} else {
			double v;

			p = read_number(p, &v);
			if (!p)
				return -1;
			if (strcmp(key, "value") == 0) {
				r->value = v;
				seen |= 1u << 4;
			}
		}
		seen |= 1u << 5; /* a field was read: the next needs a comma */
	}
	if (*skip_ws(p + 1) != '\0')
		return -1;
	return (seen & 0x1f) == 0x1f ? 0 : -1;
}

int vyre_bench_rows_load(struct vyre_bench_rows *rows, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned long lineno = 0;
	int rc = 0;

	if (!f) {
		rc = -errno;
		fprintf(stderr, "vyre-bench: %s: %s\n", path, strerror(errno));
		return rc;
	}
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		if (*skip_ws(line) == '\0')
			continue;
		if (!strchr(line, '\n') && !feof(f)) {
			fprintf(stderr, "vyre-bench: %s:%lu: line too long\n", path, lineno);
			rc = -EINVAL;
			break;
		}
		if (rows->n == rows->cap) {
			size_t cap = rows->cap ? rows->cap * 2 : 256;
			void *v = cap > ((size_t)-1) / sizeof(*rows->v)
				      ? NULL
				      : realloc(rows->v, cap * sizeof(*rows->v));

			if (!v) {
				rc = -ENOMEM;
				break;
			}
			rows->v = v;
			rows->cap = cap;
		}
		if (parse_line(line, &rows->v[rows->n]) != 0) {
			fprintf(stderr, "vyre-bench: %s:%lu: not a vyre-bench row\n", path, lineno);
			rc = -EINVAL;
			break;
		}
		rows->n++;
	}
	if (rc == 0 && ferror(f)) {
		rc = -EIO;
		fprintf(stderr, "vyre-bench: %s: read error\n", path);
	}
	fclose(f);
	return rc;
}

void vyre_bench_rows_free(struct vyre_bench_rows *rows)
{
	free(rows->v);
	rows->v = NULL;
	rows->n = rows->cap = 0;
}
