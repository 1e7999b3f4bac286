/* SPDX-License-Identifier: MIT */
/*
 * test_hostile_control - malformed, truncated, mistimed and random control
 * messages sent to vyred over raw sockets.
 *
 * Fixed cases first, each on its own connection, with the answer the
 * protocol promises (ring/proto.h): a malformed message or one out of turn
 * gets an ERROR carrying VYRE_E_PROTO and a hang-up; a well-formed request
 * vyred refuses gets its reply with the error and the connection stays;
 * descriptors sent along are never kept. Then random traffic: thousands of
 * datagrams (mutated valid messages, random bytes of random length, random
 * descriptors attached) on hundreds of connections; every reply must decode,
 * be of a type the request allows, and an ERROR must be followed by the
 * hang-up. Honest producers run all along and must see no difference;
 * vyred's descriptors and mappings must return to the baseline.
 *
 * VYRE_TEST_SCALE=N runs N times as many random connections (default 300).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "../ring/proto.h"
#include "test_crash_honest.h"
#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define RANDOM_CONNS 300u
#define MAX_SENDS    24u
#define HONEST	     2u
#define REPLY_WAIT_S 10

struct conn {
	int fd;
	int active; /* a HELLO was accepted */
	uint32_t id;
};

static const char *sock_path;
static uint64_t rng;
static uint64_t datagrams, bytes_sent, errors_seen, refusals_seen;

static int raw_connect(struct conn *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = REPLY_WAIT_S};

	memset(c, 0, sizeof(*c));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		printf("connect: %m\n");
		return -1;
	}
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return 0;
}

static int send_raw(struct conn *c, const void *buf, size_t len, const int *fds, unsigned nfds)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * 8)];
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.space;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *h = CMSG_FIRSTHDR(&mh);

		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(h), fds, sizeof(int) * nfds);
	}
	datagrams++;
	bytes_sent += len;
	return sendmsg(c->fd, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static int send_msg(struct conn *c, struct vyre_msg *m, const int *fds, unsigned nfds)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];

	m->id = ++c->id;
	int len = vyre_msg_encode(m, buf, sizeof(buf));

	return len < 0 ? -1 : send_raw(c, buf, (size_t)len, fds, nfds);
}

/* Receives one reply; closes any descriptors that came with it. */
static int recv_reply(struct conn *c, struct vyre_msg *m, unsigned *nfds_out)
{
	int fds[VYRE_MSG_MAX_FDS];
	unsigned nfds = 0;
	int rc = vyre_msg_recv(c->fd, m, fds, VYRE_MSG_MAX_FDS, &nfds, 0);

	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	if (nfds_out)
		*nfds_out = nfds;
	return rc;
}

static int expect_hangup(struct conn *c, const char *what)
{
	struct vyre_msg m;
	int rc = recv_reply(c, &m, NULL);

	if (rc != VYRE_E_DISCONNECTED) {
		printf("%s: expected a hang-up, got %s (type %u)\n", what, vyre_strerror(rc),
		       rc == 0 ? (unsigned)m.type : 0u);
		return -1;
	}
	return 0;
}

static int expect_error(struct conn *c, int status, const char *what)
{
	struct vyre_msg m;
	int rc = recv_reply(c, &m, NULL);

	if (rc != 0 || m.type != VYRE_MSG_ERROR || m.u.error != status) {
		printf("%s: expected ERROR %s, got %s type %u status %d\n", what,
		       vyre_strerror(status), vyre_strerror(rc), (unsigned)m.type, m.u.error);
		return -1;
	}
	errors_seen++;
	return expect_hangup(c, what);
}

static int expect_hello(struct conn *c, int status, const char *what)
{
	struct vyre_msg m;
	unsigned nfds;
	int rc = recv_reply(c, &m, &nfds);

	if (rc != 0 || m.type != VYRE_MSG_HELLO_REPLY || m.u.hello_reply.status != status ||
	    nfds != (status == 0 ? 3u : 0u)) {
		printf("%s: expected HELLO_REPLY %s, got %s type %u status %d with %u fds\n", what,
		       vyre_strerror(status), vyre_strerror(rc), m.type, m.u.hello_reply.status,
		       nfds);
		return -1;
	}
	if (status == 0) {
		c->active = 1;
		return 0;
	}
	refusals_seen++;
	return expect_hangup(c, what);
}

static int expect_buffer(struct conn *c, int status, const char *what)
{
	struct vyre_msg m;
	int rc = recv_reply(c, &m, NULL);

	if (rc != 0 || m.type != VYRE_MSG_BUFFER_REPLY || m.u.buffer_reply.status != status) {
		printf("%s: expected BUFFER_REPLY %s, got %s type %u status %d\n", what,
		       vyre_strerror(status), vyre_strerror(rc), m.type, m.u.buffer_reply.status);
		return -1;
	}
	refusals_seen += status != 0;
	return 0;
}

static void hello_msg(struct vyre_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = VYRE_MSG_HELLO;
	m->u.hello.sq_entries = 64;
	m->u.hello.cq_entries = 64;
	m->u.hello.heap_bytes = 1 << 20;
}

static void buffer_msg(struct vyre_msg *m, uint16_t type, uint32_t handle, uint32_t bytes)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->u.buffer.handle = handle;
	m->u.buffer.bytes = bytes;
}

/* A HELLO with a fresh eventfd, and its successful reply. */
static int handshake(struct conn *c, const char *what)
{
	struct vyre_msg m;
	int efd = eventfd(0, EFD_CLOEXEC);
	int rc;

	hello_msg(&m);
	rc = efd < 0 ? -1 : send_msg(c, &m, &efd, 1);
	if (efd >= 0)
		close(efd);
	return rc == 0 ? expect_hello(c, 0, what) : -1;
}

/* ---- the fixed cases; each returns 0 when vyred answered as promised ---- */

static int case_garbage_first(struct conn *c)
{
	static const char junk[] = "GET / HTTP/1.1\r\n\r\n";

	if (send_raw(c, junk, sizeof(junk) - 1, NULL, 0) != 0)
		return -1;
	return expect_error(c, VYRE_E_PROTO, "garbage");
}

static int case_truncated_hello(struct conn *c)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg m;

	hello_msg(&m);
	vyre_msg_encode(&m, buf, sizeof(buf));
	if (send_raw(c, buf, 20, NULL, 0) != 0)
		return -1;
	return expect_error(c, VYRE_E_PROTO, "truncated hello");
}

static int case_bad_length_field(struct conn *c)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg m;

	hello_msg(&m);
	int len = vyre_msg_encode(&m, buf, sizeof(buf));

	buf[10] ^= 4; /* the header's length no longer matches the type */
	if (send_raw(c, buf, (size_t)len, NULL, 0) != 0)
		return -1;
	return expect_error(c, VYRE_E_PROTO, "bad length");
}

static int case_wrong_version(struct conn *c)
{
	struct vyre_msg m;
	int efd = eventfd(0, EFD_CLOEXEC);

	hello_msg(&m);
	m.abi_version = VYRE_ABI_VERSION + 1;
	int rc = send_msg(c, &m, &efd, 1);

	close(efd);
	return rc ? rc : expect_hello(c, VYRE_E_PROTO, "ABI version mismatch");
}

static int case_hello_without_fd(struct conn *c)
{
	struct vyre_msg m;

	hello_msg(&m);
	if (send_msg(c, &m, NULL, 0) != 0)
		return -1;
	return expect_hello(c, VYRE_E_INVAL, "hello without an eventfd");
}

static int case_hello_with_memfd(struct conn *c)
{
	struct vyre_msg m;
	int fd = memfd_create("not-an-eventfd", MFD_CLOEXEC);

	hello_msg(&m);
	int rc = send_msg(c, &m, &fd, 1);

	close(fd);
	return rc ? rc : expect_hello(c, VYRE_E_INVAL, "hello with a memfd for the eventfd");
}

static int case_hello_flags(struct conn *c)
{
	struct vyre_msg m;
	int efd = eventfd(0, EFD_CLOEXEC);

	hello_msg(&m);
	m.u.hello.flags = 1u << 31; /* outside VYRE_HELLO_VALID */
	int rc = send_msg(c, &m, &efd, 1);

	close(efd);
	return rc ? rc : expect_hello(c, VYRE_E_INVAL, "hello with unknown flags");
}

static int case_hello_many_fds(struct conn *c)
{
	struct vyre_msg m;
	int fds[8];

	hello_msg(&m);
	fds[0] = eventfd(0, EFD_CLOEXEC);
	for (int i = 1; i < 8; i++)
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int rc = send_msg(c, &m, fds, 8);

	for (int i = 0; i < 8; i++)
		close(fds[i]);
	/* extra descriptors are dropped; the first one is the eventfd, so this is a client */
	return rc ? rc : expect_hello(c, 0, "hello with 7 extra descriptors");
}

static int case_alloc_before_hello(struct conn *c)
{
	struct vyre_msg m;

	buffer_msg(&m, VYRE_MSG_ALLOC, 0, 64);
	if (send_msg(c, &m, NULL, 0) != 0)
		return -1;
	return expect_error(c, VYRE_E_PROTO, "alloc before hello");
}

static int case_second_hello(struct conn *c)
{
	struct vyre_msg m;
	int efd = eventfd(0, EFD_CLOEXEC);

	if (handshake(c, "first hello") != 0)
		return -1;
	hello_msg(&m);
	int rc = send_msg(c, &m, &efd, 1);

	close(efd);
	return rc ? rc : expect_error(c, VYRE_E_PROTO, "second hello");
}

static int case_reply_types_from_client(struct conn *c)
{
	struct vyre_msg m;

	if (handshake(c, "hello") != 0)
		return -1;
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_BUFFER_REPLY;
	if (send_msg(c, &m, NULL, 0) != 0)
		return -1;
	return expect_error(c, VYRE_E_PROTO, "a reply type sent to vyred");
}

/* One buffer request and the BUFFER_REPLY status it must get. */
static int request(struct conn *c, uint16_t type, uint32_t handle, uint32_t bytes, uint32_t flags,
		   const int *fds, unsigned nfds, int status, const char *what)
{
	struct vyre_msg m;

	buffer_msg(&m, type, handle, bytes);
	m.u.buffer.flags = flags;
	if (send_msg(c, &m, fds, nfds) != 0)
		return -1;
	return expect_buffer(c, status, what);
}

static int case_refused_requests(struct conn *c)
{
	if (handshake(c, "hello") != 0 ||
	    request(c, VYRE_MSG_ALLOC, 0, 6, 0, NULL, 0, VYRE_E_INVAL, "odd alloc") != 0 ||
	    request(c, VYRE_MSG_ALLOC, 0, 0xfffffffcu, 0, NULL, 0, VYRE_E_NOMEM, "huge alloc") ||
	    request(c, VYRE_MSG_ALLOC, 0, 64, 8, NULL, 0, VYRE_E_INVAL, "alloc flags") != 0 ||
	    request(c, VYRE_MSG_FREE, 0x12345, 0, 0, NULL, 0, VYRE_E_INVAL, "free unknown") ||
	    request(c, VYRE_MSG_LOOKUP, 0, 0, 0, NULL, 0, VYRE_E_INVAL, "lookup 0") != 0)
		return -1;
	return request(c, VYRE_MSG_ALLOC, 0, 64, 0, NULL, 0, 0, "a good alloc after them");
}

static int case_descriptors_on_requests(struct conn *c)
{
	int fds[6], rc;

	if (handshake(c, "hello") != 0)
		return -1;
	for (int i = 0; i < 6; i++)
		fds[i] = eventfd(0, EFD_CLOEXEC);
	rc = request(c, VYRE_MSG_ALLOC, 0, 64, 0, fds, 6, 0, "alloc carrying descriptors");
	for (int i = 0; i < 6; i++)
		close(fds[i]);
	return rc;
}

static int case_oversized(struct conn *c)
{
	uint8_t big[1000];

	memset(big, 0x41, sizeof(big));
	if (handshake(c, "hello") != 0 || send_raw(c, big, sizeof(big), NULL, 0) != 0)
		return -1;
	return expect_error(c, VYRE_E_PROTO, "oversized datagram");
}

static int case_empty_datagram(struct conn *c)
{
	/* a zero-length datagram reads like a hang-up: vyred closes without a reply */
	if (handshake(c, "hello") != 0 || send_raw(c, "", 0, NULL, 0) != 0)
		return -1;
	return expect_hangup(c, "empty datagram");
}

static int case_unread_replies(struct conn *c)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg m;
	uint64_t sent = 0, until = rel_now_ns() + REPLY_WAIT_S * 1000000000ull;
	int dropped = 0;

	if (handshake(c, "hello") != 0)
		return -1;
	buffer_msg(&m, VYRE_MSG_LOOKUP, 1, 0);
	int len = vyre_msg_encode(&m, buf, sizeof(buf));

	/* keep asking, never read: vyred's replies pile up in our socket until it drops us */
	while (!dropped && rel_now_ns() < until) {
		ssize_t n = send(c->fd, buf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n == len)
			sent++;
		else if (n < 0 && errno == EAGAIN)
			rel_sleep_ns(100000);
		else
			dropped = 1;
	}
	datagrams += sent;
	bytes_sent += sent * (uint64_t)len;
	if (!dropped) {
		printf("a client that never reads: still connected after %" PRIu64 " requests\n",
		       sent);
		return -1;
	}
	for (;;) {
		int rc = recv_reply(c, &m, NULL);

		if (rc == VYRE_E_DISCONNECTED)
			return 0;
		if (rc != 0) {
			printf("a client that never reads: %s after %" PRIu64 " requests\n",
			       vyre_strerror(rc), sent);
			return -1;
		}
	}
}

/* A named request; @patch (-1: none) flips one byte of its encoding first. */
static int send_named(struct conn *c, uint16_t type, const char *name, int patch, uint8_t value)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.id = ++c->id;
	m.u.named.bytes = 64;
	snprintf(m.u.named.name, sizeof(m.u.named.name), "%s", name);
	int len = vyre_msg_encode(&m, buf, sizeof(buf));

	if (len < 0)
		return -1;
	if (patch >= 0)
		buf[patch] = value;
	return send_raw(c, buf, (size_t)len, NULL, 0);
}

static int case_named_requests(struct conn *c)
{
	if (handshake(c, "hello") != 0 || send_named(c, VYRE_MSG_CREATE, "job.1", -1, 0) ||
	    expect_buffer(c, 0, "create job.1") || send_named(c, VYRE_MSG_CREATE, "job.1", -1, 0) ||
	    expect_buffer(c, VYRE_E_EXIST, "create job.1 again") ||
	    send_named(c, VYRE_MSG_OPEN, "job.2", -1, 0) ||
	    expect_buffer(c, VYRE_E_NOENT, "open job.2") ||
	    send_named(c, VYRE_MSG_FREE_NAME, "job.1", -1, 0) ||
	    expect_buffer(c, 0, "free job.1") || send_named(c, VYRE_MSG_FREE_NAME, "job.1", -1, 0))
		return -1;
	return expect_buffer(c, VYRE_E_NOENT, "free job.1 again");
}

/*
 * A CREATE has its name length at byte 24 of the datagram and the name at
 * 32; an OPEN or FREE_NAME has them at 16 and 24.
 */
static int case_name_bad_char(struct conn *c)
{
	if (handshake(c, "hello") != 0 || send_named(c, VYRE_MSG_CREATE, "job", 33, '/'))
		return -1;
	return expect_error(c, VYRE_E_PROTO, "a name with '/'");
}

static int case_name_leading_dot(struct conn *c)
{
	if (handshake(c, "hello") != 0 || send_named(c, VYRE_MSG_OPEN, "job", 24, '.'))
		return -1;
	return expect_error(c, VYRE_E_PROTO, "a name starting with '.'");
}

static int case_name_too_long(struct conn *c)
{
	if (handshake(c, "hello") != 0 || send_named(c, VYRE_MSG_CREATE, "job", 24, 49))
		return -1;
	return expect_error(c, VYRE_E_PROTO, "a 49-byte name");
}

static int case_name_padding(struct conn *c)
{
	if (handshake(c, "hello") != 0 || send_named(c, VYRE_MSG_FREE_NAME, "job", 30, 'x'))
		return -1;
	return expect_error(c, VYRE_E_PROTO, "bytes after the name");
}

static int case_name_empty(struct conn *c)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg m;

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_OPEN;
	m.id = ++c->id;
	strcpy(m.u.named.name, "j");
	int len = vyre_msg_encode(&m, buf, sizeof(buf));

	buf[16] = buf[24] = 0; /* length 0, no name bytes: well padded, but empty */
	if (len < 0 || handshake(c, "hello") != 0 || send_raw(c, buf, (size_t)len, NULL, 0))
		return -1;
	return expect_error(c, VYRE_E_PROTO, "an empty name");
}

static const struct fixed_case {
	const char *name;
	int (*run)(struct conn *c);
} fixed_cases[] = {
    {"garbage as the first message", case_garbage_first},
    {"truncated HELLO", case_truncated_hello},
    {"length field not matching the type", case_bad_length_field},
    {"HELLO of another ABI version", case_wrong_version},
    {"HELLO without an eventfd", case_hello_without_fd},
    {"HELLO with a memfd for the eventfd", case_hello_with_memfd},
    {"HELLO with unknown flags", case_hello_flags},
    {"HELLO with 7 extra descriptors", case_hello_many_fds},
    {"ALLOC before HELLO", case_alloc_before_hello},
    {"a second HELLO", case_second_hello},
    {"a reply type sent by the client", case_reply_types_from_client},
    {"requests vyred refuses", case_refused_requests},
    {"descriptors attached to requests", case_descriptors_on_requests},
    {"an oversized datagram", case_oversized},
    {"an empty datagram", case_empty_datagram},
    {"a client that never reads its replies", case_unread_replies},
    {"named requests vyred answers or refuses", case_named_requests},
    {"a name with a bad character", case_name_bad_char},
    {"a name starting with '.'", case_name_leading_dot},
    {"a name longer than 48 bytes", case_name_too_long},
    {"bytes after the name", case_name_padding},
    {"an empty name", case_name_empty},
};

/* ---- random traffic ---- */

static void random_datagram(uint8_t *buf, size_t *len)
{
	uint64_t r = rel_rand(&rng);
	struct vyre_msg m;

	if (r % 3 == 0) {
		*len = (size_t)((r >> 8) % 300);
		for (size_t i = 0; i < *len; i++)
			buf[i] = (uint8_t)rel_rand(&rng);
		return;
	}
	static const uint16_t types[] = {VYRE_MSG_HELLO,     VYRE_MSG_ALLOC,	 VYRE_MSG_FREE,
					 VYRE_MSG_LOOKUP,    VYRE_MSG_ERROR,	 VYRE_MSG_CREATE,
					 VYRE_MSG_OPEN,	     VYRE_MSG_FREE_NAME, VYRE_MSG_LIST,
					 VYRE_MSG_OP_LOOKUP, VYRE_MSG_OP_LIST};
	const uint16_t type = types[(r >> 8) % (sizeof(types) / sizeof(types[0]))];

	buffer_msg(&m, type, (uint32_t)rel_rand(&rng) % 64, (uint32_t)rel_rand(&rng) % 4096);
	if (m.type == VYRE_MSG_HELLO)
		hello_msg(&m);
	if (m.type >= VYRE_MSG_CREATE) {
		/* a few names, so that creates, opens and frees meet each other */
		memset(&m.u, 0, sizeof(m.u));
		m.u.named.bytes = (uint32_t)(r >> 24) % 64 * 4;
		snprintf(m.u.named.name, sizeof(m.u.named.name), "n%u", (unsigned)(r >> 32) % 8);
		if (m.type == VYRE_MSG_LIST)
			m.u.list_cursor = (uint32_t)(r >> 40) % 4;
	}
	/* op lookup (design.md 6.7): built-in names, unknown ones, cursors in and past the list */
	if (m.type == VYRE_MSG_OP_LOOKUP)
		snprintf(m.u.op_name, sizeof(m.u.op_name), "%s",
			 (r >> 32) % 2 ? "dfa_scan" : "no_such_op");
	if (m.type == VYRE_MSG_OP_LIST)
		m.u.list_cursor = (uint32_t)(r >> 40) % (VYRE_OP_COUNT + 4);
	int n = vyre_msg_encode(&m, buf, VYRE_MSG_MAX_SIZE);

	*len = n > 0 ? (size_t)n : 0;
	/* a few bit flips, or none: vyred must take the valid ones too */
	for (uint64_t k = (r >> 16) % 4; k > 0 && *len; k--) {
		uint64_t f = rel_rand(&rng);

		buf[f % *len] ^= (uint8_t)(1u << ((f >> 32) % 8));
	}
}

static unsigned random_fds(int *fds)
{
	uint64_t r = rel_rand(&rng);
	unsigned n = (unsigned)(r % 5 == 0 ? 1 + (r >> 8) % 4 : 0);

	for (unsigned i = 0; i < n; i++)
		fds[i] = (r >> (16 + i)) & 1 ? eventfd(0, EFD_CLOEXEC)
					     : open("/dev/null", O_RDONLY | O_CLOEXEC);
	return n;
}

/* Reads what vyred answered; returns 1 when it hung up, 0 when the connection lives, -1 on a broken
 * promise. */
static int read_answers(struct conn *c)
{
	for (;;) {
		struct vyre_msg m;
		int fds[VYRE_MSG_MAX_FDS];
		unsigned nfds = 0;
		int rc = vyre_msg_recv(c->fd, &m, fds, VYRE_MSG_MAX_FDS, &nfds, MSG_DONTWAIT);

		for (unsigned i = 0; i < nfds; i++)
			close(fds[i]);
		if (rc == VYRE_E_AGAIN)
			return 0;
		if (rc == VYRE_E_DISCONNECTED)
			return 1;
		if (rc != 0) {
			printf("random traffic: vyred sent a malformed reply (%s)\n",
			       vyre_strerror(rc));
			return -1;
		}
		if (m.type == VYRE_MSG_ERROR) {
			errors_seen++;
			return expect_hangup(c, "random traffic after an ERROR") ? -1 : 1;
		}
		if (m.type == VYRE_MSG_HELLO_REPLY && m.u.hello_reply.status == 0)
			c->active = 1;
		else if (m.type != VYRE_MSG_HELLO_REPLY && m.type != VYRE_MSG_BUFFER_REPLY &&
			 m.type != VYRE_MSG_LIST_REPLY && m.type != VYRE_MSG_OP_REPLY) {
			printf("random traffic: vyred answered with message type %u\n", m.type);
			return -1;
		}
	}
}

static int random_connection(void)
{
	struct conn c;
	uint8_t buf[512];

	if (raw_connect(&c) != 0)
		return -1;
	int rc = rel_rand(&rng) % 2 ? handshake(&c, "random traffic hello") : 0;
	uint32_t sends = 1 + (uint32_t)(rel_rand(&rng) % MAX_SENDS);

	for (uint32_t i = 0; rc == 0 && i < sends; i++) {
		int fds[4];
		size_t len;
		unsigned nfds = random_fds(fds);

		random_datagram(buf, &len);
		int sent = send_raw(&c, buf, len, fds, nfds);

		for (unsigned k = 0; k < nfds; k++)
			close(fds[k]);
		/* give vyred a moment to answer, then read whatever it said */
		rel_sleep_ns(200000);
		rc = read_answers(&c);
		if (sent != 0 && rc == 0)
			rc = 1; /* vyred hung up before we could send: read_answers sees it next */
	}
	close(c.fd);
	return rc < 0 ? -1 : 0;
}

int main(void)
{
	const char *extra[] = {"--backend", "cpu", NULL};
	struct vyre_test_daemon d;
	struct rel_baseline base;
	pid_t honest[HONEST];
	int failed = 0;
	volatile int *stop = rel_shared_alloc(4096);
	uint64_t conns = RANDOM_CONNS * vyre_test_scale();

	rng = rel_seed("test_hostile_control");
	if (!stop || vyre_test_daemon_start(&d, extra) != 0)
		return 1;
	sock_path = d.socket;
	if (rel_baseline_take(&d, &base) != 0) {
		failed = 1;
		goto out;
	}
	for (uint32_t i = 0; i < HONEST; i++)
		honest[i] = rel_honest_spawn(sock_path, rel_rand(&rng), stop);
	for (size_t i = 0; i < sizeof(fixed_cases) / sizeof(fixed_cases[0]); i++) {
		struct conn c;

		if (raw_connect(&c) != 0 || fixed_cases[i].run(&c) != 0) {
			printf("case \"%s\" failed\n", fixed_cases[i].name);
			failed = 1;
		}
		close(c.fd);
		if (!rel_child_running(d.pid)) {
			printf("vyred died in case \"%s\"\n", fixed_cases[i].name);
			failed = 1;
			break;
		}
	}
	for (uint64_t i = 0; i < conns && !failed; i++) {
		failed = random_connection() != 0;
		if (!rel_child_running(d.pid)) {
			printf("vyred died in random connection %" PRIu64 "\n", i);
			failed = 1;
		}
	}
	*stop = 1;
	for (uint32_t i = 0; i < HONEST; i++) {
		int st = rel_wait_child(honest[i], 120 * 1000000000ull);

		if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("honest producer %u failed (status %#x)\n", i, (unsigned)st);
			failed = 1;
		}
	}
	printf("%zu fixed cases, %" PRIu64 " random connections: %" PRIu64 " datagrams (%" PRIu64
	       " bytes) sent, %" PRIu64 " ERROR + hang-ups, %" PRIu64 " refusals\n",
	       sizeof(fixed_cases) / sizeof(fixed_cases[0]), conns, datagrams, bytes_sent,
	       errors_seen, refusals_seen);
	if (!failed && rel_baseline_check(&d, &base) != 0)
		failed = 1;
	if (!failed && vyre_test_daemon_stop(&d) != 0) {
		printf("vyred did not stop cleanly on SIGTERM\n");
		failed = 1;
	}
out:
	if (failed)
		vyre_test_daemon_dump_log(&d);
	vyre_test_daemon_cleanup(&d);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
