/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_load.h - what one measurement of the "peers" suite's
 * producer processes runs and gives (bench/bench_peers_measure.h): the
 * load, a producer as a workload sees it, the figures. Types only.
 */
#ifndef VYRE_BENCH_PEERS_LOAD_H
#define VYRE_BENCH_PEERS_LOAD_H

#include <sys/types.h>

struct vyre_bench_ctx;

/*
 * items/s of every producer together; ns from submit (open loop: arrival) to
 * completion seen; vyred_cpu: ns of vyred's CPU an item over the window
 * (harness_cpu.h vyre_bench_cpu_*), < 0 where not measured (no vyred known).
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

#endif /* VYRE_BENCH_PEERS_LOAD_H */
