/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_wake.c - suite "wake": how long a sleeping consumer takes to
 * run again after a producer in another process stores to a shared word and
 * wakes it (docs/design.md 11). The consumer sleeps, per sample, through
 *   io_uring  IORING_OP_FUTEX_WAIT on the shared word, as vyred idles
 *             (io_uring_submit_and_wait; the producer calls FUTEX_WAKE)
 *   futex     a raw FUTEX_WAIT syscall on the same word
 *   eventfd   a blocking read() of an eventfd the producer writes
 * The producer waits until the consumer is really asleep (state S in
 * /proc/PID/stat), stamps the time, stores and wakes; the consumer stamps
 * the time when it runs again. Mechanisms alternate in rounds so noise on a
 * shared machine hits all of them alike. Producer and consumer are pinned to
 * different CPUs.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../ring/ring.h"
#include "bench.h"
#include "harness_clock.h"
#include "harness_procs.h"
#include "harness_stats.h"

/* liburing 2.3 predates the futex opcodes; the kernel ABI values (6.7+). */
#ifndef IORING_OP_FUTEX_WAIT
#define IORING_OP_FUTEX_WAIT 51
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif

#define MECHANISMS   3
#define ROUNDS	     9 /* <= VYRE_BENCH_MAX_ROUNDS */
#define MAX_SAMPLES  200000u
#define ASLEEP_POLLS 100000
#define GIVE_UP_S    30u

enum mechanism { WAKE_URING, WAKE_FUTEX, WAKE_EVENTFD };

static const char *const mechanism_names[MECHANISMS] = {"io_uring_futex", "futex", "eventfd"};

struct line {
	_Alignas(64) uint64_t v;
};

struct shared {
	_Alignas(64) uint32_t word; /* the futex word: the sample number last woken */
	struct line t0;		    /* producer's timestamp of the current sample */
	struct line armed;	    /* the sample number the consumer is about to sleep for */
	struct line not_asleep;	    /* samples where the consumer never showed state S */
};

struct wake_run {
	enum mechanism mech;
	struct shared *sh;
	int efd;
	pid_t consumer;
	uint32_t samples;
	struct io_uring ring;
};

static long futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* Whether @pid is sleeping, from the state field of /proc/PID/stat. */
static int asleep(int stat_fd)
{
	char buf[512];
	ssize_t n = pread(stat_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');

	return paren && paren[1] == ' ' && paren[2] == 'S';
}

static int producer_main(void *arg)
{
	struct wake_run *w = arg;
	struct shared *sh = w->sh;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)w->consumer);
	int stat_fd = open(path, O_RDONLY | O_CLOEXEC);

	if (stat_fd < 0)
		return 1;
	for (uint32_t k = 1; k <= w->samples; k++) {
		while (__atomic_load_n(&sh->armed.v, __ATOMIC_ACQUIRE) != k)
			vyre_cpu_relax();
		int polls = 0;

		while (!asleep(stat_fd) && ++polls < ASLEEP_POLLS)
			vyre_cpu_relax();
		if (polls == ASLEEP_POLLS)
			sh->not_asleep.v++;
		__atomic_store_n(&sh->t0.v, vyre_bench_ticks(), __ATOMIC_RELAXED);
		__atomic_store_n(&sh->word, k, __ATOMIC_RELEASE);
		if (w->mech == WAKE_EVENTFD) {
			uint64_t one = 1;

			if (write(w->efd, &one, sizeof(one)) != sizeof(one))
				return 1;
		} else {
			futex(&sh->word, FUTEX_WAKE, 1);
		}
	}
	close(stat_fd);
	return 0;
}

/* One IORING_OP_FUTEX_WAIT for *word == expected, submitted and waited for. */
static int uring_futex_wait(struct io_uring *ring, uint32_t *word, uint32_t expected)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;

	if (!sqe)
		return -1;
	io_uring_prep_rw(IORING_OP_FUTEX_WAIT, sqe, FUTEX2_SIZE_U32, word, 0, 0);
	sqe->addr2 = expected;
	sqe->addr3 = FUTEX_BITSET_MATCH_ANY;
	int rc = io_uring_submit_and_wait(ring, 1);

	if (rc < 0 || io_uring_peek_cqe(ring, &cqe) != 0)
		return -1;
	rc = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return rc;
}

/* Set by SIGALRM: a measurement ran far past its budget (its producer died, say). */
static volatile sig_atomic_t overdue;

static void on_alarm(int sig)
{
	(void)sig;
	overdue = 1;
}

/*
 * Sleeps until the word moves past @k - 1. The waits are the plain blocking
 * calls being measured; the alarm interrupts them (EINTR) if all goes wrong.
 */
static int sleep_once(struct wake_run *w, uint32_t k)
{
	uint32_t *word = &w->sh->word;

	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == k - 1) {
		if (overdue)
			return -1;
		if (w->mech == WAKE_URING) {
			int rc = uring_futex_wait(&w->ring, word, k - 1);

			if (rc < 0 && rc != -EAGAIN && rc != -EINTR)
				return -1;
		} else if (w->mech == WAKE_FUTEX) {
			futex(word, FUTEX_WAIT, k - 1);
		} else {
			uint64_t count;

			if (read(w->efd, &count, sizeof(count)) != sizeof(count))
				return -1;
		}
	}
	return 0;
}

static int measure(struct wake_run *w, struct vyre_bench_samples *s)
{
	struct shared *sh = w->sh;

	memset(sh, 0, sizeof(*sh));
	w->consumer = getpid();
	pid_t pid = vyre_bench_spawn(vyre_bench_producer_cpu(0), producer_main, w);

	if (pid < 0)
		return -1;
	vyre_bench_pin(vyre_bench_consumer_cpu());
	int rc = 0;

	overdue = 0;
	/* generous: 10 ms a sample, as on a machine loaded enough to cost a timeslice each */
	alarm(GIVE_UP_S + w->samples / 100);
	for (uint32_t k = 1; k <= w->samples && rc == 0; k++) {
		__atomic_store_n(&sh->armed.v, k, __ATOMIC_RELEASE);
		rc = sleep_once(w, k);
		uint64_t now = vyre_bench_ticks();

		vyre_bench_sample(s, now - __atomic_load_n(&sh->t0.v, __ATOMIC_RELAXED));
	}
	alarm(0);
	vyre_bench_unpin();
	if (rc)
		kill(pid, SIGKILL);
	if (vyre_bench_reap(pid) != 0)
		rc = -1;
	return rc;
}

/* io_uring futex ops need Linux 6.7; a wait on a stale value must fail with EAGAIN. */
static int uring_futex_supported(struct io_uring *ring, uint32_t *word)
{
	*word = 1;
	return uring_futex_wait(ring, word, 0) == -EAGAIN;
}

/* Runs every mechanism once per round; per-round p50s go to @p50. */
static int collect(struct wake_run *w, int uring_ok, unsigned rounds, uint32_t per_round,
		   struct vyre_bench_samples *samples, double p50[MECHANISMS][ROUNDS],
		   uint64_t *not_asleep)
{
	for (unsigned r = 0; r < rounds; r++)
		for (int m = 0; m < MECHANISMS; m++) {
			size_t first = samples[m].n;

			if (m == WAKE_URING && !uring_ok)
				continue;
			w->mech = (enum mechanism)m;
			w->samples = per_round;
			if (measure(w, &samples[m])) {
				fprintf(stderr, "wake: %s failed%s\n", mechanism_names[m],
					overdue ? ": over its time budget" : "");
				return -1;
			}
			p50[m][r] = vyre_bench_quantile_ns_from(&samples[m], first, 0.5);
			*not_asleep += w->sh->not_asleep.v;
		}
	return 0;
}

static int wake_suite(struct vyre_bench_ctx *ctx)
{
	struct vyre_bench_samples samples[MECHANISMS];
	struct wake_run w = {.efd = eventfd(0, EFD_CLOEXEC)};
	double p50[MECHANISMS][ROUNDS] = {{0}};
	unsigned rounds = ctx->quick ? 1 : ROUNDS;
	/* a sample costs tens of microseconds: size rounds from --seconds */
	uint32_t per_round = ctx->quick ? 100 : (uint32_t)(ctx->seconds * 20000 / ROUNDS) + 1;
	uint64_t not_asleep = 0;
	int rc = -1, uring_ok = 0;

	struct sigaction alarm_action = {.sa_handler = on_alarm}, saved_action;

	/* no SA_RESTART: the alarm must interrupt a blocked wait */
	sigaction(SIGALRM, &alarm_action, &saved_action);
	w.sh = vyre_bench_shared_alloc(sizeof(*w.sh));
	memset(samples, 0, sizeof(samples));
	if (w.efd < 0 || !w.sh || io_uring_queue_init(8, &w.ring, 0) < 0) {
		fprintf(stderr, "wake: set-up failed\n");
		goto out_nouring;
	}
	uring_ok = uring_futex_supported(&w.ring, &w.sh->word);
	if (!uring_ok)
		fprintf(stderr, "wake: this kernel has no IORING_OP_FUTEX_WAIT; "
				"io_uring rows skipped\n");
	for (int m = 0; m < MECHANISMS; m++)
		if (vyre_bench_samples_init(&samples[m], (size_t)per_round * rounds))
			goto out;
	if (collect(&w, uring_ok, rounds, per_round, samples, p50, &not_asleep))
		goto out;
	double uring_futex = vyre_bench_paired_ratio(p50[WAKE_URING], p50[WAKE_FUTEX], rounds);
	double eventfd_futex = vyre_bench_paired_ratio(p50[WAKE_EVENTFD], p50[WAKE_FUTEX], rounds);

	for (int m = 0; m < MECHANISMS; m++)
		if (m != WAKE_URING || uring_ok)
			vyre_bench_report_latency(ctx, "wake", mechanism_names[m], &samples[m]);
	if (uring_ok)
		vyre_bench_report(ctx, "wake", "io_uring_futex:futex", "p50", uring_futex, "x");
	vyre_bench_report(ctx, "wake", "eventfd:futex", "p50", eventfd_futex, "x");
	vyre_bench_report(ctx, "wake", "samples_not_asleep", "count", (double)not_asleep,
			  "samples");
	rc = 0;
out:
	io_uring_queue_exit(&w.ring);
out_nouring:
	for (int m = 0; m < MECHANISMS; m++)
		vyre_bench_samples_free(&samples[m]);
	vyre_bench_shared_free(w.sh, sizeof(*w.sh));
	if (w.efd >= 0)
		close(w.efd);
	sigaction(SIGALRM, &saved_action, NULL);
	return rc;
}

VYRE_BENCH_SUITE(wake, "sleeping-consumer wake latency: io_uring futex wait vs futex vs eventfd",
		 wake_suite)
