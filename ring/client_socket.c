/* SPDX-License-Identifier: MIT */
/*
 * libvyre: the control socket - connecting to vyred's, why vyred refused a
 * connection, and whether it hung up. Used by connecting and resuming alike.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"

/* A daemon that stops answering control requests fails them instead of hanging us. */
#define CONTROL_TIMEOUT_S 30

int vyre_client_connect_socket(const char *path, int *out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = CONTROL_TIMEOUT_S};

	if (strlen(path) >= sizeof(sa.sun_path))
		return VYRE_E_INVAL;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return VYRE_E_NOMEM;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		return (e == EACCES || e == EPERM) ? VYRE_E_PERM : VYRE_E_DISCONNECTED;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	*out = fd;
	return 0;
}

/*
 * vyred may refuse a connection (every slot taken) with an ERROR and close it
 * at once: our HELLO then fails to send, or the reply read fails with the
 * reset the close caused, but the ERROR is still queued and says why.
 */
int vyre_client_refusal(int sock)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		struct vyre_msg m;
		int fds[VYRE_MSG_MAX_FDS];
		unsigned nfds = 0;
		int rc = vyre_msg_recv(sock, &m, fds, VYRE_MSG_MAX_FDS, &nfds, MSG_DONTWAIT);

		for (unsigned i = 0; i < nfds; i++)
			close(fds[i]);
		if (rc == 0 && m.type == VYRE_MSG_ERROR && m.u.error < 0)
			return m.u.error;
		if (rc != VYRE_E_DISCONNECTED)
			break;
	}
	return VYRE_E_DISCONNECTED;
}

int vyre_client_gone(struct vyre_client *c)
{
	struct pollfd p = {.fd = c->sock, .events = POLLIN | POLLRDHUP};

	if (vyre_client_closed(c))
		return 1;
	/* vyred never sends unsolicited messages, so readable means hung up. */
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}
