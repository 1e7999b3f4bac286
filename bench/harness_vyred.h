/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_vyred.h - the vyreds a suite starts (bench/harness_vyred.c).
 */
#ifndef VYRE_BENCH_HARNESS_VYRED_H
#define VYRE_BENCH_HARNESS_VYRED_H

#include <stddef.h>
#include <sys/types.h>

#include "bench.h"

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
/* vyre_bench_vyred_start with vyred pinned to CPU @cpu (vyre_bench_pin; < 0: not pinned). */
int vyre_bench_vyred_start_on(struct vyre_bench_vyred *d, const char *suite, const char *bin,
			      const char *const *args, int cpu);
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

/*
 * The pid of the vyred listening on @socket (SO_PEERCRED of a connection
 * closed at once, before any hello), for a vyred the suite did not start
 * (--socket); -1 when it cannot be told.
 */
pid_t vyre_bench_socket_pid(const char *socket);

#endif /* VYRE_BENCH_HARNESS_VYRED_H */
