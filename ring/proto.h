/* SPDX-License-Identifier: MIT */
/*
 * ring/proto.h - the control protocol between libvyre and vyred.
 *
 * Transport: a SOCK_SEQPACKET unix socket, so every message is one datagram.
 * Every message is a fixed-size little-endian record: a 16-byte header and a
 * body whose size is fixed by the type. File descriptors travel as
 * SCM_RIGHTS on the same datagram.
 *
 *	header	off 0  u32 magic        VYRE_PROTO_MAGIC
 *		off 4  u32 abi_version  VYRE_ABI_VERSION of the sender
 *		off 8  u16 type         enum vyre_msg_type
 *		off 10 u16 length       header + body, must equal the type's size
 *		off 12 u32 id           chosen by the client, echoed in the reply
 *
 *	HELLO (client -> vyred, 1 fd: the client's eventfd for vyre_event_fd;
 *		with VYRE_HELLO_RESUME 4: it, then the region, heap and ledger
 *		memfds the client kept)
 *		u32 sq_entries, u32 cq_entries (0 = defaults), u64 heap_bytes,
 *		u32 flags (VYRE_HELLO_*: bits 0-2, the priority class in bits
 *		8-11; any other bit is refused with VYRE_E_INVAL), u32 domain_len
 *		(0 = private domain, <= 64), u8 domain[64] (printable ASCII,
 *		zero padded)
 *	HELLO_REPLY (vyred -> client; on success 3 fds: region memfd, heap
 *		memfd, the SQ eventfd vyred polls in eventfd doorbell mode; a
 *		resumable connection's ledger memfd is a 4th)
 *		i32 status, u32 client_id, u32 domain_id, u32 sq_entries,
 *		u32 cq_entries, u32 restarted (a resume: items accepted by the
 *		dead vyred and not completed, which this one completes with
 *		VYRE_E_RESTARTED or runs again; else 0), u64 region_bytes,
 *		u64 heap_bytes
 *	ALLOC	u32 bytes, u32 flags (0, VYRE_BUF_DEVICE or VYRE_BUF_TRANSIENT;
 *		any other value is refused with VYRE_E_INVAL in the reply)
 *	FREE	u32 handle, u32 zero
 *	LOOKUP	u32 handle, u32 zero
 *	BUFFER_REPLY (to ALLOC, FREE, LOOKUP)
 *		i32 status, u32 handle, u64 offset, u32 bytes, u32 flags (the
 *		buffer's VYRE_BUF_* flags; a device buffer has offset 0 and is not
 *		in the heap; a transient one is in the heap but not the client's
 *		to map; other bits are a protocol error)
 *	ERROR (vyred -> client, then vyred disconnects)
 *		i32 status, u32 zero
 *	CREATE	u32 bytes, u32 flags (as ALLOC), u32 name_len, u32 zero,
 *		u8 name[48]; answered by BUFFER_REPLY as ALLOC
 *	OPEN	u32 name_len, u32 zero, u8 name[48]; BUFFER_REPLY as LOOKUP
 *	FREE_NAME u32 name_len, u32 zero, u8 name[48]; BUFFER_REPLY with the
 *		freed buffer's handle
 *	LIST	u32 cursor (0 to start), u32 zero
 *	LIST_REPLY (to LIST) i32 status, u32 handle, u32 bytes, u32 flags,
 *		u32 next (the cursor of the next LIST), u32 name_len,
 *		u8 name[48]: the domain's first named buffer at or past the
 *		cursor (cursors follow vyred's table, not name order); handle
 *		0, no name, bytes or flags when vyred looked at a stretch of
 *		its table and found none: next is where to go on, 0 at the end
 *
 *	OP_LOOKUP u32 name_len, u32 zero, u8 name[32]: an op's name
 *		(vyre_msg_op_name_ok)
 *	OP_LIST	u32 cursor (0 to start), u32 zero
 *	OP_REPLY (to OP_LOOKUP and OP_LIST) i32 status, u32 op, u32 flags
 *		(VYRE_OP_INFO_*), u32 next (OP_LIST: the cursor of the next
 *		entry, 0 after the last; OP_LOOKUP: 0), u32 name_len, u32
 *		module_len (0 for a built-in op), u8 name[32], u8 module[32]:
 *		the op, or no name, op, flags or module when there is none
 *		(a failed lookup, a cursor past the end)
 *
 * A name (docs/design.md section 5) is name_len (1 to VYRE_BUFFER_NAME_MAX)
 * bytes that vyre_msg_name_ok() accepts, then zeros: anything else is a
 * malformed message. CREATE, OPEN, FREE_NAME and LIST are refused with
 * VYRE_E_PROTO by a vyred older than named buffers, OP_LOOKUP and OP_LIST by
 * one older than op lookup (docs/design.md 6.7).
 *
 * The first message must be HELLO. A HELLO whose abi_version differs from
 * vyred's gets a HELLO_REPLY with VYRE_E_PROTO, and the connection is closed.
 * A malformed message (bad magic, length or type, non-zero reserved bytes)
 * gets an ERROR reply with VYRE_E_PROTO and a disconnect.
 */
#ifndef VYRE_RING_PROTO_H
#define VYRE_RING_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "vyre/abi.h"
#include "vyre/vyre.h"

#define VYRE_PROTO_MAGIC     0x43525956u /* "VYRC" little-endian */
#define VYRE_MSG_HEADER_SIZE 16u
#define VYRE_MSG_MAX_SIZE    128u
#define VYRE_MSG_MAX_FDS     4u

/* HELLO flags (docs/design.md section 3) */
#define VYRE_HELLO_RESUMABLE	  (1u << 0) /* keep a ledger fd and sq_accepted for a later resume */
#define VYRE_HELLO_RESUME	  (1u << 1) /* adopt the region, heap and ledger passed (implies 0) */
#define VYRE_HELLO_RERUN	  (1u << 2) /* run accepted, uncompleted items again */
#define VYRE_HELLO_PRIORITY_SHIFT 8u
#define VYRE_HELLO_PRIORITY_MASK  (0xfu << VYRE_HELLO_PRIORITY_SHIFT)
#define VYRE_HELLO_VALID                                                                           \
	(VYRE_HELLO_RESUMABLE | VYRE_HELLO_RESUME | VYRE_HELLO_RERUN | VYRE_HELLO_PRIORITY_MASK)

enum vyre_msg_type {
	VYRE_MSG_HELLO = 1,
	VYRE_MSG_HELLO_REPLY = 2,
	VYRE_MSG_ALLOC = 3,
	VYRE_MSG_FREE = 4,
	VYRE_MSG_LOOKUP = 5,
	VYRE_MSG_BUFFER_REPLY = 6,
	VYRE_MSG_ERROR = 7,
	VYRE_MSG_CREATE = 8,
	VYRE_MSG_OPEN = 9,
	VYRE_MSG_FREE_NAME = 10,
	VYRE_MSG_LIST = 11,
	VYRE_MSG_LIST_REPLY = 12,
	VYRE_MSG_OP_LOOKUP = 13,
	VYRE_MSG_OP_LIST = 14,
	VYRE_MSG_OP_REPLY = 15,
};

struct vyre_msg_hello {
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint64_t heap_bytes;
	uint32_t flags;
	char domain[VYRE_DOMAIN_NAME_MAX + 1]; /* NUL-terminated; "" = private */
};

/* The priority class a HELLO asks for (not bounded: vyred checks it). */
static inline uint32_t vyre_hello_priority(const struct vyre_msg_hello *h)
{
	return (h->flags & VYRE_HELLO_PRIORITY_MASK) >> VYRE_HELLO_PRIORITY_SHIFT;
}

struct vyre_msg_hello_reply {
	int32_t status;
	uint32_t client_id;
	uint32_t domain_id;
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t restarted;
	uint64_t region_bytes;
	uint64_t heap_bytes;
};

/* ALLOC (bytes, flags), FREE and LOOKUP (handle). */
struct vyre_msg_buffer {
	uint32_t handle;
	uint32_t bytes;
	uint32_t flags;
};

struct vyre_msg_buffer_reply {
	int32_t status;
	uint32_t handle;
	uint64_t offset;
	uint32_t bytes;
	uint32_t flags; /* VYRE_BUF_* of the buffer */
};

/* CREATE (bytes, flags, name), OPEN and FREE_NAME (name). */
struct vyre_msg_name {
	uint32_t bytes;
	uint32_t flags;
	char name[VYRE_BUFFER_NAME_MAX + 1]; /* NUL-terminated */
};

struct vyre_msg_list_reply {
	int32_t status;
	uint32_t handle; /* 0: no more names */
	uint32_t bytes;
	uint32_t flags; /* VYRE_BUF_* of the buffer */
	uint32_t next;
	char name[VYRE_BUFFER_NAME_MAX + 1]; /* NUL-terminated; "" with handle 0 */
};

/* OP_REPLY: one op; no name when there is none. */
struct vyre_msg_op_reply {
	int32_t status;
	uint32_t op;
	uint32_t flags; /* VYRE_OP_INFO_* */
	uint32_t next;
	char name[VYRE_OP_NAME_MAX + 1];   /* NUL-terminated; "" with no op */
	char module[VYRE_OP_NAME_MAX + 1]; /* "" for a built-in op */
};

struct vyre_msg {
	uint32_t abi_version;
	uint16_t type;
	uint32_t id;
	union {
		struct vyre_msg_hello hello;
		struct vyre_msg_hello_reply hello_reply;
		struct vyre_msg_buffer buffer;
		struct vyre_msg_buffer_reply buffer_reply;
		struct vyre_msg_name named;
		uint32_t list_cursor; /* LIST and OP_LIST */
		struct vyre_msg_list_reply list_reply;
		char op_name[VYRE_OP_NAME_MAX + 1]; /* OP_LOOKUP, NUL-terminated */
		struct vyre_msg_op_reply op_reply;
		int32_t error;
	} u;
};

/*
 * vyre_msg_name_ok - 1 when the @len bytes at @name are a buffer name: 1 to
 * VYRE_BUFFER_NAME_MAX bytes of [A-Za-z0-9._-], the first a letter or a digit.
 */
int vyre_msg_name_ok(const char *name, size_t len);

/*
 * vyre_msg_op_name_ok - 1 when the @len bytes at @name are an op's name: 1 to
 * VYRE_OP_NAME_MAX bytes of [a-z0-9_], the first a letter (docs/design.md 6.7).
 */
int vyre_msg_op_name_ok(const char *name, size_t len);

/* The wire size of a message of @type, or 0 for an unknown type. */
size_t vyre_msg_size(uint16_t type);

/*
 * vyre_msg_encode - write @m (abi_version is set to VYRE_ABI_VERSION unless
 * already set) into @buf. Returns the length or VYRE_E_INVAL (unknown type,
 * domain name too long or not printable, a bad buffer name).
 */
int vyre_msg_encode(const struct vyre_msg *m, uint8_t *buf, size_t cap);

/*
 * vyre_msg_decode - parse and validate one datagram. The ABI version is
 * returned, not checked: the receiver decides. Returns 0 or VYRE_E_PROTO.
 */
int vyre_msg_decode(const uint8_t *buf, size_t len, struct vyre_msg *m);

/*
 * vyre_msg_send - encode and send @m with @nfds descriptors. Returns 0,
 * VYRE_E_DISCONNECTED (peer gone), VYRE_E_AGAIN (non-blocking socket full) or
 * VYRE_E_INVAL.
 */
int vyre_msg_send(int sock, const struct vyre_msg *m, const int *fds, unsigned nfds);

/*
 * vyre_msg_recv - receive one datagram and decode it. Descriptors that came
 * with it are stored in @fds (up to @max_fds, *nfds set); any beyond that,
 * and all of them on error, are closed. @flags go to recvmsg (MSG_DONTWAIT).
 * Returns 0, VYRE_E_AGAIN (nothing to read), VYRE_E_DISCONNECTED (peer
 * closed), VYRE_E_TIMEDOUT (SO_RCVTIMEO passed) or VYRE_E_PROTO (truncated
 * or malformed).
 */
int vyre_msg_recv(int sock, struct vyre_msg *m, int *fds, unsigned max_fds, unsigned *nfds,
		  int flags);

#endif /* VYRE_RING_PROTO_H */
