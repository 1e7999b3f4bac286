/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the control protocol parser (ring/proto.c).
 *
 * The input is one datagram. vyre_msg_decode must accept exactly the
 * canonical encodings: whatever it accepts re-encodes to the same bytes. The
 * datagram is also sent over a real SOCK_SEQPACKET pair with up to three
 * descriptors attached and read back with vyre_msg_recv, which must agree
 * with the decoder, report oversized datagrams as VYRE_E_PROTO, keep at most
 * the descriptors asked for and never leak one.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../ring/proto.h"
#include "fuzz.h"

#define MAX_DATAGRAM 4096u
#define KEEP_FDS     2u

static int pair[2] = {-1, -1};
static int devnull = -1;

static int setup(void)
{
	if (pair[0] >= 0)
		return 0;
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
		return -1;
	return 0;
}

/* The lowest free descriptor number: a leaked descriptor changes it. */
static int lowest_free_fd(void)
{
	int fd = dup(devnull);

	if (fd >= 0)
		close(fd);
	return fd;
}

static void check_decoder(const uint8_t *data, size_t size, int rc, const struct vyre_msg *m)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];

	if (rc != 0) {
		FUZZ_CHECK(rc == VYRE_E_PROTO);
		return;
	}
	FUZZ_CHECK(size == vyre_msg_size(m->type));
	int len = vyre_msg_encode(m, buf, sizeof(buf));

	FUZZ_CHECK(len == (int)size);
	/* encode writes VYRE_ABI_VERSION for a version of 0 */
	if (m->abi_version == 0)
		memcpy(buf + 4, data + 4, 4);
	FUZZ_CHECK(memcmp(buf, data, size) == 0);
	if (m->type == VYRE_MSG_HELLO)
		FUZZ_CHECK(strlen(m->u.hello.domain) <= VYRE_DOMAIN_NAME_MAX);
}

static void check_socket(const uint8_t *data, size_t size, int decoded)
{
	int fds[3], got_fds[KEEP_FDS];
	unsigned nfds = data[size - 1] % 4u, kept = 99;
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * 3)];
	} ctl;
	struct iovec iov = {.iov_base = (void *)data, .iov_len = size};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct vyre_msg m;
	int low = lowest_free_fd();

	for (unsigned i = 0; i < nfds; i++)
		fds[i] = dup(devnull);
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.space;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	FUZZ_CHECK(sendmsg(pair[0], &mh, MSG_DONTWAIT) == (ssize_t)size);
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);

	int rc = vyre_msg_recv(pair[1], &m, got_fds, KEEP_FDS, &kept, MSG_DONTWAIT);

	if (size > VYRE_MSG_MAX_SIZE)
		FUZZ_CHECK(rc == VYRE_E_PROTO);
	else
		FUZZ_CHECK(rc == decoded);
	if (rc == 0)
		FUZZ_CHECK(kept == (nfds < KEEP_FDS ? nfds : KEEP_FDS));
	else
		FUZZ_CHECK(kept == 0);
	for (unsigned i = 0; i < kept; i++)
		close(got_fds[i]);
	FUZZ_CHECK(lowest_free_fd() == low);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct vyre_msg m;

	if (size == 0 || size > MAX_DATAGRAM || setup() != 0)
		return 0;
	int rc = vyre_msg_decode(data, size, &m);

	check_decoder(data, size, rc, &m);
	check_socket(data, size, rc);
	return 0;
}
