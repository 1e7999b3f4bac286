/* SPDX-License-Identifier: MIT */
/*
 * A client that only polls vyre_event_fd() learns that vyred is gone
 * (docs/design.md section 5):
 *  - clients in a shared and in private domains, each only epoll-waiting on
 *    its eventfd, see it readable within DEADLINE_MS of vyred's SIGKILL, and
 *    of a SIGTERM stop; then vyre_submit, vyre_reap and vyre_buffer_alloc
 *    return VYRE_E_DISCONNECTED;
 *  - vyre_close while the watcher waits, and right after vyred died (while
 *    the watcher may be writing the eventfd), leaves no thread and no file
 *    descriptor behind.
 */
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define CLIENTS	    4
#define DEADLINE_MS 2000
#define SERVE_MS    30000
#define ROUNDS	    40u

static struct vyre_test_daemon dmn;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_to(const char *domain, struct vyre_client **c)
{
	struct vyre_connect_opts o = {
	    .socket_path = dmn.socket, .domain = domain, .heap_bytes = 1u << 20, .sq_entries = 64};
	int rc = vyre_connect(&o, c);

	if (rc != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	return 0;
}

/* Drains one eventfd; 0 when it held a count. */
static int drain(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) && v > 0 ? 0 : -1;
}

/*
 * Client @i joins the epoll set @ep through its eventfd and gets one item
 * served the epoll way, so the fd is known to work before vyred goes. The
 * clients before it are quiet, so only its eventfd may be readable.
 */
static int arm(struct vyre_client *c, int ep, int i)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i}, got;
	struct vyre_cqe cqe;
	uint32_t buf;
	int fd = vyre_event_fd(c);

	if (fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		FAIL("client %d: event fd", i);
	if (vyre_buffer_alloc(c, 64, 0, &buf) != 0)
		FAIL("client %d: alloc", i);
	struct vyre_work_item it = {VYRE_OP_FILL, 0, buf, 7};

	if (vyre_submit(c, &it, 1, 0) != 0)
		FAIL("client %d: submit", i);
	/* vyred posts the CQE, then writes the eventfd: drained first, it stays quiet after. */
	for (int64_t end = now_ms() + SERVE_MS;;) {
		int n = epoll_wait(ep, &got, 1, (int)(end - now_ms()));

		if (n < 1 || now_ms() >= end)
			FAIL("client %d: no CQE through the eventfd in %d ms", i, SERVE_MS);
		if (got.data.u32 != (uint32_t)i || drain(fd) != 0)
			FAIL("client %d: a stray or empty eventfd", i);
		if (vyre_reap(c, &cqe, 1) == 1)
			break;
	}
	if (cqe.status != 0 || cqe.user_data != 1)
		FAIL("client %d: FILL status %d", i, cqe.status);
	return 0;
}

/* Every call of a client whose vyred is gone says so. */
static int calls_disconnected(struct vyre_client *c, int i)
{
	struct vyre_work_item it = {VYRE_OP_NOP, 0, 0, 0};
	struct vyre_cqe cqe;
	uint32_t h;
	int s = vyre_submit(c, &it, 2, 0), r = vyre_reap(c, &cqe, 1),
	    a = vyre_buffer_alloc(c, 4, 0, &h);

	if (s != VYRE_E_DISCONNECTED || r != VYRE_E_DISCONNECTED || a != VYRE_E_DISCONNECTED)
		FAIL("client %d after vyred went: submit %s, reap %s, alloc %s", i,
		     vyre_strerror(s), vyre_strerror(r), vyre_strerror(a));
	return 0;
}

/*
 * CLIENTS clients (two in one shared domain, two private) only epoll-wait;
 * vyred is SIGKILLed (@by_kill) or stopped with SIGTERM.
 */
static int every_client_learns(int by_kill)
{
	const char *how = by_kill ? "SIGKILL" : "SIGTERM";
	struct vyre_client *c[CLIENTS] = {0};
	struct epoll_event got[CLIENTS];
	int ep = epoll_create1(EPOLL_CLOEXEC), seen = 0, rc = -1;

	if (ep < 0 || vyre_test_daemon_start(&dmn, NULL) != 0)
		FAIL("start");
	for (int i = 0; i < CLIENTS; i++)
		if (connect_to(i < 2 ? "shared" : NULL, &c[i]) || arm(c[i], ep, i))
			goto out;
	if (epoll_wait(ep, got, CLIENTS, 100) != 0) {
		fprintf(stderr, "FAIL: an eventfd is readable while vyred is idle\n");
		goto out;
	}
	int64_t t0 = now_ms();

	if (by_kill)
		vyre_test_daemon_kill(&dmn);
	else if (vyre_test_daemon_stop(&dmn) != 0)
		goto out;
	while (seen != (1 << CLIENTS) - 1) {
		int left = (int)(t0 + DEADLINE_MS - now_ms());
		int n = epoll_wait(ep, got, CLIENTS, left > 0 ? left : 0);

		if (n <= 0) {
			fprintf(stderr, "FAIL: %s: eventfds readable %#x of %#x after %d ms\n", how,
				seen, (1 << CLIENTS) - 1, DEADLINE_MS);
			goto out;
		}
		for (int k = 0; k < n; k++) {
			int i = (int)got[k].data.u32, fd = vyre_event_fd(c[i]);

			if (drain(fd) != 0 || epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL) != 0) {
				fprintf(stderr, "FAIL: client %d: readable but empty\n", i);
				goto out;
			}
			seen |= 1 << i;
		}
	}
	int64_t took = now_ms() - t0;

	for (int i = 0; i < CLIENTS; i++)
		if (calls_disconnected(c[i], i))
			goto out;
	printf("ok: %s: %d event-fd-only clients woke within %lld ms, then VYRE_E_DISCONNECTED\n",
	       how, CLIENTS, (long long)took);
	rc = 0;
out:
	for (int i = 0; i < CLIENTS; i++)
		vyre_close(c[i]);
	close(ep);
	vyre_test_daemon_cleanup(&dmn);
	return rc;
}

/* Threads and descriptors of this process are back to @threads and @fds. */
static int footprint_is(int threads, int fds, const char *after)
{
	int t = vyre_test_dir_entries("/proc/self/task"),
	    f = vyre_test_dir_entries("/proc/self/fd");

	if (t != threads || f != fds)
		FAIL("after %s: %d threads and %d fds, %d and %d before", after, t, f, threads,
		     fds);
	return 0;
}

/*
 * vyre_close while the watcher sleeps (at once, or once it surely polls), and
 * right after vyred died, while the watcher may be writing the eventfd.
 */
static int close_while_watching(void)
{
	struct vyre_client *c[CLIENTS];
	int rc = -1;

	if (vyre_test_daemon_start(&dmn, NULL) != 0)
		FAIL("start");
	int threads = vyre_test_dir_entries("/proc/self/task"),
	    fds = vyre_test_dir_entries("/proc/self/fd");

	for (uint32_t r = 0; r < ROUNDS; r++) {
		if (connect_to(r % 2 ? "shared" : NULL, &c[0]))
			goto out;
		if (vyre_event_fd(c[0]) < 0) {
			fprintf(stderr, "FAIL: event fd\n");
			vyre_close(c[0]);
			goto out;
		}
		if (r % 4 == 3)
			usleep(2000);
		vyre_close(c[0]);
	}
	if (footprint_is(threads, fds, "closing watched clients"))
		goto out;
	for (int i = 0; i < CLIENTS; i++)
		if (connect_to(NULL, &c[i]) || vyre_event_fd(c[i]) < 0) {
			for (int k = 0; k < i; k++)
				vyre_close(c[k]);
			goto out;
		}
	vyre_test_daemon_kill(&dmn);
	for (int i = 0; i < CLIENTS; i++) {
		if (i % 2)
			usleep(1000);
		vyre_close(c[i]);
	}
	if (footprint_is(threads, fds, "closing clients of a killed vyred"))
		goto out;
	printf("ok: vyre_close with the watcher waiting, %u times, and racing vyred's death\n",
	       ROUNDS);
	rc = 0;
out:
	if (rc)
		vyre_test_daemon_dump_log(&dmn);
	vyre_test_daemon_cleanup(&dmn);
	return rc;
}

int main(void)
{
	if (every_client_learns(1) || every_client_learns(0) || close_while_watching())
		return 1;
	printf("PASS\n");
	return 0;
}
