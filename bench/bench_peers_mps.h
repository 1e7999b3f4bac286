/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_mps.h - the "peers" suite's MPS control daemon (bench/
 * bench_peers_mps.c).
 */
#ifndef VYRE_BENCH_PEERS_MPS_H
#define VYRE_BENCH_PEERS_MPS_H

#include <limits.h>

/*
 * The CUDA MPS environment of the suite, in a temporary directory: `none`,
 * an empty pipe directory that keeps vyred and the "self" producers off any
 * MPS daemon the machine runs; `pipe` and `log` for the suite's own daemon.
 */
struct vyre_peers_mps {
	char dir[64], none[80], pipe[80], log[80];
	char bin[PATH_MAX];
	int have, running;
	const char *suite;			    /* its messages' prefix; NULL: "peers" */
	char old_pipe[PATH_MAX], old_log[PATH_MAX]; /* CUDA_MPS_* before enter */
	int had_pipe, had_log;
};

/* Makes the directories and points CUDA_MPS_* at them (no daemon yet); 0 or -1. */
int vyre_peers_mps_init(struct vyre_peers_mps *m);

/* Starts nvidia-cuda-mps-control -d on the pipe directory; 0, or -1 after printing its log. */
int vyre_peers_mps_start(struct vyre_peers_mps *m);

/* Stops the daemon (echo quit) and waits until it has gone. */
void vyre_peers_mps_stop(struct vyre_peers_mps *m);

/* Stops it, removes the directories, restores CUDA_MPS_* to @old_pipe and @old_log. */
void vyre_peers_mps_fini(struct vyre_peers_mps *m, const char *old_pipe, const char *old_log);

/*
 * Saves CUDA_MPS_*, then vyre_peers_mps_init with messages prefixed by
 * @suite; 0, or -1 after saying why (then vyre_peers_mps_leave still runs).
 */
int vyre_peers_mps_enter(struct vyre_peers_mps *m, const char *suite);

/* vyre_peers_mps_fini back to the CUDA_MPS_* that enter saved. */
void vyre_peers_mps_leave(struct vyre_peers_mps *m);

#endif /* VYRE_BENCH_PEERS_MPS_H */
