/* SPDX-License-Identifier: MIT */
/*
 * Ring unit tests: layout, sealing, wrap-around (of slots and of the u32
 * positions), full ring back-pressure with nothing lost, MPSC with 4 threads
 * x 1M items each seen exactly once and in order per thread, garbage indices
 * from a hostile client, and the doorbell protocol with real futex sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "../ring/ring.h"

#define WAIT_LIMIT_NS (20ll * 1000000000ll) /* a lost wake-up fails, never a slow one */

static struct vyre_sqe make_sqe(uint64_t user_data)
{
	struct vyre_sqe s;

	memset(&s, 0, sizeof(s));
	s.item.op_handle = VYRE_OP_NOP;
	s.item.param = (uint32_t)user_data;
	s.user_data = user_data;
	return s;
}

static void make_region(uint32_t sq, uint32_t cq, struct vyre_region *r)
{
	assert_int_equal(vyre_region_create(sq, cq, 7, 3, r), 0);
}

static void test_entries_and_layout(void **state)
{
	struct vyre_region_layout lay;

	(void)state;
	assert_int_equal(vyre_ring_entries(0, 4096), 4096);
	assert_int_equal(vyre_ring_entries(1, 4096), 2);
	assert_int_equal(vyre_ring_entries(3, 4096), 4);
	assert_int_equal(vyre_ring_entries(1000, 0), 1024);
	assert_int_equal(vyre_ring_entries(VYRE_MAX_RING_ENTRIES, 0), VYRE_MAX_RING_ENTRIES);
	assert_int_equal(vyre_ring_entries(VYRE_MAX_RING_ENTRIES + 1, 0), 0);
	assert_int_equal(vyre_ring_entries(UINT32_MAX, 0), 0);
	assert_int_equal(vyre_region_layout(8, 16, &lay), 0);
	assert_int_equal(lay.sq_offset, VYRE_REGION_HEADER_BYTES);
	assert_int_equal(lay.cq_offset, VYRE_REGION_HEADER_BYTES + 8 * 64);
	assert_true(lay.bytes >= lay.cq_offset + 16 * 32);
	assert_int_equal(vyre_region_layout(6, 16, &lay), VYRE_E_INVAL);
	assert_int_equal(vyre_region_layout(8, 0, &lay), VYRE_E_INVAL);
	assert_int_equal(vyre_region_layout(VYRE_MAX_RING_ENTRIES * 2, 8, &lay), VYRE_E_INVAL);
}

static void test_region_sealed_and_checked(void **state)
{
	struct vyre_region d, c;

	(void)state;
	make_region(64, 128, &d);
	assert_int_equal(d.hdr->client_id, 7);
	assert_int_equal(d.hdr->domain_id, 3);
	/* The seals hold against the peer: it cannot shrink or grow the file. */
	assert_int_not_equal(ftruncate(d.fd, 4096), 0);
	assert_int_not_equal(ftruncate(d.fd, (off_t)d.bytes * 2), 0);
	assert_int_not_equal(fcntl(d.fd, F_ADD_SEALS, F_SEAL_WRITE), 0);

	int fd = dup(d.fd);

	assert_int_equal(vyre_region_map(fd, &c), 0);
	assert_int_equal(c.sq_entries, 64);
	assert_int_equal(c.cq_entries, 128);
	/* Both mappings are the same memory. */
	c.hdr->cq_head = 5;
	assert_int_equal(__atomic_load_n(&d.hdr->cq_head, __ATOMIC_RELAXED), 5);
	vyre_region_unmap(&c);

	d.hdr->abi_version = VYRE_ABI_VERSION + 1;
	fd = dup(d.fd);
	assert_int_equal(vyre_region_map(fd, &c), VYRE_E_PROTO);
	d.hdr->abi_version = VYRE_ABI_VERSION;
	d.hdr->sq_entries = 128; /* disagrees with the file size */
	assert_int_equal(vyre_region_map(fd, &c), VYRE_E_PROTO);
	close(fd);
	vyre_region_unmap(&d);
	assert_int_equal(d.fd, -1);
}

/* Positions start just below 2^32 so the u32 counters wrap during the test. */
static void start_positions_at(struct vyre_region *r, struct vyre_sq_producer *p,
			       struct vyre_sq_consumer *c, uint32_t pos)
{
	r->hdr->sq_head = pos;
	r->hdr->sq_tail = pos;
	p->cached_head = pos;
	c->head = pos;
}

static void test_wraparound(void **state)
{
	struct vyre_region r;
	struct vyre_sq_producer p;
	struct vyre_sq_consumer c;
	struct vyre_sqe in[8], out[8];
	uint64_t next_in = 0, next_out = 0;

	(void)state;
	make_region(8, 8, &r);
	vyre_sq_producer_init(&p, &r, -1);
	vyre_sq_consumer_init(&c, &r);
	start_positions_at(&r, &p, &c, UINT32_MAX - 37);
	for (uint32_t round = 0; round < 2000; round++) {
		uint32_t n = 1 + round % 7;

		for (uint32_t i = 0; i < n; i++)
			in[i] = make_sqe(next_in + i);
		int pushed = vyre_sq_push(&p, in, n, 0);

		assert_true(pushed > 0);
		next_in += (uint64_t)pushed;
		uint32_t take = 1 + (round * 5) % 8;
		int got = vyre_sq_peek(&c, out, take);

		assert_true(got >= 0);
		for (int i = 0; i < got; i++) {
			assert_int_equal(out[i].user_data, next_out + (uint64_t)i);
			assert_int_equal(out[i].item.param, (uint32_t)(next_out + (uint64_t)i));
		}
		vyre_sq_release(&c, (uint32_t)got);
		next_out += (uint64_t)got;
	}
	for (;;) {
		int got = vyre_sq_peek(&c, out, 8);

		assert_true(got >= 0);
		if (got == 0)
			break;
		for (int i = 0; i < got; i++)
			assert_int_equal(out[i].user_data, next_out + (uint64_t)i);
		vyre_sq_release(&c, (uint32_t)got);
		next_out += (uint64_t)got;
	}
	assert_int_equal(next_out, next_in);
	assert_true(r.hdr->sq_head < UINT32_MAX - 37); /* the positions did wrap */

	/* The CQ wraps the same way. */
	struct vyre_cq_producer cp;
	struct vyre_cq_consumer cc;
	struct vyre_cqe ce, got_ce[8];
	uint64_t posted = 0, reaped = 0;

	vyre_cq_producer_init(&cp, &r, -1);
	vyre_cq_consumer_init(&cc, &r);
	for (uint32_t round = 0; round < 1000; round++) {
		int space = vyre_cq_space(&cp);

		assert_true(space >= 0);
		for (int i = 0; i < space && i < (int)(1 + round % 5); i++) {
			memset(&ce, 0, sizeof(ce));
			ce.user_data = posted++;
			ce.result = ce.user_data * 3;
			vyre_cq_post(&cp, &ce);
		}
		vyre_cq_flush(&cp);
		int got = vyre_cq_reap(&cc, got_ce, 1 + round % 3);

		assert_true(got >= 0);
		for (int i = 0; i < got; i++) {
			assert_int_equal(got_ce[i].user_data, reaped);
			assert_int_equal(got_ce[i].result, reaped * 3);
			reaped++;
		}
	}
	assert_true(posted > 1000);
	vyre_region_unmap(&r);
}

static void test_full_ring(void **state)
{
	struct vyre_region r;
	struct vyre_sq_producer p;
	struct vyre_sq_consumer c;
	struct vyre_sqe in[32], out[32];
	uint32_t pos;

	(void)state;
	make_region(16, 16, &r);
	vyre_sq_producer_init(&p, &r, -1);
	vyre_sq_consumer_init(&c, &r);
	for (uint32_t i = 0; i < 32; i++)
		in[i] = make_sqe(i);
	assert_int_equal(vyre_sq_push(&p, in, 10, 1), 10);
	/* All-or-nothing: 10 more do not fit in the 6 free slots, nothing is queued. */
	assert_int_equal(vyre_sq_push(&p, in + 10, 10, 1), VYRE_E_AGAIN);
	assert_int_equal(r.hdr->sq_tail, 10);
	/* Partial: a prefix that fits. */
	assert_int_equal(vyre_sq_push(&p, in + 10, 10, 0), 6);
	assert_int_equal(vyre_sq_push(&p, in + 16, 1, 0), VYRE_E_AGAIN);
	assert_int_equal(vyre_sq_reserve(&p, 1, 1, &pos), VYRE_E_AGAIN);
	assert_int_equal(vyre_sq_reserve(&p, 1, 2, &pos), VYRE_E_INVAL);

	assert_int_equal(vyre_sq_peek(&c, out, 32), 16);
	for (uint32_t i = 0; i < 16; i++)
		assert_int_equal(out[i].user_data, i);
	/* Peeking does not consume: the ring is still full until released. */
	assert_int_equal(vyre_sq_push(&p, in + 16, 1, 0), VYRE_E_AGAIN);
	vyre_sq_release(&c, 4);
	assert_int_equal(vyre_sq_push(&p, in + 16, 16, 0), 4);
	assert_int_equal(vyre_sq_peek(&c, out, 32), 16);
	for (uint32_t i = 0; i < 16; i++)
		assert_int_equal(out[i].user_data, i + 4);
	vyre_sq_release(&c, 16);
	assert_int_equal(vyre_sq_pending(&c), 0);

	/* A full CQ reports no space; nothing is overwritten. */
	struct vyre_cq_producer cp;
	struct vyre_cq_consumer cc;
	struct vyre_cqe ce = {0}, reaped[32];

	vyre_cq_producer_init(&cp, &r, -1);
	vyre_cq_consumer_init(&cc, &r);
	for (uint64_t i = 0; i < 16; i++) {
		ce.user_data = i;
		vyre_cq_post(&cp, &ce);
	}
	vyre_cq_flush(&cp);
	assert_int_equal(vyre_cq_space(&cp), 0);
	assert_int_equal(vyre_cq_ready(&cc), 16);
	assert_int_equal(vyre_cq_reap(&cc, reaped, 32), 16);
	for (uint64_t i = 0; i < 16; i++)
		assert_int_equal(reaped[i].user_data, i);
	assert_int_equal(vyre_cq_space(&cp), 16);
	vyre_region_unmap(&r);
}

/* What a hostile client can do: write any publish marker into any slot. */
static void publish_marker(struct vyre_region *r, uint32_t slot, uint32_t seq)
{
	__atomic_store_n(&r->sq[slot].seq, seq, __ATOMIC_RELEASE);
}

static void test_hostile_indices(void **state)
{
	struct vyre_region r;
	struct vyre_sq_producer p;
	struct vyre_sq_consumer c;
	struct vyre_cq_producer cp;
	struct vyre_sqe in[4], out[4];

	(void)state;
	make_region(4, 4, &r);
	vyre_sq_producer_init(&p, &r, -1);
	vyre_sq_consumer_init(&c, &r);
	vyre_cq_producer_init(&cp, &r, -1);

	/* Reserved but never published: not work, and not an error. */
	r.hdr->sq_tail = 2;
	assert_int_equal(vyre_sq_peek(&c, out, 4), 0);
	assert_int_equal(vyre_sq_pending(&c), 0);
	/* A stale marker from another lap does not count as published. */
	publish_marker(&r, 0, 1 + 4);
	assert_int_equal(vyre_sq_peek(&c, out, 4), 0);
	publish_marker(&r, 0, 1);
	assert_int_equal(vyre_sq_pending(&c), 1);
	assert_int_equal(vyre_sq_peek(&c, out, 4), 1);

	/*
	 * A tail more than one ring ahead, or behind the head, is garbage:
	 * vyre_sq_pending reports it; vyre_sq_peek never reads the tail and
	 * still takes only what is published.
	 */
	r.hdr->sq_tail = 5;
	assert_int_equal(vyre_sq_pending(&c), VYRE_E_PROTO);
	assert_int_equal(vyre_sq_peek(&c, out, 4), 1);
	r.hdr->sq_tail = UINT32_MAX;
	assert_int_equal(vyre_sq_pending(&c), VYRE_E_PROTO);
	/* Markers in every slot: still at most one ring per peek. */
	for (uint32_t i = 0; i < 4; i++)
		publish_marker(&r, i, i + 1);
	assert_int_equal(vyre_sq_peek(&c, out, 100), 4);
	/* The daemon's head is private: scribbling on sq_head changes nothing for it. */
	r.hdr->sq_tail = 0;
	r.hdr->sq_head = 1000;
	assert_int_equal(vyre_sq_peek(&c, out, 4), 4);
	assert_int_equal(out[3].seq, 4);
	assert_int_equal(c.head, 0);

	/* A producer facing a garbage head sees a full ring, never overruns. */
	for (int i = 0; i < 4; i++)
		in[i] = make_sqe((uint64_t)i);
	r.hdr->sq_head = 0x80000000u;
	p.cached_head = 0x80000000u;
	assert_int_equal(vyre_sq_push(&p, in, 1, 0), VYRE_E_AGAIN);

	/* cq_head claiming entries never posted is garbage. */
	r.hdr->cq_head = 1;
	assert_int_equal(vyre_cq_space(&cp), VYRE_E_PROTO);
	r.hdr->cq_head = 0;
	assert_int_equal(vyre_cq_space(&cp), 4);
	vyre_region_unmap(&r);
}

/* ---- MPSC: 4 producer threads, one consumer ---- */

#define MPSC_THREADS 4u
#define MPSC_ITEMS   1000000ull

struct mpsc {
	struct vyre_region r;
	struct vyre_sq_producer p; /* shared by every producer thread */
	uint32_t id;
};

static void *mpsc_producer(void *arg)
{
	struct mpsc *m = arg;
	uint32_t id = __atomic_fetch_add(&m->id, 1, __ATOMIC_RELAXED);
	struct vyre_sqe batch[7];
	uint64_t next = 0;

	while (next < MPSC_ITEMS) {
		uint32_t n = 1 + (uint32_t)(next % 7);

		if (n > MPSC_ITEMS - next)
			n = (uint32_t)(MPSC_ITEMS - next);
		for (uint32_t i = 0; i < n; i++)
			batch[i] = make_sqe(((uint64_t)id << 32) | (next + i));
		int got = vyre_sq_push(&m->p, batch, n, 0);

		if (got == VYRE_E_AGAIN) {
			sched_yield();
			continue;
		}
		if (got <= 0)
			return (void *)1;
		next += (uint64_t)got;
	}
	return NULL;
}

static void test_mpsc_4x1m(void **state)
{
	struct mpsc m;
	pthread_t th[MPSC_THREADS];
	uint64_t expect[MPSC_THREADS] = {0};
	struct vyre_sq_consumer c;
	struct vyre_sqe out[256];
	uint64_t total = 0;

	(void)state;
	memset(&m, 0, sizeof(m));
	make_region(1024, 16, &m.r);
	vyre_sq_producer_init(&m.p, &m.r, -1);
	vyre_sq_consumer_init(&c, &m.r);
	for (uint32_t t = 0; t < MPSC_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, mpsc_producer, &m), 0);
	while (total < MPSC_THREADS * MPSC_ITEMS) {
		int got = vyre_sq_peek(&c, out, 256);

		assert_true(got >= 0);
		if (got == 0) {
			sched_yield();
			continue;
		}
		for (int i = 0; i < got; i++) {
			uint32_t id = (uint32_t)(out[i].user_data >> 32);
			uint64_t n = out[i].user_data & 0xffffffffu;

			assert_true(id < MPSC_THREADS);
			/* Exactly once and in order per thread: each one is the next expected. */
			assert_int_equal(n, expect[id]);
			expect[id]++;
		}
		vyre_sq_release(&c, (uint32_t)got);
		total += (uint64_t)got;
	}
	for (uint32_t t = 0; t < MPSC_THREADS; t++) {
		void *rv;

		assert_int_equal(pthread_join(th[t], &rv), 0);
		assert_null(rv);
		assert_int_equal(expect[t], MPSC_ITEMS);
	}
	assert_int_equal(vyre_sq_peek(&c, out, 256), 0);
	vyre_region_unmap(&m.r);
}

/* ---- doorbells: both sides sleep on futexes between every hand-off ---- */

#define PINGPONG_ROUNDS 20000u

struct pingpong {
	struct vyre_region r;
	int failed;
};

/* The "daemon": sleeps on the SQ doorbell, answers each SQE with a CQE. */
static void *pingpong_server(void *arg)
{
	struct pingpong *pp = arg;
	struct vyre_sq_consumer c;
	struct vyre_cq_producer cp;
	struct vyre_sqe sqe;
	uint32_t done = 0;

	vyre_sq_consumer_init(&c, &pp->r);
	vyre_cq_producer_init(&cp, &pp->r, -1);
	while (done < PINGPONG_ROUNDS) {
		int got = vyre_sq_peek(&c, &sqe, 1);

		if (got == 0) {
			uint32_t seen;

			if (vyre_sleep_prepare(&pp->r.hdr->sq_need_wakeup, &pp->r.hdr->sq_doorbell,
					       VYRE_SQ_WAKE_FUTEX, &seen) &&
			    vyre_sq_pending(&c) == 0 &&
			    vyre_futex_wait(&pp->r.hdr->sq_doorbell, seen, WAIT_LIMIT_NS) ==
				VYRE_E_TIMEDOUT) {
				pp->failed = 1;
				return NULL;
			}
			vyre_sleep_finish(&pp->r.hdr->sq_need_wakeup, VYRE_SQ_WAKE_FUTEX);
			continue;
		}
		vyre_sq_release(&c, 1);
		struct vyre_cqe ce = {.user_data = sqe.user_data, .result = sqe.user_data + 1};

		vyre_cq_post(&cp, &ce);
		vyre_cq_flush(&cp);
		done++;
	}
	return NULL;
}

static void test_doorbell_pingpong(void **state)
{
	struct pingpong pp;
	pthread_t th;
	struct vyre_sq_producer p;
	struct vyre_cq_consumer cc;
	uint64_t wakes = 0;

	(void)state;
	memset(&pp, 0, sizeof(pp));
	make_region(8, 8, &pp.r);
	vyre_sq_producer_init(&p, &pp.r, -1);
	vyre_cq_consumer_init(&cc, &pp.r);
	assert_int_equal(pthread_create(&th, NULL, pingpong_server, &pp), 0);
	/* With nothing queued the server must go to sleep: the first kick has to wake it. */
	while (__atomic_load_n(&pp.r.hdr->sq_need_wakeup, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	for (uint32_t i = 0; i < PINGPONG_ROUNDS; i++) {
		struct vyre_sqe s = make_sqe(i);
		struct vyre_cqe ce;

		assert_int_equal(vyre_sq_push(&p, &s, 1, 1), 1);
		wakes += vyre_sq_kick(&p) != 0;
		for (;;) {
			int got = vyre_cq_reap(&cc, &ce, 1);

			assert_true(got >= 0);
			if (got == 1)
				break;
			uint32_t seen;

			if (vyre_sleep_prepare(&pp.r.hdr->cq_need_wakeup, &pp.r.hdr->cq_doorbell,
					       VYRE_CQ_WAKE_FUTEX, &seen) &&
			    vyre_cq_ready(&cc) == 0)
				assert_int_not_equal(
				    vyre_futex_wait(&pp.r.hdr->cq_doorbell, seen, WAIT_LIMIT_NS),
				    VYRE_E_TIMEDOUT);
			vyre_sleep_finish(&pp.r.hdr->cq_need_wakeup, VYRE_CQ_WAKE_FUTEX);
		}
		assert_int_equal(ce.user_data, i);
		assert_int_equal(ce.result, (uint64_t)i + 1);
		/*
		 * As vyre_reap does: a kick with nothing new published. It may take
		 * the server's bit while the server is between setting it and
		 * sleeping; the next real publish must still wake it.
		 */
		vyre_sq_kick(&p);
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(pp.failed, 0);
	assert_true(wakes > 0);
	vyre_region_unmap(&pp.r);
}

static void test_eventfd_wake(void **state)
{
	struct vyre_region r;
	struct vyre_sq_producer p;
	struct vyre_cq_producer cp;
	struct vyre_sqe s = make_sqe(1);
	struct vyre_cqe ce = {0};
	uint64_t v = 0;
	int sq_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int cq_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	(void)state;
	assert_true(sq_efd >= 0 && cq_efd >= 0);
	make_region(8, 8, &r);
	vyre_sq_producer_init(&p, &r, sq_efd);
	vyre_cq_producer_init(&cp, &r, cq_efd);

	/* Nobody asked: no wake-up, no write. */
	assert_int_equal(vyre_sq_push(&p, &s, 1, 1), 1);
	assert_int_equal(vyre_sq_kick(&p), 0);
	assert_int_equal(read(sq_efd, &v, 8), -1);
	assert_int_equal(errno, EAGAIN);
	/* vyred in eventfd mode: the kick writes the eventfd and bumps the doorbell. */
	r.hdr->sq_need_wakeup = VYRE_SQ_WAKE_EVENTFD;
	assert_int_equal(vyre_sq_push(&p, &s, 1, 1), 1);
	assert_int_equal(vyre_sq_kick(&p), VYRE_SQ_WAKE_EVENTFD);
	assert_int_equal(read(sq_efd, &v, 8), 8);
	assert_int_equal(v, 1);
	assert_int_equal(r.hdr->sq_doorbell, 1);
	/* A client that armed its eventfd gets one write per flush. */
	r.hdr->cq_need_wakeup = VYRE_CQ_WAKE_EVENTFD;
	vyre_cq_post(&cp, &ce);
	assert_int_equal(vyre_cq_flush(&cp), VYRE_CQ_WAKE_EVENTFD);
	assert_int_equal(vyre_cq_flush(&cp), 0); /* nothing new */
	assert_int_equal(read(cq_efd, &v, 8), 8);
	vyre_region_unmap(&r);
	close(sq_efd);
	close(cq_efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_entries_and_layout),
	    cmocka_unit_test(test_region_sealed_and_checked),
	    cmocka_unit_test(test_wraparound),
	    cmocka_unit_test(test_full_ring),
	    cmocka_unit_test(test_hostile_indices),
	    cmocka_unit_test(test_mpsc_4x1m),
	    cmocka_unit_test(test_doorbell_pingpong),
	    cmocka_unit_test(test_eventfd_wake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
