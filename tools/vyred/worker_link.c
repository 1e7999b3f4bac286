/* SPDX-License-Identifier: MIT */
/* A GPU worker's end of its channel to the supervisor (worker_link.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "worker_link.h"

/* the worker's one channel, set before any loop thread starts and never changed */
static int link_fd = -1;

void vyre_link_init(int fd)
{
	link_fd = fd;
}

int vyre_link_active(void)
{
	return link_fd >= 0;
}

static void send_msg(const struct vyre_link_msg *m)
{
	if (link_fd < 0)
		return;
	/* a full channel (the supervisor stopped reading) must not stall a loop */
	if (send(link_fd, m, sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(*m))
		vyre_log("telling the supervisor (event %u): %s", m->type, strerror(errno));
}

static void send_event(uint32_t type, uint32_t route)
{
	struct vyre_link_msg m = {.type = type, .route = route};

	send_msg(&m);
}

void vyre_link_ready(void)
{
	send_event(VYRE_LINK_READY, 0);
}

void vyre_link_lost(void)
{
	send_event(VYRE_LINK_LOST, 0);
}

void vyre_link_gone(uint32_t route, uint32_t client_id)
{
	const struct vyre_link_msg m = {
	    .type = VYRE_LINK_GONE, .route = route, .client_id = client_id};

	send_msg(&m);
}

void vyre_link_region(uint32_t client_id, uint64_t dev, uint64_t ino)
{
	const struct vyre_link_msg m = {
	    .type = VYRE_LINK_REGION, .client_id = client_id, .dev = dev, .ino = ino};

	send_msg(&m);
}

void vyre_link_rx_prepare(struct vyre_link_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
	rx->iov.iov_base = &rx->msg;
	rx->iov.iov_len = sizeof(rx->msg);
	rx->hdr.msg_iov = &rx->iov;
	rx->hdr.msg_iovlen = 1;
	rx->hdr.msg_control = rx->ctl.buf;
	rx->hdr.msg_controllen = sizeof(rx->ctl.buf);
}

int vyre_link_rx_take(struct vyre_link_rx *rx, int bytes, uint32_t *route, uint32_t *client_id)
{
	int fd = -1;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&rx->hdr); cm; cm = CMSG_NXTHDR(&rx->hdr, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		const size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < n; i++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = got;
			else
				close(got);
		}
	}
	if (fd >= 0 && (bytes != (int)sizeof(rx->msg) || rx->msg.type != VYRE_LINK_CONN ||
			(rx->hdr.msg_flags & MSG_CTRUNC))) {
		close(fd);
		fd = -1;
	}
	*route = rx->msg.route;
	*client_id = rx->msg.client_id;
	return fd;
}
