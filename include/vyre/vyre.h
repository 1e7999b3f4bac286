/* SPDX-License-Identifier: MIT */
/*
 * vyre/vyre.h - the vyre client library (libvyre).
 *
 * A client connects to vyred over a unix socket, receives its region (SQ and
 * CQ rings) and its domain's heap as sealed memfds, allocates buffers in the
 * heap, submits work items and reaps completions. Link with
 * `pkg-config --libs vyre`.
 *
 * Threads: any number of threads may call vyre_submit(), vyre_submit_batch()
 * and their _range variants on one connection at once; vyre_reap(), vyre_wait() and
 * the buffer calls must be made by one thread at a time.
 *
 * Every int-returning call returns 0 (or a count) on success and a negative
 * VYRE_E_* value on failure; vyre_strerror() names it.
 */
#ifndef VYRE_VYRE_H
#define VYRE_VYRE_H

#include <stdint.h>

#include "vyre/abi.h"
#include "vyre/op_module.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VYRE_DEFAULT_SOCKET	"/run/vyre/vyre.sock"
#define VYRE_DEFAULT_SQ_ENTRIES 4096u
#define VYRE_DEFAULT_CQ_ENTRIES 8192u
#define VYRE_DEFAULT_HEAP_BYTES (64ull << 20)
#define VYRE_MAX_RING_ENTRIES	(1u << 20)
#define VYRE_DOMAIN_NAME_MAX	64u
#define VYRE_BUFFER_NAME_MAX	48u

struct vyre_client;

struct vyre_connect_opts {
	const char *socket_path; /* NULL: $VYRE_SOCKET, else VYRE_DEFAULT_SOCKET */
	const char *domain;	 /* NULL: a private domain for this connection */
	uint32_t sq_entries;	 /* 0: default; rounded up to a power of two */
	uint32_t cq_entries;	 /* 0: default; rounded up to a power of two */
	uint64_t heap_bytes;	 /* 0: default; used only if this call creates the domain */
	uint32_t flags;		 /* VYRE_CONNECT_* */
	uint32_t priority;	 /* class 0 (default) to VYRE_PRIORITY_MAX; higher is more urgent */
};

/* vyre_connect_opts.flags (docs/design.md sections 3 and 5) */
#define VYRE_CONNECT_RESUMABLE (1u << 0) /* keep what a new vyred needs: vyre_reconnect() works */
#define VYRE_CONNECT_RECONNECT (1u << 1) /* RESUMABLE, and calls that find vyred gone reconnect */
#define VYRE_CONNECT_RERUN     (1u << 2) /* a resume runs accepted, uncompleted items again */
#define VYRE_CONNECT_VALID     (VYRE_CONNECT_RESUMABLE | VYRE_CONNECT_RECONNECT | VYRE_CONNECT_RERUN)
#define VYRE_PRIORITY_MAX      3u

/* vyre_buffer_alloc() flags (docs/design.md sections 6.2 and 6.3); at most one. */
#define VYRE_BUF_DEVICE	   (1u << 0) /* in the device's memory; not mappable */
#define VYRE_BUF_TRANSIENT (1u << 1) /* seen only inside the chain that writes it */

/*
 * vyre_connect - connect to vyred and map the region and the domain heap.
 * @o may be NULL for all defaults. On success *out owns the connection.
 * Errors: VYRE_E_DISCONNECTED (no daemon), VYRE_E_PERM (uid/gid not allowed),
 * VYRE_E_PROTO (ABI version mismatch or a malformed reply), VYRE_E_INVAL,
 * VYRE_E_NOMEM.
 */
int vyre_connect(const struct vyre_connect_opts *o, struct vyre_client **out);

/* vyre_close - unmap and disconnect; items in flight are abandoned. */
void vyre_close(struct vyre_client *c);

/*
 * vyre_buffer_alloc - allocate @bytes (a multiple of 4, may be 0),
 * zero-filled: in the domain heap with @flags 0, in the device's memory
 * with VYRE_BUF_DEVICE (docs/design.md section 6.2: only items see its
 * bytes), in the domain heap but seen only inside the chain that writes it
 * with VYRE_BUF_TRANSIENT (section 6.3). *handle is non-zero and valid for
 * every client of the domain until freed. VYRE_E_INVAL for unknown or
 * combined flags, VYRE_E_NOMEM when the heap, vyred's handle limit or its
 * device memory limit is exhausted.
 */
int vyre_buffer_alloc(struct vyre_client *c, uint32_t bytes, uint32_t flags, uint32_t *handle);

/* vyre_buffer_free - release a buffer; later items naming it fail with VYRE_E_INVAL. */
int vyre_buffer_free(struct vyre_client *c, uint32_t handle);

/*
 * vyre_buffer_ptr - address of a buffer in this process's mapping of the heap,
 * or NULL for an unknown handle and for a device or transient buffer (its
 * bytes are not the client's). *bytes (if not NULL) gets its length, device
 * and transient buffers included.
 * The memory is shared with vyred: read results only after their CQE.
 */
void *vyre_buffer_ptr(struct vyre_client *c, uint32_t handle, uint32_t *bytes);

/* A named buffer of the domain, as vyre_buffer_list() reports it. */
struct vyre_buffer_info {
	char name[VYRE_BUFFER_NAME_MAX + 1]; /* NUL-terminated */
	uint32_t handle;
	uint32_t bytes;
	uint32_t flags; /* VYRE_BUF_* */
};

/*
 * Named buffers (docs/design.md section 5). A name is 1 to
 * VYRE_BUFFER_NAME_MAX bytes of [A-Za-z0-9._-] starting with a letter or a
 * digit, unique among the live buffers of its domain and visible to every
 * client of the domain, never to another domain. Freeing a buffer, by handle
 * or by name, frees its name; a free that waits for an in-flight batch keeps
 * the name until then. Each call returns VYRE_E_INVAL for a NULL or bad name,
 * and VYRE_E_PROTO from a vyred older than named buffers (it disconnects).
 */

/*
 * vyre_buffer_create - as vyre_buffer_alloc(), and the buffer gets @name in
 * its domain. VYRE_E_EXIST when a live buffer of the domain has that name.
 */
int vyre_buffer_create(struct vyre_client *c, const char *name, uint32_t bytes, uint32_t flags,
		       uint32_t *handle);

/*
 * vyre_buffer_open - the handle of the domain's buffer named @name in
 * *handle, its size in *bytes and its VYRE_BUF_* flags in *flags (@bytes
 * and @flags may be NULL). vyre_buffer_ptr() then gives its address.
 * VYRE_E_NOENT when the domain has no buffer of that name.
 */
int vyre_buffer_open(struct vyre_client *c, const char *name, uint32_t *handle, uint32_t *bytes,
		     uint32_t *flags);

/*
 * vyre_buffer_list - the domain's named buffers in name order (strcmp): at
 * most @max of them in @out (NULL when @max is 0). Returns how many there
 * are, which may exceed @max. The list is taken one entry per round trip:
 * a name created or freed meanwhile may or may not be in it.
 */
int vyre_buffer_list(struct vyre_client *c, struct vyre_buffer_info *out, uint32_t max);

/*
 * vyre_buffer_free_name - vyre_buffer_free() of the domain's buffer named
 * @name. VYRE_E_NOENT when there is none.
 */
int vyre_buffer_free_name(struct vyre_client *c, const char *name);

/* An op of the daemon, as vyre_op_list() reports it. */
struct vyre_op_info {
	char name[VYRE_OP_NAME_MAX + 1];   /* NUL-terminated: "crc32c", "dfa_scan" */
	char module[VYRE_OP_NAME_MAX + 1]; /* its module's name; "" for a built-in op */
	uint32_t op;			   /* the number to put in vyre_work_item.op_handle */
	uint32_t flags;			   /* VYRE_OP_INFO_* */
};

#define VYRE_OP_INFO_PURE    (1u << 0) /* identical items may be deduplicated */
#define VYRE_OP_INFO_STREAM  (1u << 1) /* reads its input once, in order (design.md 6.7) */
#define VYRE_OP_INFO_IN	     (1u << 2) /* reads in_handle */
#define VYRE_OP_INFO_OUT     (1u << 3) /* writes out_handle */
#define VYRE_OP_INFO_TABLE   (1u << 4) /* param is a buffer handle it reads whole */
#define VYRE_OP_INFO_COUNTED (1u << 5) /* its input is counted bytes (design.md 6.1) */
#define VYRE_OP_INFO_ALL     0x3fu

/*
 * vyre_op_lookup - the number vyred gives the op named @name in *op: a
 * built-in op's VYRE_OP_* ("fill", "dfa_scan": its name in lower case) or
 * an op of a module the operator installed (docs/design.md 6.7), whose
 * number is this vyred's: look it up again after a reconnect (a vyred
 * with changed modules gives other numbers, and items of the old ones
 * complete with VYRE_E_INVAL).
 * VYRE_E_NOENT when vyred has no op of that name, VYRE_E_INVAL for a NULL
 * or bad name (1 to VYRE_OP_NAME_MAX bytes of [a-z0-9_], a letter first),
 * VYRE_E_PROTO from a vyred older than op lookup (it disconnects).
 */
int vyre_op_lookup(struct vyre_client *c, const char *name, uint32_t *op);

/*
 * vyre_op_list - the ops vyred runs, built-in ones in number order, then
 * module ops in number order: at most @max of them in @out (NULL when @max
 * is 0). Returns how many there are, which may exceed @max. One round trip
 * an op. VYRE_E_PROTO from a vyred older than op lookup (it disconnects).
 */
int vyre_op_list(struct vyre_client *c, struct vyre_op_info *out, uint32_t max);

/*
 * vyre_submit - queue one item. Returns 0, or VYRE_E_AGAIN when the SQ is full
 * (nothing was queued: reap and retry), VYRE_E_INVAL for bad flags
 * (VYRE_SQE_RANGE included: vyre_submit_range gives the range),
 * VYRE_E_DISCONNECTED when vyred is gone.
 */
int vyre_submit(struct vyre_client *c, const struct vyre_work_item *it, uint64_t user_data,
		uint32_t flags);

/*
 * vyre_submit_batch - queue up to @n items with flags 0; returns how many were
 * accepted (a prefix of @its), 0 when the SQ is full, or a negative error.
 */
int vyre_submit_batch(struct vyre_client *c, const struct vyre_work_item *its,
		      const uint64_t *user_data, uint32_t n);

/*
 * An item's byte ranges (docs/design.md 6.6): the op sees in_length bytes of
 * its input from in_offset and out_length bytes of its output from
 * out_offset, as if they were whole buffers. Offsets and lengths are
 * multiples of 4 within the buffers; an operand the op lacks has 0 and 0.
 * The DFA or BYTEMAP table is always its whole buffer.
 */
struct vyre_item_range {
	uint64_t in_offset;
	uint64_t out_offset;
	uint32_t in_length;
	uint32_t out_length;
};

/*
 * vyre_submit_range - vyre_submit() of an item whose operands are the byte
 * ranges @range of its buffers (VYRE_SQE_RANGE is added to @flags). @range
 * NULL is VYRE_E_INVAL; vyred checks the range itself when it takes the
 * item, and completes a bad one with VYRE_E_INVAL.
 */
int vyre_submit_range(struct vyre_client *c, const struct vyre_work_item *it,
		      const struct vyre_item_range *range, uint64_t user_data, uint32_t flags);

/*
 * vyre_submit_batch_range - vyre_submit_batch() of ranged items, @ranges[i]
 * for @its[i]; returns how many were accepted (a prefix), 0 when the SQ is
 * full, or a negative error.
 */
int vyre_submit_batch_range(struct vyre_client *c, const struct vyre_work_item *its,
			    const struct vyre_item_range *ranges, const uint64_t *user_data,
			    uint32_t n);

/*
 * vyre_submit_stream - vyre_submit() of a DFA_REPORT or DFA_REPORT_COUNTED
 * item that continues the stream in buffer @stream (docs/design.md 6.8;
 * 0: no stream), with the byte ranges @range (NULL: none; else
 * VYRE_SQE_RANGE is added to @flags). VYRE_E_INVAL for another op, bad
 * flags or a NULL item; vyred checks the stream buffer when it takes the
 * item.
 */
int vyre_submit_stream(struct vyre_client *c, const struct vyre_work_item *it, uint32_t stream,
		       const struct vyre_item_range *range, uint64_t user_data, uint32_t flags);

/*
 * vyre_reap - copy up to @max ready CQEs into @out without blocking; returns
 * the count, or VYRE_E_DISCONNECTED once vyred closed the connection or died
 * (every 1024th call that finds nothing looks at the socket).
 */
int vyre_reap(struct vyre_client *c, struct vyre_cqe *out, uint32_t max);

/*
 * vyre_wait - like vyre_reap, but sleeps until at least one CQE is ready or
 * @timeout_ns passes (negative: forever). Returns the count, VYRE_E_TIMEDOUT
 * or VYRE_E_DISCONNECTED.
 */
int vyre_wait(struct vyre_client *c, struct vyre_cqe *out, uint32_t max, int64_t timeout_ns);

/*
 * vyre_event_fd - an eventfd that becomes readable when CQEs are ready, for
 * epoll loops. Read it (8 bytes) to clear it, then vyre_reap(). It also
 * becomes readable when vyred goes away, closed or killed: the first call
 * starts a thread of libvyre's that sleeps until the control socket hangs
 * up (vyre_close() stops it), so a client that only polls this fd learns of
 * a dead vyred at once; its next vyre_reap(), vyre_submit() or buffer call
 * then returns VYRE_E_DISCONNECTED (vyre_reap() first hands out the CQEs
 * still in the ring). Returns the fd, or VYRE_E_NOMEM when the thread cannot
 * start. The fd belongs to the connection.
 */
int vyre_event_fd(struct vyre_client *c);

/*
 * vyre_reconnect - resume a resumable connection whose vyred is gone, or
 * dropped it, with the next vyred on the same socket (docs/design.md
 * section 3): it adopts this connection's region, heap and buffers, so
 * handles and buffer pointers stay valid. Tries every 10 ms until
 * @timeout_ns passes (negative: forever, 0: once). Returns how many items
 * the dead vyred had accepted without completing them (each now completed
 * with VYRE_E_RESTARTED, or run again with VYRE_CONNECT_RERUN), 0 at once on
 * a live connection. Errors: VYRE_E_INVAL (not resumable), VYRE_E_TIMEDOUT,
 * and the new vyred's refusals: VYRE_E_PERM, VYRE_E_EXIST, VYRE_E_PROTO,
 * VYRE_E_NOMEM. Made by one thread at a time, like vyre_wait().
 */
int vyre_reconnect(struct vyre_client *c, int64_t timeout_ns);

/* vyre_strerror - a static English description of a VYRE_E_* value. */
const char *vyre_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* VYRE_VYRE_H */
