/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_cpu.h - vyred's CPU time over a measurement window, and its
 * row (bench/harness_cpu.c).
 */
#ifndef VYRE_BENCH_HARNESS_CPU_H
#define VYRE_BENCH_HARNESS_CPU_H

#include <stdint.h>
#include <sys/types.h>

#include "bench.h"

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

#endif /* VYRE_BENCH_HARNESS_CPU_H */
