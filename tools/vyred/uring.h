/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/uring.h - the reactor: io_uring submissions a loop makes and
 * the tag each carries. An operation's user_data is its kind and a slot (a
 * connection slot, or 0); the loop (loop.c) has the one switch over the
 * completions. Nothing here knows a connection: callers pass descriptors,
 * buffers and the slot to tag with.
 */
#ifndef VYRED_URING_H
#define VYRED_URING_H

#include <liburing.h>
#include <poll.h>
#include <stdint.h>

#ifndef IORING_OP_FUTEX_WAIT
#define IORING_OP_FUTEX_WAIT 51
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#define VYRE_FUTEX_MATCH_ANY 0xffffffffull

enum vyre_io_kind {
	VYRE_IO_ACCEPT = 1,
	VYRE_IO_SIGNAL,
	VYRE_IO_POLL,
	VYRE_IO_WAIT,
	VYRE_IO_EFD_WRITE,
	VYRE_IO_CANCEL,
	VYRE_IO_PROBE,
	VYRE_IO_TICK,
	VYRE_IO_BACKEND,
	VYRE_IO_INBOX,
	VYRE_IO_GPU_TICK,
	VYRE_IO_WATCHDOG,
};

static inline uint64_t vyre_io_tag(enum vyre_io_kind kind, uint32_t slot)
{
	return ((uint64_t)kind << 56) | slot;
}

static inline enum vyre_io_kind vyre_io_kind(uint64_t data)
{
	return (enum vyre_io_kind)(data >> 56);
}

static inline uint32_t vyre_io_slot(uint64_t data)
{
	return (uint32_t)data;
}

/* A free SQE, submitting what is queued when the SQ is full. */
static inline struct io_uring_sqe *vyre_uring_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	while (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	return sqe;
}

static inline void vyre_uring_prep_futex_wait(struct io_uring_sqe *sqe, uint32_t *word,
					      uint32_t val)
{
	io_uring_prep_rw(IORING_OP_FUTEX_WAIT, sqe, FUTEX2_SIZE_U32, word, 0, val);
	sqe->addr3 = VYRE_FUTEX_MATCH_ANY;
}

/* A poll for input (or the peer's hang-up) on @fd, tagged @kind, @slot. */
static inline void vyre_uring_poll(struct io_uring *ring, int fd, enum vyre_io_kind kind,
				   uint32_t slot)
{
	struct io_uring_sqe *sqe = vyre_uring_sqe(ring);

	io_uring_prep_poll_add(sqe, fd, POLLIN | POLLRDHUP);
	io_uring_sqe_set_data64(sqe, vyre_io_tag(kind, slot));
}
/* A read of @len bytes of @fd into @buf, tagged @kind, @slot. */
static inline void vyre_uring_read(struct io_uring *ring, int fd, void *buf, unsigned len,
				   enum vyre_io_kind kind, uint32_t slot)
{
	struct io_uring_sqe *sqe = vyre_uring_sqe(ring);

	io_uring_prep_read(sqe, fd, buf, len, 0);
	io_uring_sqe_set_data64(sqe, vyre_io_tag(kind, slot));
}
/* A write of @len bytes of @buf to @fd, tagged @kind, @slot. */
static inline void vyre_uring_write(struct io_uring *ring, int fd, const void *buf, unsigned len,
				    enum vyre_io_kind kind, uint32_t slot)
{
	struct io_uring_sqe *sqe = vyre_uring_sqe(ring);

	io_uring_prep_write(sqe, fd, buf, len, 0);
	io_uring_sqe_set_data64(sqe, vyre_io_tag(kind, slot));
}
/* A timeout of @ts (read when submitted), tagged @kind. */
static inline void vyre_uring_timeout(struct io_uring *ring, struct __kernel_timespec *ts,
				      enum vyre_io_kind kind)
{
	struct io_uring_sqe *sqe = vyre_uring_sqe(ring);

	io_uring_prep_timeout(sqe, ts, 0, 0);
	io_uring_sqe_set_data64(sqe, vyre_io_tag(kind, 0));
}
/* Cancel the operation tagged @kind, @slot; the cancel itself is tagged VYRE_IO_CANCEL. */
void vyre_uring_cancel(struct io_uring *ring, enum vyre_io_kind kind, uint32_t slot);
/* Does this kernel's io_uring have FUTEX_WAIT? 1 or 0. */
int vyre_uring_probe_futex(struct io_uring *ring);

#endif /* VYRED_URING_H */
