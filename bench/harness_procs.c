/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_procs.c - the processes of a run: CPU pinning, shared
 * mappings that survive fork(), forking and reaping children, and whether
 * CUDA is loaded (forked children must not use it).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness_procs.h"

int vyre_bench_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

static cpu_set_t original_cpus;
static int original_saved;

int vyre_bench_pin(int cpu)
{
	cpu_set_t set;

	if (!original_saved && sched_getaffinity(0, sizeof(original_cpus), &original_cpus) == 0)
		original_saved = 1;
	CPU_ZERO(&set);
	CPU_SET(cpu % vyre_bench_cpus(), &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void vyre_bench_unpin(void)
{
	if (original_saved)
		sched_setaffinity(0, sizeof(original_cpus), &original_cpus);
}

int vyre_bench_consumer_cpu(void)
{
	return vyre_bench_cpus() - 1;
}

int vyre_bench_producer_cpu(unsigned i)
{
	int others = vyre_bench_cpus() - 1;

	return others > 0 ? (int)(i % (unsigned)others) : 0;
}

void *vyre_bench_shared_alloc(size_t bytes)
{
	int fd = memfd_create("vyre-bench", MFD_CLOEXEC);
	void *p = MAP_FAILED;

	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)bytes) == 0)
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

void vyre_bench_shared_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

pid_t vyre_bench_spawn(int cpu, int (*fn)(void *arg), void *arg)
{
	/* a child must never write out the parent's buffered output again */
	fflush(NULL);
	pid_t pid = fork();

	if (pid == 0) {
		if (cpu >= 0)
			vyre_bench_pin(cpu);
		_exit(fn(arg));
	}
	return pid;
}

int vyre_bench_reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct probe {
	int (*fn)(char *why, size_t len);
	int ok;
	char why[320];
};

static int probe_main(void *arg)
{
	struct probe *p = arg;

	p->ok = p->fn(p->why, sizeof(p->why)) == 0;
	return 0;
}

int vyre_bench_probe_child(int (*probe)(char *why, size_t len), char *why, size_t len)
{
	struct probe *p = vyre_bench_shared_alloc(sizeof(*p));
	int ok = 0;

	if (!p) {
		snprintf(why, len, "out of memory");
		return 0;
	}
	p->fn = probe;
	const pid_t pid = vyre_bench_spawn(-1, probe_main, p);

	if (pid > 0 && vyre_bench_reap(pid) == 0) {
		ok = p->ok;
		snprintf(why, len, "%s", p->why);
	} else {
		snprintf(why, len, "the probe process failed");
	}
	vyre_bench_shared_free(p, sizeof(*p));
	return ok;
}

int vyre_bench_cuda_loaded(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "libcuda.so") != NULL;
	if (f)
		fclose(f);
	return found;
}
