/* SPDX-License-Identifier: MIT */
/*
 * bench/harness.h - what the cross-process suites share: CPU pinning,
 * shared mappings that survive fork(), a cheap cross-process clock and
 * latency percentiles.
 */
#ifndef VYRE_BENCH_HARNESS_H
#define VYRE_BENCH_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench.h"

/* Online CPUs (at least 1). */
int vyre_bench_cpus(void);

/*
 * vyre_bench_pin - pin the calling process to CPU @cpu modulo the online
 * count. The consumer of a suite takes the last CPU, producers the others,
 * so on 2 cores producer and consumer never share one. Returns 0 or -errno.
 */
int vyre_bench_pin(int cpu);

/* Give the calling process back the CPUs it had before its first vyre_bench_pin. */
void vyre_bench_unpin(void);

/* CPU for producer @i of a run whose consumer sits on the last CPU. */
int vyre_bench_producer_cpu(unsigned i);
int vyre_bench_consumer_cpu(void);

/* A zeroed MAP_SHARED mapping (memfd backed) inherited across fork, or NULL. */
void *vyre_bench_shared_alloc(size_t bytes);
void vyre_bench_shared_free(void *p, size_t bytes);

/*
 * vyre_bench_ticks - a timestamp comparable across processes and CPUs (the
 * invariant TSC on x86, CLOCK_MONOTONIC elsewhere); vyre_bench_ticks_to_ns
 * converts a difference. Calibrated once, before any fork.
 */
uint64_t vyre_bench_ticks(void);
double vyre_bench_ticks_to_ns(uint64_t ticks);
void vyre_bench_clock_calibrate(void);

/*
 * fork() a child that pins itself to @cpu (unpinned when @cpu < 0) and runs
 * @fn(@arg), exiting with its return.
 */
pid_t vyre_bench_spawn(int cpu, int (*fn)(void *arg), void *arg);

/* Wait for @pid; returns its exit status, or -1 when it died from a signal. */
int vyre_bench_reap(pid_t pid);

/*
 * Wait until the vyred started as *@pid answers a connection on @socket:
 * 0 once it does; -1 after 10 s, or when it exited (then *@pid is -1).
 */
int vyre_bench_await_daemon(const char *socket, pid_t *pid);

/* The vyred binary next to this vyre-bench (in @buf), or NULL when there is none. */
const char *vyre_bench_find_vyred(char *buf, size_t len);

/* A vyred a suite starts: its own temporary directory, socket and stderr log. */
struct vyre_bench_vyred {
	pid_t pid;
	char dir[64], sock[96], log[96];
};

/*
 * Start @bin --socket SOCK @args (NULL-terminated) with stderr to its log and
 * wait until it answers. 0, or -1 after printing "@suite: vyred did not
 * start:" and its log (everything is cleaned up then).
 */
int vyre_bench_vyred_start(struct vyre_bench_vyred *d, const char *suite, const char *bin,
			   const char *const *args);
/*
 * Fork and exec @bin --socket @d->sock @args with stderr to @d->log (truncated),
 * not waiting for it: a new vyred on a socket a killed one left (the restart
 * suite). Sets and returns @d->pid (-1 when fork failed).
 */
pid_t vyre_bench_vyred_exec(struct vyre_bench_vyred *d, const char *bin, const char *const *args);
/*
 * SIGTERM it, wait, print the lines of its log that contain one of @show
 * (NULL-terminated; NULL: none) prefixed by "@suite:   ", remove its files.
 */
void vyre_bench_vyred_stop(struct vyre_bench_vyred *d, const char *suite, const char *const *show);
/* Print the lines of @path containing one of @show (NULL: every line), prefixed. */
void vyre_bench_print_log(const char *path, const char *suite, const char *const *show);

/* 1 when `@bin --help` lists @flag (a vyred older than the flag does not). */
int vyre_bench_vyred_has_flag(const char *bin, const char *flag);

/*
 * What vyre-bench passes to the vyreds a suite starts: --inflight and --loops
 * when given and @bin's --help lists them (else "@suite: BIN has no --X: --X N
 * not passed" on stderr, and they are not), then every --vyred-arg.
 */
struct vyre_bench_vyred_opts {
	unsigned inflight, loops; /* 0: not passed */
	char inflight_arg[16], loops_arg[16];
	char tag[48]; /* " inflight=N loops=N" (those passed), for row names */
	const char *const *extra;
	unsigned n_extra;
};

void vyre_bench_vyred_opts(const struct vyre_bench_ctx *ctx, const char *suite, const char *bin,
			   struct vyre_bench_vyred_opts *o);

/* Most arguments vyre_bench_vyred_opts_args appends. */
#define VYRE_BENCH_VYRED_OPTS_ARGS (4u + VYRE_BENCH_MAX_VYRED_ARGS)

/* Appends @o's arguments to @args from index @n; returns the new count. */
unsigned vyre_bench_vyred_opts_args(const struct vyre_bench_vyred_opts *o, const char **args,
				    unsigned n);

/* 1 when this process has the CUDA driver mapped (a suite loaded it; fork()ed children must not use
 * it). */
int vyre_bench_cuda_loaded(void);

/*
 * vyred's own CPU time over a measurement window, for the row "NAME  vyred
 * cpu  N ns/item" beside every row that measures items through a vyred: the
 * CPU (user + system) that vyred spent between vyre_bench_cpu_start and
 * vyre_bench_cpu_ns, over the items completed in that window.
 *
 * vyred is the process @pid and its children: where it drives more than one
 * device it is a supervisor whose GPU workers are its children, running the
 * same binary with --gpu-worker (tools/vyred/front.h). The children are read
 * from /proc/PID/task/TID/children of every thread (or, where the kernel has
 * no such file, from the parent field of every /proc/N/stat) at both ends.
 *
 * A process's CPU time is its CPU-time clock (clock_getcpuclockid, in ns:
 * the scheduler's sum_exec_runtime of all its threads, those that exited
 * too), else utime + stime of /proc/PID/stat in clock ticks (10 ms at 100
 * Hz). Not /proc/PID/schedstat: that is the first thread's alone.
 */
#define VYRE_BENCH_CPU_PROCS 64u /* vyred and its children, at most */

struct vyre_bench_cpu {
	pid_t pid;	    /* the vyred; <= 0: none known, nothing measured */
	unsigned n;	    /* processes read at the start: procs[0] is @pid */
	int ok;		    /* @pid could be read at the start */
	uint64_t reaped_ns; /* @pid's reaped children: cutime + cstime of its stat */
	pid_t procs[VYRE_BENCH_CPU_PROCS];
	uint64_t ns[VYRE_BENCH_CPU_PROCS];
};

/* Reads vyred @pid and its children at the start of a window (@pid <= 0: none). */
void vyre_bench_cpu_start(struct vyre_bench_cpu *c, pid_t pid);

/* ns of CPU vyred spent since vyre_bench_cpu_start; -1 when not measured. */
double vyre_bench_cpu_ns(const struct vyre_bench_cpu *c);

/* @ns over @items: ns an item; -1 when @ns < 0 (not measured) or @items is 0. */
double vyre_bench_cpu_per_item(double ns, uint64_t items);

/* vyred's CPU over several windows (the phases of one kind in rounds), and their items. */
struct vyre_bench_cpu_sum {
	double ns; /* < 0: a window was not measured */
	uint64_t items;
};

/* Adds the window @c (vyre_bench_cpu_start'ed), ending now, of @items items, to @s. */
void vyre_bench_cpu_add(struct vyre_bench_cpu_sum *s, const struct vyre_bench_cpu *c,
			uint64_t items);

/* @s's ns an item, as vyre_bench_cpu_per_item. */
double vyre_bench_cpu_sum_per_item(const struct vyre_bench_cpu_sum *s);

/* The row "@name  vyred cpu  @ns_per_item ns/item"; nothing when @ns_per_item < 0. */
void vyre_bench_report_vyred_cpu(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
				 double ns_per_item);

/*
 * The pid of the vyred listening on @socket (SO_PEERCRED of a connection
 * closed at once, before any hello), for a vyred the suite did not start
 * (--socket); -1 when it cannot be told.
 */
pid_t vyre_bench_socket_pid(const char *socket);

/* Latency samples in ticks; percentiles in ns. */
struct vyre_bench_samples {
	uint64_t *ticks;
	size_t n, cap;
};

int vyre_bench_samples_init(struct vyre_bench_samples *s, size_t cap);
void vyre_bench_samples_free(struct vyre_bench_samples *s);

static inline void vyre_bench_sample(struct vyre_bench_samples *s, uint64_t ticks)
{
	if (s->n < s->cap)
		s->ticks[s->n++] = ticks;
}

/* Sorts the samples and returns the @q quantile (0..1) in ns; 0 when empty. */
double vyre_bench_quantile_ns(struct vyre_bench_samples *s, double q);

/* The same over the samples from index @from on (sorting only those). */
double vyre_bench_quantile_ns_from(struct vyre_bench_samples *s, size_t from, double q);

/* Most rounds a suite may split a measurement into (vyre_bench_paired_ratio). */
#define VYRE_BENCH_MAX_ROUNDS 64u

/* Median of @n values (sorts them in place); 0 when n is 0. */
double vyre_bench_median(double *v, unsigned n);

/*
 * Median over rounds of a[i] / b[i] (n <= VYRE_BENCH_MAX_ROUNDS). a[i] and
 * b[i] were measured back to back, so load from a noisy neighbour or a vCPU
 * moved by the hypervisor slows both: the ratio survives what the absolute
 * figures do not.
 */
double vyre_bench_paired_ratio(const double *a, const double *b, unsigned n);

/* Reports p50, p99 and p999 (ns) as three rows; returns the p50. */
double vyre_bench_report_latency(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
				 struct vyre_bench_samples *s);

#endif /* VYRE_BENCH_HARNESS_H */
