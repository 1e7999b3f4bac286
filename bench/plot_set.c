/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_set.c - what the figures share before gnuplot: row names taken
 * apart into words, and series of points collected from rows in any order
 * and written out as gnuplot data files.
 */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plot_set.h"

int vyre_plot_split(const char *name, struct vyre_plot_words *out)
{
	out->n = 0;
	while (*name) {
		size_t len = strcspn(name, " ");

		if (len > 0) {
			if (out->n == VYRE_PLOT_WORDS || len >= sizeof(out->w[0]))
				return -1;
			memcpy(out->w[out->n], name, len);
			out->w[out->n++][len] = '\0';
		}
		name += len;
		name += strspn(name, " ");
	}
	return 0;
}

void vyre_plot_join(const struct vyre_plot_words *w, unsigned from, unsigned to, char *out,
		    size_t cap)
{
	size_t n = 0;

	out[0] = '\0';
	for (unsigned i = from; i < to && i < w->n; i++) {
		int k = snprintf(out + n, cap - n, "%s%s", i > from ? " " : "", w->w[i]);

		if (k < 0 || (size_t)k >= cap - n)
			return;
		n += (size_t)k;
	}
}

double vyre_plot_count(const char *word, char suffix)
{
	char *end;

	if (*word < '0' || *word > '9')
		return -1;
	double v = strtod(word, &end);

	if (suffix && *end++ != suffix)
		return -1;
	return *end == '\0' && isfinite(v) ? v : -1;
}

double vyre_plot_bytes(const char *word)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	char *end;

	if (*word < '0' || *word > '9')
		return -1;
	double v = strtod(word, &end);

	for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(end, units[i]) == 0)
			return ldexp(v, 10 * (int)i);
	return -1;
}

static struct vyre_plot_series *series(struct vyre_plot_set *set, const char *name)
{
	char title[sizeof(set->s->title)];

	/* a title goes into a data file's comment line and a gnuplot string */
	snprintf(title, sizeof(title), "%s", name);
	for (char *c = title; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->s[i].title, title) == 0)
			return &set->s[i];
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 8;
		void *s = realloc(set->s, cap * sizeof(*set->s));

		if (!s)
			return NULL;
		set->s = s;
		set->cap = cap;
	}
	struct vyre_plot_series *s = &set->s[set->n++];

	memset(s, 0, sizeof(*s));
	memcpy(s->title, title, sizeof(title));
	return s;
}

int vyre_plot_put(struct vyre_plot_set *set, const char *title, double x, unsigned col, double v)
{
	struct vyre_plot_series *s = series(set, title);
	size_t i;

	if (!s || col == 0 || col >= VYRE_PLOT_COLS)
		return s ? -EINVAL : -ENOMEM;
	for (i = 0; i < s->n && s->pt[i][0] != x; i++)
		;
	if (i == s->n) {
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 8;
			void *pt = realloc(s->pt, cap * sizeof(*s->pt));

			if (!pt)
				return -ENOMEM;
			s->pt = pt;
			s->cap = cap;
		}
		s->pt[i][0] = x;
		for (unsigned c = 1; c < VYRE_PLOT_COLS; c++)
			s->pt[i][c] = NAN;
		s->n++;
	}
	s->pt[i][col] = v;
	return 0;
}

void vyre_plot_set_free(struct vyre_plot_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		free(set->s[i].pt);
	free(set->s);
	memset(set, 0, sizeof(*set));
}

static int by_title(const void *a, const void *b)
{
	return strcmp(((const struct vyre_plot_series *)a)->title,
		      ((const struct vyre_plot_series *)b)->title);
}

void vyre_plot_set_sort(struct vyre_plot_set *set)
{
	if (set->n > 1)
		qsort(set->s, set->n, sizeof(*set->s), by_title);
}

static int by_x(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

int vyre_plot_write_data(const struct vyre_plot_ctx *pc, const char *fig,
			 const struct vyre_plot_set *set, unsigned first)
{
	char path[4096];

	for (size_t k = 0; k < set->n; k++) {
		struct vyre_plot_series *s = &set->s[k];
		int len = snprintf(path, sizeof(path), "%s/%s.%zu.dat", pc->dir, fig, first + k);

		if (len < 0 || (size_t)len >= sizeof(path))
			return -ENAMETOOLONG;
		FILE *f = fopen(path, "w");

		if (!f) {
			int rc = -errno;

			fprintf(stderr, "vyre-bench: plot: %s: %s\n", path, strerror(errno));
			return rc;
		}
		qsort(s->pt, s->n, sizeof(*s->pt), by_x);
		fprintf(f, "# %s\n", s->title);
		for (size_t i = 0; i < s->n; i++)
			for (unsigned c = 0; c < VYRE_PLOT_COLS; c++) {
				if (isfinite(s->pt[i][c]))
					fprintf(f, "%.10g", s->pt[i][c]);
				else
					fputc('?', f);
				fputc(c + 1 < VYRE_PLOT_COLS ? ' ' : '\n', f);
			}
		if (fclose(f) != 0) {
			int rc = -errno;

			fprintf(stderr, "vyre-bench: plot: %s: %s\n", path, strerror(errno));
			return rc;
		}
	}
	return 0;
}
