/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_peers_mps.c - the CUDA MPS control daemon the "peers" suite
 * starts for its "mps" peer and stops, in a temporary directory of its own.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_peers_mps.h"
#include "harness_procs.h"
#include "harness_vyred.h"

/* @name in a directory of $PATH, into @buf; NULL when there is none. */
static const char *find_in_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096];

	snprintf(dirs, sizeof(dirs), "%s", path && *path ? path : "/usr/bin:/bin");
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", d, name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* Runs @argv with @input on its stdin (NULL: none); its exit status, or -1. */
static int run_tool(const char *const *argv, const char *input)
{
	int fds[2];

	if (pipe(fds) != 0)
		return -1;
	fflush(NULL);
	const pid_t pid = fork();

	if (pid == 0) {
		if (dup2(fds[0], 0) < 0)
			_exit(126);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[0]);
	if (pid > 0 && input && write(fds[1], input, strlen(input)) != (ssize_t)strlen(input))
		fprintf(stderr, "peers: writing to %s: %s\n", argv[0], strerror(errno));
	close(fds[1]);
	return pid > 0 ? vyre_bench_reap(pid) : -1;
}

/* Removes the files in @dir, then @dir (MPS writes no subdirectories). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

static const char *suite(const struct vyre_peers_mps *m)
{
	return m->suite ? m->suite : "peers";
}

int vyre_peers_mps_init(struct vyre_peers_mps *m)
{
	snprintf(m->dir, sizeof(m->dir), "/tmp/vyre-bench-mps-XXXXXX");
	if (!mkdtemp(m->dir))
		return -1;
	snprintf(m->none, sizeof(m->none), "%s/none", m->dir);
	snprintf(m->pipe, sizeof(m->pipe), "%s/pipe", m->dir);
	snprintf(m->log, sizeof(m->log), "%s/log", m->dir);
	if (mkdir(m->none, 0700) || mkdir(m->pipe, 0700) || mkdir(m->log, 0700))
		return -1;
	m->have = find_in_path("nvidia-cuda-mps-control", m->bin, sizeof(m->bin)) != NULL;
	return setenv("CUDA_MPS_PIPE_DIRECTORY", m->none, 1) ||
	       setenv("CUDA_MPS_LOG_DIRECTORY", m->log, 1);
}

int vyre_peers_mps_start(struct vyre_peers_mps *m)
{
	const char *const argv[] = {m->bin, "-d", NULL};

	if (setenv("CUDA_MPS_PIPE_DIRECTORY", m->pipe, 1) != 0)
		return -1;
	if (run_tool(argv, NULL) != 0) {
		fprintf(stderr, "%s: %s -d failed; its log:\n", suite(m), m->bin);
		char log[128];

		snprintf(log, sizeof(log), "%s/control.log", m->log);
		vyre_bench_print_log(log, suite(m), NULL);
		setenv("CUDA_MPS_PIPE_DIRECTORY", m->none, 1);
		return -1;
	}
	m->running = 1;
	fprintf(stderr, "%s: started %s -d (CUDA_MPS_PIPE_DIRECTORY=%s)\n", suite(m), m->bin,
		m->pipe);
	return 0;
}

void vyre_peers_mps_stop(struct vyre_peers_mps *m)
{
	const char *const argv[] = {m->bin, NULL};

	if (!m->running)
		return;
	if (run_tool(argv, "quit\n") != 0)
		fprintf(stderr, "%s: 'echo quit | %s' failed\n", suite(m), m->bin);
	else
		fprintf(stderr, "%s: stopped the MPS control daemon (echo quit)\n", suite(m));
	/* quit returns before the server has gone; a later context must not find it half gone */
	char control[96];

	snprintf(control, sizeof(control), "%s/control", m->pipe);
	for (int i = 0; i < 500 && access(control, F_OK) == 0; i++)
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	m->running = 0;
	setenv("CUDA_MPS_PIPE_DIRECTORY", m->none, 1);
}

void vyre_peers_mps_fini(struct vyre_peers_mps *m, const char *old_pipe, const char *old_log)
{
	vyre_peers_mps_stop(m);
	remove_dir(m->none);
	remove_dir(m->pipe);
	remove_dir(m->log);
	rmdir(m->dir);
	if (old_pipe)
		setenv("CUDA_MPS_PIPE_DIRECTORY", old_pipe, 1);
	else
		unsetenv("CUDA_MPS_PIPE_DIRECTORY");
	if (old_log)
		setenv("CUDA_MPS_LOG_DIRECTORY", old_log, 1);
	else
		unsetenv("CUDA_MPS_LOG_DIRECTORY");
}

int vyre_peers_mps_enter(struct vyre_peers_mps *m, const char *suite_name)
{
	const char *pipe = getenv("CUDA_MPS_PIPE_DIRECTORY"),
		   *log = getenv("CUDA_MPS_LOG_DIRECTORY");

	m->suite = suite_name;
	m->had_pipe = pipe != NULL;
	m->had_log = log != NULL;
	snprintf(m->old_pipe, sizeof(m->old_pipe), "%s", pipe ? pipe : "");
	snprintf(m->old_log, sizeof(m->old_log), "%s", log ? log : "");
	if (vyre_peers_mps_init(m) == 0)
		return 0;
	fprintf(stderr, "%s: temporary MPS directories: %s\n", suite(m), strerror(errno));
	return -1;
}

void vyre_peers_mps_leave(struct vyre_peers_mps *m)
{
	vyre_peers_mps_fini(m, m->had_pipe ? m->old_pipe : NULL, m->had_log ? m->old_log : NULL);
}
