/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_procs.h - the processes of a run (bench/harness_procs.c):
 * CPU pinning, shared mappings that survive fork(), forking and reaping
 * children.
 */
#ifndef VYRE_BENCH_HARNESS_PROCS_H
#define VYRE_BENCH_HARNESS_PROCS_H

#include <stddef.h>
#include <sys/types.h>

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
 * fork() a child that pins itself to @cpu (unpinned when @cpu < 0) and runs
 * @fn(@arg), exiting with its return.
 */
pid_t vyre_bench_spawn(int cpu, int (*fn)(void *arg), void *arg);

/* Wait for @pid; returns its exit status, or -1 when it died from a signal. */
int vyre_bench_reap(pid_t pid);

/* 1 when this process has the CUDA driver mapped (a suite loaded it; fork()ed children must not use
 * it). */
int vyre_bench_cuda_loaded(void);

/*
 * Runs @probe(why, len) in a forked child, so that this process never
 * touches what it opens (CUDA does not survive fork): 1 when it returned
 * 0, else 0; either way @why holds what it said (or why the child failed).
 */
int vyre_bench_probe_child(int (*probe)(char *why, size_t len), char *why, size_t len);

#endif /* VYRE_BENCH_HARNESS_PROCS_H */
