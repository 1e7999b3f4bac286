/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_measure.h - the "peers" suite's part that other suites
 * use: its producer processes and how one measurement of them runs (bench/
 * bench_peers_measure.c): the closed loop of tiny items through a vyred, or a
 * workload of the caller's own in each producer (the gpus suite's).
 */
#ifndef VYRE_BENCH_PEERS_MEASURE_H
#define VYRE_BENCH_PEERS_MEASURE_H

#include <stdint.h>

#include "bench_peers_load.h"

/*
 * @procs producers of @l: a warm-up (a fifth of --seconds, at least 20 ms),
 * then --seconds (longer until 1000 items, at most 10 s). 0 and @f, or -1
 * after saying why on stderr.
 */
int vyre_peers_measure(const struct vyre_bench_ctx *ctx, const struct vyre_peers_load *l,
		       unsigned procs, struct vyre_peers_figures *f);

struct peer;

/*
 * vyre_peers_measure for the suite's own peers (bench/bench_peers_board.h):
 * @pe's producers in a closed loop (@offered 0) or an open loop at @offered
 * items/s in all.
 */
int vyre_peers_measure_peer(const struct vyre_bench_ctx *ctx, const struct peer *pe, unsigned procs,
			    double offered, struct vyre_peers_figures *f);

/* Rows @name: offered (open loop only), items/s, p50, p99, p999, vyred cpu (where measured). */
void vyre_peers_report(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
		       const struct vyre_peers_figures *f);

/* Rows @name items/s and p50 of @f over @base (unit x); none when @base has no figure. */
void vyre_peers_report_ratio(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
			     const struct vyre_peers_figures *f,
			     const struct vyre_peers_figures *base);

/* For a workload's @run: the vyred's socket, and this producer's domain (NULL: a private one). */
const char *vyre_peers_socket(const struct vyre_peers_producer *p);
const char *vyre_peers_domain(const struct vyre_peers_producer *p);

/* Says it is ready and waits for go: 0 to start, -1 when the measurement gave up. */
int vyre_peers_go(struct vyre_peers_producer *p);

/* 1 once the measurement is over: finish what is in flight and return. */
int vyre_peers_stopping(const struct vyre_peers_producer *p);

/* @items more completed (the measurement counts those of its window). */
void vyre_peers_done(struct vyre_peers_producer *p, uint64_t items);

/* Records why this producer failed (the measurement prints it); returns 1. */
int vyre_peers_fail(struct vyre_peers_producer *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* VYRE_BENCH_PEERS_MEASURE_H */
