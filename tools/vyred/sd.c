/* SPDX-License-Identifier: MIT */
/*
 * Socket activation and service notification the systemd way, in the few
 * lines they take: vyred links no libsystemd, so hosts without systemd need
 * nothing more, and the daemon's dependencies stay liburing and libc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "sd.h"

/* sd_listen_fds(3): the first passed descriptor */
#define SD_LISTEN_FDS_START 3

static struct {
	int listen_fd;
	int notify_fd;
	struct sockaddr_un notify_addr;
	socklen_t notify_len;
	uint64_t watchdog_ns;
	int notify_failed; /* logged once: a watchdog that cannot be fed is worth one line */
} sd = {.listen_fd = -1, .notify_fd = -1};

/* A decimal variable naming a process: 1 when it names this one. */
static int names_us(const char *v)
{
	char *end;
	long pid;

	errno = 0;
	pid = v ? strtol(v, &end, 10) : 0;
	return v && *v && !errno && *end == '\0' && pid == (long)getpid();
}

static int sockopt(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, opt, &v, &len) == 0 ? v : -1;
}

/* fd 3 must be what vyred would have made itself: a listening unix SEQPACKET socket. */
static int adopt_listen_fd(const char *names)
{
	const int fd = SD_LISTEN_FDS_START;
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	struct stat st;
	int fl;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) || sockopt(fd, SO_DOMAIN) != AF_UNIX ||
	    sockopt(fd, SO_TYPE) != SOCK_SEQPACKET || sockopt(fd, SO_ACCEPTCONN) != 1) {
		vyre_log("socket activation: fd 3 is not a listening AF_UNIX SOCK_SEQPACKET socket "
			 "(the socket unit needs ListenSequentialPacket=)");
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fl < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		vyre_log("socket activation: fcntl on fd 3: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0 || len <= sizeof(sa.sun_family))
		sa.sun_path[0] = '\0';
	sa.sun_path[sizeof(sa.sun_path) - 1] = '\0';
	vyre_log("socket activation: listening on %s (name %s), passed by the service manager",
		 sa.sun_path[0] ? sa.sun_path : "an unnamed socket", names && *names ? names : "-");
	sd.listen_fd = fd;
	return 0;
}

static int take_listen_fds(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");

	if (!pid && !fds)
		return 0;
	if (!names_us(pid)) {
		/* meant for another process (a parent that did not unset them) */
		vyre_log("socket activation: LISTEN_PID %s is not this process: ignored",
			 pid ? pid : "(unset)");
		return 0;
	}
	if (!fds || strcmp(fds, "1") != 0) {
		vyre_log("socket activation: LISTEN_FDS=%s: vyred takes exactly one socket",
			 fds ? fds : "(unset)");
		return -1;
	}
	return adopt_listen_fd(names);
}

/* $NOTIFY_SOCKET: a path, or an abstract name written with a leading '@'. */
static void open_notify(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t n = path ? strlen(path) : 0;

	if (n == 0)
		return;
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sd.notify_addr.sun_path)) {
		vyre_log("NOTIFY_SOCKET=%s: not a unix socket path or @name: not notifying", path);
		return;
	}
	sd.notify_addr.sun_family = AF_UNIX;
	memcpy(sd.notify_addr.sun_path, path, n);
	if (path[0] == '@')
		sd.notify_addr.sun_path[0] = '\0';
	sd.notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	sd.notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sd.notify_fd < 0)
		vyre_log("NOTIFY_SOCKET: socket: %s", strerror(errno));
}

static void read_watchdog(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	unsigned long long v;

	if (!usec || sd.notify_fd < 0 || (pid && !names_us(pid)))
		return;
	errno = 0;
	v = strtoull(usec, &end, 10);
	if (errno || *end != '\0' || v == 0 || v > UINT64_MAX / 1000u) {
		vyre_log("WATCHDOG_USEC=%s: not a number of microseconds: no watchdog pings", usec);
		return;
	}
	sd.watchdog_ns = v * 1000u / 2;
	vyre_log("watchdog: loop 0 pings every %llu ms",
		 (unsigned long long)(sd.watchdog_ns / 1000000u));
}

int vyre_sd_init(void)
{
	int rc = take_listen_fds();

	open_notify();
	read_watchdog();
	/* nothing vyred starts may take them for its own */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	return rc;
}

void vyre_sd_fini(void)
{
	if (sd.notify_fd >= 0)
		close(sd.notify_fd);
	sd.notify_fd = -1;
}

int vyre_sd_listen_fd(void)
{
	return sd.listen_fd;
}

uint64_t vyre_sd_watchdog_ns(void)
{
	return sd.watchdog_ns;
}

void vyre_sd_notify(const char *state)
{
	if (sd.notify_fd < 0)
		return;
	/* a datagram: all of it or nothing; a full receiver must not stall loop 0 */
	if (sendto(sd.notify_fd, state, strlen(state), MSG_DONTWAIT | MSG_NOSIGNAL,
		   (const struct sockaddr *)&sd.notify_addr, sd.notify_len) < 0 &&
	    !sd.notify_failed) {
		sd.notify_failed = 1;
		vyre_log("NOTIFY_SOCKET: send: %s", strerror(errno));
	}
}
