/* SPDX-License-Identifier: MIT */
/*
 * The listening socket (SOCK_SEQPACKET, mode 0660, parent directory created,
 * or the one systemd passed: sd.h) and what happens to an accepted
 * connection: peer credentials are checked against the allow list; a refused
 * peer is told so in reply to its HELLO. The accept (or a GPU worker's
 * receive on its channel) is an io_uring operation the loop hands back here
 * when it completes, and a tick closes handshakes that send no HELLO.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "conns.h"
#include "daemon.h"
#include "inbox.h"
#include "log.h"
#include "sd.h"
#include "server.h"
#include "uring.h"
#include "worker_link.h"

/* mkdir -p of the socket's parent directory. */
static int make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	size_t n = strlen(path);

	if (n >= sizeof(dir))
		return -1;
	memcpy(dir, path, n + 1);
	char *slash = strrchr(dir, '/');

	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(dir, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/*
 * How long a socket that takes connections but may belong to a vyred that
 * was just killed is watched: the kernel tears a dead process's io_uring
 * down after the process is gone, and until then its pending accept keeps
 * the socket listening (measured: a few milliseconds).
 */
#define STALE_TRIES    200
#define STALE_PAUSE_NS 10000000l

static int refused(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int stale;

	if (fd < 0)
		return 0;
	stale = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 && errno == ECONNREFUSED;
	close(fd);
	return stale;
}

/* A socket file nobody listens on (a crashed vyred) is replaced; a live one is not. */
static int stale_socket(const struct sockaddr_un *sa)
{
	for (int i = 0; i < STALE_TRIES; i++) {
		struct timespec pause = {.tv_nsec = STALE_PAUSE_NS};

		if (refused(sa))
			return 1;
		nanosleep(&pause, NULL);
	}
	return 0;
}

int vyre_server_listen(struct vyre_daemon *d)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *path = d->cfg.socket_path;

	if (d->cfg.worker_fd >= 0) {
		/* a GPU worker: the supervisor listens and hands connections over */
		d->listen_fd = d->cfg.worker_fd;
		d->listen_link = 1;
		d->listen_passed = 1;
		return 0;
	}
	d->listen_fd = vyre_sd_listen_fd();
	if (d->listen_fd >= 0) {
		/* the service manager owns the path: it made it and removes it */
		d->listen_passed = 1;
		return 0;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		vyre_log("socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	if (make_parent(path) != 0) {
		vyre_log("cannot create the directory of %s: %s", path, strerror(errno));
		return -1;
	}
	d->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->listen_fd < 0) {
		vyre_log("socket: %s", strerror(errno));
		return -1;
	}
	if (access(path, F_OK) == 0 && stale_socket(&sa)) {
		vyre_log("removing stale socket %s", path);
		unlink(path);
	}
	mode_t old = umask(0117);
	int rc = bind(d->listen_fd, (struct sockaddr *)&sa, sizeof(sa));

	umask(old);
	if (rc != 0 || chmod(path, 0660) != 0 || listen(d->listen_fd, SOMAXCONN) != 0) {
		vyre_log("cannot listen on %s: %s", path, strerror(errno));
		if (rc == 0)
			unlink(path);
		close(d->listen_fd);
		d->listen_fd = -1;
		return -1;
	}
	vyre_log("listening on %s", path);
	return 0;
}

void vyre_server_unlisten(struct vyre_daemon *d)
{
	if (d->listen_fd < 0)
		return;
	if (d->listen_link) {
		/* a GPU worker's channel: it tells the supervisor of clients closed till the end */
		d->listen_fd = -1;
		return;
	}
	if (!d->listen_passed)
		unlink(d->cfg.socket_path);
	close(d->listen_fd);
	d->listen_fd = -1;
}

static int peer_allowed(const struct vyre_daemon *d, const struct vyre_conn *c)
{
	for (uint32_t i = 0; i < d->cfg.n_allow_uid; i++)
		if (d->cfg.allow_uid[i] == c->uid)
			return 1;
	for (uint32_t i = 0; i < d->cfg.n_allow_gid; i++) {
		if (d->cfg.allow_gid[i] == c->gid)
			return 1;
		for (uint32_t g = 0; g < c->n_groups; g++)
			if (d->cfg.allow_gid[i] == c->groups[g])
				return 1;
	}
	return 0;
}

static int read_credentials(struct vyre_conn *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(c->sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return -1;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->gid = cred.gid;
	len = sizeof(c->groups);
	/* Supplementary groups; a peer in more than we keep is judged on its primary gid. */
	c->n_groups = 0;
	if (getsockopt(c->sock, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len) == 0)
		c->n_groups = len / sizeof(gid_t);
	return 0;
}

void vyre_server_accepted(struct vyre_daemon *d, int fd, uint32_t link_route, uint32_t link_id)
{
	struct vyre_conn *c = NULL;

	for (uint32_t s = 0; s < d->n_conn_slots && !c; s++)
		if (d->conns[s].state == VYRE_CONN_FREE)
			c = &d->conns[s];
	if (!c) {
		/* Every slot holds a client or a handshake: refuse outright. */
		struct vyre_msg m = {.type = VYRE_MSG_ERROR, .u.error = VYRE_E_NOMEM};

		vyre_msg_send(fd, &m, NULL, 0);
		close(fd);
		vyre_link_gone(link_route, link_id);
		return;
	}
	c->sock = fd;
	c->link_route = link_route;
	/* a GPU worker's clients are numbered by the supervisor, across the workers */
	c->id = link_id ? link_id : ++d->next_client_id;
	c->state = VYRE_CONN_HANDSHAKE;
	c->accepted_ns = vyre_now_ns();
	if (read_credentials(c) != 0) {
		vyre_log("client %u: SO_PEERCRED failed: %s", c->id, strerror(errno));
		vyre_conn_close(d, c, VYRE_E_PERM);
		return;
	}
	c->allowed = peer_allowed(d, c);
	vyre_conn_arm_poll(d, c);
	vyre_server_arm_tick(d);
}

void vyre_server_arm_accept(struct vyre_daemon *d)
{
	struct io_uring_sqe *sqe;

	if (d->accept_armed || d->listen_fd < 0)
		return;
	sqe = vyre_uring_sqe(&d->ring);
	if (d->listen_link) {
		/* a GPU worker is handed its connections by the supervisor */
		vyre_link_rx_prepare(&d->link_rx);
		io_uring_prep_recvmsg(sqe, d->listen_fd, &d->link_rx.hdr, MSG_CMSG_CLOEXEC);
	} else {
		io_uring_prep_accept(sqe, d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	}
	io_uring_sqe_set_data64(sqe, vyre_io_tag(VYRE_IO_ACCEPT, 0));
	d->accept_armed = 1;
}

/* A GPU worker's channel gave @res bytes: a connection, or the supervisor's end. */
static void on_link(struct vyre_daemon *d, int res)
{
	uint32_t route = 0, id = 0;
	const int fd = res > 0 ? vyre_link_rx_take(&d->link_rx, res, &route, &id) : -1;

	d->accept_armed = 0;
	if (res == 0) {
		vyre_log("the supervisor closed its channel: stopping");
		vyre_loops_stop(d);
		return;
	}
	if (fd >= 0 && d->stopping) {
		close(fd);
		vyre_link_gone(route, id);
	} else if (fd >= 0) {
		vyre_server_accepted(d, fd, route, id);
	} else if (res > 0) {
		vyre_log("the supervisor's channel: a message that is no connection");
	} else if (res != -EAGAIN && res != -EINTR && res != -ECANCELED) {
		vyre_log("the supervisor's channel: %s", strerror(-res));
	}
	if (!d->stopping)
		vyre_server_arm_accept(d);
}

void vyre_server_on_accept(struct vyre_daemon *d, int res)
{
	if (d->listen_link) {
		on_link(d, res);
		return;
	}
	d->accept_armed = 0;
	if (res >= 0 && d->stopping)
		close(res);
	else if (res >= 0)
		vyre_server_accepted(d, res, 0, 0);
	else if (res != -EAGAIN && res != -EINTR && res != -ECANCELED && res != -ECONNABORTED)
		vyre_log("accept: %s", strerror(-res));
	if (!d->stopping)
		vyre_server_arm_accept(d);
}

/* The tick's period: a quarter of the HELLO timeout, at least 10 ms. */
void vyre_server_arm_tick(struct vyre_daemon *d)
{
	const uint64_t ns = d->cfg.hello_timeout_ms * 250000ull;

	if (d->tick_armed || d->stopping)
		return;
	d->tick.tv_sec = (long long)(ns / 1000000000u);
	d->tick.tv_nsec = ns < 10000000u ? 10000000 : (long long)(ns % 1000000000u);
	vyre_uring_timeout(&d->ring, &d->tick, VYRE_IO_TICK);
	d->tick_armed = 1;
}

/*
 * Close connections that sent no HELLO within --hello-timeout-ms: they hold
 * a slot each (max clients + 16), and a peer that never speaks must not keep
 * real clients out. Ticks go on while handshakes are pending.
 */
void vyre_server_on_tick(struct vyre_daemon *d)
{
	const uint64_t now = vyre_now_ns(), limit = d->cfg.hello_timeout_ms * 1000000ull;
	int pending = 0;

	d->tick_armed = 0;
	for (uint32_t s = 0; s < d->n_conn_slots; s++) {
		struct vyre_conn *c = &d->conns[s];

		if (c->state != VYRE_CONN_HANDSHAKE)
			continue;
		if (now - c->accepted_ns < limit) {
			pending = 1;
			continue;
		}
		vyre_log("client %u (pid %d uid %u): no HELLO within %u ms: closing", c->id,
			 (int)c->pid, (unsigned)c->uid, d->cfg.hello_timeout_ms);
		vyre_conn_close(d, c, VYRE_E_TIMEDOUT);
	}
	if (pending)
		vyre_server_arm_tick(d);
}
