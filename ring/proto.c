/* SPDX-License-Identifier: MIT */
/*
 * Control protocol codec and datagram I/O with descriptor passing. Every
 * field is written and read byte by byte in little-endian order, and every
 * reserved byte must be zero, so nothing depends on struct layout.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto.h"

/* An op or module name's bytes on the wire: VYRE_OP_NAME_MAX, then a zero. */
#define OP_NAME_FIELD (VYRE_OP_NAME_MAX + 1)

static const size_t body_size[] = {
    [VYRE_MSG_HELLO] = 24 + VYRE_DOMAIN_NAME_MAX,
    [VYRE_MSG_HELLO_REPLY] = 40,
    [VYRE_MSG_ALLOC] = 8,
    [VYRE_MSG_FREE] = 8,
    [VYRE_MSG_LOOKUP] = 8,
    [VYRE_MSG_BUFFER_REPLY] = 24,
    [VYRE_MSG_ERROR] = 8,
    [VYRE_MSG_CREATE] = 16 + VYRE_BUFFER_NAME_MAX,
    [VYRE_MSG_OPEN] = 8 + VYRE_BUFFER_NAME_MAX,
    [VYRE_MSG_FREE_NAME] = 8 + VYRE_BUFFER_NAME_MAX,
    [VYRE_MSG_LIST] = 8,
    [VYRE_MSG_LIST_REPLY] = 24 + VYRE_BUFFER_NAME_MAX,
    [VYRE_MSG_OP_LOOKUP] = 8 + OP_NAME_FIELD,
    [VYRE_MSG_OP_LIST] = 8,
    [VYRE_MSG_OP_REPLY] = 24 + 2 * OP_NAME_FIELD,
};

size_t vyre_msg_size(uint16_t type)
{
	if (type == 0 || type >= sizeof(body_size) / sizeof(body_size[0]))
		return 0;
	return VYRE_MSG_HEADER_SIZE + body_size[type];
}

_Static_assert(VYRE_MSG_HEADER_SIZE + 24 + VYRE_DOMAIN_NAME_MAX <= VYRE_MSG_MAX_SIZE,
	       "HELLO fits the largest message");
_Static_assert(VYRE_MSG_HEADER_SIZE + 24 + VYRE_BUFFER_NAME_MAX <= VYRE_MSG_MAX_SIZE,
	       "LIST_REPLY fits the largest message");
_Static_assert(VYRE_MSG_HEADER_SIZE + 24 + 2 * OP_NAME_FIELD <= VYRE_MSG_MAX_SIZE,
	       "OP_REPLY fits the largest message");

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static int name_char_ok(char c)
{
	return c > ' ' && c < 0x7f;
}

static int buffer_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

int vyre_msg_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > VYRE_BUFFER_NAME_MAX || !buffer_name_char(name[0]) ||
	    name[0] == '.' || name[0] == '_' || name[0] == '-')
		return 0;
	for (size_t i = 1; i < len; i++)
		if (!buffer_name_char(name[i]))
			return 0;
	return 1;
}

int vyre_msg_op_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > VYRE_OP_NAME_MAX || name[0] < 'a' || name[0] > 'z')
		return 0;
	for (size_t i = 1; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_'))
			return 0;
	return 1;
}

/*
 * An op or module name as u32 length at @p, its bytes at @at (OP_NAME_FIELD
 * of them, zero padded); @none: there must be no name.
 */
static int put_op_name(uint8_t *p, uint8_t *at, const char *name, int none)
{
	size_t n = strnlen(name, VYRE_OP_NAME_MAX + 1);

	if (none ? n != 0 : !vyre_msg_op_name_ok(name, n))
		return VYRE_E_INVAL;
	put32(p, (uint32_t)n);
	memcpy(at, name, n);
	return 0;
}

static int encode_op_reply(const struct vyre_msg_op_reply *r, uint8_t *b)
{
	const int none = r->name[0] == '\0';

	put32(b, (uint32_t)r->status);
	put32(b + 4, r->op);
	put32(b + 8, r->flags);
	put32(b + 12, r->next);
	if (put_op_name(b + 16, b + 24, r->name, none) != 0)
		return VYRE_E_INVAL;
	/* a built-in op has no module */
	return r->module[0] ? put_op_name(b + 20, b + 24 + OP_NAME_FIELD, r->module, none) : 0;
}

/*
 * A buffer name as u32 length at @p, then VYRE_BUFFER_NAME_MAX bytes at @p +
 * @gap; @none: there must be no name (a LIST_REPLY without an entry).
 */
static int put_name(uint8_t *p, size_t gap, const char *name, int none)
{
	size_t n = strnlen(name, VYRE_BUFFER_NAME_MAX + 1);

	if (none ? n != 0 : !vyre_msg_name_ok(name, n))
		return VYRE_E_INVAL;
	put32(p, (uint32_t)n);
	memcpy(p + gap, name, n);
	return 0;
}

static int encode_named(const struct vyre_msg *m, uint8_t *b)
{
	const struct vyre_msg_name *n = &m->u.named;

	if (m->type != VYRE_MSG_CREATE)
		return put_name(b, 8, n->name, 0);
	put32(b, n->bytes);
	put32(b + 4, n->flags);
	return put_name(b + 8, 8, n->name, 0);
}

static int encode_list_reply(const struct vyre_msg_list_reply *r, uint8_t *b)
{
	put32(b, (uint32_t)r->status);
	put32(b + 4, r->handle);
	put32(b + 8, r->bytes);
	put32(b + 12, r->flags);
	put32(b + 16, r->next);
	return put_name(b + 20, 4, r->name, r->handle == 0);
}

int vyre_msg_encode(const struct vyre_msg *m, uint8_t *buf, size_t cap)
{
	size_t len = vyre_msg_size(m->type);
	uint8_t *b = buf + VYRE_MSG_HEADER_SIZE;

	if (len == 0 || len > cap)
		return VYRE_E_INVAL;
	memset(buf, 0, len);
	put32(buf, VYRE_PROTO_MAGIC);
	put32(buf + 4, m->abi_version ? m->abi_version : VYRE_ABI_VERSION);
	put16(buf + 8, m->type);
	put16(buf + 10, (uint16_t)len);
	put32(buf + 12, m->id);
	switch (m->type) {
	case VYRE_MSG_HELLO: {
		const struct vyre_msg_hello *h = &m->u.hello;
		size_t n = strnlen(h->domain, sizeof(h->domain));

		if (n > VYRE_DOMAIN_NAME_MAX)
			return VYRE_E_INVAL;
		for (size_t i = 0; i < n; i++)
			if (!name_char_ok(h->domain[i]))
				return VYRE_E_INVAL;
		put32(b, h->sq_entries);
		put32(b + 4, h->cq_entries);
		put64(b + 8, h->heap_bytes);
		put32(b + 16, h->flags);
		put32(b + 20, (uint32_t)n);
		memcpy(b + 24, h->domain, n);
		break;
	}
	case VYRE_MSG_HELLO_REPLY: {
		const struct vyre_msg_hello_reply *r = &m->u.hello_reply;

		put32(b, (uint32_t)r->status);
		put32(b + 4, r->client_id);
		put32(b + 8, r->domain_id);
		put32(b + 12, r->sq_entries);
		put32(b + 16, r->cq_entries);
		put32(b + 20, r->restarted);
		put64(b + 24, r->region_bytes);
		put64(b + 32, r->heap_bytes);
		break;
	}
	case VYRE_MSG_ALLOC:
		put32(b, m->u.buffer.bytes);
		put32(b + 4, m->u.buffer.flags);
		break;
	case VYRE_MSG_FREE:
	case VYRE_MSG_LOOKUP:
		put32(b, m->u.buffer.handle);
		break;
	case VYRE_MSG_BUFFER_REPLY: {
		const struct vyre_msg_buffer_reply *r = &m->u.buffer_reply;

		put32(b, (uint32_t)r->status);
		put32(b + 4, r->handle);
		put64(b + 8, r->offset);
		put32(b + 16, r->bytes);
		put32(b + 20, r->flags);
		break;
	}
	case VYRE_MSG_CREATE:
	case VYRE_MSG_OPEN:
	case VYRE_MSG_FREE_NAME:
		if (encode_named(m, b) != 0)
			return VYRE_E_INVAL;
		break;
	case VYRE_MSG_LIST:
		put32(b, m->u.list_cursor);
		break;
	case VYRE_MSG_LIST_REPLY:
		if (encode_list_reply(&m->u.list_reply, b) != 0)
			return VYRE_E_INVAL;
		break;
	case VYRE_MSG_OP_LOOKUP:
		if (put_op_name(b, b + 8, m->u.op_name, 0) != 0)
			return VYRE_E_INVAL;
		break;
	case VYRE_MSG_OP_LIST:
		put32(b, m->u.list_cursor);
		break;
	case VYRE_MSG_OP_REPLY:
		if (encode_op_reply(&m->u.op_reply, b) != 0)
			return VYRE_E_INVAL;
		break;
	default: /* VYRE_MSG_ERROR: vyre_msg_size rejected every other value */
		put32(b, (uint32_t)m->u.error);
		break;
	}
	return (int)len;
}

static int zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Every VYRE_E_* value: the last one in enum vyre_error is the lowest. */
static int status_ok(int32_t s)
{
	return s <= 0 && s >= VYRE_E_RESTARTED;
}

#define BUF_FLAGS (VYRE_BUF_DEVICE | VYRE_BUF_TRANSIENT)

/* The name written by put_name into @name (VYRE_BUFFER_NAME_MAX + 1 bytes); 0 or VYRE_E_PROTO. */
static int get_name(const uint8_t *p, size_t gap, char *name, int none)
{
	uint32_t n = get32(p);

	if (n > VYRE_BUFFER_NAME_MAX || !zero(p + gap + n, VYRE_BUFFER_NAME_MAX - n))
		return VYRE_E_PROTO;
	memcpy(name, p + gap, n);
	name[n] = '\0';
	return (none ? n == 0 : vyre_msg_name_ok(name, n)) ? 0 : VYRE_E_PROTO;
}

static int decode_named(uint16_t type, const uint8_t *b, struct vyre_msg_name *n)
{
	if (type != VYRE_MSG_CREATE)
		return zero(b + 4, 4) ? get_name(b, 8, n->name, 0) : VYRE_E_PROTO;
	n->bytes = get32(b);
	n->flags = get32(b + 4);
	return zero(b + 12, 4) ? get_name(b + 8, 8, n->name, 0) : VYRE_E_PROTO;
}

/* An entry with a valid name, or none (handle 0: no name, bytes or flags). */
static int decode_list_reply(const uint8_t *b, struct vyre_msg_list_reply *r)
{
	r->status = (int32_t)get32(b);
	r->handle = get32(b + 4);
	r->bytes = get32(b + 8);
	r->flags = get32(b + 12);
	r->next = get32(b + 16);
	if (!status_ok(r->status) || (r->flags & ~BUF_FLAGS) ||
	    get_name(b + 20, 4, r->name, r->handle == 0) != 0)
		return VYRE_E_PROTO;
	if (r->handle == 0 && (r->bytes || r->flags))
		return VYRE_E_PROTO;
	return r->status != 0 && (r->handle != 0 || r->next != 0) ? VYRE_E_PROTO : 0;
}

/* The name put_op_name wrote into @name (OP_NAME_FIELD bytes); 0 or VYRE_E_PROTO. */
static int get_op_name(const uint8_t *p, const uint8_t *at, char *name, int none)
{
	uint32_t n = get32(p);

	if (n > VYRE_OP_NAME_MAX || !zero(at + n, OP_NAME_FIELD - n))
		return VYRE_E_PROTO;
	memcpy(name, at, n);
	name[n] = '\0';
	return (none ? n == 0 : vyre_msg_op_name_ok(name, n)) ? 0 : VYRE_E_PROTO;
}

/* An op with a valid name (its module's, if any) or none: no op, flags or module. */
static int decode_op_reply(const uint8_t *b, struct vyre_msg_op_reply *r)
{
	const int none = get32(b + 16) == 0;

	r->status = (int32_t)get32(b);
	r->op = get32(b + 4);
	r->flags = get32(b + 8);
	r->next = get32(b + 12);
	if (!status_ok(r->status) || (r->flags & ~(uint32_t)VYRE_OP_INFO_ALL) ||
	    get_op_name(b + 16, b + 24, r->name, none) != 0)
		return VYRE_E_PROTO;
	if (get32(b + 20) ? get_op_name(b + 20, b + 24 + OP_NAME_FIELD, r->module, none) != 0
			  : !zero(b + 24 + OP_NAME_FIELD, OP_NAME_FIELD))
		return VYRE_E_PROTO;
	if (none && (r->op || r->flags))
		return VYRE_E_PROTO;
	/* a module op's number has VYRE_OP_MODULE_BIT and a module; a built-in op neither */
	if (!none && !(r->op & VYRE_OP_MODULE_BIT) != !r->module[0])
		return VYRE_E_PROTO;
	return r->status != 0 && (!none || r->next != 0) ? VYRE_E_PROTO : 0;
}

static int decode_hello(const uint8_t *b, struct vyre_msg_hello *h)
{
	uint32_t n = get32(b + 20);

	h->sq_entries = get32(b);
	h->cq_entries = get32(b + 4);
	h->heap_bytes = get64(b + 8);
	h->flags = get32(b + 16);
	if (n > VYRE_DOMAIN_NAME_MAX || !zero(b + 24 + n, VYRE_DOMAIN_NAME_MAX - n))
		return VYRE_E_PROTO;
	for (uint32_t i = 0; i < n; i++)
		if (!name_char_ok((char)b[24 + i]))
			return VYRE_E_PROTO;
	memcpy(h->domain, b + 24, n);
	h->domain[n] = '\0';
	return 0;
}

int vyre_msg_decode(const uint8_t *buf, size_t len, struct vyre_msg *m)
{
	const uint8_t *b = buf + VYRE_MSG_HEADER_SIZE;

	memset(m, 0, sizeof(*m));
	if (len < VYRE_MSG_HEADER_SIZE || get32(buf) != VYRE_PROTO_MAGIC)
		return VYRE_E_PROTO;
	m->abi_version = get32(buf + 4);
	m->type = get16(buf + 8);
	m->id = get32(buf + 12);
	size_t want = vyre_msg_size(m->type);

	if (want == 0 || get16(buf + 10) != want || len != want)
		return VYRE_E_PROTO;
	switch (m->type) {
	case VYRE_MSG_HELLO:
		return decode_hello(b, &m->u.hello);
	case VYRE_MSG_HELLO_REPLY: {
		struct vyre_msg_hello_reply *r = &m->u.hello_reply;

		r->status = (int32_t)get32(b);
		r->client_id = get32(b + 4);
		r->domain_id = get32(b + 8);
		r->sq_entries = get32(b + 12);
		r->cq_entries = get32(b + 16);
		r->region_bytes = get64(b + 24);
		r->heap_bytes = get64(b + 32);
		r->restarted = get32(b + 20);
		return status_ok(r->status) ? 0 : VYRE_E_PROTO;
	}
	case VYRE_MSG_ALLOC:
		m->u.buffer.bytes = get32(b);
		m->u.buffer.flags = get32(b + 4);
		return 0;
	case VYRE_MSG_FREE:
	case VYRE_MSG_LOOKUP:
		m->u.buffer.handle = get32(b);
		return zero(b + 4, 4) ? 0 : VYRE_E_PROTO;
	case VYRE_MSG_BUFFER_REPLY: {
		struct vyre_msg_buffer_reply *r = &m->u.buffer_reply;

		r->status = (int32_t)get32(b);
		r->handle = get32(b + 4);
		r->offset = get64(b + 8);
		r->bytes = get32(b + 16);
		r->flags = get32(b + 20);
		return status_ok(r->status) && !(r->flags & ~BUF_FLAGS) ? 0 : VYRE_E_PROTO;
	}
	case VYRE_MSG_CREATE:
	case VYRE_MSG_OPEN:
	case VYRE_MSG_FREE_NAME:
		return decode_named(m->type, b, &m->u.named);
	case VYRE_MSG_LIST:
		m->u.list_cursor = get32(b);
		return zero(b + 4, 4) ? 0 : VYRE_E_PROTO;
	case VYRE_MSG_LIST_REPLY:
		return decode_list_reply(b, &m->u.list_reply);
	case VYRE_MSG_OP_LOOKUP:
		return zero(b + 4, 4) ? get_op_name(b, b + 8, m->u.op_name, 0) : VYRE_E_PROTO;
	case VYRE_MSG_OP_LIST:
		m->u.list_cursor = get32(b);
		return zero(b + 4, 4) ? 0 : VYRE_E_PROTO;
	case VYRE_MSG_OP_REPLY:
		return decode_op_reply(b, &m->u.op_reply);
	default: /* VYRE_MSG_ERROR */
		m->u.error = (int32_t)get32(b);
		return status_ok(m->u.error) && zero(b + 4, 4) ? 0 : VYRE_E_PROTO;
	}
}

int vyre_msg_send(int sock, const struct vyre_msg *m, const int *fds, unsigned nfds)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * VYRE_MSG_MAX_FDS)];
	} ctl;
	int len = vyre_msg_encode(m, buf, sizeof(buf));

	if (len < 0 || nfds > VYRE_MSG_MAX_FDS)
		return VYRE_E_INVAL;
	struct iovec iov = {.iov_base = buf, .iov_len = (size_t)len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

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
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n == len)
			return 0;
		if (n >= 0)
			return VYRE_E_PROTO;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return VYRE_E_AGAIN;
		return VYRE_E_DISCONNECTED;
	}
}

/* Keeps up to @max_fds of the received descriptors and closes the rest. */
static unsigned take_fds(struct msghdr *mh, int *fds, unsigned max_fds)
{
	unsigned kept = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (kept < max_fds)
				fds[kept++] = fd;
			else
				close(fd);
		}
	}
	return kept;
}

int vyre_msg_recv(int sock, struct vyre_msg *m, int *fds, unsigned max_fds, unsigned *nfds,
		  int flags)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	/* Room for more descriptors than any message carries, so extras are seen and closed. */
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * 16)];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.space,
			    .msg_controllen = sizeof(ctl.space)};
	ssize_t n;

	*nfds = 0;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN)
			return (flags & MSG_DONTWAIT) ? VYRE_E_AGAIN : VYRE_E_TIMEDOUT;
		return VYRE_E_DISCONNECTED;
	}
	*nfds = take_fds(&mh, fds, max_fds);
	int rc = VYRE_E_PROTO;

	if (n == 0 && *nfds == 0)
		return VYRE_E_DISCONNECTED;
	if (!(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		rc = vyre_msg_decode(buf, (size_t)n, m);
	if (rc != 0) {
		for (unsigned i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
	}
	return rc;
}
