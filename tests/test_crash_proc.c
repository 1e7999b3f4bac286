/* SPDX-License-Identifier: MIT */
/* /proc observation of vyred and process plumbing for the reliability tests. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "../ring/client.h"
#include "test_crash_honest.h"
#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define SETTLE_TRIES 500 /* x 10 ms */

/* One line of /proc/PID/maps: "start-end perms offset dev inode path". */
static int parse_map_line(const char *line, uint64_t *bytes, uint64_t *ino, const char **path)
{
	unsigned long long start, end, inode;
	int consumed = 0;

	if (sscanf(line, "%llx-%llx %*s %*s %*s %llu %n", &start, &end, &inode, &consumed) < 3)
		return -1;
	*bytes = end - start;
	*ino = inode;
	*path = line + consumed;
	return 0;
}

static FILE *open_maps(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	return fopen(path, "r");
}

int rel_maps_read(pid_t pid, struct rel_maps *out)
{
	char line[1024];
	FILE *f = open_maps(pid);

	memset(out, 0, sizeof(*out));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t bytes, ino;
		const char *path;

		if (parse_map_line(line, &bytes, &ino, &path) != 0)
			continue;
		out->total_bytes += bytes;
		if (strncmp(path, "/memfd:", 7) == 0) {
			out->memfd_bytes += bytes;
			out->memfd_count++;
		}
	}
	fclose(f);
	return 0;
}

int rel_maps_has_inode(pid_t pid, uint64_t ino)
{
	char line[1024];
	FILE *f = open_maps(pid);
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t bytes, inode;
		const char *path;

		found = parse_map_line(line, &bytes, &inode, &path) == 0 && inode == ino &&
			strncmp(path, "/memfd:", 7) == 0;
	}
	fclose(f);
	return found;
}

uint64_t rel_fd_inode(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Inode of this process's mapping that starts at @addr, or 0. */
static uint64_t self_mapping_inode(const void *addr)
{
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t ino = 0;

	if (!f)
		return 0;
	while (!ino && fgets(line, sizeof(line), f)) {
		unsigned long long start, inode;

		if (sscanf(line, "%llx-%*x %*s %*s %*s %llu", &start, &inode) == 2 &&
		    (uintptr_t)start == (uintptr_t)addr)
			ino = inode;
	}
	fclose(f);
	return ino;
}

void rel_client_inodes(struct vyre_client *c, uint64_t *region, uint64_t *heap)
{
	*region = rel_fd_inode(c->region.fd);
	/* libvyre closes the heap memfd once mapped: find it through the mapping */
	*heap = self_mapping_inode(c->heap);
}

uint32_t rel_client_id(const struct vyre_client *c)
{
	return c->client_id;
}

struct vyre_region_header *rel_client_region(struct vyre_client *c, uint64_t *bytes)
{
	*bytes = c->region.bytes;
	return c->region.hdr;
}

uint8_t *rel_client_heap(struct vyre_client *c, uint64_t *bytes)
{
	*bytes = c->heap_bytes;
	return c->heap;
}

int rel_client_socket(const struct vyre_client *c)
{
	return c->sock;
}

void rel_client_force_kick(struct vyre_client *c)
{
	__atomic_store_n(&c->region.hdr->sq_need_wakeup, VYRE_SQ_WAKE_FUTEX | VYRE_SQ_WAKE_EVENTFD,
			 __ATOMIC_SEQ_CST);
	vyre_sq_kick(&c->sq);
}

uint64_t rel_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t rel_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void *rel_shared_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void rel_shared_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

void rel_sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
			      .tv_nsec = (long)(ns % 1000000000ull)};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int rel_wait_child(pid_t pid, uint64_t timeout_ns)
{
	uint64_t until = rel_now_ns() + timeout_ns;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (rel_now_ns() >= until)
			return -1;
		rel_sleep_ns(1000000);
	}
}

int rel_child_running(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return 0;
	return si.si_pid == 0;
}

uint64_t rel_seed(const char *test)
{
	const char *env = getenv("VYRE_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : rel_now_ns();

	printf("%s: seed %" PRIu64 " (replay with VYRE_TEST_SEED=%" PRIu64 ")\n", test, seed, seed);
	fflush(stdout);
	return seed;
}

int rel_baseline_take(const struct vyre_test_daemon *d, struct rel_baseline *b)
{
	struct rel_honest_opts o = {
	    .socket = d->socket, .seed = 1, .items = 500, .wait_timeout_ns = 20000000000ll};
	struct rel_honest_result r;

	if (rel_honest_run(&o, &r) != 0) {
		printf("warm-up client: %s\n", r.why);
		return -1;
	}
	for (int i = 0; i < SETTLE_TRIES; i++) {
		if (rel_maps_read(d->pid, &b->maps) == 0 && b->maps.memfd_count == 0)
			break;
		rel_sleep_ns(10000000);
	}
	b->fds = vyre_test_fd_count(d->pid);
	if (b->maps.memfd_count != 0 || b->fds <= 0) {
		printf("vyred did not let go of the warm-up client\n");
		return -1;
	}
	return 0;
}

int rel_baseline_check(const struct vyre_test_daemon *d, const struct rel_baseline *b)
{
	struct rel_maps now = {0};
	int fds = -1, same = 0;

	for (int i = 0; i < SETTLE_TRIES && !same; i++) {
		if (i)
			rel_sleep_ns(10000000);
		fds = vyre_test_fd_count(d->pid);
		same = rel_maps_read(d->pid, &now) == 0 && fds == b->fds &&
		       now.memfd_count == b->maps.memfd_count &&
		       now.memfd_bytes == b->maps.memfd_bytes;
	}
	printf("vyred: %d descriptors (baseline %d), %u memfd mappings of %" PRIu64
	       " bytes (baseline %u, %" PRIu64 "), %" PRIu64 " MiB mapped (baseline %" PRIu64 ")\n",
	       fds, b->fds, now.memfd_count, now.memfd_bytes, b->maps.memfd_count,
	       b->maps.memfd_bytes, now.total_bytes >> 20, b->maps.total_bytes >> 20);
	if (!same)
		printf("vyred did not return to its baseline descriptors and mappings\n");
	return same ? 0 : -1;
}
