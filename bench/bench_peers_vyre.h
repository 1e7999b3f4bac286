/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_vyre.h - the "peers" suite's vyre producers (bench/
 * bench_peers_vyre.c).
 */
#ifndef VYRE_BENCH_PEERS_VYRE_H
#define VYRE_BENCH_PEERS_VYRE_H

struct proc;
struct vyre_peers_producer;

/* One producer's closed loop: one ADD at a time, every output checked. 0, or 1 after fail(). */
int vyre_peers_vyre_closed(const struct vyre_peers_producer *a, struct proc *me);

/* One producer's open loop at its arrival rate, up to OPEN_SLOTS items outstanding. */
int vyre_peers_vyre_open(const struct vyre_peers_producer *a, struct proc *me);

#endif /* VYRE_BENCH_PEERS_VYRE_H */
