/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_hs.h - the "scan" suite's Hyperscan peer (bench/
 * bench_scan_hs.c, VYRE_HAVE_HS).
 */
#ifndef VYRE_BENCH_SCAN_HS_H
#define VYRE_BENCH_SCAN_HS_H

#include <stdint.h>

#include "bench.h"
#include "bench_scan_job.h"

#ifdef VYRE_HAVE_HS
/* The first @n of @p compiled as literals; NULL (and why, on stderr) on failure. */
struct hs_database *vyre_scan_hs_build(const struct vyre_dfa_pattern *p, uint32_t n);
void vyre_scan_hs_free(struct hs_database *db);

/* The row @row of @j with one thread per online CPU; 0 with @f filled. */
int vyre_scan_hs_row(const struct vyre_bench_ctx *ctx, struct job *j, const char *row,
		     struct figures *f);

/*
 * One scan of @bytes of @data by one thread per online CPU, each taking a
 * slice and starting PATTERN_MAX - 1 bytes before it so that the matches
 * ending in it are all found; repeated for --seconds. @f as a row's.
 */
int vyre_scan_hs_single(const struct vyre_bench_ctx *ctx, const struct hs_database *db,
			const uint8_t *data, uint32_t bytes, struct figures *f);
#endif

#endif /* VYRE_BENCH_SCAN_HS_H */
