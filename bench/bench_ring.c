/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_ring.c - suite "ring": 64-byte entries handed from producer
 * processes to a consumer process through shared memory (docs/design.md 11).
 *
 * Peers, all measured in the same run with the same entries (struct
 * vyre_sqe), the same ring size and the same pinning (consumer on the last
 * CPU, producers on the others):
 *   sq        our SQ ring (ring/ring.h): vyre_sq_push + vyre_sq_kick per
 *             item, as vyre_submit does; the consumer peeks batches as vyred
 *   ck_ring   Concurrency Kit's ck_ring via CK_RING_PROTOTYPE (spsc with one
 *             producer, its mpsc variant with several)
 *   eventfd   a plain SPSC ring per producer plus one eventfd write per item;
 *             the consumer sleeps in read() when it finds nothing
 *   pingpong  one shared cache line written by the producer and polled by
 *             the consumer: the floor of any one-way hand-off (latency only)
 * Throughput: producers push as fast as they can, a spinning consumer counts
 * and checks every entry (per-producer sequence numbers) for --seconds.
 * Latency: each producer stamps an entry, pushes it, and waits for the
 * consumer's acknowledgement before the next; one-way latency is the
 * consumer's timestamp minus the producer's (invariant TSC).
 */
#include <ck_ring.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../ring/ring.h"
#include "bench.h"
#include "harness_clock.h"
#include "harness_procs.h"
#include "harness_stats.h"

#define RING_ENTRIES  4096u
#define MAX_PRODUCERS 8u
#define POP_BATCH     64u
#define MAX_SAMPLES   (1u << 20)
#define GIVE_UP_NS    (30ull * 1000000000ull) /* a phase that takes longer is broken */
#define ROUNDS	      15		      /* <= VYRE_BENCH_MAX_ROUNDS */
/*
 * Least work per measurement, so a round starved by other load still means
 * something; --quick asks for less because a sleeping consumer (eventfd) can
 * cost a whole timeslice per item on a loaded machine.
 */
#define MIN_ITEMS	  1000u
#define MIN_SAMPLES	  100u
#define QUICK_MIN_ITEMS	  100u
#define QUICK_MIN_SAMPLES 20u

CK_RING_PROTOTYPE(sqe, vyre_sqe)

/* One shared word per cache line. */
struct line {
	_Alignas(64) uint32_t v;
};

struct control {
	struct line ready, go, stop, done;
	struct line ack[MAX_PRODUCERS];
};

struct ck_shared {
	struct ck_ring ring;
	_Alignas(64) struct vyre_sqe buf[RING_ENTRIES];
};

struct efd_ring {
	struct line head, tail;
	struct vyre_sqe e[RING_ENTRIES];
};

enum peer { PEER_SQ, PEER_CK, PEER_EVENTFD, PEER_PINGPONG };
#define PEERS 4u

static const char *const peer_names[] = {"sq", "ck_ring", "eventfd", "pingpong"};

struct run {
	enum peer peer;
	unsigned producers;
	int latency;
	int oversubscribed; /* producers share CPUs: yield instead of spinning */
	double seconds;
	uint32_t min_work; /* items (throughput) or samples (latency) before stopping */
	struct control *ctl;
	struct vyre_region region;
	struct vyre_sq_producer sq_prod; /* each producer process fills its own copy */
	struct vyre_sq_consumer sq_cons;
	struct ck_shared *ck;
	struct efd_ring *efd_rings;
	int efd;
	uint32_t efd_head[MAX_PRODUCERS]; /* consumer's private heads */
	struct vyre_sqe *pp;		  /* pingpong slot */
	uint32_t pp_seen;
};

struct outcome {
	double items_per_s;
	uint64_t errors;
	struct vyre_bench_samples *samples; /* latency runs append here */
	size_t sample_limit;		    /* stop once samples->n reaches it */
};

static uint32_t load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void backoff(const struct run *r)
{
	if (r->oversubscribed)
		sched_yield();
	else
		vyre_cpu_relax();
}

static int peer_init(struct run *r)
{
	switch (r->peer) {
	case PEER_SQ:
		if (vyre_region_create(RING_ENTRIES, 2, 1, 1, &r->region))
			return -1;
		vyre_sq_consumer_init(&r->sq_cons, &r->region);
		return 0;
	case PEER_CK:
		r->ck = vyre_bench_shared_alloc(sizeof(*r->ck));
		if (!r->ck)
			return -1;
		ck_ring_init(&r->ck->ring, RING_ENTRIES);
		return 0;
	case PEER_EVENTFD:
		r->efd_rings = vyre_bench_shared_alloc(sizeof(*r->efd_rings) * r->producers);
		r->efd = eventfd(0, EFD_CLOEXEC);
		return r->efd_rings && r->efd >= 0 ? 0 : -1;
	case PEER_PINGPONG:
		r->pp = vyre_bench_shared_alloc(sizeof(*r->pp));
		r->pp_seen = 0;
		return r->pp ? 0 : -1;
	}
	return -1;
}

static void peer_fini(struct run *r)
{
	vyre_region_unmap(&r->region);
	vyre_bench_shared_free(r->ck, sizeof(*r->ck));
	vyre_bench_shared_free(r->efd_rings, sizeof(*r->efd_rings) * r->producers);
	vyre_bench_shared_free(r->pp, sizeof(*r->pp));
	if (r->efd >= 0)
		close(r->efd);
}

/* 0, or VYRE_E_AGAIN when the ring is full. */
static int peer_push(struct run *r, unsigned id, struct vyre_sqe *e)
{
	switch (r->peer) {
	case PEER_SQ: {
		int rc = vyre_sq_push(&r->sq_prod, e, 1, 1);

		if (rc < 0)
			return rc;
		vyre_sq_kick(&r->sq_prod);
		return 0;
	}
	case PEER_CK:
		if (r->producers == 1)
			return ck_ring_enqueue_spsc_sqe(&r->ck->ring, r->ck->buf, e) ? 0
										     : VYRE_E_AGAIN;
		return ck_ring_enqueue_mpsc_sqe(&r->ck->ring, r->ck->buf, e) ? 0 : VYRE_E_AGAIN;
	case PEER_EVENTFD: {
		struct efd_ring *q = &r->efd_rings[id];
		uint32_t tail = q->tail.v;
		uint64_t one = 1;

		if (tail - load(&q->head.v) >= RING_ENTRIES)
			return VYRE_E_AGAIN;
		q->e[tail % RING_ENTRIES] = *e;
		store(&q->tail.v, tail + 1);
		return write(r->efd, &one, sizeof(one)) == sizeof(one) ? 0 : VYRE_E_INVAL;
	}
	case PEER_PINGPONG: {
		uint32_t seq = r->pp->seq + 1;

		memcpy((char *)r->pp + 4, (char *)e + 4, sizeof(*e) - 4);
		store(&r->pp->seq, seq);
		return 0;
	}
	}
	return VYRE_E_INVAL;
}

static int efd_drain(struct run *r, struct vyre_sqe *out, uint32_t max)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < r->producers && n < max; i++) {
		struct efd_ring *q = &r->efd_rings[i];
		uint32_t tail = load(&q->tail.v);

		while (r->efd_head[i] != tail && n < max)
			out[n++] = q->e[r->efd_head[i]++ % RING_ENTRIES];
		store(&q->head.v, r->efd_head[i]);
	}
	return (int)n;
}

/* Up to @max entries; 0 when none. Only the eventfd peer sleeps, and only if @may_block. */
static int peer_pop(struct run *r, struct vyre_sqe *out, uint32_t max, int may_block)
{
	int n = 0;

	switch (r->peer) {
	case PEER_SQ:
		n = vyre_sq_peek(&r->sq_cons, out, max);
		if (n > 0)
			vyre_sq_release(&r->sq_cons, (uint32_t)n);
		return n;
	case PEER_CK:
		while ((uint32_t)n < max &&
		       (r->producers == 1
			    ? ck_ring_dequeue_spsc_sqe(&r->ck->ring, r->ck->buf, &out[n])
			    : ck_ring_dequeue_mpsc_sqe(&r->ck->ring, r->ck->buf, &out[n])))
			n++;
		return n;
	case PEER_EVENTFD: {
		uint64_t count;

		struct pollfd pfd = {.fd = r->efd, .events = POLLIN};

		n = efd_drain(r, out, max);
		/* a bounded sleep: the caller's loop must see time pass if producers die */
		if (n == 0 && may_block && poll(&pfd, 1, 100) == 1 &&
		    read(r->efd, &count, sizeof(count)) != sizeof(count))
			return VYRE_E_INVAL;
		return n;
	}
	case PEER_PINGPONG: {
		uint32_t seq = load(&r->pp->seq);

		if (seq == r->pp_seen)
			return 0;
		memcpy(out, r->pp, sizeof(*out));
		r->pp_seen = seq;
		return 1;
	}
	}
	return VYRE_E_INVAL;
}

struct producer_arg {
	struct run *run;
	unsigned id;
};

static int producer_main(void *arg)
{
	const struct producer_arg *a = arg;
	struct run *r = a->run;
	struct control *ctl = r->ctl;
	struct vyre_sqe e;
	uint64_t seq = 0;

	if (r->peer == PEER_SQ)
		vyre_sq_producer_init(&r->sq_prod, &r->region, -1);
	memset(&e, 0, sizeof(e));
	e.item.op_handle = a->id;
	__atomic_fetch_add(&ctl->ready.v, 1, __ATOMIC_ACQ_REL);
	/* stop without go: the consumer gave up before starting */
	while (!load(&ctl->go.v) && !load(&ctl->stop.v))
		backoff(r);
	while (!load(&ctl->stop.v)) {
		e.user_data = seq;
		e.submit_ns = vyre_bench_ticks();
		int rc = peer_push(r, a->id, &e);

		if (rc == VYRE_E_AGAIN) {
			backoff(r);
			continue;
		}
		if (rc < 0)
			return 1;
		seq++;
		if (r->latency)
			while (load(&ctl->ack[a->id].v) != (uint32_t)seq && !load(&ctl->stop.v))
				backoff(r);
	}
	__atomic_fetch_add(&ctl->done.v, 1, __ATOMIC_ACQ_REL);
	if (r->peer == PEER_EVENTFD) {
		uint64_t one = 1;

		/* the consumer may sleep in read() waiting for an entry that never comes */
		if (write(r->efd, &one, sizeof(one)) != sizeof(one))
			return 1;
	}
	return 0;
}

/* Checks and records a batch; returns the number of entries out of sequence. */
static uint64_t consume_batch(struct run *r, const struct vyre_sqe *buf, int n, uint64_t *expected,
			      struct outcome *o, int stopping)
{
	uint64_t now = vyre_bench_ticks(), errors = 0;

	for (int i = 0; i < n; i++) {
		uint32_t id = buf[i].item.op_handle;

		if (id >= r->producers || buf[i].user_data != expected[id]) {
			errors++;
			continue;
		}
		expected[id]++;
		if (!r->latency)
			continue;
		if (!stopping && o->samples->n < o->sample_limit)
			vyre_bench_sample(o->samples, now - buf[i].submit_ns);
		store(&r->ctl->ack[id].v, (uint32_t)expected[id]);
	}
	return errors;
}

static int give_up(const char *why)
{
	fprintf(stderr, "ring: %s within %llu s\n", why, GIVE_UP_NS / 1000000000ull);
	return -1;
}

/* The consumer loop, in the calling process pinned to the consumer CPU. */
static int consume(struct run *r, struct outcome *o)
{
	struct control *ctl = r->ctl;
	struct vyre_sqe buf[POP_BATCH];
	uint64_t expected[MAX_PRODUCERS] = {0}, count = 0, iter = 0;
	uint64_t start = vyre_bench_now_ns(), stop_at = 0;
	size_t first_sample = r->latency ? o->samples->n : 0;
	int stopping = 0;

	while (load(&ctl->ready.v) != r->producers)
		if (vyre_bench_now_ns() - start > GIVE_UP_NS)
			return give_up("the producers did not start");
	start = vyre_bench_now_ns();
	store(&ctl->go.v, 1);
	for (;;) {
		uint32_t done = stopping ? load(&ctl->done.v) : 0;
		int n = peer_pop(r, buf, POP_BATCH, !stopping);

		if (n < 0)
			return give_up("the ring failed");
		o->errors += consume_batch(r, buf, n, expected, o, stopping);
		if (stopping) {
			if (done == r->producers && n == 0)
				break;
			if (vyre_bench_now_ns() - stop_at > GIVE_UP_NS)
				return give_up("the producers did not finish");
			continue;
		}
		count += (uint64_t)n;
		int full = r->latency && o->samples->n >= o->sample_limit;

		if ((++iter & 63) && !full)
			continue;
		uint64_t now = vyre_bench_now_ns();
		/* a loaded machine may starve a short run: insist on a minimum */
		int enough =
		    r->latency ? o->samples->n - first_sample >= r->min_work : count >= r->min_work;

		if (now - start > GIVE_UP_NS)
			return give_up("too little progress");
		if (((double)(now - start) >= r->seconds * 1e9 && enough) || full) {
			o->items_per_s = (double)count * 1e9 / (double)(now - start);
			stopping = 1;
			stop_at = now;
			store(&ctl->stop.v, 1);
		}
	}
	return 0;
}

/*
 * One measurement: throughput when @samples is NULL, else latency samples
 * appended to @samples (at most @max_samples of them).
 */
static int measure(enum peer peer, unsigned producers, double seconds, int quick,
		   struct vyre_bench_samples *samples, size_t max_samples, struct outcome *o)
{
	struct run r = {.peer = peer,
			.producers = producers,
			.latency = samples != NULL,
			.seconds = seconds,
			.efd = -1};

	if (samples)
		r.min_work = quick ? QUICK_MIN_SAMPLES : MIN_SAMPLES;
	else
		r.min_work = quick ? QUICK_MIN_ITEMS : MIN_ITEMS;
	struct producer_arg args[MAX_PRODUCERS];
	pid_t pids[MAX_PRODUCERS];
	unsigned spawned = 0;
	int rc = -1;

	memset(o, 0, sizeof(*o));
	o->samples = samples;
	o->sample_limit = samples ? samples->n + max_samples : 0;
	r.oversubscribed = vyre_bench_cpus() < 2 || producers > (unsigned)vyre_bench_cpus() - 1;
	r.ctl = vyre_bench_shared_alloc(sizeof(*r.ctl));
	if (!r.ctl || peer_init(&r))
		goto out;
	for (; spawned < producers; spawned++) {
		args[spawned] = (struct producer_arg){&r, spawned};
		pids[spawned] = vyre_bench_spawn(vyre_bench_producer_cpu(spawned), producer_main,
						 &args[spawned]);
		if (pids[spawned] < 0)
			break;
	}
	vyre_bench_pin(vyre_bench_consumer_cpu());
	rc = spawned == producers ? consume(&r, o) : -1;
	vyre_bench_unpin();
	if (rc)
		store(&r.ctl->stop.v, 1);
	for (unsigned i = 0; i < spawned; i++)
		if (vyre_bench_reap(pids[i]) != 0)
			rc = -1;
	if (o->errors)
		rc = -1;
out:
	peer_fini(&r);
	vyre_bench_shared_free(r.ctl, sizeof(*r.ctl));
	return rc;
}

static void report_ratio(struct vyre_bench_ctx *ctx, const char *mode, const char *a, const char *b,
			 const char *metric, double ratio)
{
	char name[96];

	snprintf(name, sizeof(name), "%s/%s:%s", mode, a, b);
	vyre_bench_report(ctx, "ring", name, metric, ratio, "x");
}

/* Per-round figures of every peer, and the latency samples of all rounds pooled. */
struct figures {
	unsigned rounds;
	int quick;
	double items[PEERS][ROUNDS];
	double p50[PEERS][ROUNDS];
	struct vyre_bench_samples pooled[PEERS];
};

/* One peer's turn in a round: throughput (not for pingpong), then latency. */
static int measure_turn(unsigned p, unsigned producers, double seconds, struct figures *f,
			unsigned round, struct outcome *o)
{
	struct vyre_bench_samples *s = &f->pooled[p];
	size_t first = s->n;

	if (p != PEER_PINGPONG) {
		if (measure(p, producers, seconds, f->quick, NULL, 0, o))
			return -1;
		f->items[p][round] = o->items_per_s;
	}
	if (measure(p, producers, seconds, f->quick, s, MAX_SAMPLES / f->rounds, o))
		return -1;
	f->p50[p][round] = vyre_bench_quantile_ns_from(s, first, 0.5);
	return 0;
}

static int collect(const char *mode, unsigned producers, double seconds, struct figures *f)
{
	struct outcome o;

	for (unsigned round = 0; round < f->rounds; round++)
		for (unsigned p = 0; p < PEERS; p++) {
			if (p == PEER_PINGPONG && producers != 1)
				continue;
			if (measure_turn(p, producers, seconds, f, round, &o)) {
				fprintf(stderr, "ring: %s %s failed (%llu bad entries)\n", mode,
					peer_names[p], (unsigned long long)o.errors);
				return -1;
			}
		}
	return 0;
}

static void report_mode(struct vyre_bench_ctx *ctx, const char *mode, unsigned producers,
			struct figures *f)
{
	const unsigned n = f->rounds;
	char name[64];
	/* ratios first: vyre_bench_median() sorts the arrays it is given */
	double thr_ck = vyre_bench_paired_ratio(f->items[PEER_SQ], f->items[PEER_CK], n);
	double thr_efd = vyre_bench_paired_ratio(f->items[PEER_SQ], f->items[PEER_EVENTFD], n);
	double lat_ck = vyre_bench_paired_ratio(f->p50[PEER_SQ], f->p50[PEER_CK], n);
	double lat_pp = vyre_bench_paired_ratio(f->p50[PEER_SQ], f->p50[PEER_PINGPONG], n);
	double ck_pp = vyre_bench_paired_ratio(f->p50[PEER_CK], f->p50[PEER_PINGPONG], n);
	double efd_pp = vyre_bench_paired_ratio(f->p50[PEER_EVENTFD], f->p50[PEER_PINGPONG], n);

	for (unsigned p = 0; p < PEERS; p++) {
		snprintf(name, sizeof(name), "%s/%s", mode, peer_names[p]);
		if (p != PEER_PINGPONG)
			vyre_bench_report(ctx, "ring", name, "items/s",
					  vyre_bench_median(f->items[p], n), "items/s");
		if (f->pooled[p].n)
			vyre_bench_report_latency(ctx, "ring", name, &f->pooled[p]);
	}
	report_ratio(ctx, mode, "sq", "ck_ring", "items/s", thr_ck);
	report_ratio(ctx, mode, "sq", "eventfd", "items/s", thr_efd);
	report_ratio(ctx, mode, "sq", "ck_ring", "p50", lat_ck);
	if (producers == 1) {
		report_ratio(ctx, mode, "sq", "pingpong", "p50", lat_pp);
		report_ratio(ctx, mode, "ck_ring", "pingpong", "p50", ck_pp);
		report_ratio(ctx, mode, "eventfd", "pingpong", "p50", efd_pp);
	}
}

/*
 * One mode (spsc or mpscN). Peers take turns in short rounds so a noisy
 * neighbour, or the hypervisor moving a vCPU, hurts them alike: throughput
 * is the median of the rounds, percentiles pool every round's samples, and
 * each ratio is the median of per-round ratios of figures taken back to back.
 */
static int run_mode(struct vyre_bench_ctx *ctx, unsigned producers)
{
	struct figures *f = calloc(1, sizeof(*f));
	char mode[16];
	int rc = -1;

	if (!f)
		return -1;
	f->rounds = ctx->quick ? 1 : ROUNDS;
	f->quick = ctx->quick;
	snprintf(mode, sizeof(mode), producers == 1 ? "spsc" : "mpsc%u", producers);
	for (unsigned p = 0; p < PEERS; p++)
		if (vyre_bench_samples_init(&f->pooled[p], MAX_SAMPLES))
			goto out;
	if (collect(mode, producers, ctx->seconds / f->rounds, f) == 0) {
		report_mode(ctx, mode, producers, f);
		rc = 0;
	}
out:
	for (unsigned p = 0; p < PEERS; p++)
		vyre_bench_samples_free(&f->pooled[p]);
	free(f);
	return rc;
}

static int ring_suite(struct vyre_bench_ctx *ctx)
{
	if (run_mode(ctx, 1))
		return -1;
	return run_mode(ctx, 3);
}

VYRE_BENCH_SUITE(ring, "cross-process SPSC/MPSC ring: ours vs ck_ring, eventfd, ping-pong",
		 ring_suite)
