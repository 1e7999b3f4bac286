/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_peers.h - the peers suite's figures: open loop (latency
 * against offered load) and closed loop (items/s and latency against
 * producers), bench/plot_peers.c.
 */
#ifndef VYRE_BENCH_PLOT_PEERS_H
#define VYRE_BENCH_PLOT_PEERS_H

struct vyre_plot_ctx;

/*
 * Writes the script and data of its figure and returns 1, or 0 when the
 * rows it needs are not there, or -1 after saying why.
 */
int vyre_plot_openloop(const struct vyre_plot_ctx *pc);
int vyre_plot_closed(const struct vyre_plot_ctx *pc);

#endif /* VYRE_BENCH_PLOT_PEERS_H */
