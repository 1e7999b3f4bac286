/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_vyred.c - the vyreds a suite starts and stops: finding the
 * binary, a temporary directory, socket and log each, waiting until one
 * answers, printing its log, the options vyre-bench passes them, and the pid
 * behind a socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness_procs.h"
#include "harness_vyred.h"
#include "vyre/vyre.h"

int vyre_bench_await_daemon(const char *socket, pid_t *pid)
{
	struct vyre_connect_opts o = {.socket_path = socket};

	for (int i = 0; i < 1000; i++) {
		struct vyre_client *c;

		if (vyre_connect(&o, &c) == 0) {
			vyre_close(c);
			return 0;
		}
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			*pid = -1;
			return -1;
		}
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	return -1;
}

const char *vyre_bench_find_vyred(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	snprintf(buf, len, "%s/vyred", dirname(self));
	return access(buf, X_OK) == 0 ? buf : NULL;
}

void vyre_bench_print_log(const char *path, const char *suite, const char *const *show)
{
	char line[512];
	FILE *fp = fopen(path, "r");

	while (fp && fgets(line, sizeof(line), fp)) {
		int hit = !show;

		for (unsigned i = 0; show && show[i] && !hit; i++)
			hit = strstr(line, show[i]) != NULL;
		if (hit)
			fprintf(stderr, "%s:   %s", suite, line);
	}
	if (fp)
		fclose(fp);
}

void vyre_bench_vyred_stop(struct vyre_bench_vyred *d, const char *suite, const char *const *show)
{
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		vyre_bench_reap(d->pid);
		if (show)
			vyre_bench_print_log(d->log, suite, show);
	}
	d->pid = -1;
	unlink(d->log);
	unlink(d->sock);
	rmdir(d->dir);
}

/* vyre_bench_vyred_exec, with vyred pinned to @cpu when @cpu >= 0. */
static pid_t exec_on(struct vyre_bench_vyred *d, const char *bin, const char *const *args, int cpu)
{
	const char *argv[32];
	unsigned n = 0;

	argv[n++] = bin;
	argv[n++] = "--socket";
	argv[n++] = d->sock;
	for (unsigned i = 0; args && args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fflush(NULL);
	d->pid = fork();
	if (d->pid == 0) {
		const int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		if (cpu >= 0)
			vyre_bench_pin(cpu);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	return d->pid;
}

pid_t vyre_bench_vyred_exec(struct vyre_bench_vyred *d, const char *bin, const char *const *args)
{
	return exec_on(d, bin, args, -1);
}

int vyre_bench_vyred_start_on(struct vyre_bench_vyred *d, const char *suite, const char *bin,
			      const char *const *args, int cpu)
{
	snprintf(d->dir, sizeof(d->dir), "/tmp/vyre-bench-%s-XXXXXX", suite);
	d->pid = -1;
	if (!mkdtemp(d->dir)) {
		fprintf(stderr, "%s: mkdtemp: %s\n", suite, strerror(errno));
		return -1;
	}
	snprintf(d->sock, sizeof(d->sock), "%s/vyre.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/vyred.log", d->dir);
	if (exec_on(d, bin, args, cpu) > 0 && vyre_bench_await_daemon(d->sock, &d->pid) == 0)
		return 0;
	fprintf(stderr, "%s: vyred did not start:\n", suite);
	vyre_bench_print_log(d->log, suite, NULL);
	vyre_bench_vyred_stop(d, suite, NULL);
	return -1;
}

int vyre_bench_vyred_start(struct vyre_bench_vyred *d, const char *suite, const char *bin,
			   const char *const *args)
{
	return vyre_bench_vyred_start_on(d, suite, bin, args, -1);
}

int vyre_bench_vyred_has_flag(const char *bin, const char *flag)
{
	char cmd[PATH_MAX + 32], line[256];
	int found = 0;

	snprintf(cmd, sizeof(cmd), "'%s' --help 2>&1", bin);
	fflush(NULL);
	FILE *p = popen(cmd, "r");

	while (p && fgets(line, sizeof(line), p))
		found |= strstr(line, flag) != NULL;
	if (p)
		pclose(p);
	return found;
}

/* @v when @bin lists --@flag, else 0 after saying it is not passed. */
static unsigned flag_if_known(const char *suite, const char *bin, const char *flag, unsigned v)
{
	char dashed[32];

	snprintf(dashed, sizeof(dashed), "--%s", flag);
	if (!v || vyre_bench_vyred_has_flag(bin, dashed))
		return v;
	fprintf(stderr, "%s: %s has no %s: %s %u not passed\n", suite, bin, dashed, dashed, v);
	return 0;
}

void vyre_bench_vyred_opts(const struct vyre_bench_ctx *ctx, const char *suite, const char *bin,
			   struct vyre_bench_vyred_opts *o)
{
	char inflight[24] = "", loops[24] = "";

	memset(o, 0, sizeof(*o));
	o->inflight = flag_if_known(suite, bin, "inflight", ctx->inflight);
	o->loops = flag_if_known(suite, bin, "loops", ctx->loops);
	o->extra = ctx->vyred_args;
	o->n_extra = ctx->n_vyred_args;
	snprintf(o->inflight_arg, sizeof(o->inflight_arg), "%u", o->inflight);
	snprintf(o->loops_arg, sizeof(o->loops_arg), "%u", o->loops);
	if (o->inflight)
		snprintf(inflight, sizeof(inflight), " inflight=%u", o->inflight);
	if (o->loops)
		snprintf(loops, sizeof(loops), " loops=%u", o->loops);
	snprintf(o->tag, sizeof(o->tag), "%s%s", inflight, loops);
}

unsigned vyre_bench_vyred_opts_args(const struct vyre_bench_vyred_opts *o, const char **args,
				    unsigned n)
{
	if (o->inflight) {
		args[n++] = "--inflight";
		args[n++] = o->inflight_arg;
	}
	if (o->loops) {
		args[n++] = "--loops";
		args[n++] = o->loops_arg;
	}
	for (unsigned i = 0; i < o->n_extra; i++)
		args[n++] = o->extra[i];
	return n;
}

pid_t vyre_bench_socket_pid(const char *socket_path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ucred cred = {.pid = -1};
	socklen_t len = sizeof(cred);
	const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(socket_path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	strcpy(sa.sun_path, socket_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		cred.pid = -1;
	close(fd);
	return cred.pid > 0 ? cred.pid : -1;
}
