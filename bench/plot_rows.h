/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_rows.h - the rows vyre-bench --json wrote, read back
 * for --plot (bench/plot_rows.c).
 */
#ifndef VYRE_BENCH_PLOT_ROWS_H
#define VYRE_BENCH_PLOT_ROWS_H

#include <stddef.h>

/* One row of `vyre-bench --json` output; value is NAN when the row says null. */
struct vyre_bench_row {
	char suite[32], name[128], metric[32], unit[16];
	double value;
};

struct vyre_bench_rows {
	struct vyre_bench_row *v;
	size_t n, cap;
};

/*
 * Appends the rows of @path (one JSON object a line; blank lines skipped).
 * 0, or -errno (unreadable, no memory) / -EINVAL (a malformed line, printed
 * to stderr with its number).
 */
int vyre_bench_rows_load(struct vyre_bench_rows *rows, const char *path);
void vyre_bench_rows_free(struct vyre_bench_rows *rows);

#endif /* VYRE_BENCH_PLOT_ROWS_H */
