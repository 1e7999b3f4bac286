/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_scan_vyre.h - the "scan" suite's vyre peer (bench/
 * bench_scan_vyre.c): vyred, its producer processes, the single long scan.
 */
#ifndef VYRE_BENCH_SCAN_VYRE_H
#define VYRE_BENCH_SCAN_VYRE_H

#include <stdint.h>

#include "bench.h"
#include "bench_scan_job.h"
#include "harness_vyred.h"

struct corpus;

struct vyred {
	struct vyre_bench_vyred run;
	char peer[16]; /* "vyre-cpu" or "vyre-cuda": the backend vyred chose */
};

/*
 * Starts vyred @bin on a socket of its own (the cpu backend with --backend cpu;
 * one event loop, so that one domain has the whole GPU, when @one_loop), with
 * every --vyred-arg last.
 */
int vyre_scan_vyred_start(struct vyred *d, const struct vyre_bench_ctx *ctx, const char *bin,
			  int one_loop);
void vyre_scan_vyred_stop(struct vyred *d);

/* The row @row of @j with producer processes through the vyred at j->socket. */
int vyre_scan_vyre_row(const struct vyre_bench_ctx *ctx, struct job *j, const char *row,
		       struct figures *f);

struct single {
	uint64_t bytes, scans, ns, matches; /* ns: all @scans together */
	double vyred_cpu; /* ns of vyred's CPU a scan over them; < 0: not measured */
	struct worker w;
};

/* One buffer of @bytes of the corpus scanned whole, again and again for --seconds. */
int vyre_scan_vyre_single_row(const struct vyre_bench_ctx *ctx, const struct job *j,
			      const struct corpus *corp, uint32_t bytes, int device,
			      struct single *out);

#endif /* VYRE_BENCH_SCAN_VYRE_H */
