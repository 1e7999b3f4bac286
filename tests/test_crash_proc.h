/* SPDX-License-Identifier: MIT */
/*
 * tests/test_crash_proc.h - what the reliability tests observe of a running
 * vyred from outside, and the small process plumbing they share.
 *
 * Resources are read from /proc: descriptors (vyre_test_fd_count in
 * test_integration_daemon.h), mappings (memfd regions and heaps by inode),
 * so a test can demand that what a dead client held is given back.
 */
#ifndef VYRE_TEST_CRASH_PROC_H
#define VYRE_TEST_CRASH_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "vyre/vyre.h"

struct rel_maps {
	uint64_t total_bytes; /* every mapping */
	uint64_t memfd_bytes; /* mappings of memfds: client regions and domain heaps */
	uint32_t memfd_count;
};

struct vyre_test_daemon;

/* What an idle vyred holds: descriptors and memfd mappings (none without clients). */
struct rel_baseline {
	int fds;
	struct rel_maps maps;
};

/*
 * Runs a short honest client against @d (so lazily made state is counted in),
 * waits until vyred holds no client memory, and records what it holds then.
 * Returns 0, or -1 after printing why.
 */
int rel_baseline_take(const struct vyre_test_daemon *d, struct rel_baseline *b);

/*
 * Waits (a few seconds at most) until vyred is back at @b: the same
 * descriptors and memfd mappings. Prints both; returns 0 or -1.
 */
int rel_baseline_check(const struct vyre_test_daemon *d, const struct rel_baseline *b);

/* Mappings of @pid; returns 0 or -1 when /proc/PID/maps cannot be read. */
int rel_maps_read(pid_t pid, struct rel_maps *out);

/* 1 when @pid maps the file with inode @ino, 0 when not, -1 on error. */
int rel_maps_has_inode(pid_t pid, uint64_t ino);

/* Inode of a descriptor, or 0. */
uint64_t rel_fd_inode(int fd);

/* Inodes of the region and heap memfds a connection maps (libvyre internals). */
void rel_client_inodes(struct vyre_client *c, uint64_t *region, uint64_t *heap);

/* libvyre's client id of a connection, as vyred's logs and accept log name it. */
uint32_t rel_client_id(const struct vyre_client *c);

/* The region header a connection maps: what a hostile client scribbles on. */
struct vyre_region_header *rel_client_region(struct vyre_client *c, uint64_t *bytes);

/* The domain heap a connection maps. */
uint8_t *rel_client_heap(struct vyre_client *c, uint64_t *bytes);

/* The client's socket (to send hand-made control messages on a live connection). */
int rel_client_socket(const struct vyre_client *c);

/*
 * Rings vyred's SQ doorbell of a connection whatever its need-wakeup flags say
 * (they may be garbage after a hostile write), so vyred looks at the region.
 */
void rel_client_force_kick(struct vyre_client *c);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t rel_now_ns(void);

/* splitmix64: a seeded sequence, so a failure can be replayed. */
uint64_t rel_rand(uint64_t *state);

/* Zero-filled memory shared with children forked later, or NULL. */
void *rel_shared_alloc(size_t bytes);
void rel_shared_free(void *p, size_t bytes);

/* waitpid with a bound: the exit status (as waitpid gives it), or -1 after @timeout_ns. */
int rel_wait_child(pid_t pid, uint64_t timeout_ns);

/* 1 while @pid has not exited (a child: it is not reaped). */
int rel_child_running(pid_t pid);

/* Sleep @ns nanoseconds. */
void rel_sleep_ns(uint64_t ns);

/* Seed for this run: $VYRE_TEST_SEED, else from the clock; printed so it can be replayed. */
uint64_t rel_seed(const char *test);

#endif /* VYRE_TEST_CRASH_PROC_H */
