/* SPDX-License-Identifier: MIT */
/*
 * The listening socket (SOCK_SEQPACKET, mode 0660, parent directory created,
 * or the one systemd passed: sd.h) and what happens to an accepted
 * connection: peer credentials are checked against the allow list; a refused
 * peer is told so in reply to its HELLO.
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

#include "daemon.h"
#include "sd.h"

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
	vyre_loop_arm_poll(d, c);
	vyre_loop_arm_tick(d);
}
