/* SPDX-License-Identifier: MIT */
/*
 * vyred started the way systemd starts it (tools/vyred/sd.h), with no systemd
 * needed: the test makes the listening socket and a notification socket,
 * passes the first as fd 3 with LISTEN_FDS/LISTEN_PID naming the child, and
 * checks READY=1 with a STATUS=, a client served through the passed socket,
 * WATCHDOG=1 pings at WATCHDOG_USEC/2, STOPPING=1 on SIGTERM, exit 0 and the
 * socket path left in place. A LISTEN_PID naming another process is ignored
 * (vyred binds --socket as without systemd, and WATCHDOG_PID naming another
 * process means no pings); a passed socket of the wrong type stops start-up.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "test_integration_daemon.h"

#define READY_TIMEOUT_MS 60000
#define WATCHDOG_USEC	 "200000"

/* One vyred run: its files, and how systemd's variables are set for it. */
struct run {
	char passed[128]; /* the socket passed as fd 3 */
	char own[128];	  /* --socket: the passed one, or one vyred binds */
	char notify[128]; /* NOTIFY_SOCKET: a path, or @name */
	char log[128];
	int listen_fd;
	int notify_fd;
	int pid_is_child; /* LISTEN_PID (and WATCHDOG_PID when set) name vyred; else the test */
	int watchdog;	  /* set WATCHDOG_USEC */
	int watchdog_pid; /* and WATCHDOG_PID */
	pid_t pid;
};

static int bind_unix(int type, const char *name, int abstract)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	if (fd < 0 || n + 1 >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path + (abstract ? 1 : 0), name, n);
	socklen_t len =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));

	if (bind(fd, (struct sockaddr *)&sa, len) != 0 ||
	    (type != SOCK_DGRAM && listen(fd, 16) != 0)) {
		perror("bind/listen");
		close(fd);
		return -1;
	}
	return fd;
}

static void set_pid_var(const char *name, pid_t pid)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	setenv(name, v, 1);
}

/* The child side: systemd's part of the protocol, then vyred. */
static void exec_vyred(const struct run *r, const char *vyred)
{
	const char *argv[] = {vyred, "--socket", r->own, "--backend", "cpu", NULL};
	const pid_t named = r->pid_is_child ? getpid() : getppid();
	int log = open(r->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (log < 0 || dup2(log, 2) < 0)
		_exit(126);
	if (r->listen_fd >= 0) {
		if (r->listen_fd == 3 ? fcntl(3, F_SETFD, 0) != 0 : dup2(r->listen_fd, 3) != 3)
			_exit(126);
		setenv("LISTEN_FDS", "1", 1);
		setenv("LISTEN_FDNAMES", "vyred.socket", 1);
		set_pid_var("LISTEN_PID", named);
	}
	setenv("NOTIFY_SOCKET", r->notify, 1);
	if (r->watchdog)
		setenv("WATCHDOG_USEC", WATCHDOG_USEC, 1);
	if (r->watchdog_pid)
		set_pid_var("WATCHDOG_PID", named);
	execv(vyred, (char *const *)argv);
	_exit(127);
}

/*
 * Make the passed socket (@type) and the notification socket (abstract or a
 * path) for the run @tag in @dir, and start vyred on them: with --socket the
 * passed socket's path, or its own path when @own_path.
 */
static int launch(struct run *r, const char *dir, const char *tag, int type, int abstract,
		  int own_path)
{
	char vyred[PATH_MAX + 16];

	snprintf(r->passed, sizeof(r->passed), "%s/%s.sock", dir, tag);
	snprintf(r->own, sizeof(r->own), own_path ? "%s/%s-own.sock" : "%s/%s.sock", dir, tag);
	if (abstract)
		snprintf(r->notify, sizeof(r->notify), "@vyre-sd-%d-%s", (int)getpid(), tag);
	else
		snprintf(r->notify, sizeof(r->notify), "%s/%s.notify", dir, tag);
	snprintf(r->log, sizeof(r->log), "%s/%s.log", dir, tag);
	r->listen_fd = bind_unix(type, r->passed, 0);
	r->notify_fd = bind_unix(SOCK_DGRAM, r->notify + abstract, abstract);
	if (r->listen_fd < 0 || r->notify_fd < 0)
		FAIL("%s: set-up", tag);
	vyre_test_vyred_path(vyred, sizeof(vyred));
	fflush(NULL);
	r->pid = fork();
	if (r->pid == 0)
		exec_vyred(r, vyred);
	return r->pid > 0 ? 0 : -1;
}

static void dump_log(const struct run *r)
{
	char line[512];
	FILE *f = fopen(r->log, "r");

	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "  | %s", line);
	if (f)
		fclose(f);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Datagrams on @fd for up to @ms: 1 as soon as one holds the line @want
 * (copied to @got), 0 when time ran out. @pings counts WATCHDOG=1 seen.
 */
static int expect(int fd, const char *want, int ms, char *got, size_t got_len, int *pings)
{
	const int64_t until = now_ms() + ms;

	for (int64_t left = ms; left > 0; left = until - now_ms()) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char buf[1024];

		if (poll(&p, 1, (int)left) <= 0)
			continue;
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (pings && strcmp(buf, "WATCHDOG=1") == 0)
			++*pings;
		const char *at = want ? strstr(buf, want) : NULL;

		if (at && (at == buf || at[-1] == '\n')) {
			if (got)
				snprintf(got, got_len, "%s", buf);
			return 1;
		}
	}
	return 0;
}

/* One ADD item through @socket, checked. */
static int serve_one(const char *socket)
{
	struct vyre_connect_opts o = {.socket_path = socket, .heap_bytes = 1 << 20};
	struct vyre_client *c;
	uint32_t a, b;
	struct vyre_cqe cqe;
	int rc = vyre_connect(&o, &c);

	if (rc != 0)
		FAIL("connect through %s: %s", socket, vyre_strerror(rc));
	if (vyre_buffer_alloc(c, 64, 0, &a) != 0 || vyre_buffer_alloc(c, 64, 0, &b) != 0) {
		vyre_close(c);
		FAIL("buffer alloc");
	}
	uint32_t *in = vyre_buffer_ptr(c, a, NULL), *out = vyre_buffer_ptr(c, b, NULL);

	for (uint32_t i = 0; i < 16; i++)
		in[i] = i * 3;
	struct vyre_work_item it = {
	    .op_handle = VYRE_OP_ADD, .input_handle = a, .output_handle = b, .param = 7};

	rc = vyre_submit(c, &it, 42, 0);
	if (rc == 0)
		rc = vyre_wait(c, &cqe, 1, 30000000000ll);
	if (rc != 1 || cqe.user_data != 42 || cqe.status != 0) {
		vyre_close(c);
		FAIL("ADD through %s: rc %d status %d", socket, rc, rc == 1 ? cqe.status : 0);
	}
	for (uint32_t i = 0; i < 16; i++)
		if (out[i] != i * 3 + 7) {
			vyre_close(c);
			FAIL("ADD word %u: %u, want %u", i, out[i], i * 3 + 7);
		}
	vyre_close(c);
	return 0;
}

/* SIGTERM and the exit status (-1: a signal or no exit in 60 s). */
static int stop(struct run *r)
{
	int st = 0;

	kill(r->pid, SIGTERM);
	for (int i = 0; i < 6000; i++) {
		if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
			r->pid = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		usleep(10000);
	}
	return -1;
}

/* Kill what is left of the run; its log stays, and @failed prints it. */
static int finish(struct run *r, int failed)
{
	if (failed)
		dump_log(r);
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
	}
	r->pid = 0;
	if (r->notify_fd >= 0)
		close(r->notify_fd);
	if (r->listen_fd >= 0)
		close(r->listen_fd);
	if (r->notify[0] == '/')
		unlink(r->notify);
	unlink(r->passed);
	unlink(r->own);
	return failed ? -1 : 0;
}

static int is_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Someone still listens on @path: systemd could start vyred again on it. */
static int connectable(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), ok;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	strcpy(sa.sun_path, path);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static int activated(const char *dir)
{
	char got[1024];
	struct run r = {.listen_fd = -1, .notify_fd = -1, .pid_is_child = 1, .watchdog = 1};
	int pings = 0;

	if (launch(&r, dir, "activated", SOCK_SEQPACKET, 1, 0) != 0)
		return finish(&r, 1);
	if (!expect(r.notify_fd, "READY=1", READY_TIMEOUT_MS, got, sizeof(got), &pings)) {
		fprintf(stderr, "FAIL: no READY=1 on %s\n", r.notify);
		return finish(&r, 1);
	}
	if (!strstr(got, "\nSTATUS=serving: ")) {
		fprintf(stderr, "FAIL: READY=1 without STATUS=: '%s'\n", got);
		return finish(&r, 1);
	}
	if (!vyre_test_log_has(r.log, "socket activation: listening on") ||
	    !vyre_test_log_has(r.log, r.passed)) {
		fprintf(stderr, "FAIL: vyred did not say it took the passed socket\n");
		return finish(&r, 1);
	}
	if (serve_one(r.passed) != 0)
		return finish(&r, 1);
	pings = 0;
	expect(r.notify_fd, NULL, 1000, NULL, 0, &pings);
	/* every 100 ms: 10 in a second; a slow sanitizer build still makes several */
	if (pings < 3 || pings > 12) {
		fprintf(stderr, "FAIL: %d WATCHDOG=1 pings in 1 s at WATCHDOG_USEC=%s\n", pings,
			WATCHDOG_USEC);
		return finish(&r, 1);
	}
	kill(r.pid, SIGTERM);
	if (!expect(r.notify_fd, "STOPPING=1", READY_TIMEOUT_MS, NULL, 0, NULL)) {
		fprintf(stderr, "FAIL: no STOPPING=1 after SIGTERM\n");
		return finish(&r, 1);
	}
	int st = stop(&r);

	if (st != 0) {
		fprintf(stderr, "FAIL: vyred exited %d after SIGTERM\n", st);
		return finish(&r, 1);
	}
	if (!is_socket(r.passed) || !connectable(r.passed)) {
		fprintf(stderr, "FAIL: the passed socket %s was removed or closed\n", r.passed);
		return finish(&r, 1);
	}
	printf("ok: activated: READY=1 with STATUS, a client served, %d pings/s, socket kept\n",
	       pings);
	return finish(&r, 0);
}

static int not_ours(const char *dir)
{
	struct run r = {.listen_fd = -1, .notify_fd = -1, .watchdog = 1, .watchdog_pid = 1};
	int pings = 0;

	if (launch(&r, dir, "not-ours", SOCK_SEQPACKET, 0, 1) != 0)
		return finish(&r, 1);
	if (!expect(r.notify_fd, "READY=1", READY_TIMEOUT_MS, NULL, 0, &pings)) {
		fprintf(stderr, "FAIL: no READY=1 on %s\n", r.notify);
		return finish(&r, 1);
	}
	if (!vyre_test_log_has(r.log, "is not this process: ignored") || !is_socket(r.own)) {
		fprintf(stderr, "FAIL: a foreign LISTEN_PID was not ignored\n");
		return finish(&r, 1);
	}
	if (serve_one(r.own) != 0)
		return finish(&r, 1);
	expect(r.notify_fd, NULL, 500, NULL, 0, &pings);
	if (pings) {
		fprintf(stderr, "FAIL: %d pings with WATCHDOG_PID naming another process\n", pings);
		return finish(&r, 1);
	}
	int st = stop(&r);

	if (st != 0 || is_socket(r.own) || !is_socket(r.passed)) {
		fprintf(stderr, "FAIL: exit %d; own socket %s, passed socket %s\n", st,
			is_socket(r.own) ? "left behind" : "removed",
			is_socket(r.passed) ? "kept" : "removed");
		return finish(&r, 1);
	}
	printf("ok: a foreign LISTEN_PID and WATCHDOG_PID are ignored\n");
	return finish(&r, 0);
}

/* A SOCK_STREAM socket is not what vyred serves: start-up fails, with the reason. */
static int wrong_type(const char *dir)
{
	struct run r = {.listen_fd = -1, .notify_fd = -1, .pid_is_child = 1};
	int st = -1;

	if (launch(&r, dir, "stream", SOCK_STREAM, 0, 0) != 0)
		return finish(&r, 1);
	for (int i = 0; i < 6000 && r.pid > 0; i++) {
		if (waitpid(r.pid, &st, WNOHANG) == r.pid)
			r.pid = 0;
		else
			usleep(10000);
	}
	if (r.pid != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 1 ||
	    !vyre_test_log_has(r.log, "not a listening AF_UNIX SOCK_SEQPACKET") ||
	    expect(r.notify_fd, "READY=1", 10, NULL, 0, NULL)) {
		fprintf(stderr, "FAIL: a passed SOCK_STREAM socket was not refused\n");
		return finish(&r, 1);
	}
	printf("ok: a passed SOCK_STREAM socket stops start-up\n");
	return finish(&r, 0);
}

static void remove_all(const char *dir)
{
	static const char *const files[] = {"activated.log", "not-ours.log", "stream.log"};
	char path[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	if (rmdir(dir) != 0)
		fprintf(stderr, "cannot remove %s: %s\n", dir, strerror(errno));
}

int main(void)
{
	char dir[] = "/tmp/vyre-sd-XXXXXX";
	int failed = 0;

	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	failed |= activated(dir) != 0;
	failed |= not_ours(dir) != 0;
	failed |= wrong_type(dir) != 0;
	/* the logs stay for a look after a failure */
	if (!failed)
		remove_all(dir);
	return failed;
}
