/* SPDX-License-Identifier: MIT */
/* Starting, stopping and inspecting a real vyred for the integration tests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_integration_daemon.h"

#define START_TIMEOUT_S 60
/* vyred's own grace for its GPU workers is seconds; sanitizer builds stop slower */
#define STOP_TIMEOUT_S 120

const char *vyre_test_vyred_path(char *buf, size_t len)
{
	const char *env = getenv("VYRED");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return "vyred";
	self[n] = '\0';
	/* $(BUILD)/tests/test_X -> $(BUILD)/vyred */
	snprintf(buf, len, "%s/../vyred", dirname(self));
	return buf;
}

int vyre_test_log_count(const char *log, const char *what)
{
	char line[512];
	int found = 0;
	FILE *f = fopen(log, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		found += strstr(line, what) != NULL;
	fclose(f);
	return found;
}

int vyre_test_log_has(const char *log, const char *what)
{
	return vyre_test_log_count(log, what) > 0;
}

uint32_t vyre_test_logged_domain(const struct vyre_test_daemon *d, uint32_t id)
{
	char line[512], want[32];

	snprintf(want, sizeof(want), "client %u (pid", id);
	for (int tries = 0; tries < 400; tries++) {
		FILE *f = fopen(d->log, "r");
		uint32_t dom = 0;

		while (f && !dom && fgets(line, sizeof(line), f)) {
			const char *p = strstr(line, "joined domain ");

			if (p && strstr(line, want))
				dom = (uint32_t)strtoul(p + strlen("joined domain "), NULL, 10);
		}
		if (f)
			fclose(f);
		if (dom)
			return dom;
		usleep(5000);
	}
	return 0;
}

int vyre_test_logged_gpu(const struct vyre_test_daemon *d, uint32_t id)
{
	char line[512], want[32];

	snprintf(want, sizeof(want), "client %u (pid", id);
	for (int tries = 0; tries < 400; tries++) {
		FILE *f = fopen(d->log, "r");
		int gpu = -1;

		while (f && gpu == -1 && fgets(line, sizeof(line), f)) {
			if (!strstr(line, want) || (!strstr(line, "joined domain ") &&
						    !strstr(line, "resumed in domain ")))
				continue;
			gpu = strncmp(line, "vyred[gpu ", 10) == 0 ? atoi(line + 10) : -2;
		}
		if (f)
			fclose(f);
		if (gpu != -1)
			return gpu;
		usleep(5000);
	}
	return -1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int vyre_test_wait_dispatched(const struct vyre_test_daemon *d, uint64_t user_data,
			      int64_t timeout_ns)
{
	char want[32];
	const uint64_t until = mono_ns() + (uint64_t)timeout_ns;

	snprintf(want, sizeof(want), " %" PRIu64, user_data);
	while (mono_ns() < until) {
		char line[128];
		FILE *f = fopen(d->accept_log, "r");
		int found = 0;

		while (f && !found && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			const size_t n = strlen(line), w = strlen(want);

			found = n >= w && strcmp(line + n - w, want) == 0;
		}
		if (f)
			fclose(f);
		if (found)
			return 0;
		usleep(1000);
	}
	FAIL("item %" PRIu64 " never dispatched", user_data);
}

int vyre_test_daemon_start(struct vyre_test_daemon *d, const char *const *extra)
{
	char path[PATH_MAX + 16];
	const char *argv[64];
	int argc = 0;

	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "/tmp/vyre-test-XXXXXX");
	if (!mkdtemp(d->dir)) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(d->socket, sizeof(d->socket), "%s/vyre.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/vyred.log", d->dir);
	snprintf(d->accept_log, sizeof(d->accept_log), "%s/accept.log", d->dir);
	argv[argc++] = vyre_test_vyred_path(path, sizeof(path));
	argv[argc++] = "--socket";
	argv[argc++] = d->socket;
	argv[argc++] = "--accept-log";
	argv[argc++] = d->accept_log;
	for (int i = 0; extra && extra[i] && argc < 62; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;

	fflush(NULL); /* the child must not repeat buffered output */
	d->pid = fork();
	if (d->pid < 0) {
		perror("fork");
		return -1;
	}
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd >= 0)
			dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	for (int i = 0; i < START_TIMEOUT_S * 100; i++) {
		int st;

		if (vyre_test_log_has(d->log, "vyred: ready"))
			return 0;
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			fprintf(stderr, "vyred (%s) exited during start-up:\n", argv[0]);
			d->pid = 0;
			vyre_test_daemon_dump_log(d);
			return -1;
		}
		usleep(10000);
	}
	fprintf(stderr, "vyred did not become ready in %d s\n", START_TIMEOUT_S);
	vyre_test_daemon_kill(d);
	return -1;
}

int vyre_test_daemon_stop(struct vyre_test_daemon *d)
{
	int st;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	/*
	 * Bounded: a vyred that does not stop is a failure to report with its
	 * log, not a test that hangs until the suite's limit kills everything.
	 */
	for (long ms = 0;; ms += 10) {
		const pid_t r = waitpid(d->pid, &st, WNOHANG);

		if (r == d->pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (ms >= STOP_TIMEOUT_S * 1000l) {
			fprintf(stderr, "vyred did not stop within %d s of SIGTERM; its log:\n",
				STOP_TIMEOUT_S);
			vyre_test_daemon_dump_log(d);
			vyre_test_daemon_kill(d);
			return -1;
		}
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	d->pid = 0;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	fprintf(stderr, "vyred died from signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	return -1;
}

void vyre_test_daemon_signal(const struct vyre_test_daemon *d, int sig)
{
	char path[64];
	FILE *f;
	int child;

	if (d->pid <= 0)
		return;
	/* a vyred of several devices serves from its GPU workers, its children */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)d->pid, (int)d->pid);
	f = fopen(path, "r");
	while (f && fscanf(f, "%d", &child) == 1)
		kill(child, sig);
	if (f)
		fclose(f);
	kill(d->pid, sig);
}

void vyre_test_daemon_kill(struct vyre_test_daemon *d)
{
	if (d->pid <= 0)
		return;
	kill(d->pid, SIGKILL);
	while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR)
		;
	d->pid = 0;
}

void vyre_test_daemon_cleanup(struct vyre_test_daemon *d)
{
	vyre_test_daemon_kill(d);
	if (!d->dir[0])
		return;
	unlink(d->socket);
	unlink(d->log);
	unlink(d->accept_log);
	rmdir(d->dir);
}

void vyre_test_daemon_dump_log(const struct vyre_test_daemon *d)
{
	char line[512];
	FILE *f = fopen(d->log, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "  | %s", line);
	fclose(f);
}

int vyre_test_dir_entries(const char *path)
{
	DIR *dir = opendir(path);
	const struct dirent *e;
	int n = 0;

	if (!dir)
		return -1;
	while ((e = readdir(dir)))
		n += e->d_name[0] != '.';
	closedir(dir);
	return n;
}

int vyre_test_fd_count(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	return vyre_test_dir_entries(path);
}

char vyre_test_proc_state(pid_t pid, pid_t tid)
{
	char path[96], buf[512];
	FILE *f;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

uint64_t vyre_test_scale(void)
{
	const char *s = getenv("VYRE_TEST_SCALE");
	unsigned long long v = s ? strtoull(s, NULL, 10) : 1;

	return v ? v : 1;
}

int vyre_test_daemon_finish(struct vyre_test_daemon *d)
{
	const int st = vyre_test_daemon_stop(d);

	if (st != 0) {
		fprintf(stderr, "FAIL: vyred exited %d\n", st);
		vyre_test_daemon_dump_log(d);
	}
	vyre_test_daemon_cleanup(d);
	return st == 0 ? 0 : -1;
}
