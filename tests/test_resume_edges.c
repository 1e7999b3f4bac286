/* SPDX-License-Identifier: MIT */
/*
 * test_resume_edges - corners of restart without loss (docs/design.md
 * section 3) that test_resume's load does not reach on purpose:
 *
 * - a resumable client whose last batch had no item to run (every item
 *   failed when it was resolved) is still resumed by the next vyred: its
 *   region's indexes stay ordered (sq_head <= cq_tail <= sq_accepted).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vyre/vyre.h"

#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define SEC 1000000000ll

static int failed;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

/* One CQE within 10 s; its status, or the error. */
static int one(struct vyre_client *c, struct vyre_cqe *q)
{
	int rc = vyre_wait(c, q, 1, 10 * SEC);

	return rc == 1 ? q->status : (rc < 0 ? rc : VYRE_E_PROTO);
}

/* Waits until @c sees its vyred gone (the hang-up comes a little after a kill). */
static int see_gone(struct vyre_client *c)
{
	struct vyre_cqe q;
	int rc = VYRE_E_TIMEDOUT;

	for (int i = 0; i < 100 && rc == VYRE_E_TIMEDOUT; i++)
		rc = vyre_wait(c, &q, 1, SEC / 10);
	return rc == VYRE_E_DISCONNECTED ? 0 : -1;
}

static void last_batch_all_failed(const char *backend)
{
	const char *args[] = {"--backend", backend, NULL};
	struct vyre_test_daemon d[2];
	struct vyre_client *c = NULL;
	struct vyre_cqe q;
	uint32_t out;
	char line[160];

	memset(d, 0, sizeof(d));
	if (vyre_test_daemon_start(&d[0], args) != 0) {
		check(0, "vyred starts");
		return;
	}
	const char *again[] = {"--backend", backend, "--socket", d[0].socket, NULL};
	struct vyre_connect_opts o = {.socket_path = d[0].socket, .flags = VYRE_CONNECT_RESUMABLE};
	const struct vyre_work_item fill = {.op_handle = VYRE_OP_FILL, .param = 7};
	struct vyre_work_item bad = {.op_handle = VYRE_OP_COPY, .input_handle = 0x7ffff};

	if (vyre_connect(&o, &c) != 0 || vyre_buffer_alloc(c, 4096, 0, &out) != 0) {
		check(0, "a resumable connection and a buffer");
		goto out;
	}
	struct vyre_work_item ok_item = fill;

	ok_item.output_handle = out;
	bad.output_handle = out;
	check(vyre_submit(c, &ok_item, 1, 0) == 0 && one(c, &q) == 0, "an item runs");
	check(vyre_submit(c, &bad, 2, 0) == 0 && one(c, &q) == VYRE_E_INVAL,
	      "an item with an unknown input fails");
	vyre_test_daemon_kill(&d[0]);
	check(see_gone(c) == 0, "the client sees the kill");
	if (vyre_test_daemon_start(&d[1], again) != 0) {
		check(0, "a new vyred");
		goto out;
	}
	int rc = vyre_reconnect(c, 5 * SEC);

	snprintf(line, sizeof(line), "resumed after a last batch that ran nothing: %s (%d)",
		 rc < 0 ? vyre_strerror(rc) : "ok", rc);
	check(rc == 0, line);
	check(rc == 0 && vyre_submit(c, &ok_item, 3, 0) == 0 && one(c, &q) == 0 && q.user_data == 3,
	      "an item runs on the new vyred");
out:
	if (c)
		vyre_close(c);
	for (int i = 0; i < 2; i++) {
		if (failed && d[i].log[0])
			vyre_test_daemon_dump_log(&d[i]);
		if (d[i].pid > 0)
			vyre_test_daemon_finish(&d[i]);
		else
			vyre_test_daemon_cleanup(&d[i]);
	}
}

int main(void)
{
	const char *backend = getenv("VYRE_TEST_BACKEND") ? getenv("VYRE_TEST_BACKEND") : "cpu";

	last_batch_all_failed(backend);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
