/* SPDX-License-Identifier: MIT */
/*
 * test_restart - vyred killed, restarted and stopped under load.
 *
 * SIGKILL: clients blocked in vyre_wait (idle, or with items in flight) and
 * clients in the middle of control calls must get VYRE_E_DISCONNECTED within
 * a bounded time (10 s here, as a hang detector; the measured times are
 * printed). A new vyred must then start on the same socket path (the stale
 * socket is replaced) and serve; a second vyred must refuse to take over a
 * live socket. A client that only submits and reaps must notice too (every
 * 1024th empty vyre_reap looks at the socket), and one that only polls
 * vyre_event_fd (libvyre's hang-up watcher writes it, docs/design.md 5).
 *
 * SIGTERM: producers submit as fast as they can when vyred is told to stop.
 * vyred must exit 0 and remove its socket; every item its accept log lists
 * must have a CQE in its client's CQ (read after vyred is gone, from the
 * still-mapped region), no other item may have one, and every buffer must
 * hold what sequential execution of the accepted items gives.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define DETECT_LIMIT_NS (10 * 1000000000ull)
#define DRAIN_CLIENTS	4u
#define DRAIN_ITEMS	(1u << 20) /* most items one client submits */
#define DRAIN_BUFS	256u

static int failed;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

/* ---- SIGKILL ---- */

enum watcher_kind {
	WAIT_IDLE,     /* vyre_wait with nothing in flight */
	WAIT_BUSY,     /* submitting, then vyre_wait */
	CONTROL_CALLS, /* vyre_buffer_alloc / vyre_buffer_free in a loop */
	SUBMIT_REAP,   /* vyre_submit + vyre_reap only: never blocks */
	EVENT_FD,      /* poll() on vyre_event_fd only */
	N_WATCHERS,
};

static const char *const watcher_name[N_WATCHERS] = {"vyre_wait, idle",
						     "vyre_wait, items in flight", "control calls",
						     "submit + reap only", "poll on vyre_event_fd"};

struct watcher_page {
	uint32_t ready;
	int32_t rc;	  /* what the client finally got */
	uint64_t seen_ns; /* when */
};

static void watcher_main(const char *socket, enum watcher_kind kind, struct watcher_page *p)
{
	struct vyre_connect_opts o = {.socket_path = socket, .sq_entries = 64};
	struct vyre_client *c;
	struct vyre_cqe cqes[64];
	uint32_t h;
	int rc;

	if (vyre_connect(&o, &c) != 0 || vyre_buffer_alloc(c, 64, 0, &h) != 0)
		_exit(1);
	struct vyre_work_item it = {VYRE_OP_FILL, 0, h, 1};
	int efd = kind == EVENT_FD ? vyre_event_fd(c) : -1;

	__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		switch (kind) {
		case WAIT_IDLE:
			rc = vyre_wait(c, cqes, 64, -1);
			break;
		case WAIT_BUSY:
			rc = vyre_submit(c, &it, 0, 0);
			if (rc == 0 || rc == VYRE_E_AGAIN)
				rc = vyre_wait(c, cqes, 64, -1);
			break;
		case CONTROL_CALLS:
			rc = vyre_buffer_alloc(c, 64, 0, &h);
			if (rc == 0)
				rc = vyre_buffer_free(c, h);
			break;
		case SUBMIT_REAP:
			rc = vyre_submit(c, &it, 0, 0);
			if (rc == 0 || rc == VYRE_E_AGAIN)
				rc = vyre_reap(c, cqes, 64);
			break;
		default: {
			struct pollfd pf = {.fd = efd, .events = POLLIN};
			uint64_t v;

			rc = 0;
			if (poll(&pf, 1, -1) == 1 && read(efd, &v, sizeof(v)) == sizeof(v))
				rc = vyre_reap(c, cqes, 64);
			break;
		}
		}
		if (rc < 0 && rc != VYRE_E_AGAIN) {
			p->seen_ns = rel_now_ns();
			p->rc = rc;
			vyre_close(c); /* joins the event fd's watcher thread */
			_exit(0);
		}
	}
}

static void sigkill_checks(void)
{
	const char *extra[] = {"--backend", "cpu", NULL};
	struct vyre_test_daemon d, again, rival;
	struct watcher_page *pages = rel_shared_alloc(4096);
	pid_t pids[N_WATCHERS];
	char line[256];

	if (!pages || vyre_test_daemon_start(&d, extra) != 0) {
		check(0, "start vyred");
		return;
	}
	for (int k = 0; k < N_WATCHERS; k++) {
		fflush(stdout);
		pids[k] = fork();
		if (pids[k] == 0)
			watcher_main(d.socket, (enum watcher_kind)k, &pages[k]);
	}
	for (int k = 0; k < N_WATCHERS; k++)
		while (!__atomic_load_n(&pages[k].ready, __ATOMIC_ACQUIRE) &&
		       rel_child_running(pids[k]))
			rel_sleep_ns(1000000);
	rel_sleep_ns(100000000); /* let them get going */
	uint64_t killed = rel_now_ns();

	vyre_test_daemon_kill(&d);
	for (int k = 0; k < N_WATCHERS; k++) {
		int st = rel_wait_child(pids[k], DETECT_LIMIT_NS);
		int noticed = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
			      pages[k].rc == VYRE_E_DISCONNECTED;

		if (st < 0) {
			kill(pids[k], SIGKILL);
			rel_wait_child(pids[k], DETECT_LIMIT_NS);
		}
		if (noticed)
			snprintf(line, sizeof(line),
				 "%s: VYRE_E_DISCONNECTED %.1f ms after the kill", watcher_name[k],
				 (pages[k].seen_ns - killed) / 1e6);
		else
			snprintf(line, sizeof(line), "%s: %s within %llu s", watcher_name[k],
				 st < 0 ? "nothing" : vyre_strerror(pages[k].rc),
				 (unsigned long long)(DETECT_LIMIT_NS / 1000000000ull));
		check(noticed, line);
	}
	struct vyre_connect_opts o = {.socket_path = d.socket};
	struct vyre_client *c;

	check(vyre_connect(&o, &c) == VYRE_E_DISCONNECTED, "connect to a dead vyred: disconnected");

	const char *same[] = {"--backend", "cpu", "--socket", d.socket, NULL};

	check(vyre_test_daemon_start(&again, same) == 0, "a new vyred starts on the stale socket");
	if (again.pid > 0) {
		uint32_t h;
		int ok = vyre_connect(&o, &c) == 0 && vyre_buffer_alloc(c, 64, 0, &h) == 0;

		check(ok, "clients connect to the new vyred");
		check(vyre_test_daemon_start(&rival, same) != 0,
		      "a third vyred refuses to take over the live socket");
		vyre_test_daemon_cleanup(&rival);
		if (ok) {
			uint32_t bytes = 0;

			check(vyre_buffer_ptr(c, h, &bytes) && bytes == 64,
			      "the new vyred still serves after the rival's attempt");
			vyre_close(c);
		}
		check(vyre_test_daemon_stop(&again) == 0, "the new vyred stops cleanly");
		check(access(d.socket, F_OK) != 0, "its socket file is gone");
	}
	vyre_test_daemon_cleanup(&again);
	vyre_test_daemon_cleanup(&d);
	rel_shared_free(pages, 4096);
}

/* ---- SIGTERM ---- */

struct drain_page {
	uint32_t client_id;
	uint32_t ready;
	uint32_t submitted;
	int32_t end_rc;		      /* what ended the run */
	uint32_t bad;		      /* first inconsistency the client found itself, + 1 */
	uint8_t cqe[DRAIN_ITEMS / 8]; /* items with a CQE */
};

static uint32_t drain_tag(uint32_t client, uint32_t i)
{
	return (client << 20 | i) ^ 0x40000000u;
}

static void note_cqes(struct drain_page *p, const struct vyre_cqe *cqes, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t u = cqes[i].user_data;

		if (u >= DRAIN_ITEMS || cqes[i].status != 0 || (p->cqe[u / 8] >> (u % 8)) & 1)
			p->bad = p->bad ? p->bad : (uint32_t)u + 1;
		else
			p->cqe[u / 8] |= (uint8_t)(1u << (u % 8));
	}
}

/* After the end: each buffer holds the tag of the last item with a CQE that wrote it. */
static void check_buffers(struct vyre_client *c, const uint32_t *h, struct drain_page *p)
{
	for (uint32_t b = 0; b < DRAIN_BUFS; b++) {
		uint32_t want = 0;
		const uint32_t *v = vyre_buffer_ptr(c, h[b], NULL);

		for (uint32_t i = b; i < p->submitted; i += DRAIN_BUFS)
			if ((p->cqe[i / 8] >> (i % 8)) & 1)
				want = drain_tag(p->client_id, i);
		if (!v || *v != want)
			p->bad = p->bad ? p->bad : 0x80000000u | b;
	}
}

static void drain_main(const char *socket, struct drain_page *p)
{
	struct vyre_connect_opts o = {
	    .socket_path = socket, .sq_entries = 1024, .cq_entries = 1024};
	struct vyre_client *c;
	struct vyre_cqe cqes[256];
	uint32_t h[DRAIN_BUFS];
	int rc = 0, n;

	if (vyre_connect(&o, &c) != 0)
		_exit(1);
	p->client_id = rel_client_id(c);
	for (uint32_t b = 0; b < DRAIN_BUFS; b++)
		if (vyre_buffer_alloc(c, 4, 0, &h[b]) != 0)
			_exit(2);
	__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
	while (p->submitted < DRAIN_ITEMS) {
		uint32_t i = p->submitted;
		struct vyre_work_item it = {VYRE_OP_FILL, 0, h[i % DRAIN_BUFS],
					    drain_tag(p->client_id, i)};

		rc = vyre_submit(c, &it, i, 0);
		if (rc == 0)
			p->submitted++;
		else if (rc != VYRE_E_AGAIN)
			break;
		n = rc == VYRE_E_AGAIN ? vyre_wait(c, cqes, 256, 1000000000ll)
				       : vyre_reap(c, cqes, 256);
		if (n < 0 && n != VYRE_E_TIMEDOUT) {
			rc = n;
			break;
		}
		if (n > 0)
			note_cqes(p, cqes, n);
	}
	/* what is left in the CQ, readable after vyred is gone; then the disconnect */
	while ((n = vyre_wait(c, cqes, 256, -1)) > 0)
		note_cqes(p, cqes, n);
	p->end_rc = rc < 0 && rc != VYRE_E_AGAIN ? rc : n;
	check_buffers(c, h, p);
	_exit(0);
}

/* Marks, per client, the items vyred's accept log lists. */
static int read_accept_log(const char *path, struct drain_page *pages,
			   uint8_t (*logged)[DRAIN_ITEMS / 8])
{
	FILE *f = fopen(path, "r");
	unsigned client;
	unsigned long long u;
	int rc = 0;

	if (!f)
		return -1;
	while (fscanf(f, "%u %llu", &client, &u) == 2)
		for (uint32_t k = 0; k < DRAIN_CLIENTS; k++)
			if (pages[k].client_id == client) {
				if (u >= DRAIN_ITEMS || (logged[k][u / 8] >> (u % 8)) & 1)
					rc = -1;
				else
					logged[k][u / 8] |= (uint8_t)(1u << (u % 8));
			}
	fclose(f);
	return rc;
}

static void sigterm_checks(void)
{
	const char *extra[] = {"--backend", "cpu", NULL};
	struct vyre_test_daemon d;
	struct drain_page *pages = rel_shared_alloc(DRAIN_CLIENTS * sizeof(struct drain_page));
	static uint8_t logged[DRAIN_CLIENTS][DRAIN_ITEMS / 8];
	pid_t pids[DRAIN_CLIENTS];
	char line[256];

	if (!pages || vyre_test_daemon_start(&d, extra) != 0) {
		check(0, "start vyred");
		return;
	}
	for (uint32_t k = 0; k < DRAIN_CLIENTS; k++) {
		fflush(stdout);
		pids[k] = fork();
		if (pids[k] == 0)
			drain_main(d.socket, &pages[k]);
	}
	for (uint32_t k = 0; k < DRAIN_CLIENTS; k++)
		while (!__atomic_load_n(&pages[k].ready, __ATOMIC_ACQUIRE) &&
		       rel_child_running(pids[k]))
			rel_sleep_ns(1000000);
	rel_sleep_ns(200000000);
	int st = vyre_test_daemon_stop(&d);

	check(st == 0, "vyred exits 0 on SIGTERM under load");
	check(access(d.socket, F_OK) != 0, "its socket file is gone");
	uint64_t submitted = 0, completed = 0;

	for (uint32_t k = 0; k < DRAIN_CLIENTS; k++) {
		int cst = rel_wait_child(pids[k], 30 * 1000000000ull);

		snprintf(line, sizeof(line), "producer %u ended with %s, its own checks %s", k,
			 vyre_strerror(pages[k].end_rc), pages[k].bad ? "failed" : "passed");
		check(cst >= 0 && WIFEXITED(cst) && WEXITSTATUS(cst) == 0 &&
			  pages[k].end_rc == VYRE_E_DISCONNECTED && !pages[k].bad,
		      line);
		submitted += pages[k].submitted;
	}
	check(read_accept_log(d.accept_log, pages, logged) == 0, "accept log read, no item twice");
	int same = 1;

	for (uint32_t k = 0; k < DRAIN_CLIENTS; k++)
		for (uint32_t i = 0; i < DRAIN_ITEMS; i++) {
			int has_cqe = (pages[k].cqe[i / 8] >> (i % 8)) & 1;
			int accepted = (logged[k][i / 8] >> (i % 8)) & 1;

			completed += (uint64_t)has_cqe;
			if (has_cqe != accepted && same) {
				printf("producer %u item %u: %s but %s\n", k, i,
				       accepted ? "accepted" : "not accepted",
				       has_cqe ? "it has a CQE" : "it has no CQE");
				same = 0;
			}
		}
	snprintf(line, sizeof(line),
		 "every accepted item has its CQE and no other does (%" PRIu64
		 " submitted, %" PRIu64 " completed)",
		 submitted, completed);
	check(same && completed > 0, line);
	vyre_test_daemon_cleanup(&d);
	rel_shared_free(pages, DRAIN_CLIENTS * sizeof(struct drain_page));
}

int main(void)
{
	sigkill_checks();
	sigterm_checks();
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
