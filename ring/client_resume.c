/* SPDX-License-Identifier: MIT */
/*
 * libvyre: resuming a connection with the next vyred (docs/design.md
 * section 3). The region and heap stay mapped where they are; only the
 * control socket, vyred's SQ eventfd and the domain's ledger are new, and
 * each takes the descriptor number of the old one (dup3), so a producer
 * thread that rings the doorbell meanwhile never writes a closed number.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#define RETRY_NS 10000000l

static int same_file(int a, int b)
{
	struct stat x, y;

	return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

static int send_resume(struct vyre_client *c, int sock)
{
	struct vyre_msg m;
	int fds[4] = {c->event_fd, c->region.fd, c->heap_fd, c->ledger_fd};

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO;
	m.id = ++c->next_id;
	m.u.hello.sq_entries = c->region.sq_entries;
	m.u.hello.cq_entries = c->region.cq_entries;
	m.u.hello.heap_bytes = c->heap_bytes;
	m.u.hello.flags = vyre_client_hello_flags(c) | VYRE_HELLO_RESUME;
	strcpy(m.u.hello.domain, c->domain);
	int rc = vyre_msg_send(sock, &m, fds, 4);

	return rc == VYRE_E_AGAIN ? VYRE_E_DISCONNECTED : rc;
}

/* The reply to a RESUME: the same region and heap, a new SQ eventfd and ledger. */
static int check_reply(const struct vyre_client *c, const struct vyre_msg *m, const int *fds,
		       unsigned nfds)
{
	const struct vyre_msg_hello_reply *r = &m->u.hello_reply;

	if (m->type == VYRE_MSG_ERROR && m->u.error < 0)
		return m->u.error;
	if (m->type != VYRE_MSG_HELLO_REPLY || m->abi_version != VYRE_ABI_VERSION)
		return VYRE_E_PROTO;
	if (r->status != 0)
		return r->status;
	if (nfds != 4 || !same_file(fds[0], c->region.fd) || !same_file(fds[1], c->heap_fd) ||
	    r->sq_entries != c->region.sq_entries || r->cq_entries != c->region.cq_entries ||
	    r->heap_bytes != c->heap_bytes || r->restarted > c->region.cq_entries)
		return VYRE_E_PROTO;
	return 0;
}

/* One attempt: VYRE_E_DISCONNECTED when no vyred took it (try again later). */
static int resume_once(struct vyre_client *c, uint32_t *restarted)
{
	struct vyre_msg m;
	int fds[VYRE_MSG_MAX_FDS], sock;
	unsigned nfds = 0;
	int rc = vyre_client_connect_socket(c->socket_path, &sock);

	if (rc != 0)
		return rc == VYRE_E_PERM ? rc : VYRE_E_DISCONNECTED;
	rc = send_resume(c, sock);
	if (rc == 0)
		rc = vyre_msg_recv(sock, &m, fds, VYRE_MSG_MAX_FDS, &nfds, 0);
	if (rc == VYRE_E_DISCONNECTED)
		rc = vyre_client_refusal(sock);
	if (rc == 0)
		rc = check_reply(c, &m, fds, nfds);
	if (rc == 0 && dup3(sock, c->sock, O_CLOEXEC) < 0)
		rc = VYRE_E_NOMEM;
	if (rc == 0 && (dup3(fds[2], c->sq_wake_fd, O_CLOEXEC) < 0 ||
			dup3(fds[3], c->ledger_fd, O_CLOEXEC) < 0)) {
		/* vyred took us, we cannot use it: it must drop us, or the region stays live */
		shutdown(c->sock, SHUT_RDWR);
		rc = VYRE_E_NOMEM;
	}
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	close(sock);
	if (rc == 0) {
		c->client_id = m.u.hello_reply.client_id;
		c->domain_id = m.u.hello_reply.domain_id;
		*restarted = m.u.hello_reply.restarted;
	}
	return rc;
}

int vyre_reconnect(struct vyre_client *c, int64_t timeout_ns)
{
	uint64_t until;
	uint32_t restarted = 0;
	int watched, rc;

	if (!c || !(c->flags & VYRE_CONNECT_RESUMABLE) || c->heap_fd < 0 || c->ledger_fd < 0)
		return VYRE_E_INVAL;
	if (!vyre_client_gone(c))
		return 0;
	until = timeout_ns < 0 ? UINT64_MAX : vyre_now_ns() + (uint64_t)timeout_ns;
	/* the watcher polls the socket about to be replaced: it stops first */
	watched = c->watch_stop_fd >= 0;
	vyre_client_watch_stop(c);
	for (;;) {
		rc = resume_once(c, &restarted);
		/*
		 * DEVICE: the domain is still routed to a GPU that was lost, until its
		 * last client there is gone; then it is adopted on another (8.5).
		 * AGAIN: the vyred that dropped us still runs our last batch.
		 */
		if ((rc != VYRE_E_DISCONNECTED && rc != VYRE_E_DEVICE && rc != VYRE_E_AGAIN) ||
		    vyre_now_ns() >= until)
			break;
		struct timespec pause = {.tv_nsec = RETRY_NS};

		nanosleep(&pause, NULL);
	}
	if (rc == 0) {
		__atomic_store_n(&c->hung_up, 0, __ATOMIC_RELEASE);
		c->empty_reaps = 0;
	}
	/* started again even on failure: the old socket is still dead, so it reports at once */
	if (watched && vyre_client_watch_start(c) != 0 && rc == 0)
		rc = VYRE_E_NOMEM;
	if (rc == VYRE_E_DISCONNECTED || rc == VYRE_E_AGAIN)
		return VYRE_E_TIMEDOUT;
	return rc == 0 ? (int)restarted : rc;
}

int vyre_client_reconnect_auto(struct vyre_client *c, int64_t timeout_ns)
{
	if (!(c->flags & VYRE_CONNECT_RECONNECT))
		return 0;
	return vyre_reconnect(c, timeout_ns) >= 0 && !vyre_client_closed(c);
}
