/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_run.h - one row of the "scan" suite (bench/
 * bench_scan_run.c): what its workers share with the suite, and the warm-up
 * and measuring window.
 */
#ifndef VYRE_BENCH_SCAN_RUN_H
#define VYRE_BENCH_SCAN_RUN_H

#include <sys/types.h>

#include "bench.h"
#include "bench_scan_job.h"

__attribute__((format(printf, 2, 3))) void vyre_scan_fail(struct worker *me, const char *fmt, ...);
int vyre_scan_stopping(const struct board *b);

/* Says it is ready and waits for go; 0 to start, -1 when the suite gave up. */
int vyre_scan_ready_then_go(struct board *b, struct worker *me);

/* Items [*first, *first + *n) are worker @id's: an even split. */
void vyre_scan_share(const struct job *j, unsigned id, uint32_t *first, uint32_t *n);

/* Item @k of a worker's cyclic walk over its @n items is done with @count matches. */
void vyre_scan_item_done(struct worker *me, uint64_t k, uint32_t n, uint32_t bytes, uint64_t count);

/*
 * Runs the row whose @workers are starting on @b and sets stop; the caller
 * joins them. @vyred: the pid of the vyred the workers use, whose CPU time
 * over the window per item completed is f->vyred_cpu (0: none, -1 there).
 */
int vyre_scan_run_window(const struct vyre_bench_ctx *ctx, struct board *b, unsigned workers,
			 const char *row, pid_t vyred, struct figures *f);

/* Prints the first failed worker's reason; 1 when one failed. */
int vyre_scan_report_failed(const struct board *b, unsigned workers, const char *row);

#endif /* VYRE_BENCH_SCAN_RUN_H */
