/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_self.h - the "peers" suite's self-launching producers
 * (bench/bench_peers_self.c).
 */
#ifndef VYRE_BENCH_PEERS_SELF_H
#define VYRE_BENCH_PEERS_SELF_H

struct proc;
struct vyre_peers_producer;

/* One producer's closed loop: launch, synchronize, check. 0, or 1 after fail(). */
int vyre_peers_self_closed(const struct vyre_peers_producer *a, struct proc *me);

/* One producer's open loop at its arrival rate, up to OPEN_SLOTS launches in flight. */
int vyre_peers_self_open(const struct vyre_peers_producer *a, struct proc *me);

#endif /* VYRE_BENCH_PEERS_SELF_H */
