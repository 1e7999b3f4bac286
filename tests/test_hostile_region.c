/* SPDX-License-Identifier: MIT */
/*
 * test_hostile_region - clients that write random bytes over their whole
 * region (header indices, doorbells, need-wakeup flags, SQEs, CQEs) and their
 * heap while submitting items, some naming handles they do not own.
 *
 * vyred must never crash or hang: every hostile client is disconnected with
 * VYRE_E_PROTO (read from the region's closed word, which the hostile client
 * leaves alone for this purpose, and seen as a hang-up on its socket); if
 * its random writes never produce an impossible index, it finally writes one
 * (an SQ tail far ahead of the head) and rings the doorbell. Meanwhile honest
 * producers check every CQE and buffer against the oracle, and a canary
 * client that submits nothing checks at the end that its buffers and its
 * region are exactly as it left them: nothing outside a hostile client's own
 * region and domain was touched. vyred's descriptors and memfd mappings must
 * return to their baseline and SIGTERM must stop it cleanly. vyred's log
 * names the impossible ring index as the reason, not a protocol or ABI
 * mismatch (the client sees VYRE_E_PROTO either way).
 *
 * VYRE_TEST_SCALE=N runs N times as many hostile clients (default 48).
 */
#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "test_crash_honest.h"
#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define HOSTILES	48u
#define HONEST		3u
#define OPS		20000u
#define CLOSED_LINE	448u /* offsetof(struct vyre_region_header, closed) */
#define VERDICT_WAIT_NS (10 * 1000000000ull)
#define CANARY_BUFS	4u
#define CANARY_BYTES	1024u

struct hostile_page {
	uint64_t bytes_written;
	uint64_t items_submitted;
	uint32_t closed;  /* the region's verdict word */
	uint32_t hung_up; /* the socket reported the disconnect */
	uint32_t forced;  /* it had to write an impossible index on purpose */
	uint32_t done;
};

/* Random bytes at a random place of [base + from, base + bytes), sparing the closed word. */
static void scribble(uint8_t *base, uint64_t from, uint64_t bytes, uint64_t *rng, uint64_t *written,
		     int skip_closed)
{
	uint64_t r = rel_rand(rng);
	uint64_t off = from + r % (bytes - from), len = 1 + (r >> 40) % 32;

	if (len > bytes - off)
		len = bytes - off;
	if (skip_closed && off < CLOSED_LINE + VYRE_CACHELINE && off + len > CLOSED_LINE)
		return;
	for (uint64_t i = 0; i < len; i++)
		base[off + i] = (uint8_t)(rel_rand(rng) >> 24);
	*written += len;
}

static void submit_random(struct vyre_client *c, const uint32_t *handles, uint64_t *rng,
			  struct hostile_page *page)
{
	uint64_t r = rel_rand(rng);
	/* own handles, their neighbours (likely another client's), or anything */
	uint32_t pick[4] = {handles[r % 3], handles[(r >> 4) % 3] + 1 + (uint32_t)((r >> 8) % 4),
			    handles[(r >> 12) % 3] - 1, (uint32_t)(r >> 32)};
	struct vyre_work_item it = {(uint32_t)((r >> 16) % 11), pick[(r >> 20) % 4],
				    pick[(r >> 22) % 4], pick[(r >> 24) % 4]};

	if (vyre_submit(c, &it, r, (uint32_t)(r >> 28) % 4) == 0)
		page->items_submitted++;
	if ((r >> 30) % 8 == 0) {
		struct vyre_cqe cqes[16];

		vyre_reap(c, cqes, 16);
	}
}

static int socket_hung_up(int sock)
{
	struct pollfd p = {.fd = sock, .events = POLLIN | POLLRDHUP};
	char b;

	return poll(&p, 1, 5000) == 1 && recv(sock, &b, 1, MSG_DONTWAIT) == 0;
}

/*
 * Odd-numbered hostile clients leave the header alone and garble only SQEs and
 * CQEs, so vyred keeps serving them garbage for the whole run before the
 * forced bad index; the others write anywhere.
 */
static void hostile_main(const char *socket, uint64_t seed, int slots_only,
			 struct hostile_page *page)
{
	struct vyre_connect_opts o = {
	    .socket_path = socket, .sq_entries = 64, .cq_entries = 64, .heap_bytes = 1 << 20};
	struct vyre_client *c;
	uint32_t handles[3];
	uint64_t rng = seed, region_bytes, heap_bytes;

	if (vyre_connect(&o, &c) != 0)
		_exit(2);
	for (int i = 0; i < 3; i++)
		if (vyre_buffer_alloc(c, 4096, 0, &handles[i]) != 0)
			_exit(3);
	struct vyre_region_header *hdr = rel_client_region(c, &region_bytes);
	uint8_t *heap = rel_client_heap(c, &heap_bytes);
	uint32_t *closed = &hdr->closed;

	for (uint32_t i = 0; i < OPS && !__atomic_load_n(closed, __ATOMIC_ACQUIRE); i++) {
		uint64_t what = rel_rand(&rng) % 8;

		if (what < 4)
			scribble((uint8_t *)hdr, slots_only ? VYRE_REGION_HEADER_BYTES : 0,
				 region_bytes, &rng, &page->bytes_written, 1);
		else if (what < 7)
			submit_random(c, handles, &rng, page);
		else
			scribble(heap, 0, heap_bytes, &rng, &page->bytes_written, 0);
	}
	if (!__atomic_load_n(closed, __ATOMIC_ACQUIRE)) {
		/*
		 * indices no honest client can write: an SQ tail three rings ahead of
		 * the head (vyred reads it before sleeping) and a CQ head three rings
		 * past the tail (read whenever vyred drains this client)
		 */
		page->forced = 1;
		__atomic_store_n(&hdr->sq_tail, hdr->sq_head + 3 * hdr->sq_entries,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&hdr->cq_head, hdr->cq_tail + 3 * hdr->cq_entries,
				 __ATOMIC_RELEASE);
		rel_client_force_kick(c);
	}
	for (uint64_t t0 = rel_now_ns();
	     !__atomic_load_n(closed, __ATOMIC_ACQUIRE) && rel_now_ns() - t0 < VERDICT_WAIT_NS;)
		rel_sleep_ns(1000000);
	page->closed = __atomic_load_n(closed, __ATOMIC_ACQUIRE);
	page->hung_up = (uint32_t)socket_hung_up(rel_client_socket(c));
	page->done = 1;
	_exit(0);
}

struct canary {
	struct vyre_client *c;
	uint32_t handle[CANARY_BUFS];
	struct vyre_region_header before;
};

static uint8_t canary_byte(uint32_t b, uint32_t i)
{
	return (uint8_t)(0xa5 ^ (b * 31 + i));
}

static int canary_start(const char *socket, struct canary *k)
{
	struct vyre_connect_opts o = {.socket_path = socket};
	uint64_t bytes;

	if (vyre_connect(&o, &k->c) != 0)
		return -1;
	for (uint32_t b = 0; b < CANARY_BUFS; b++) {
		uint8_t *p;

		if (vyre_buffer_alloc(k->c, CANARY_BYTES, 0, &k->handle[b]) != 0 ||
		    !(p = vyre_buffer_ptr(k->c, k->handle[b], NULL)))
			return -1;
		for (uint32_t i = 0; i < CANARY_BYTES; i++)
			p[i] = canary_byte(b, i);
	}
	memcpy(&k->before, rel_client_region(k->c, &bytes), sizeof(k->before));
	return 0;
}

static int canary_check(struct canary *k)
{
	uint64_t bytes;
	const struct vyre_region_header *h = rel_client_region(k->c, &bytes);
	const struct vyre_region_header *was = &k->before;

	/* need-wakeup flags change whenever vyred sleeps; everything else must not */
	if (memcmp(h, was, offsetof(struct vyre_region_header, pad0)) != 0 ||
	    h->sq_tail != was->sq_tail || h->sq_head != was->sq_head ||
	    h->cq_tail != was->cq_tail || h->cq_head != was->cq_head ||
	    h->sq_doorbell != was->sq_doorbell || h->cq_doorbell != was->cq_doorbell ||
	    h->closed != was->closed) {
		printf("canary: its region header changed\n");
		return -1;
	}
	for (uint32_t b = 0; b < CANARY_BUFS; b++) {
		const uint8_t *p = vyre_buffer_ptr(k->c, k->handle[b], NULL);

		for (uint32_t i = 0; p && i < CANARY_BYTES; i++)
			if (p[i] != canary_byte(b, i)) {
				printf("canary: buffer %u byte %u changed\n", b, i);
				return -1;
			}
	}
	return 0;
}

/* One hostile client from fork to verdict; returns 0 when it went as promised. */
static int run_hostile(struct vyre_test_daemon *d, uint32_t i, uint64_t seed,
		       struct hostile_page *page, uint64_t *bytes, uint64_t *items,
		       uint32_t *forced)
{
	memset(page, 0, sizeof(*page));
	fflush(stdout);
	pid_t pid = fork();

	if (pid == 0)
		hostile_main(d->socket, seed, i % 2, page);
	int st = rel_wait_child(pid, 60 * 1000000000ull);

	*bytes += page->bytes_written;
	*items += page->items_submitted;
	*forced += page->forced;
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !page->done) {
		printf("hostile %u: did not finish (status %#x)\n", i, (unsigned)st);
		return -1;
	}
	if (page->closed != (uint32_t)-VYRE_E_PROTO || !page->hung_up) {
		printf("hostile %u (seed %" PRIu64 "): closed word %u, socket %s; expected a "
		       "disconnect with VYRE_E_PROTO\n",
		       i, seed, page->closed, page->hung_up ? "hung up" : "still open");
		return -1;
	}
	if (!rel_child_running(d->pid)) {
		printf("vyred died during hostile %u\n", i);
		return -1;
	}
	return 0;
}

int main(void)
{
	const char *extra[] = {"--backend", "cpu", NULL};
	struct vyre_test_daemon d;
	struct rel_baseline base;
	struct canary canary = {0};
	pid_t honest[HONEST];
	uint64_t rng = rel_seed("test_hostile_region"), bytes = 0, items = 0;
	uint64_t rounds = HOSTILES * vyre_test_scale();
	uint32_t forced = 0;
	int failed = 0;
	volatile int *stop = rel_shared_alloc(4096);
	struct hostile_page *page = rel_shared_alloc(4096);

	if (!stop || !page || vyre_test_daemon_start(&d, extra) != 0)
		return 1;
	if (rel_baseline_take(&d, &base) != 0 || canary_start(d.socket, &canary) != 0) {
		printf("set-up failed\n");
		failed = 1;
		goto out;
	}
	for (uint32_t i = 0; i < HONEST; i++)
		honest[i] = rel_honest_spawn(d.socket, rel_rand(&rng), stop);
	for (uint64_t i = 0; i < rounds && !failed; i++)
		failed = run_hostile(&d, (uint32_t)i, rel_rand(&rng), page, &bytes, &items,
				     &forced) != 0;
	*stop = 1;
	for (uint32_t i = 0; i < HONEST; i++) {
		int st = rel_wait_child(honest[i], 120 * 1000000000ull);

		if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("honest producer %u failed (status %#x)\n", i, (unsigned)st);
			failed = 1;
		}
	}
	printf("%" PRIu64 " hostile clients: %" PRIu64 " random bytes written over regions and "
	       "heaps, %" PRIu64 " hostile items submitted, %u needed the forced bad index\n",
	       rounds, bytes, items, forced);
	if (canary_check(&canary) != 0)
		failed = 1;
	vyre_close(canary.c);
	canary.c = NULL;
	if (!rel_child_running(d.pid)) {
		printf("vyred died\n");
		failed = 1;
	} else if (rel_baseline_check(&d, &base) != 0) {
		failed = 1;
	} else if (vyre_test_daemon_stop(&d) != 0) {
		printf("vyred did not stop cleanly on SIGTERM\n");
		failed = 1;
	} else if (!vyre_test_log_has(d.log, "impossible ring index in its region") ||
		   vyre_test_log_has(d.log, "ABI version mismatch")) {
		printf("vyred's log does not name the impossible ring index as the reason\n");
		failed = 1;
	}
out:
	if (failed)
		vyre_test_daemon_dump_log(&d);
	vyre_close(canary.c);
	vyre_test_daemon_cleanup(&d);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
