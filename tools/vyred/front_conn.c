/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's side of a new connection (front_conn.h): its first
 * message read without taking it, a refusal in a worker's words, and the
 * socket passed down a worker's channel.
 */
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../ring/proto.h"
#include "front_conn.h"
#include "worker_link.h"

/*
 * Close the descriptors a recvmsg into @mh installed; a RESUME's second one
 * is its region memfd, whose identity goes to @region (st_ino 0 when none).
 */
static void close_passed(struct msghdr *mh, struct stat *region)
{
	int at = 0;

	region->st_ino = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++, at++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (at == 1 && fstat(got, region) != 0)
				region->st_ino = 0;
			close(got);
		}
	}
}

ssize_t vyre_front_first_message(int fd, uint8_t *buf, size_t len, int flags, struct stat *region)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(VYRE_MSG_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	const ssize_t n = recvmsg(fd, &mh, flags | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	/* a peek installs the descriptors too; the worker receives its own */
	region->st_ino = 0;
	if (n >= 0)
		close_passed(&mh, region);
	return n;
}

void vyre_front_refuse(int fd, uint64_t hello_id, int rc)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg m;
	struct stat unused;

	vyre_front_first_message(fd, buf, sizeof(buf), 0, &unused);
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO_REPLY;
	m.id = hello_id;
	m.u.hello_reply.status = rc;
	vyre_msg_send(fd, &m, NULL, 0);
	close(fd);
}

int vyre_front_hand_over(int chan, int fd, uint32_t route, uint32_t client_id)
{
	struct vyre_link_msg m = {.type = VYRE_LINK_CONN, .route = route, .client_id = client_id};
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	memset(&ctl, 0, sizeof(ctl));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(chan, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -1;
}
