/* SPDX-License-Identifier: MIT */
/*
 * Sleep/wake across real processes, with futex doorbells and with the
 * eventfd fallback:
 *  - vyred asleep in io_uring (its need-wakeup flag set on our region and
 *    its main thread in state S): a submit wakes it and the CQE arrives;
 *  - a client thread asleep in vyre_wait (need-wakeup set, thread in state
 *    S) while another thread submits: vyred's completion wakes it;
 *  - many fast alternations, with vyred never spinning (--spin-us 0, every
 *    hand-off a doorbell) and with its adaptive spin: no lost wake-up;
 *  - vyre_event_fd in an epoll loop.
 * A lost wake-up shows as a wait that times out after WAIT_NS: that fails
 * the test. Nothing here measures time.
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../ring/client.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define WAIT_NS	     (30ll * 1000000000ll)
#define STATE_POLLS  300000u /* /proc polls before giving up on seeing a sleeper */
#define OBSERVED     100u    /* rounds where each sleeper is seen asleep */
#define ALTERNATIONS 100000u /* x VYRE_TEST_SCALE */

struct rig {
	struct vyre_test_daemon d;
	struct vyre_client *c;
	uint32_t in, out;
	uint64_t next_ud;
};

static uint32_t load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static int submit_add(struct rig *r)
{
	struct vyre_work_item it = {VYRE_OP_ADD, r->in, r->out, (uint32_t)r->next_ud};
	int rc = vyre_submit(r->c, &it, r->next_ud, 0);

	if (rc != 0)
		FAIL("submit: %s", vyre_strerror(rc));
	return 0;
}

/* Waits for the CQE of the last submitted item and checks it. */
static int wait_cqe(struct rig *r)
{
	struct vyre_cqe cqe;
	int n = vyre_wait(r->c, &cqe, 1, WAIT_NS);

	if (n != 1)
		FAIL("item %llu: vyre_wait returned %d (%s): lost wake-up",
		     (unsigned long long)r->next_ud, n, n < 0 ? vyre_strerror(n) : "no CQE");
	if (cqe.user_data != r->next_ud || cqe.status != 0)
		FAIL("item %llu: got CQE %llu status %d", (unsigned long long)r->next_ud,
		     (unsigned long long)cqe.user_data, cqe.status);
	uint32_t *out = vyre_buffer_ptr(r->c, r->out, NULL);

	if (out[0] != 7u + (uint32_t)r->next_ud)
		FAIL("item %llu: wrong output %u", (unsigned long long)r->next_ud, out[0]);
	/* Atomic: in client_wakes another thread watches it. */
	__atomic_store_n(&r->next_ud, r->next_ud + 1, __ATOMIC_RELEASE);
	return 0;
}

static int rig_start(struct rig *r, const char *const *args)
{
	struct vyre_connect_opts o = {.sq_entries = 64, .cq_entries = 64};
	int rc;

	memset(r, 0, sizeof(*r));
	if (vyre_test_daemon_start(&r->d, args) != 0)
		return -1;
	o.socket_path = r->d.socket;
	if ((rc = vyre_connect(&o, &r->c)) != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	if (vyre_buffer_alloc(r->c, 4, 0, &r->in) || vyre_buffer_alloc(r->c, 4, 0, &r->out))
		FAIL("alloc");
	*(uint32_t *)vyre_buffer_ptr(r->c, r->in, NULL) = 7;
	return 0;
}

static int rig_stop(struct rig *r)
{
	vyre_close(r->c);
	int st = vyre_test_daemon_stop(&r->d);

	if (st != 0) {
		vyre_test_daemon_dump_log(&r->d);
		FAIL("vyred exited %d", st);
	}
	vyre_test_daemon_cleanup(&r->d);
	return 0;
}

/* Until vyred asked us for a wake-up and its main thread sleeps. */
static int wait_daemon_asleep(struct rig *r)
{
	const struct vyre_region_header *h = r->c->region.hdr;

	for (uint32_t i = 0; i < STATE_POLLS; i++) {
		if (load(&h->sq_need_wakeup) && vyre_test_proc_state(r->d.pid, r->d.pid) == 'S')
			return 0;
		sched_yield();
	}
	FAIL("vyred never went to sleep on our doorbell");
}

static int daemon_wakes(struct rig *r)
{
	for (uint32_t i = 0; i < OBSERVED; i++) {
		if (wait_daemon_asleep(r) != 0 || submit_add(r) != 0 || wait_cqe(r) != 0)
			return -1;
	}
	printf("  vyred woken from io_uring sleep %u times\n", OBSERVED);
	return 0;
}

/* ---- a client thread asleep in vyre_wait, woken by vyred's completion ---- */

struct sleeper {
	struct rig *r;
	pid_t tid;
	int rounds;
	int failed;
	uint32_t go; /* round the waiter may start */
};

static void *waiter_main(void *arg)
{
	struct sleeper *s = arg;

	__atomic_store_n(&s->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (int i = 0; i < s->rounds; i++) {
		while (load(&s->go) <= (uint32_t)i)
			sched_yield();
		if (wait_cqe(s->r) != 0) {
			s->failed = 1;
			return NULL;
		}
	}
	return NULL;
}

static int client_wakes(struct rig *r)
{
	struct sleeper s = {.r = r, .rounds = OBSERVED};
	const struct vyre_region_header *h = r->c->region.hdr;
	pthread_t th;

	if (pthread_create(&th, NULL, waiter_main, &s) != 0)
		FAIL("pthread_create");
	while (!__atomic_load_n(&s.tid, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < s.rounds && !s.failed; i++) {
		uint32_t seen = 0;

		__atomic_store_n(&s.go, (uint32_t)i + 1, __ATOMIC_RELEASE);
		/* The waiter must be asleep on the CQ doorbell before the item exists. */
		for (uint32_t k = 0; k < STATE_POLLS && !seen; k++) {
			seen = (load(&h->cq_need_wakeup) & VYRE_CQ_WAKE_FUTEX) &&
			       vyre_test_proc_state(getpid(), s.tid) == 'S';
			if (!seen)
				sched_yield();
		}
		if (!seen) {
			pthread_join(th, NULL);
			FAIL("round %d: the waiter never slept in vyre_wait", i);
		}
		struct vyre_work_item it = {
		    VYRE_OP_ADD, r->in, r->out,
		    (uint32_t)__atomic_load_n(&r->next_ud, __ATOMIC_ACQUIRE)};
		int rc = vyre_submit(r->c, &it, it.param, 0);

		if (rc != 0) {
			pthread_join(th, NULL);
			FAIL("submit: %s", vyre_strerror(rc));
		}
		while (__atomic_load_n(&r->next_ud, __ATOMIC_ACQUIRE) == it.param && !s.failed)
			sched_yield();
	}
	pthread_join(th, NULL);
	if (s.failed)
		return -1;
	printf("  client woken from vyre_wait by vyred %u times\n", OBSERVED);
	return 0;
}

static int alternations(struct rig *r, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (submit_add(r) != 0 || wait_cqe(r) != 0)
			return -1;
	printf("  %llu submit/wait alternations, no lost wake-up\n", (unsigned long long)n);
	return 0;
}

static int event_fd_rounds(struct rig *r)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int efd = vyre_event_fd(r->c);
	struct epoll_event ev = {.events = EPOLLIN}, got;

	if (ep < 0 || efd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) != 0)
		FAIL("epoll set-up");
	for (int i = 0; i < (int)OBSERVED; i++) {
		struct vyre_cqe cqe;
		uint64_t v;
		int n = 0;

		if (submit_add(r) != 0)
			return -1;
		while (n == 0) {
			if (epoll_wait(ep, &got, 1, (int)(WAIT_NS / 1000000)) != 1)
				FAIL("round %d: the event fd never became readable", i);
			if (read(efd, &v, sizeof(v)) != sizeof(v) && errno != EAGAIN)
				FAIL("read event fd");
			n = vyre_reap(r->c, &cqe, 1);
		}
		if (n != 1 || cqe.user_data != r->next_ud)
			FAIL("round %d: reap after the event fd gave %d", i, n);
		r->next_ud++;
	}
	close(ep);
	printf("  %u completions signalled through vyre_event_fd\n", OBSERVED);
	return 0;
}

/* Whether this kernel's io_uring has FUTEX_WAIT (6.7+): a mismatched value gets -EAGAIN. */
static int kernel_has_futex_wait(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint32_t word = 1;
	int res = -EINVAL;

	if (io_uring_queue_init(4, &ring, 0) != 0)
		return 0;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	io_uring_prep_rw(51 /* IORING_OP_FUTEX_WAIT */, sqe, 0x02 /* FUTEX2_SIZE_U32 */, &word, 0,
			 0);
	sqe->addr3 = 0xffffffffull;
	if (io_uring_submit_and_wait(&ring, 1) == 1 && io_uring_wait_cqe(&ring, &cqe) == 0)
		res = cqe->res;
	io_uring_queue_exit(&ring);
	return res == -EAGAIN;
}

static int phase(const char *name, const char *const *args, uint64_t n)
{
	struct rig r;

	printf("%s\n", name);
	if (rig_start(&r, args) != 0)
		return -1;
	int rc = daemon_wakes(&r) || client_wakes(&r) || alternations(&r, n) || event_fd_rounds(&r)
		     ? -1
		     : 0;

	if (rc != 0) {
		vyre_test_daemon_dump_log(&r.d);
		vyre_close(r.c);
		vyre_test_daemon_cleanup(&r.d);
		return -1;
	}
	return rig_stop(&r);
}

int main(void)
{
	static const char *const futex_nospin[] = {"--doorbell", "futex", "--spin-us", "0", NULL};
	static const char *const futex_spin[] = {"--doorbell", "futex", NULL};
	static const char *const efd_nospin[] = {"--doorbell", "eventfd", "--spin-us", "0", NULL};
	uint64_t n = ALTERNATIONS * vyre_test_scale();

	if (!kernel_has_futex_wait())
		printf("this kernel's io_uring has no FUTEX_WAIT: testing the eventfd fallback "
		       "only\n");
	else if (phase("io_uring futex doorbells, vyred never spins", futex_nospin, n) ||
		 phase("io_uring futex doorbells, adaptive spin", futex_spin, n / 4))
		return 1;
	if (phase("eventfd doorbells, vyred never spins", efd_nospin, n / 4))
		return 1;
	printf("PASS\n");
	return 0;
}
