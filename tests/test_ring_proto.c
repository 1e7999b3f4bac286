/* SPDX-License-Identifier: MIT */
/*
 * The control protocol codec and its datagram I/O: round trips, every
 * malformation rejected, descriptors passed and surplus ones closed.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "../ring/proto.h"

static void roundtrip(const struct vyre_msg *in, struct vyre_msg *out)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	int len = vyre_msg_encode(in, buf, sizeof(buf));

	assert_true(len > 0);
	assert_int_equal((size_t)len, vyre_msg_size(in->type));
	assert_int_equal(vyre_msg_decode(buf, (size_t)len, out), 0);
	assert_int_equal(out->type, in->type);
	assert_int_equal(out->id, in->id);
	assert_int_equal(out->abi_version, VYRE_ABI_VERSION);
}

static void test_roundtrip(void **state)
{
	struct vyre_msg m, o;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO;
	m.id = 77;
	m.u.hello.sq_entries = 1024;
	m.u.hello.cq_entries = 2048;
	m.u.hello.heap_bytes = 1ull << 33;
	strcpy(m.u.hello.domain, "shared-domain_1");
	roundtrip(&m, &o);
	assert_int_equal(o.u.hello.sq_entries, 1024);
	assert_int_equal(o.u.hello.cq_entries, 2048);
	assert_int_equal(o.u.hello.heap_bytes, 1ull << 33);
	assert_string_equal(o.u.hello.domain, "shared-domain_1");

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO_REPLY;
	m.u.hello_reply.status = VYRE_E_PERM;
	m.u.hello_reply.client_id = 9;
	m.u.hello_reply.region_bytes = 123456789012ull;
	roundtrip(&m, &o);
	assert_int_equal(o.u.hello_reply.status, VYRE_E_PERM);
	assert_int_equal(o.u.hello_reply.client_id, 9);
	assert_int_equal(o.u.hello_reply.region_bytes, 123456789012ull);

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_BUFFER_REPLY;
	m.u.buffer_reply.handle = 0xdeadbeef;
	m.u.buffer_reply.offset = 1ull << 40;
	m.u.buffer_reply.bytes = 4096;
	m.u.buffer_reply.flags = VYRE_BUF_DEVICE;
	roundtrip(&m, &o);
	assert_int_equal(o.u.buffer_reply.handle, 0xdeadbeef);
	assert_int_equal(o.u.buffer_reply.offset, 1ull << 40);
	assert_int_equal(o.u.buffer_reply.flags, VYRE_BUF_DEVICE);

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_ALLOC;
	m.u.buffer.bytes = 64;
	roundtrip(&m, &o);
	assert_int_equal(o.u.buffer.bytes, 64);
	m.type = VYRE_MSG_LOOKUP;
	m.u.buffer.handle = 5;
	roundtrip(&m, &o);
	assert_int_equal(o.u.buffer.handle, 5);
}

static void test_little_endian_on_the_wire(void **state)
{
	struct vyre_msg m;
	uint8_t buf[VYRE_MSG_MAX_SIZE];

	(void)state;
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_FREE;
	m.id = 0x01020304;
	m.u.buffer.handle = 0xa1b2c3d4;
	assert_int_equal(vyre_msg_encode(&m, buf, sizeof(buf)), 24);
	const uint8_t want[24] = {0x56,
				  0x59,
				  0x52,
				  0x43,
				  VYRE_ABI_VERSION,
				  0,
				  0,
				  0,
				  VYRE_MSG_FREE,
				  0,
				  24,
				  0,
				  4,
				  3,
				  2,
				  1,
				  0xd4,
				  0xc3,
				  0xb2,
				  0xa1,
				  0,
				  0,
				  0,
				  0};
	assert_memory_equal(buf, want, sizeof(want));
}

static void test_malformed(void **state)
{
	struct vyre_msg m, o;
	uint8_t buf[VYRE_MSG_MAX_SIZE], bad[VYRE_MSG_MAX_SIZE];

	(void)state;
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO;
	strcpy(m.u.hello.domain, "d");
	int len = vyre_msg_encode(&m, buf, sizeof(buf));

	assert_true(len > 0);
	assert_int_equal(vyre_msg_decode(buf, 3, &o), VYRE_E_PROTO);		   /* short */
	assert_int_equal(vyre_msg_decode(buf, (size_t)len - 1, &o), VYRE_E_PROTO); /* length */
	memcpy(bad, buf, (size_t)len);
	bad[0] ^= 1; /* magic */
	assert_int_equal(vyre_msg_decode(bad, (size_t)len, &o), VYRE_E_PROTO);
	memcpy(bad, buf, (size_t)len);
	bad[8] = 99; /* type */
	assert_int_equal(vyre_msg_decode(bad, (size_t)len, &o), VYRE_E_PROTO);
	memcpy(bad, buf, (size_t)len);
	bad[10] = 20; /* header length disagrees */
	assert_int_equal(vyre_msg_decode(bad, (size_t)len, &o), VYRE_E_PROTO);
	memcpy(bad, buf, (size_t)len);
	bad[16 + 20] = VYRE_DOMAIN_NAME_MAX + 1; /* name length */
	assert_int_equal(vyre_msg_decode(bad, (size_t)len, &o), VYRE_E_PROTO);
	memcpy(bad, buf, (size_t)len);
	bad[16 + 24 + 5] = 'x'; /* bytes after the name must be zero */
	assert_int_equal(vyre_msg_decode(bad, (size_t)len, &o), VYRE_E_PROTO);
	memcpy(bad, buf, (size_t)len);
	bad[16 + 24] = '\n'; /* not printable */
	assert_int_equal(vyre_msg_decode(bad, (size_t)len, &o), VYRE_E_PROTO);
	/* A different ABI version decodes: the receiver answers it with VYRE_E_PROTO. */
	memcpy(bad, buf, (size_t)len);
	bad[4] = 0x7f;
	assert_int_equal(vyre_msg_decode(bad, (size_t)len, &o), 0);
	assert_int_equal(o.abi_version, 0x7f);

	strcpy(m.u.hello.domain, "has space");
	assert_int_equal(vyre_msg_encode(&m, buf, sizeof(buf)), VYRE_E_INVAL);
	m.type = 0;
	assert_int_equal(vyre_msg_encode(&m, buf, sizeof(buf)), VYRE_E_INVAL);
	m.type = VYRE_MSG_ERROR;
	m.u.error = VYRE_E_PROTO;
	assert_int_equal(vyre_msg_encode(&m, buf, 10), VYRE_E_INVAL);
	len = vyre_msg_encode(&m, buf, sizeof(buf));
	buf[16] = 5; /* a positive status is not an error code */
	assert_int_equal(vyre_msg_decode(buf, (size_t)len, &o), VYRE_E_PROTO);

	/* a BUFFER_REPLY's last word holds VYRE_BUF_* flags only */
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_BUFFER_REPLY;
	m.u.buffer_reply.flags = VYRE_BUF_TRANSIENT;
	len = vyre_msg_encode(&m, buf, sizeof(buf));
	assert_int_equal(vyre_msg_decode(buf, (size_t)len, &o), 0);
	buf[16 + 20] = 0x10;
	assert_int_equal(vyre_msg_decode(buf, (size_t)len, &o), VYRE_E_PROTO);
}

static void test_name_rules(void **state)
{
	char max[VYRE_BUFFER_NAME_MAX + 2];

	(void)state;
	memset(max, 'a', sizeof(max));
	assert_true(vyre_msg_name_ok("a", 1));
	assert_true(vyre_msg_name_ok("9lives", 6));
	assert_true(vyre_msg_name_ok("Job_1.out-2", 11));
	assert_true(vyre_msg_name_ok(max, VYRE_BUFFER_NAME_MAX));
	assert_false(vyre_msg_name_ok(max, VYRE_BUFFER_NAME_MAX + 1));
	assert_false(vyre_msg_name_ok("", 0));
	assert_false(vyre_msg_name_ok(".hidden", 7));
	assert_false(vyre_msg_name_ok("-x", 2));
	assert_false(vyre_msg_name_ok("_x", 2));
	assert_false(vyre_msg_name_ok("a b", 3));
	assert_false(vyre_msg_name_ok("a/b", 3));
	assert_false(vyre_msg_name_ok("a\0b", 3));
	assert_false(vyre_msg_name_ok("caf\xc3\xa9", 5));
}

static void test_named_roundtrip(void **state)
{
	struct vyre_msg m, o;
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	static const uint16_t named[] = {VYRE_MSG_CREATE, VYRE_MSG_OPEN, VYRE_MSG_FREE_NAME};

	(void)state;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.type = named[i];
		m.id = 5;
		strcpy(m.u.named.name, "results.v2");
		if (m.type == VYRE_MSG_CREATE) {
			m.u.named.bytes = 4096;
			m.u.named.flags = VYRE_BUF_DEVICE;
		}
		roundtrip(&m, &o);
		assert_string_equal(o.u.named.name, "results.v2");
		assert_int_equal(o.u.named.bytes, m.u.named.bytes);
		assert_int_equal(o.u.named.flags, m.u.named.flags);
		/* a name the rules refuse is never encoded */
		strcpy(m.u.named.name, ".x");
		assert_int_equal(vyre_msg_encode(&m, buf, sizeof(buf)), VYRE_E_INVAL);
		m.u.named.name[0] = '\0';
		assert_int_equal(vyre_msg_encode(&m, buf, sizeof(buf)), VYRE_E_INVAL);
	}
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_CREATE;
	memset(m.u.named.name, 'z', VYRE_BUFFER_NAME_MAX);
	roundtrip(&m, &o);
	assert_int_equal(strlen(o.u.named.name), VYRE_BUFFER_NAME_MAX);

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_LIST;
	m.u.list_cursor = 0x12345;
	roundtrip(&m, &o);
	assert_int_equal(o.u.list_cursor, 0x12345);

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_LIST_REPLY;
	m.u.list_reply.handle = 0x300002;
	m.u.list_reply.bytes = 64;
	m.u.list_reply.flags = VYRE_BUF_TRANSIENT;
	m.u.list_reply.next = 3;
	strcpy(m.u.list_reply.name, "alpha");
	roundtrip(&m, &o);
	assert_int_equal(o.u.list_reply.handle, 0x300002);
	assert_int_equal(o.u.list_reply.bytes, 64);
	assert_int_equal(o.u.list_reply.flags, VYRE_BUF_TRANSIENT);
	assert_int_equal(o.u.list_reply.next, 3);
	assert_string_equal(o.u.list_reply.name, "alpha");
	/* no entry: no name; a cursor to go on from, or 0 at the end */
	memset(&m.u, 0, sizeof(m.u));
	m.u.list_reply.next = 4097;
	roundtrip(&m, &o);
	assert_int_equal(o.u.list_reply.handle, 0);
	assert_string_equal(o.u.list_reply.name, "");
	strcpy(m.u.list_reply.name, "alpha");
	assert_int_equal(vyre_msg_encode(&m, buf, sizeof(buf)), VYRE_E_INVAL);
}

/* Encodes @m, sets byte @at to @v and expects the decoder to refuse it. */
static void refused_with(const struct vyre_msg *m, size_t at, uint8_t v)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg o;
	int len = vyre_msg_encode(m, buf, sizeof(buf));

	assert_true(len > 0 && at < (size_t)len);
	buf[at] = v;
	assert_int_equal(vyre_msg_decode(buf, (size_t)len, &o), VYRE_E_PROTO);
}

static void test_named_malformed(void **state)
{
	struct vyre_msg m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_CREATE;
	strcpy(m.u.named.name, "job");
	refused_with(&m, 16 + 8, VYRE_BUFFER_NAME_MAX + 1); /* name length */
	refused_with(&m, 16 + 8, 0);			    /* empty, and bytes after it */
	refused_with(&m, 16 + 12, 1);			    /* reserved word */
	refused_with(&m, 16 + 16, '.');			    /* leading '.' */
	refused_with(&m, 16 + 17, ' ');			    /* a blank */
	refused_with(&m, 16 + 17, 0);			    /* a NUL inside the name */
	refused_with(&m, 16 + 16 + 3, 'x');		    /* bytes after the name */
	m.type = VYRE_MSG_OPEN;
	refused_with(&m, 16, 4);       /* length past the name: a NUL inside */
	refused_with(&m, 16 + 4, 1);   /* reserved word */
	refused_with(&m, 16 + 8, '-'); /* leading '-' */
	m.type = VYRE_MSG_FREE_NAME;
	refused_with(&m, 16 + 8 + 47, 'q'); /* the last padding byte */
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_LIST;
	refused_with(&m, 16 + 4, 1);
	m.type = VYRE_MSG_LIST_REPLY;
	refused_with(&m, 16 + 4 + 4, 4);      /* bytes without an entry */
	refused_with(&m, 16 + 12, 1);	      /* flags without an entry */
	refused_with(&m, 16 + 20, 1);	      /* a name length without an entry */
	refused_with(&m, 16, 1);	      /* a positive status */
	refused_with(&m, 16, 0xf4);	      /* -12: past the last error code */
	m.u.list_reply.status = VYRE_E_NOENT; /* the lowest code decodes */
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg o;
	int len = vyre_msg_encode(&m, buf, sizeof(buf));

	assert_int_equal(vyre_msg_decode(buf, (size_t)len, &o), 0);
	assert_int_equal(o.u.list_reply.status, VYRE_E_NOENT);
	refused_with(&m, 16 + 16, 1); /* an error with a cursor */
	m.u.list_reply.status = 0;
	m.u.list_reply.handle = 7;
	strcpy(m.u.list_reply.name, "ok");
	refused_with(&m, 16 + 12, 4);	/* flags beyond VYRE_BUF_* */
	refused_with(&m, 16 + 24, '_'); /* a bad entry name */
	refused_with(&m, 16, 0xff);	/* an error with an entry */
}

/* OP_LOOKUP, OP_LIST and OP_REPLY (docs/design.md 6.7): round trips and every refusal. */
static void test_op_messages(void **state)
{
	struct vyre_msg m, o;

	(void)state;
	assert_true(vyre_msg_op_name_ok("crc32c", 6) && vyre_msg_op_name_ok("a_1", 3));
	assert_false(vyre_msg_op_name_ok("", 0) || vyre_msg_op_name_ok("Crc", 3) ||
		     vyre_msg_op_name_ok("1a", 2) || vyre_msg_op_name_ok("_a", 2) ||
		     vyre_msg_op_name_ok("a-b", 3) || vyre_msg_op_name_ok("a.b", 3) ||
		     vyre_msg_op_name_ok("abcdefghijklmnopqrstuvwxyz012345", 32));
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_OP_LOOKUP;
	memset(m.u.op_name, 'q', VYRE_OP_NAME_MAX);
	roundtrip(&m, &o);
	assert_int_equal(strlen(o.u.op_name), VYRE_OP_NAME_MAX);
	refused_with(&m, 16, VYRE_OP_NAME_MAX + 1); /* name length */
	refused_with(&m, 16 + 4, 1);		    /* reserved word */
	refused_with(&m, 16 + 8, '7');		    /* a digit first */
	refused_with(&m, 16 + 9, 'Q');		    /* upper case */
	refused_with(&m, 16, 3);		    /* bytes after the name */
	m.u.op_name[0] = 0;
	assert_int_equal(vyre_msg_encode(&m, (uint8_t[128]){0}, 128), VYRE_E_INVAL);

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_OP_LIST;
	m.u.list_cursor = 14;
	roundtrip(&m, &o);
	assert_int_equal(o.u.list_cursor, 14);
	refused_with(&m, 16 + 7, 1);

	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_OP_REPLY;
	m.u.op_reply.op = VYRE_OP_MODULE_BIT | 0x1234;
	m.u.op_reply.flags = VYRE_OP_INFO_PURE | VYRE_OP_INFO_IN | VYRE_OP_INFO_OUT;
	m.u.op_reply.next = 15;
	strcpy(m.u.op_reply.name, "crc32c");
	strcpy(m.u.op_reply.module, "checksums");
	roundtrip(&m, &o);
	assert_int_equal(o.u.op_reply.op, VYRE_OP_MODULE_BIT | 0x1234);
	assert_int_equal(o.u.op_reply.flags, m.u.op_reply.flags);
	assert_int_equal(o.u.op_reply.next, 15);
	assert_string_equal(o.u.op_reply.name, "crc32c");
	assert_string_equal(o.u.op_reply.module, "checksums");
	refused_with(&m, 16 + 8, 0x40);		  /* flags beyond VYRE_OP_INFO_ALL */
	refused_with(&m, 16 + 24, 'C');		  /* a bad op name */
	refused_with(&m, 16 + 24 + 32, '_');	  /* a bad module name */
	refused_with(&m, 16 + 20, 0);		  /* a module op without its module */
	refused_with(&m, 16 + 7, 0);		  /* a module's op without the module bit */
	refused_with(&m, 16 + 24 + 32 + 31, 'x'); /* the module's last padding byte */
	refused_with(&m, 16, 0xff);		  /* an error with an op */
	strcpy(m.u.op_reply.module, "");	  /* a built-in op: no module, no bit */
	assert_int_equal(vyre_msg_encode(&m, (uint8_t[128]){0}, 128) > 0, 1);
	refused_with(&m, 16 + 7, 0x80);
	/* no op: nothing but a status and, for a list, 0 */
	memset(&m.u, 0, sizeof(m.u));
	m.u.op_reply.status = VYRE_E_NOENT;
	roundtrip(&m, &o);
	assert_int_equal(o.u.op_reply.status, VYRE_E_NOENT);
	assert_string_equal(o.u.op_reply.name, "");
	refused_with(&m, 16 + 4, 1);  /* an op number without a name */
	refused_with(&m, 16 + 8, 1);  /* flags without a name */
	refused_with(&m, 16 + 12, 1); /* an error with a cursor */
	refused_with(&m, 16 + 20, 3); /* a module without a name */
	strcpy(m.u.op_reply.module, "orphan");
	assert_int_equal(vyre_msg_encode(&m, (uint8_t[128]){0}, 128), VYRE_E_INVAL);
}

static int fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_fd_passing(void **state)
{
	int sv[2], p[2], fds[VYRE_MSG_MAX_FDS];
	unsigned nfds;
	struct vyre_msg m, o;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_ERROR;
	m.u.error = VYRE_E_INVAL;
	int three[3] = {p[0], p[1], p[0]};

	assert_int_equal(vyre_msg_send(sv[0], &m, three, 3), 0);
	assert_int_equal(vyre_msg_recv(sv[1], &o, fds, 2, &nfds, MSG_DONTWAIT), 0);
	assert_int_equal(o.u.error, VYRE_E_INVAL);
	assert_int_equal(nfds, 2); /* the third was closed for us */
	assert_true(fd_open(fds[0]) && fd_open(fds[1]));
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(vyre_msg_recv(sv[1], &o, fds, 2, &nfds, MSG_DONTWAIT), VYRE_E_AGAIN);

	/* A garbage datagram with descriptors: error, and nothing leaks. */
	uint8_t junk[40] = {1, 2, 3};

	assert_int_equal(send(sv[0], junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	assert_int_equal(vyre_msg_recv(sv[1], &o, fds, 2, &nfds, MSG_DONTWAIT), VYRE_E_PROTO);
	assert_int_equal(nfds, 0);
	/* An oversized datagram is truncated, hence rejected. */
	uint8_t huge[512] = {0};

	assert_int_equal(send(sv[0], huge, sizeof(huge), 0), (ssize_t)sizeof(huge));
	assert_int_equal(vyre_msg_recv(sv[1], &o, fds, 2, &nfds, MSG_DONTWAIT), VYRE_E_PROTO);

	close(sv[0]);
	assert_int_equal(vyre_msg_recv(sv[1], &o, fds, 2, &nfds, 0), VYRE_E_DISCONNECTED);
	assert_int_equal(vyre_msg_send(sv[1], &m, NULL, 0), VYRE_E_DISCONNECTED);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_little_endian_on_the_wire),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_fd_passing),
	    cmocka_unit_test(test_name_rules),
	    cmocka_unit_test(test_named_roundtrip),
	    cmocka_unit_test(test_named_malformed),
	    cmocka_unit_test(test_op_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
