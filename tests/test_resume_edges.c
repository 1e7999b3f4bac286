/* SPDX-License-Identifier: MIT */
/*
 * test_resume_edges - corners of restart without loss (docs/design.md
 * section 3) that test_resume's load does not reach on purpose:
 *
 * - a resumable client whose last batch had no item to run (every item
 *   failed when it was resolved) is still resumed by the next vyred: its
 *   region's indexes stay ordered (sq_head <= cq_tail <= sq_accepted);
 * - a resumable client that vyred dropped (a malformed control message)
 *   while its batch ran resumes into the same vyred only once that batch is
 *   over: after vyre_reconnect reported the batch's items, nothing of it
 *   still writes the heap;
 * - a control call in flight when vyred dies returns VYRE_E_DISCONNECTED
 *   even with VYRE_CONNECT_RECONNECT (the dead vyred may have served it: a
 *   second ALLOC would leak a buffer, a second FREE fail), and the next
 *   call resumes.
 *
 * A step waits for the event it needs, within PATIENCE (scaled for sanitizer
 * builds), never for a fixed time: a slow or loaded machine only slows it.
 * The one sleep is the 3 s in which the heap must not change.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "vyre/vyre.h"

#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define SEC	 1000000000ll
#define BIG	 (512u << 20) /* one FILL long enough to be caught running */
#define BIG_HEAP (BIG + (1u << 20))

/*
 * How long a step waits for an event that must come. Sanitizer builds run
 * the CPU backend's loops far slower: under TSan one FILL of BIG takes 10 s
 * and more on two loaded cores (0.25 s plain), and vyre_reconnect into the
 * vyred that dropped us waits out the rest of it. Only a broken step waits
 * this long, so it is generous.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SLOW 10
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SLOW 10
#endif
#endif
#ifndef SLOW
#define SLOW 1
#endif
#define PATIENCE (10 * SEC * SLOW)

static int failed;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

/* One CQE within PATIENCE; its status, or the error. */
static int one(struct vyre_client *c, struct vyre_cqe *q)
{
	int rc = vyre_wait(c, q, 1, PATIENCE);

	return rc == 1 ? q->status : (rc < 0 ? rc : VYRE_E_PROTO);
}

/* Waits until @c sees its vyred gone (the hang-up comes a little after a kill). */
static int see_gone(struct vyre_client *c)
{
	struct vyre_cqe q;
	int rc = VYRE_E_TIMEDOUT;

	for (int64_t i = 0; i < PATIENCE / (SEC / 10) && rc == VYRE_E_TIMEDOUT; i++)
		rc = vyre_wait(c, &q, 1, SEC / 10);
	return rc == VYRE_E_DISCONNECTED ? 0 : -1;
}

/* Starts @d[0]; the rest of @d are zeroed for daemons on its socket. 0, or -1 (reported). */
static int start_first(struct vyre_test_daemon *d, unsigned n, const char *const *args)
{
	memset(d, 0, n * sizeof(*d));
	if (vyre_test_daemon_start(&d[0], args) == 0)
		return 0;
	check(0, "vyred starts");
	return -1;
}

/* A successor of @first on its socket. */
static int start_next(struct vyre_test_daemon *next, const struct vyre_test_daemon *first,
		      const char *backend)
{
	const char *args[] = {"--backend", backend, "--socket", first->socket, NULL};

	return vyre_test_daemon_start(next, args);
}

/* Stops what still runs of @d, with its log when something failed. */
static void finish_all(struct vyre_test_daemon *d, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (failed && d[i].log[0])
			vyre_test_daemon_dump_log(&d[i]);
		if (d[i].pid > 0)
			vyre_test_daemon_finish(&d[i]);
		else
			vyre_test_daemon_cleanup(&d[i]);
	}
}

static void last_batch_all_failed(const char *backend)
{
	const char *args[] = {"--backend", backend, NULL};
	struct vyre_test_daemon d[2];
	struct vyre_client *c = NULL;
	struct vyre_cqe q;
	uint32_t out;
	char line[160];

	if (start_first(d, 2, args) != 0)
		return;
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
	if (start_next(&d[1], &d[0], backend) != 0) {
		check(0, "a new vyred");
		goto out;
	}
	int rc = vyre_reconnect(c, PATIENCE);

	snprintf(line, sizeof(line), "resumed after a last batch that ran nothing: %s (%d)",
		 rc < 0 ? vyre_strerror(rc) : "ok", rc);
	check(rc == 0, line);
	check(rc == 0 && vyre_submit(c, &ok_item, 3, 0) == 0 && one(c, &q) == 0 && q.user_data == 3,
	      "an item runs on the new vyred");
out:
	if (c)
		vyre_close(c);
	finish_all(d, 2);
}

/* A few words of a buffer, to see whether anything still writes it. */
static void sample(const uint32_t *p, uint32_t bytes, uint32_t *s)
{
	for (uint32_t k = 0; k < 16; k++)
		s[k] = p[(uint64_t)(bytes / 4 - 1) * k / 15];
}

static void dropped_while_running(const char *backend)
{
	const char *args[] = {"--backend", backend, "--cpu-threads", "1", NULL};
	struct vyre_test_daemon d;
	struct vyre_client *c = NULL;
	uint32_t big, small, before[16], after[16];
	char line[200];

	if (start_first(&d, 1, args) != 0)
		return;
	struct vyre_connect_opts o = {
	    .socket_path = d.socket, .heap_bytes = BIG_HEAP, .flags = VYRE_CONNECT_RESUMABLE};
	struct vyre_work_item fill = {.op_handle = VYRE_OP_FILL, .param = 0x5a5a5a5au};
	uint32_t bytes = 0;
	const uint32_t *p, *sp;

	if (vyre_connect(&o, &c) != 0 || vyre_buffer_alloc(c, BIG, 0, &big) != 0 ||
	    !(p = vyre_buffer_ptr(c, big, &bytes)) || vyre_buffer_alloc(c, 4096, 0, &small) != 0 ||
	    !(sp = vyre_buffer_ptr(c, small, NULL))) {
		check(0, "a resumable connection, a big buffer and a small one");
		goto out;
	}
	fill.output_handle = big;
	check(vyre_submit(c, &fill, 1, 0) == 0 && vyre_test_wait_dispatched(&d, 1, PATIENCE) == 0,
	      "a long item is dispatched");
	/* a malformed control message: vyred drops us while the item runs */
	check(send(rel_client_socket(c), "x", 1, MSG_NOSIGNAL) == 1 && see_gone(c) == 0,
	      "dropped for a malformed message");
	const uint64_t t0 = rel_now_ns();
	/* refused with VYRE_E_AGAIN, and retried, until the long item is over */
	int rc = vyre_reconnect(c, PATIENCE);

	sample(p, BIG, before);
	snprintf(line, sizeof(line), "resumed into the same vyred after %.1f ms: %s (%d)",
		 (double)(rel_now_ns() - t0) / 1e6, rc < 0 ? vyre_strerror(rc) : "ok", rc);
	check(rc == 1, line);
	rel_sleep_ns(3 * SEC);
	sample(p, BIG, after);
	check(memcmp(before, after, sizeof(before)) == 0,
	      "nothing of the dropped connection's batch writes the heap after the resume");
	struct vyre_cqe q;

	check(rc == 1 && one(c, &q) == VYRE_E_RESTARTED && q.user_data == 1,
	      "its item is reported VYRE_E_RESTARTED");
	/* a small item: its time is the resumed connection's, not another long FILL's */
	fill.param = 1;
	fill.output_handle = small;
	check(rc == 1 && vyre_submit(c, &fill, 2, 0) == 0 && one(c, &q) == 0 && q.user_data == 2 &&
		  sp[0] == 1,
	      "an item runs after the resume");
out:
	if (c)
		vyre_close(c);
	finish_all(&d, 1);
}

struct call {
	struct vyre_client *c;
	uint32_t handle;
	int rc;
};

static void *alloc_thread(void *arg)
{
	struct call *k = arg;

	k->rc = vyre_buffer_alloc(k->c, 4096, 0, &k->handle);
	return NULL;
}

/* Waits until a request of @c lies unread in its stopped vyred's socket. 0, or -1. */
static int request_sent(struct vyre_client *c)
{
	const uint64_t until = rel_now_ns() + PATIENCE;
	int queued = 0;

	while (ioctl(rel_client_socket(c), SIOCOUTQ, &queued) == 0 && queued == 0 &&
	       rel_now_ns() < until)
		rel_sleep_ns(SEC / 1000);
	return queued > 0 ? 0 : -1;
}

static void call_in_flight(const char *backend)
{
	const char *args[] = {"--backend", backend, NULL};
	struct vyre_test_daemon d[2];
	struct call k = {.rc = 1};
	pthread_t th;
	char line[160];

	if (start_first(d, 2, args) != 0)
		return;
	struct vyre_connect_opts o = {.socket_path = d[0].socket, .flags = VYRE_CONNECT_RECONNECT};

	if (vyre_connect(&o, &k.c) != 0) {
		check(0, "a reconnecting connection");
		goto out;
	}
	/* vyred stopped with our request unread; its successor listens on the same path */
	vyre_test_daemon_signal(&d[0], SIGSTOP);
	unlink(d[0].socket);
	if (start_next(&d[1], &d[0], backend) != 0) {
		check(0, "a new vyred beside the stopped one");
		goto out;
	}
	if (pthread_create(&th, NULL, alloc_thread, &k) != 0) {
		check(0, "a thread");
		goto out;
	}
	check(request_sent(k.c) == 0, "the ALLOC is sent to the stopped vyred");
	vyre_test_daemon_kill(&d[0]);
	pthread_join(th, NULL);
	snprintf(line, sizeof(line), "an ALLOC in flight when vyred dies: %s",
		 k.rc < 0 ? vyre_strerror(k.rc) : "served again");
	check(k.rc == VYRE_E_DISCONNECTED, line);
	check(vyre_buffer_alloc(k.c, 4096, 0, &k.handle) == 0, "the next ALLOC resumes and runs");
out:
	if (k.c)
		vyre_close(k.c);
	finish_all(d, 2);
}

int main(void)
{
	const char *backend = getenv("VYRE_TEST_BACKEND") ? getenv("VYRE_TEST_BACKEND") : "cpu";

	last_batch_all_failed(backend);
	dropped_while_running(backend);
	call_in_flight(backend);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
