/* SPDX-License-Identifier: MIT */
/*
 * Bad input against a real vyred: every kind gets its documented error, and
 * after each one a witness client still gets served.
 *  items:   unknown op, unknown handle, another domain's handle, freed
 *           handle, short output, malformed DFA tables (output unchanged),
 *           SQE flags no API would send; malformed counted inputs of the
 *           byte ops (bad base64 and hex, lengths past the buffer, short
 *           outputs and tables), each leaving the whole heap as it was
 *  control: ABI version mismatch, oversized ring and heap requests, HELLO
 *           without (or with a wrong) eventfd, garbage datagrams, a first
 *           message that is not HELLO, bad ALLOC/FREE requests, too many
 *           clients
 *  region:  garbage sq_tail and cq_head written by a hostile client
 * The uid/gid allow lists are in test_badinput_uid (needs root).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../gpu/ops.h"
#include "../ring/client.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define WAIT_NS (30ll * 1000000000ll)

#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			FAIL(__VA_ARGS__);                                                         \
	} while (0)

static struct vyre_test_daemon dmn;
static struct vyre_client *witness;
static uint32_t w_in, w_out;
static uint64_t w_round;

static int connect_opts(const struct vyre_connect_opts *in, struct vyre_client **c)
{
	struct vyre_connect_opts o = *in;

	o.socket_path = dmn.socket;
	return vyre_connect(&o, c);
}

static int open_client(const char *domain, struct vyre_client **c)
{
	struct vyre_connect_opts o = {.domain = domain, .heap_bytes = 1u << 20};
	int rc = connect_opts(&o, c);

	if (rc != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	return 0;
}

/* The daemon still serves: one item through the witness, checked. */
static int witness_round(const char *after)
{
	struct vyre_work_item it = {VYRE_OP_ADD, w_in, w_out, (uint32_t)++w_round};
	struct vyre_cqe cqe = {0};
	int rc = vyre_submit(witness, &it, w_round, 0);

	if (rc == 0)
		rc = vyre_wait(witness, &cqe, 1, WAIT_NS);
	if (rc != 1 || cqe.user_data != w_round || cqe.status != 0)
		FAIL("after %s: the witness was not served (%d)", after, rc);
	if (*(uint32_t *)vyre_buffer_ptr(witness, w_out, NULL) != 5 + (uint32_t)w_round)
		FAIL("after %s: wrong witness result", after);
	printf("ok: %s; vyred still serves\n", after);
	return 0;
}

/* One item on @c; returns its CQE status (or a negative wait error). */
static int run_item(struct vyre_client *c, struct vyre_work_item it, uint32_t flags)
{
	struct vyre_cqe cqe;
	int rc = vyre_submit(c, &it, 77, flags);

	if (rc != 0)
		return rc;
	rc = vyre_wait(c, &cqe, 1, WAIT_NS);
	if (rc != 1)
		return rc < 0 ? rc : VYRE_E_TIMEDOUT;
	return cqe.user_data == 77 ? cqe.status : VYRE_E_PROTO;
}

static int bad_items(void)
{
	struct vyre_client *a, *b;
	uint32_t in, out, empty, table, other, freed;

	if (open_client(NULL, &a) || open_client(NULL, &b))
		return -1;
	if (vyre_buffer_alloc(a, 64, 0, &in) || vyre_buffer_alloc(a, 64, 0, &out) ||
	    vyre_buffer_alloc(a, 0, 0, &empty) || vyre_buffer_alloc(b, 64, 0, &other) ||
	    vyre_buffer_alloc(a, 16, 0, &freed))
		FAIL("alloc");
	uint32_t *o = vyre_buffer_ptr(a, out, NULL);

	for (int i = 0; i < 16; i++)
		o[i] = 0xabcd0000u + (uint32_t)i;
	EXPECT(run_item(a, (struct vyre_work_item){VYRE_OP_COUNT, in, out, 0}, 0) == VYRE_E_INVAL,
	       "unknown op");
	EXPECT(run_item(a, (struct vyre_work_item){0xffffffffu, 0, 0, 0}, 0) == VYRE_E_INVAL,
	       "unknown op 0xffffffff");
	EXPECT(run_item(a, (struct vyre_work_item){VYRE_OP_COPY, 0x12345, out, 0}, 0) ==
		   VYRE_E_INVAL,
	       "unknown handle");
	EXPECT(run_item(a, (struct vyre_work_item){VYRE_OP_COPY, other, out, 0}, 0) == VYRE_E_INVAL,
	       "another domain's handle as input");
	EXPECT(run_item(a, (struct vyre_work_item){VYRE_OP_FILL, 0, other, 1}, 0) == VYRE_E_INVAL,
	       "another domain's handle as output");
	EXPECT(vyre_buffer_free(a, freed) == 0, "free");
	EXPECT(run_item(a, (struct vyre_work_item){VYRE_OP_COPY, freed, out, 0}, 0) == VYRE_E_INVAL,
	       "freed handle");
	EXPECT(run_item(a, (struct vyre_work_item){VYRE_OP_SUM, in, empty, 0}, 0) == VYRE_E_INVAL,
	       "short output");
	EXPECT(run_item(a, (struct vyre_work_item){VYRE_OP_NOP, in, 0, 0}, 0) == VYRE_E_INVAL,
	       "NOP with a handle");
	for (int i = 0; i < 16; i++)
		EXPECT(o[i] == 0xabcd0000u + (uint32_t)i, "a failed item changed its output");

	/* Malformed DFA tables: each completes with VYRE_E_INVAL and writes nothing. */
	const uint32_t bytes = (uint32_t)vyre_dfa_table_bytes(2);

	if (vyre_buffer_alloc(a, bytes, 0, &table))
		FAIL("alloc table");
	uint32_t *t = vyre_buffer_ptr(a, table, NULL);
	struct vyre_work_item scan = {VYRE_OP_DFA_SCAN, in, out, table};

	t[0] = 2; /* valid: 2 states, start 0, state 1 accepting, every byte -> 1 */
	t[1] = 0;
	t[2] = 2;
	for (uint32_t i = 0; i < 512; i++)
		t[3 + i] = 1;
	EXPECT(run_item(a, scan, 0) == 0 && o[0] == 64, "a valid table scans");
	o[0] = 0xabcd0000u;
	t[3 + 300] = 2; /* a transition out of range */
	EXPECT(run_item(a, scan, 0) == VYRE_E_INVAL, "transition out of range");
	t[3 + 300] = 1;
	t[0] = 0; /* no states */
	EXPECT(run_item(a, scan, 0) == VYRE_E_INVAL, "zero states");
	t[0] = 3; /* claims more states than the buffer holds */
	EXPECT(run_item(a, scan, 0) == VYRE_E_INVAL, "table too short");
	t[0] = 2;
	t[1] = 2; /* start out of range */
	EXPECT(run_item(a, scan, 0) == VYRE_E_INVAL, "start state out of range");
	EXPECT(run_item(a, (struct vyre_work_item){VYRE_OP_DFA_SCAN, in, out, empty}, 0) ==
		   VYRE_E_INVAL,
	       "empty table");
	EXPECT(o[0] == 0xabcd0000u, "a malformed table changed the output");

	/* SQE flags that vyre_submit refuses, written straight into the ring. */
	EXPECT(vyre_submit(a, &scan, 1, 0x80) == VYRE_E_INVAL, "vyre_submit checks flags");
	uint32_t pos;
	struct vyre_cqe cqe;

	EXPECT(vyre_sq_reserve(&a->sq, 1, 1, &pos) == 1, "reserve");
	struct vyre_sqe *s = vyre_sq_slot(&a->sq, pos);

	s->item = (struct vyre_work_item){VYRE_OP_FILL, 0, out, 9};
	s->flags = 0x80;
	s->user_data = 99;
	vyre_sq_publish(&a->sq, pos);
	vyre_sq_kick(&a->sq);
	EXPECT(vyre_wait(a, &cqe, 1, WAIT_NS) == 1 && cqe.user_data == 99 &&
		   cqe.status == VYRE_E_INVAL,
	       "unknown SQE flags");
	EXPECT(o[0] == 0xabcd0000u, "an item with bad flags ran");
	vyre_close(a);
	vyre_close(b);
	return witness_round("invalid items");
}

/* A counted buffer (docs/design.md 6.1): word 0 = the length, then the bytes. */
static void put_counted(struct vyre_client *c, uint32_t h, const char *s, uint32_t len)
{
	uint8_t *p = vyre_buffer_ptr(c, h, NULL);

	memcpy(p, &len, 4);
	memcpy(p + 4, s, len);
}

/* @it fails with VYRE_E_INVAL and not one byte of @c's heap changes. */
static int inval_unchanged(struct vyre_client *c, struct vyre_work_item it, const char *what)
{
	static uint8_t before[1u << 20];

	EXPECT(c->heap_bytes <= sizeof(before), "heap too big for the test");
	memcpy(before, c->heap, c->heap_bytes);
	EXPECT(run_item(c, it, 0) == VYRE_E_INVAL, "%s: not E_INVAL", what);
	EXPECT(memcmp(before, c->heap, c->heap_bytes) == 0, "%s: the heap changed", what);
	return 0;
}

static int bad_decodes(void)
{
	struct vyre_client *a;
	uint32_t src, dst, map, short_map, tiny, empty;

	if (open_client(NULL, &a))
		return -1;
	if (vyre_buffer_alloc(a, 64, 0, &src) || vyre_buffer_alloc(a, 64, 0, &dst) ||
	    vyre_buffer_alloc(a, 256, 0, &map) || vyre_buffer_alloc(a, 252, 0, &short_map) ||
	    vyre_buffer_alloc(a, 8, 0, &tiny) || vyre_buffer_alloc(a, 0, 0, &empty))
		FAIL("alloc");
	uint8_t *m = vyre_buffer_ptr(a, map, NULL), *d = vyre_buffer_ptr(a, dst, NULL);

	for (uint32_t i = 0; i < 256; i++)
		m[i] = (uint8_t)(i ^ 0x20);
	memset(d, 0xee, 64);
	struct vyre_work_item b64 = {VYRE_OP_BASE64_DECODE, src, dst, 0};
	struct vyre_work_item hex = {VYRE_OP_HEX_DECODE, src, dst, 0};
	struct vyre_work_item bmap = {VYRE_OP_BYTEMAP, src, dst, map};

	/* a valid decode first: the same items do run */
	put_counted(a, src, "Zm9vYmFy", 8);
	EXPECT(run_item(a, b64, 0) == 0 && memcmp(d, "\6\0\0\0foobar\0\0", 12) == 0,
	       "a valid base64 decode");
	static const char *const bad_b64[] = {"Zm9v!mFy", "Zg==Zg==", "Zh==", "Zm9vY", "Zm9v YmF"};
	for (size_t i = 0; i < sizeof(bad_b64) / sizeof(bad_b64[0]); i++) {
		put_counted(a, src, bad_b64[i], (uint32_t)strlen(bad_b64[i]));
		if (inval_unchanged(a, b64, bad_b64[i]) ||
		    inval_unchanged(a, (struct vyre_work_item){VYRE_OP_BASE64_DECODE, src, src, 0},
				    "in place"))
			return -1;
	}
	put_counted(a, src, "abc", 3);
	if (inval_unchanged(a, hex, "odd hex length"))
		return -1;
	put_counted(a, src, "0g", 2);
	if (inval_unchanged(a, hex, "bad hex digit"))
		return -1;
	put_counted(a, src, "Zm9vYmFy", 8);
	*(uint32_t *)vyre_buffer_ptr(a, src, NULL) = 61; /* past the 60 bytes it holds */
	if (inval_unchanged(a, b64, "length past the buffer") ||
	    inval_unchanged(a, bmap, "length past the buffer") ||
	    inval_unchanged(a, (struct vyre_work_item){VYRE_OP_DFA_SCAN_COUNTED, src, dst, map},
			    "counted scan, length past the buffer"))
		return -1;
	put_counted(a, src, "0123456789", 10);
	if (inval_unchanged(a, (struct vyre_work_item){VYRE_OP_BYTEMAP, src, tiny, map},
			    "output too short") ||
	    inval_unchanged(a, (struct vyre_work_item){VYRE_OP_BYTEMAP, src, dst, short_map},
			    "table of 252 bytes") ||
	    inval_unchanged(a, (struct vyre_work_item){VYRE_OP_HEX_DECODE, empty, dst, 0},
			    "empty input") ||
	    inval_unchanged(a, (struct vyre_work_item){VYRE_OP_BYTEMAP, src, dst, 0}, "no table"))
		return -1;
	EXPECT(run_item(a, bmap, 0) == 0 && memcmp(d + 4, "\x10\x11\x12", 3) == 0,
	       "a valid byte map");
	vyre_close(a);
	return witness_round("malformed counted inputs");
}

/* ---- raw control protocol ---- */

static int raw_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 30};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, dmn.socket);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void hello(struct vyre_msg *m, uint32_t sq, uint32_t cq, uint64_t heap)
{
	memset(m, 0, sizeof(*m));
	m->type = VYRE_MSG_HELLO;
	m->id = 1;
	m->u.hello.sq_entries = sq;
	m->u.hello.cq_entries = cq;
	m->u.hello.heap_bytes = heap;
}

/* Sends @m with @fd (or none) on a new connection; returns the reply's status. */
static int hello_status(struct vyre_msg *m, int fd, uint16_t *reply_type)
{
	int s = raw_connect();
	struct vyre_msg r;
	int fds[3];
	unsigned nfds;
	int rc;

	if (s < 0)
		return VYRE_E_DISCONNECTED;
	rc = vyre_msg_send(s, m, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0);
	if (rc == 0)
		rc = vyre_msg_recv(s, &r, fds, 3, &nfds, 0);
	for (unsigned i = 0; rc == 0 && i < nfds; i++)
		close(fds[i]);
	close(s);
	if (rc != 0)
		return rc;
	*reply_type = r.type;
	return r.type == VYRE_MSG_ERROR ? r.u.error : r.u.hello_reply.status;
}

/* After an error reply vyred hangs up: the next read sees the end. */
static int expect_hangup(int s)
{
	char buf[256];

	return recv(s, buf, sizeof(buf), 0) == 0 ? 0 : -1;
}

static int bad_hellos(void)
{
	struct vyre_msg m;
	uint16_t type = 0;
	int efd = eventfd(0, EFD_CLOEXEC);
	int pipefd[2];

	if (efd < 0 || pipe(pipefd) != 0)
		FAIL("eventfd/pipe");
	hello(&m, 0, 0, 0);
	EXPECT(hello_status(&m, efd, &type) == 0 && type == VYRE_MSG_HELLO_REPLY,
	       "a raw HELLO that is right gets a region");
	m.abi_version = VYRE_ABI_VERSION + 1;
	EXPECT(hello_status(&m, efd, &type) == VYRE_E_PROTO && type == VYRE_MSG_HELLO_REPLY,
	       "ABI version mismatch -> VYRE_E_PROTO");
	hello(&m, VYRE_MAX_RING_ENTRIES * 2, 0, 0);
	EXPECT(hello_status(&m, efd, &type) == VYRE_E_INVAL, "SQ over VYRE_MAX_RING_ENTRIES");
	hello(&m, 4096, 0, 0);
	EXPECT(hello_status(&m, efd, &type) == VYRE_E_INVAL, "SQ over --sq-entries-max");
	hello(&m, 0, 0xffffffffu, 0);
	EXPECT(hello_status(&m, efd, &type) == VYRE_E_INVAL, "CQ of 2^32-1 entries");
	hello(&m, 0, 0, 1ull << 40);
	EXPECT(hello_status(&m, efd, &type) == VYRE_E_INVAL, "heap over --heap-bytes-max");
	hello(&m, 0, 0, 0);
	EXPECT(hello_status(&m, -1, &type) == VYRE_E_INVAL, "HELLO without an eventfd");
	EXPECT(hello_status(&m, pipefd[0], &type) == VYRE_E_INVAL, "HELLO with a pipe");
	m.u.hello.flags = 1u << 31; /* outside VYRE_HELLO_VALID */
	EXPECT(hello_status(&m, efd, &type) == VYRE_E_INVAL, "unknown HELLO flags");

	/* Through the library: the same refusals, with the documented codes. */
	struct vyre_client *c;
	struct vyre_connect_opts big = {.sq_entries = VYRE_MAX_RING_ENTRIES + 1};

	EXPECT(connect_opts(&big, &c) == VYRE_E_INVAL, "vyre_connect: oversized SQ");
	close(efd);
	close(pipefd[0]);
	close(pipefd[1]);
	return witness_round("bad HELLOs");
}

static int garbage_messages(void)
{
	uint8_t junk[200];
	uint64_t rng = 12345;
	int s;

	/* Random datagrams of random sizes: an ERROR reply or a hang-up, never a crash. */
	for (int i = 0; i < 300; i++) {
		size_t len = 1 + (size_t)(rng % sizeof(junk));

		for (size_t j = 0; j < len; j++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			junk[j] = (uint8_t)rng;
		}
		if (i % 3 == 0) /* a valid header with a wrong length or type */
			memcpy(junk, "VYRC\x01\x00\x00\x00", 8);
		s = raw_connect();
		EXPECT(s >= 0, "connect");
		EXPECT(send(s, junk, len, 0) == (ssize_t)len, "send");
		struct vyre_msg r;
		int fds[3];
		unsigned nfds;
		int rc = vyre_msg_recv(s, &r, fds, 3, &nfds, 0);

		EXPECT((rc == 0 && r.type == VYRE_MSG_ERROR && r.u.error == VYRE_E_PROTO) ||
			   rc == VYRE_E_DISCONNECTED,
		       "garbage datagram %d: reply %d type %u", i, rc, r.type);
		close(s);
	}
	/* A well-formed message that is not HELLO comes first. */
	struct vyre_msg m = {.type = VYRE_MSG_ALLOC, .u.buffer.bytes = 64};
	struct vyre_msg r;
	int fds[3];
	unsigned nfds;

	s = raw_connect();
	EXPECT(vyre_msg_send(s, &m, NULL, 0) == 0, "send");
	EXPECT(vyre_msg_recv(s, &r, fds, 3, &nfds, 0) == 0 && r.type == VYRE_MSG_ERROR &&
		   r.u.error == VYRE_E_PROTO,
	       "ALLOC before HELLO -> ERROR");
	EXPECT(expect_hangup(s) == 0, "hang-up after ERROR");
	close(s);
	return witness_round("garbage control messages");
}

static int bad_requests(void)
{
	struct vyre_client *a, *b;
	struct vyre_msg req, rep;
	uint32_t h, hb;

	if (open_client(NULL, &a) || open_client(NULL, &b))
		return -1;
	EXPECT(vyre_buffer_alloc(a, 6, 0, &h) == VYRE_E_INVAL, "alloc of 6 bytes");
	EXPECT(vyre_buffer_alloc(a, 2u << 20, 0, &h) == VYRE_E_NOMEM, "alloc beyond the heap");
	EXPECT(vyre_buffer_alloc(a, 64, 0, &h) == 0 && vyre_buffer_alloc(b, 64, 0, &hb) == 0,
	       "alloc");
	EXPECT(vyre_buffer_free(a, hb) == VYRE_E_INVAL, "free another domain's buffer");
	EXPECT(vyre_buffer_ptr(a, hb, NULL) == NULL, "ptr of another domain's buffer");
	EXPECT(vyre_buffer_free(a, 0x55555) == VYRE_E_INVAL, "free of an unknown handle");
	/* What the library never sends: ALLOC with unknown or both flags, or an odd size. */
	memset(&req, 0, sizeof(req));
	req.type = VYRE_MSG_ALLOC;
	req.u.buffer.bytes = 64;
	req.u.buffer.flags = 8;
	EXPECT(vyre_client_call(a, &req, VYRE_MSG_BUFFER_REPLY, &rep) == 0 &&
		   rep.u.buffer_reply.status == VYRE_E_INVAL,
	       "ALLOC with unknown flags");
	req.u.buffer.flags = VYRE_BUF_DEVICE | VYRE_BUF_TRANSIENT;
	EXPECT(vyre_client_call(a, &req, VYRE_MSG_BUFFER_REPLY, &rep) == 0 &&
		   rep.u.buffer_reply.status == VYRE_E_INVAL,
	       "ALLOC with both flags");
	req.u.buffer.flags = 0;
	req.u.buffer.bytes = 3;
	EXPECT(vyre_client_call(a, &req, VYRE_MSG_BUFFER_REPLY, &rep) == 0 &&
		   rep.u.buffer_reply.status == VYRE_E_INVAL,
	       "ALLOC of 3 bytes");
	/* A second HELLO on a live connection is a protocol error: ERROR, then hang-up. */
	hello(&req, 0, 0, 0);
	EXPECT(vyre_client_call(a, &req, VYRE_MSG_HELLO_REPLY, &rep) == VYRE_E_PROTO,
	       "HELLO twice");
	struct vyre_cqe cqe;

	EXPECT(vyre_wait(a, &cqe, 1, WAIT_NS) == VYRE_E_DISCONNECTED,
	       "a dropped client sees VYRE_E_DISCONNECTED");
	vyre_close(a);
	vyre_close(b);
	return witness_round("bad buffer requests");
}

static int hostile_region(void)
{
	struct vyre_client *a;
	struct vyre_cqe cqe;

	if (open_client(NULL, &a))
		return -1;
	__atomic_store_n(&a->region.hdr->sq_tail, 0x40000000u, __ATOMIC_RELEASE);
	vyre_sq_kick(&a->sq);
	EXPECT(vyre_wait(a, &cqe, 1, WAIT_NS) == VYRE_E_DISCONNECTED, "garbage sq_tail");
	EXPECT(a->region.hdr->closed == (uint32_t)-VYRE_E_PROTO, "closed says VYRE_E_PROTO");
	vyre_close(a);
	if (witness_round("a garbage sq_tail") != 0)
		return -1;

	if (open_client(NULL, &a))
		return -1;
	__atomic_store_n(&a->region.hdr->cq_head, 1000u, __ATOMIC_RELEASE);
	struct vyre_work_item it = {VYRE_OP_NOP, 0, 0, 0};

	EXPECT(vyre_submit(a, &it, 1, 0) == 0, "submit");
	EXPECT(vyre_wait(a, &cqe, 1, WAIT_NS) == VYRE_E_DISCONNECTED, "garbage cq_head");
	vyre_close(a);
	return witness_round("a garbage cq_head");
}

/* Until vyred has released every connection closed so far (its fd count is back). */
static int wait_fds(int baseline)
{
	for (int i = 0; i < 3000; i++) {
		if (vyre_test_fd_count(dmn.pid) == baseline)
			return 0;
		usleep(10000);
	}
	FAIL("vyred holds %d fds, %d expected", vyre_test_fd_count(dmn.pid), baseline);
}

static int fd_baseline;

static int too_many_clients(void)
{
	struct vyre_client *c[4];
	int n = 0, rc = 0;

	if (wait_fds(fd_baseline) != 0)
		return -1;
	/* --max-clients 4: the witness holds one. */
	struct vyre_client *extra;
	struct vyre_connect_opts o = {.heap_bytes = 4096};

	while (n < 4 && connect_opts(&o, &c[n]) == 0)
		n++;

	EXPECT(n == 3, "three more clients fit (%d)", n);
	rc = connect_opts(&o, &extra);
	EXPECT(rc == VYRE_E_NOMEM, "a client over --max-clients gets VYRE_E_NOMEM (%d)", rc);
	while (n > 0)
		vyre_close(c[--n]);
	return witness_round("too many clients");
}

int main(void)
{
	static const char *const args[] = {
	    "--sq-entries-max", "1024", "--heap-bytes-max", "16777216", "--max-clients", "4", NULL};
	struct vyre_connect_opts o = {.heap_bytes = 4096};
	int rc;

	if (vyre_test_daemon_start(&dmn, args) != 0)
		return 1;
	o.socket_path = dmn.socket;
	if ((rc = vyre_connect(&o, &witness)) != 0 || vyre_buffer_alloc(witness, 4, 0, &w_in) ||
	    vyre_buffer_alloc(witness, 4, 0, &w_out)) {
		fprintf(stderr, "witness: %s\n", vyre_strerror(rc));
		return 1;
	}
	*(uint32_t *)vyre_buffer_ptr(witness, w_in, NULL) = 5;
	fd_baseline = vyre_test_fd_count(dmn.pid);
	rc = bad_items() || bad_decodes() || bad_hellos() || garbage_messages() || bad_requests() ||
	     hostile_region() || too_many_clients();
	vyre_close(witness);
	int st = vyre_test_daemon_stop(&dmn);

	if (rc || st != 0) {
		vyre_test_daemon_dump_log(&dmn);
		fprintf(stderr, "FAIL (vyred exit %d)\n", st);
		vyre_test_daemon_cleanup(&dmn);
		return 1;
	}
	vyre_test_daemon_cleanup(&dmn);
	printf("PASS\n");
	return 0;
}
