/* SPDX-License-Identifier: MIT */
/*
 * test_limits - vyred's configured limits are enforced with clear errors,
 * and a limit reached never breaks what already runs.
 *
 * vyred runs with small limits: 4 clients, 3 domains, 16 buffers, SQ 256,
 * CQ 512, heap 1 MiB. Each limit is reached and passed: ring and heap sizes
 * over the maximum are VYRE_E_INVAL (defaults are capped to the maximum,
 * odd sizes rounded up to powers of two), one client, domain or buffer too
 * many is VYRE_E_NOMEM and fits again once one is released, a heap cannot
 * hand out more than it has. Connections that never say HELLO hold
 * handshake slots: when all are taken a client is refused with
 * VYRE_E_NOMEM (not left hanging) and gets in once they go. A client that
 * stops reaping fills its CQ, then its SQ: vyre_submit says VYRE_E_AGAIN and
 * nothing submitted is lost. Existing clients keep working throughout.
 */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define MAX_CLIENTS   4u
#define MAX_DOMAINS   3u
#define MAX_BUFFERS   16u
#define SQ_MAX	      256u
#define CQ_MAX	      512u
#define HEAP_MAX      (1u << 20)
#define HANDSHAKE_MAX (MAX_CLIENTS + 16u) /* tools/vyred/main.c: slots for handshakes */

static int failed;
static const char *sock;
static pid_t vyred_pid;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

/* Waits until vyred has let go of every closed client (no memfd mapped). */
static void settle(void)
{
	struct rel_maps m;

	for (int i = 0; i < 500; i++) {
		if (rel_maps_read(vyred_pid, &m) == 0 && m.memfd_count == 0)
			return;
		rel_sleep_ns(10000000);
	}
	check(0, "vyred lets go of closed clients");
}

static int try_connect(const char *domain, uint32_t sq, uint32_t cq, uint64_t heap,
		       struct vyre_client **out)
{
	struct vyre_connect_opts o = {.socket_path = sock,
				      .domain = domain,
				      .sq_entries = sq,
				      .cq_entries = cq,
				      .heap_bytes = heap};
	struct vyre_client *c = NULL;
	int rc = vyre_connect(&o, &c);

	if (out)
		*out = c;
	else
		vyre_close(c);
	return rc;
}

static void expect_connect(const char *what, const char *domain, uint32_t sq, uint32_t cq,
			   uint64_t heap, int want, uint32_t want_sq, uint32_t want_cq,
			   uint64_t want_heap)
{
	struct vyre_client *c;
	char line[256];

	settle();
	int rc = try_connect(domain, sq, cq, heap, &c);

	uint64_t region_bytes, heap_bytes = 0;
	const struct vyre_region_header *h = rc == 0 ? rel_client_region(c, &region_bytes) : NULL;

	if (h)
		rel_client_heap(c, &heap_bytes);
	int ok = rc == want && (rc != 0 || (h->sq_entries == want_sq && h->cq_entries == want_cq &&
					    heap_bytes == want_heap));

	if (rc == 0)
		snprintf(line, sizeof(line), "%s: sq %u cq %u heap %" PRIu64, what, h->sq_entries,
			 h->cq_entries, heap_bytes);
	else
		snprintf(line, sizeof(line), "%s: %s", what, vyre_strerror(rc));
	check(ok, line);
	vyre_close(c);
}

static void ring_and_heap_sizes(void)
{
	expect_connect("defaults are capped to the maxima", NULL, 0, 0, 0, 0, SQ_MAX, CQ_MAX,
		       HEAP_MAX);
	expect_connect("sizes are rounded up to powers of two", NULL, 3, 100, 5000, 0, 4, 128,
		       8192);
	expect_connect("the largest SQ and CQ allowed", NULL, SQ_MAX, CQ_MAX, HEAP_MAX, 0, SQ_MAX,
		       CQ_MAX, HEAP_MAX);
	expect_connect("an SQ over the maximum", NULL, SQ_MAX + 1, 0, 0, VYRE_E_INVAL, 0, 0, 0);
	expect_connect("a CQ over the maximum", NULL, 0, CQ_MAX * 2, 0, VYRE_E_INVAL, 0, 0, 0);
	expect_connect("a ring over VYRE_MAX_RING_ENTRIES", NULL, VYRE_MAX_RING_ENTRIES * 2, 0, 0,
		       VYRE_E_INVAL, 0, 0, 0);
	expect_connect("a heap over the maximum", NULL, 0, 0, HEAP_MAX + 1, VYRE_E_INVAL, 0, 0, 0);
	expect_connect("a heap of 2^63 bytes", NULL, 0, 0, 1ull << 63, VYRE_E_INVAL, 0, 0, 0);
	expect_connect("a domain name with a space", "a b", 0, 0, 0, VYRE_E_INVAL, 0, 0, 0);
	expect_connect("an empty domain name", "", 0, 0, 0, VYRE_E_INVAL, 0, 0, 0);
	char name[VYRE_DOMAIN_NAME_MAX + 2];

	memset(name, 'n', sizeof(name));
	name[VYRE_DOMAIN_NAME_MAX + 1] = '\0';
	expect_connect("a 65-byte domain name", name, 0, 0, 0, VYRE_E_INVAL, 0, 0, 0);
	name[VYRE_DOMAIN_NAME_MAX] = '\0';
	expect_connect("a 64-byte domain name", name, 0, 0, 0, 0, SQ_MAX, CQ_MAX, HEAP_MAX);
}

/* A client that works after a limit was hit: a buffer, an item, its CQE. */
static int still_works(struct vyre_client *c)
{
	uint32_t h;
	struct vyre_cqe cqe;
	int rc = vyre_buffer_alloc(c, 4, 0, &h);

	if (rc != 0)
		return 0;
	struct vyre_work_item it = {VYRE_OP_FILL, 0, h, 77};

	rc = vyre_submit(c, &it, 1, 0) == 0 && vyre_wait(c, &cqe, 1, 10000000000ll) == 1 &&
	     cqe.status == 0 && *(uint32_t *)vyre_buffer_ptr(c, h, NULL) == 77;
	vyre_buffer_free(c, h);
	return rc;
}

static void clients_and_domains(void)
{
	struct vyre_client *c[MAX_CLIENTS] = {0}, *extra = NULL;
	char line[160];
	int rc;

	settle();
	/* domains: 3 are the limit; a named domain that exists is still open */
	for (uint32_t i = 0; i < MAX_DOMAINS; i++)
		try_connect(i == 0 ? "shared" : NULL, 0, 0, 0, &c[i]);
	check(c[0] && c[1] && c[2], "3 domains: the limit");
	rc = try_connect(NULL, 0, 0, 0, NULL);
	snprintf(line, sizeof(line), "a 4th domain: %s", vyre_strerror(rc));
	check(rc == VYRE_E_NOMEM, line);
	rc = try_connect("shared", 0, 0, 0, &c[3]);
	check(rc == 0, "joining an existing domain at the domain limit");
	/* clients: now 4, the limit */
	rc = try_connect("shared", 0, 0, 0, NULL);
	snprintf(line, sizeof(line), "a 5th client: %s", vyre_strerror(rc));
	check(rc == VYRE_E_NOMEM, line);
	int works = 1;

	for (uint32_t i = 0; i < MAX_CLIENTS; i++)
		works &= c[i] && still_works(c[i]);
	check(works, "every client works at the limits");
	vyre_close(c[1]);
	c[1] = NULL;
	/* a client slot and a domain are free again: vyred frees them as it sees the close */
	for (int i = 0; i < 500 && (rc = try_connect(NULL, 0, 0, 0, &extra)) == VYRE_E_NOMEM; i++)
		rel_sleep_ns(10000000);
	snprintf(line, sizeof(line), "after one leaves, a new client and domain: %s",
		 vyre_strerror(rc));
	check(rc == 0 && extra && still_works(extra), line);
	vyre_close(extra);
	for (uint32_t i = 0; i < MAX_CLIENTS; i++)
		vyre_close(c[i]);
}

static void buffers_and_heap(void)
{
	struct vyre_client *a = NULL, *b = NULL;
	uint32_t h[MAX_BUFFERS + 1], n = 0, big;
	char line[160];
	int rc = 0;

	settle();
	if (try_connect(NULL, 0, 0, 0, &a) != 0 || try_connect(NULL, 0, 0, 0, &b) != 0) {
		check(0, "two clients for the buffer limits");
		vyre_close(a);
		return;
	}
	/* the buffer limit is global: spread over two domains */
	while (n <= MAX_BUFFERS && (rc = vyre_buffer_alloc(n % 2 ? b : a, 64, 0, &h[n])) == 0)
		n++;
	snprintf(line, sizeof(line), "buffer %u of %u allowed: %s", n + 1, MAX_BUFFERS,
		 vyre_strerror(rc));
	check(n == MAX_BUFFERS && rc == VYRE_E_NOMEM, line);
	check(vyre_buffer_free(a, h[0]) == 0 && vyre_buffer_alloc(a, 64, 0, &h[0]) == 0,
	      "after a free, one more buffer fits");
	for (uint32_t i = 0; i < n; i++)
		vyre_buffer_free(i % 2 ? b : a, h[i]);
	/* the heap: 1 MiB holds one 1 MiB buffer, not a byte more */
	rc = vyre_buffer_alloc(a, HEAP_MAX + 4, 0, &big);
	snprintf(line, sizeof(line), "a buffer larger than the heap: %s", vyre_strerror(rc));
	check(rc == VYRE_E_NOMEM, line);
	rc = vyre_buffer_alloc(a, HEAP_MAX, 0, &big);
	check(rc == 0, "a buffer as large as the heap");
	uint32_t one;

	rc = vyre_buffer_alloc(a, 4, 0, &one);
	snprintf(line, sizeof(line), "one more byte in a full heap: %s", vyre_strerror(rc));
	check(rc == VYRE_E_NOMEM, line);
	check(still_works(b), "another domain is unaffected by a full heap");
	vyre_close(a);
	vyre_close(b);
}

static int raw_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void handshake_slots(void)
{
	int idle[HANDSHAKE_MAX];
	uint32_t n = 0;
	char line[200];

	settle();
	for (; n < HANDSHAKE_MAX; n++)
		if ((idle[n] = raw_connect()) < 0)
			break;
	rel_sleep_ns(100000000); /* vyred accepts them all */
	int rc = try_connect(NULL, 0, 0, 0, NULL);

	snprintf(line, sizeof(line),
		 "%u connections that never say HELLO: a real client gets %s (not a hang)", n,
		 vyre_strerror(rc));
	check(n == HANDSHAKE_MAX && rc == VYRE_E_NOMEM, line);
	/* --hello-timeout-ms 1000: vyred hangs up on every one of them */
	uint32_t hung_up = 0;
	const uint64_t t0 = rel_now_ns();

	for (uint32_t i = 0; i < n; i++) {
		struct pollfd p = {.fd = idle[i], .events = POLLIN | POLLRDHUP};

		if (poll(&p, 1, 5000) == 1 && (p.revents & (POLLIN | POLLRDHUP | POLLHUP)))
			hung_up++;
	}
	snprintf(line, sizeof(line),
		 "vyred hangs up on all %u after the HELLO timeout (%.0f ms for the last)", n,
		 (double)(rel_now_ns() - t0) / 1e6);
	check(hung_up == n, line);
	for (int i = 0; i < 500 && (rc = try_connect(NULL, 0, 0, 0, NULL)) == VYRE_E_NOMEM; i++)
		rel_sleep_ns(10000000);
	check(rc == 0, "then a real client gets in");
	for (uint32_t i = 0; i < n; i++)
		close(idle[i]);
}

static void back_pressure(void)
{
	struct vyre_client *c;
	struct vyre_cqe cqes[64];
	uint32_t h;
	uint64_t submitted = 0, reaped = 0, again = 0;
	char line[200];

	settle();
	if (try_connect(NULL, 64, 128, 0, &c) != 0 || vyre_buffer_alloc(c, 4, 0, &h) != 0) {
		check(0, "a client for back-pressure");
		return;
	}
	/* never reap: the CQ fills (128), vyred stops taking items, the SQ fills (64) */
	uint64_t quiet_since = rel_now_ns();

	while (rel_now_ns() - quiet_since < 200000000ull) {
		struct vyre_work_item it = {VYRE_OP_FILL, 0, h, (uint32_t)submitted};
		int rc = vyre_submit(c, &it, submitted, 0);

		if (rc == 0) {
			submitted++;
			quiet_since = rel_now_ns();
		} else if (rc == VYRE_E_AGAIN) {
			again++;
			rel_sleep_ns(1000000);
		} else {
			break;
		}
	}
	snprintf(line, sizeof(line),
		 "a client that stops reaping: VYRE_E_AGAIN after %" PRIu64
		 " items (SQ 64 + CQ 128)",
		 submitted);
	check(again > 0 && submitted == 64 + 128, line);
	int n;
	uint64_t next = 0;
	int in_order = 1;

	while (reaped < submitted && (n = vyre_wait(c, cqes, 64, 10000000000ll)) > 0)
		for (int i = 0; i < n; i++, reaped++)
			in_order &= cqes[i].user_data == next++ && cqes[i].status == 0;
	snprintf(line, sizeof(line), "then reaping gives all %" PRIu64 " CQEs: nothing was dropped",
		 submitted);
	check(reaped == submitted && in_order, line);
	check(*(uint32_t *)vyre_buffer_ptr(c, h, NULL) == (uint32_t)(submitted - 1),
	      "and the last item's effect is there");
	vyre_close(c);
}

int main(void)
{
	const char *extra[] = {"--backend",
			       "cpu",
			       "--max-clients",
			       "4",
			       "--max-domains",
			       "3",
			       "--max-buffers",
			       "16",
			       "--sq-entries-max",
			       "256",
			       "--cq-entries-max",
			       "512",
			       "--heap-bytes-max",
			       "1048576",
			       "--hello-timeout-ms",
			       "1000",
			       NULL};
	struct vyre_test_daemon d;

	if (vyre_test_daemon_start(&d, extra) != 0)
		return 1;
	sock = d.socket;
	vyred_pid = d.pid;
	ring_and_heap_sizes();
	clients_and_domains();
	buffers_and_heap();
	handshake_slots();
	back_pressure();
	check(rel_child_running(d.pid), "vyred still up");
	check(vyre_test_daemon_stop(&d) == 0, "vyred stops cleanly");
	check(vyre_test_log_has(d.log, "--max-clients 4 reached"),
	      "vyred's log names the client limit");
	check(vyre_test_log_has(d.log, "--max-domains 3 reached"),
	      "vyred's log names the domain limit");
	check(vyre_test_log_has(d.log, "--max-buffers 16 reached"),
	      "vyred's log names the buffer limit");
	check(vyre_test_log_has(d.log, "-byte heap"), "vyred's log says a heap was full");
	if (failed)
		vyre_test_daemon_dump_log(&d);
	vyre_test_daemon_cleanup(&d);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
