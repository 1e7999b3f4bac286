/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers.h - the "peers" suite's part that other suites use: its
 * producer processes and how one measurement of them runs (bench/
 * bench_peers.c): the closed loop of tiny items through a vyred, or a
 * workload of the caller's own in each producer (the gpus suite's).
 */
#ifndef VYRE_BENCH_PEERS_H
#define VYRE_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct vyre_bench_ctx;

/*
 * items/s of every producer together; ns from submit (open loop: arrival) to
 * completion seen; vyred_cpu: ns of vyred's CPU an item over the window
 * (harness.h vyre_bench_cpu_*), < 0 where not measured (no vyred known).
 */
struct vyre_peers_figures {
	double items, offered, p50, p99, p999;
	double vyred_cpu;
};

/* One producer process of a measurement, as a workload's own loop sees it. */
struct vyre_peers_producer;

/* What the producers of one measurement run, against which vyred. */
struct vyre_peers_load {
	const char *suite;  /* prefix of the measurement's messages */
	const char *name;   /* what they call the load */
	const char *socket; /* the vyred */
	/* producer i connects to domain "<domain><i % domains>"; NULL: a private domain each */
	const char *domain;
	unsigned domains;
	/*
	 * NULL: the closed loop, one ADD over 16 words at a time, every output
	 * checked, its latency recorded. Else each producer runs @run(p, @arg):
	 * 0, or not 0 after vyre_peers_fail.
	 */
	int (*run)(struct vyre_peers_producer *p, const void *arg);
	const void *arg;
	pid_t vyred; /* the vyred's pid, for its CPU time (figures.vyred_cpu); <= 0: unknown */
};

/*
 * @procs producers of @l: a warm-up (a fifth of --seconds, at least 20 ms),
 * then --seconds (longer until 1000 items, at most 10 s). 0 and @f, or -1
 * after saying why on stderr.
 */
int vyre_peers_measure(const struct vyre_bench_ctx *ctx, const struct vyre_peers_load *l,
		       unsigned procs, struct vyre_peers_figures *f);

/* Rows @name: offered (open loop only), items/s, p50, p99, p999, vyred cpu (where measured). */
void vyre_peers_report(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
		       const struct vyre_peers_figures *f);

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

#endif /* VYRE_BENCH_PEERS_H */
