/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_loop.h - what each producer process of the "modules"
 * suite runs (bench/bench_modules_loop.c).
 */
#ifndef VYRE_BENCH_MODULES_LOOP_H
#define VYRE_BENCH_MODULES_LOOP_H

struct vyre_peers_producer;

/*
 * A vyre_peers_load.run for the producers of one measurement: @arg is a
 * struct vyre_modules_load (bench_modules_side.h); the closed loop (one
 * item at a time) or, with an arrival rate, the open loop of Poisson
 * arrivals. Every item's rc, and the output and result of the sampled
 * ones (vyre_modules_sampled), checked against the host function. 0, or 1
 * after saying why.
 */
int vyre_modules_run(struct vyre_peers_producer *p, const void *arg);

#endif /* VYRE_BENCH_MODULES_LOOP_H */
