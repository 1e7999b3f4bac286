/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers.h - the "peers" suite's parts that other suites use:
 *
 * - its producer processes and how one measurement of them runs (bench/
 *   bench_peers.c): the closed loop of tiny items through a vyred, or a
 *   workload of the caller's own in each producer (the gpus suite's);
 * - its GPU peers (bench/bench_peers_gpu.c): a producer process that
 *   launches each item itself, in its own CUDA context, as one
 *   cuLaunchKernel of the megakernel's vyre_mk_item over a one-warp ADD of
 *   16 words. Every vyre_peers_gpu call initializes or uses CUDA, so only
 *   the forked children of the suite make them, never the process that
 *   forks them: CUDA state does not survive fork().
 */
#ifndef VYRE_BENCH_PEERS_H
#define VYRE_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Words of an item's input and output: the suite's tiny ADD. */
#define VYRE_PEERS_WORDS 16u

/* ---- producers and measurements ------------------------------------------- */

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

/* ---- the GPU peers ---------------------------------------------------------- */

struct vyre_peers_gpu;

/* 0 when device 0 can be opened and the megakernel loads; else -1 and why. */
int vyre_peers_gpu_probe(char *why, size_t why_len);

/*
 * This process's own context on device 0, a stream, and pinned, device-mapped
 * memory with one input (words 0..15) and @slots outputs.
 */
int vyre_peers_gpu_open(struct vyre_peers_gpu **out, uint32_t slots, char *why, size_t why_len);
void vyre_peers_gpu_close(struct vyre_peers_gpu *g);
const char *vyre_peers_gpu_error(const struct vyre_peers_gpu *g);

/* Enqueue out[slot][i] = in[i] + @param (i < 16) as one launch; does not wait. */
int vyre_peers_gpu_launch(struct vyre_peers_gpu *g, uint32_t slot, uint32_t param);

/* cuStreamSynchronize: every launch so far has finished. */
int vyre_peers_gpu_sync(struct vyre_peers_gpu *g);

/*
 * 1 when the output of the launch of @param into @slot is visible in host
 * memory (its first and last word), else 0. Params must differ between
 * successive launches into one slot.
 */
int vyre_peers_gpu_done(const struct vyre_peers_gpu *g, uint32_t slot, uint32_t param);

/* 0 when every word of @slot holds in[i] + @param; else an error and why. */
int vyre_peers_gpu_check(struct vyre_peers_gpu *g, uint32_t slot, uint32_t param);

#endif /* VYRE_BENCH_PEERS_H */
