/* SPDX-License-Identifier: MIT */
/*
 * tests/test_integration_daemon.h - running a real vyred for a test.
 *
 * The daemon binary is $VYRED, else the vyred next to the test's build
 * directory ($(BUILD)/vyred for $(BUILD)/tests/test_X). Each daemon gets a
 * fresh temporary directory holding its socket, its stderr log and its
 * accept log.
 */
#ifndef VYRE_TEST_INTEGRATION_DAEMON_H
#define VYRE_TEST_INTEGRATION_DAEMON_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct vyre_test_daemon {
	pid_t pid;
	char dir[128];
	char socket[192];
	char log[192];
	char accept_log[192];
};

/* A failed check in a test function that returns int: says where, returns -1. */
#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                               \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		return -1;                                                                         \
	} while (0)

/* 1 when a line of the file @log contains @what (0 also when it cannot be read). */
int vyre_test_log_has(const char *log, const char *what);
/* @sig to vyred and to its GPU workers, if it has any (docs/design.md 8.8). */
void vyre_test_daemon_signal(const struct vyre_test_daemon *d, int sig);
/* The lines of @log that hold @what. */
int vyre_test_log_count(const char *log, const char *what);

/*
 * The domain id vyred logged client @id (numbered from 1 as they connect)
 * as joining: waited for up to 2 s, since the loop a client is handed to
 * logs after its HELLO reply. 0 when there is none.
 */
uint32_t vyre_test_logged_domain(const struct vyre_test_daemon *d, uint32_t id);
/*
 * Where vyred runs a process a device (docs/design.md 8.8): the index of
 * the GPU whose worker logged client @id's join or resume ("vyred[gpu N]:"),
 * -2 when that line came from a vyred of one process, -1 when none came
 * (waited for, bounded).
 */
int vyre_test_logged_gpu(const struct vyre_test_daemon *d, uint32_t id);

/*
 * Waits up to @timeout_ns until the daemon's accept log names @user_data (its
 * item is in a dispatched batch). Returns 0, or -1 after printing why.
 */
int vyre_test_wait_dispatched(const struct vyre_test_daemon *d, uint64_t user_data,
			      int64_t timeout_ns);

/* The vyred binary: $VYRED, else $(BUILD)/vyred beside the test (in @buf). */
const char *vyre_test_vyred_path(char *buf, size_t len);

/*
 * Start vyred with --socket and --accept-log in a new temporary directory
 * plus @extra (NULL-terminated, may be NULL) and wait until it says it is
 * ready. Returns 0, or -1 after printing why.
 */
int vyre_test_daemon_start(struct vyre_test_daemon *d, const char *const *extra);

/* SIGTERM, wait; returns the exit status (0 is a clean stop) or -1 if it was killed. */
int vyre_test_daemon_stop(struct vyre_test_daemon *d);

/*
 * The end of a test's daemon: stop it; unless it exited 0, print why and
 * its log. The directory is removed either way. Returns 0 or -1.
 */
int vyre_test_daemon_finish(struct vyre_test_daemon *d);

/* SIGKILL and reap (for tests of a dying daemon). */
void vyre_test_daemon_kill(struct vyre_test_daemon *d);

/* Remove the temporary directory and what is in it. */
void vyre_test_daemon_cleanup(struct vyre_test_daemon *d);

/* Print the daemon's stderr log (for failures). */
void vyre_test_daemon_dump_log(const struct vyre_test_daemon *d);

/* Entries of a directory, "." and ".." not counted, or -1. */
int vyre_test_dir_entries(const char *path);

/* Open file descriptors of @pid, or -1. */
int vyre_test_fd_count(pid_t pid);

/* Scheduler state letter of @pid (or a thread) from /proc: 'R', 'S', ... or 0. */
char vyre_test_proc_state(pid_t pid, pid_t tid);

/* $VYRE_TEST_SCALE (default 1): multiply workloads for bigger runs. */
uint64_t vyre_test_scale(void);

#endif /* VYRE_TEST_INTEGRATION_DAEMON_H */
