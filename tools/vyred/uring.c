/* SPDX-License-Identifier: MIT */
/* The reactor (uring.h): cancelling a tagged operation, and the FUTEX_WAIT probe. */
#include <errno.h>

#include "uring.h"

void vyre_uring_cancel(struct io_uring *ring, enum vyre_io_kind kind, uint32_t slot)
{
	struct io_uring_sqe *sqe = vyre_uring_sqe(ring);

	io_uring_prep_cancel64(sqe, vyre_io_tag(kind, slot), 0);
	io_uring_sqe_set_data64(sqe, vyre_io_tag(VYRE_IO_CANCEL, slot));
}

/* A mismatched value answers -EAGAIN where FUTEX_WAIT exists. */
int vyre_uring_probe_futex(struct io_uring *ring)
{
	uint32_t word = 1;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe = vyre_uring_sqe(ring);
	int res;

	vyre_uring_prep_futex_wait(sqe, &word, 0);
	io_uring_sqe_set_data64(sqe, vyre_io_tag(VYRE_IO_PROBE, 0));
	if (io_uring_submit_and_wait(ring, 1) < 0 || io_uring_wait_cqe(ring, &cqe) != 0)
		return 0;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res == -EAGAIN;
}
