/* SPDX-License-Identifier: MIT */
/* A vyred client beside its oracle (devbuf_session.h). */
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>

#include "devbuf_session.h"
#include "test_integration_daemon.h"

const uint8_t *dm_read_device(struct dm_session *s, uint32_t handle, uint32_t bytes)
{
	const struct vyre_work_item it = {VYRE_OP_COPY, handle, s->scratch, 0};
	struct vyre_cqe cqe;

	if (bytes > DM_SCRATCH || vyre_submit(s->c, &it, s->next_ud++, 0) != 0 ||
	    vyre_wait(s->c, &cqe, 1, DM_SESSION_WAIT_NS) != 1 || cqe.status != 0)
		return NULL;
	return vyre_buffer_ptr(s->c, s->scratch, NULL);
}

int dm_check_buffers(struct dm_session *s, const char *what)
{
	for (uint32_t i = 0; i < s->m->n; i++) {
		const struct dm_buf *b = &s->m->b[i];
		const uint8_t *have;

		if (!b->handle)
			continue;
		have = b->device ? dm_read_device(s, b->handle, b->bytes)
				 : vyre_buffer_ptr(s->c, b->handle, NULL);
		if (!have)
			FAIL("%s: cannot read buffer %u", what, i);
		if (memcmp(have, s->m->views[i].base, b->bytes) != 0)
			FAIL("%s: %s buffer %u (%u bytes) differs from the oracle", what,
			     b->device ? "device" : "heap", i, b->bytes);
	}
	return 0;
}

int dm_start_daemon(struct vyre_test_daemon *d, const char **extra, const char **backend)
{
	const char *env = getenv("VYRE_TEST_BACKEND");

	*backend = env && *env ? env : "cpu";
	extra[1] = *backend;
	if (vyre_test_daemon_start(d, extra) == 0)
		return 0;
	if (strcmp(*backend, "cpu") != 0)
		printf("vyred --backend %s does not start here: skipped\n", *backend);
	return strcmp(*backend, "cpu") != 0 ? 77 : 1;
}

int dm_run_cases(const struct dm_case *cases, uint32_t n)
{
	int rc = 0;

	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		rc = cases[i].fn();
		printf("%s: %s\n", cases[i].name, rc ? "FAIL" : "ok");
	}
	return rc;
}

int dm_wait_items(struct dm_session *s, uint64_t first_ud, uint32_t n, struct vyre_cqe *cqe,
		  const char *what)
{
	struct vyre_cqe got[64];

	for (uint32_t seen = 0; seen < n;) {
		const uint32_t want = n - seen < 64 ? n - seen : 64;
		int k = vyre_wait(s->c, got, want, DM_SESSION_WAIT_NS);

		if (k <= 0)
			FAIL("%s: wait: %s", what, k < 0 ? vyre_strerror(k) : "nothing");
		for (int j = 0; j < k; j++) {
			const uint64_t i = got[j].user_data - first_ud;

			if (i >= n)
				FAIL("%s: a CQE for user_data %" PRIu64, what, got[j].user_data);
			cqe[i] = got[j];
		}
		seen += (uint32_t)k;
	}
	return 0;
}
