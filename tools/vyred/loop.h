/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/loop.h - one event loop: the io_uring loop, the one switch over its
 * completions, the pipeline steps and what follows them. Only the
 * driver (loops.c, main.c) calls it.
 */
#ifndef VYRED_LOOP_H
#define VYRED_LOOP_H

struct vyre_daemon;

/* Block SIGTERM/SIGINT before any thread exists, so only the signalfd sees them. */
int vyre_loop_block_signals(void);
int vyre_loop_init(struct vyre_daemon *d);
int vyre_loop_run(struct vyre_daemon *d);

#endif /* VYRED_LOOP_H */
