/* SPDX-License-Identifier: MIT */
/*
 * tests/devbuf_session.h - a client of a live vyred beside its oracle
 * (devbuf_model.h), for the tests of device buffers and byte ranges: the
 * device buffers' bytes are read back through a heap scratch buffer, and
 * every buffer the model knows is compared with vyred's.
 */
#ifndef VYRE_TESTS_DEVBUF_SESSION_H
#define VYRE_TESTS_DEVBUF_SESSION_H

#include <stdint.h>

#include "devbuf_model.h"
#include "vyre/vyre.h"

#define DM_SCRATCH	   8192u /* the heap buffer device buffers are read back through */
#define DM_SESSION_WAIT_NS (30ll * 1000000000ll)

struct dm_session {
	struct vyre_client *c;
	struct dm *m;
	uint32_t scratch; /* a heap buffer of DM_SCRATCH bytes */
	uint64_t next_ud;
};

/* A device buffer's bytes, through a plain COPY into the scratch buffer; NULL on failure. */
const uint8_t *dm_read_device(struct dm_session *s, uint32_t handle, uint32_t bytes);

/* Every live buffer of the model equals vyred's: 0, or -1 after saying which (@what first). */
int dm_check_buffers(struct dm_session *s, const char *what);

/*
 * Wait for the CQEs of the @n items submitted with user_data @first_ud,
 * @first_ud + 1, ...: item i's goes to @cqe[i]. 0, or -1 after saying why.
 */
int dm_wait_items(struct dm_session *s, uint64_t first_ud, uint32_t n, struct vyre_cqe *cqe,
		  const char *what);

struct vyre_test_daemon;

/*
 * Start vyred with @extra, whose extra[1] (after "--backend") is set to
 * $VYRE_TEST_BACKEND, else "cpu" (*backend says which). 0, or what main
 * returns: 77 when another backend does not start here (only test_cuda_e2e
 * asks for one, where it can start; said so), 1 when the CPU backend does not.
 */
int dm_start_daemon(struct vyre_test_daemon *d, const char **extra, const char **backend);

/* A test's cases in order, each said ok or FAIL, up to the first that fails: 0 or -1. */
struct dm_case {
	const char *name;
	int (*fn)(void);
};
int dm_run_cases(const struct dm_case *cases, uint32_t n);

#endif /* VYRE_TESTS_DEVBUF_SESSION_H */
