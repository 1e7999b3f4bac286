/* SPDX-License-Identifier: MIT */
/*
 * test_resume - restart without loss (docs/design.md section 3, issue 14):
 * vyred SIGKILLed twice under load (up to 8 times while no kill has yet
 * caught an accepted item not completed), each time a new one started on the
 * same socket, and every resumable producer carries on.
 *
 * Seven producer processes: three in domain "rs-a", three in "rs-b", one
 * in a private domain; each resumable, some reconnecting explicitly with
 * vyre_reconnect, some letting vyre_wait reconnect (VYRE_CONNECT_RECONNECT),
 * some asking for a re-run of what the dead vyred accepted
 * (VYRE_CONNECT_RERUN). Each has named and unnamed input buffers filled with
 * seeded bytes, never written by an item, and one output buffer per slot;
 * an item (or a chain of two, through a transient buffer) writes only its
 * slot's output, and a slot takes its next item only once the last one
 * completed, so a re-run is idempotent and every completion can be checked
 * on its own: a status-0 item's status, result and output bytes equal the
 * oracle's (vyre_exec_one on a private copy of the buffers). A FENCE item's
 * CQE must come after every earlier item's.
 *
 * At the end each producer checks that every user_data it queued came back
 * in exactly one CQE across the three vyreds, that its inputs hold their
 * bytes, that buffer pointers did not move and names still open to the same
 * handles, that a RERUN client saw no VYRE_E_RESTARTED, and that an
 * explicitly reconnecting client saw as many as vyre_reconnect reported.
 * Then vyre_reconnect's edge cases: 0 on a live connection, VYRE_E_INVAL
 * for one that is not resumable, VYRE_E_TIMEDOUT with no vyred.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "../gpu/ops.h"
#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define PRODUCERS 7u
#define KILLS	  2u
/* more kills, while none has yet found an accepted item not completed: on
 * fast hosts (four GPUs, the pool) items often finish before the kill lands */
#define MAX_KILLS  8u
#define SLOTS	   16u
#define INPUTS	   3u
#define BUF_BYTES  (64u << 10) /* big enough that a kill finds batches running */
#define MAX_ITEMS  (1u << 20)  /* user_data values a producer may use */
#define CQE_BATCH  64u
#define HEAP_BYTES (16u << 20)
#define STALL_NS   (30 * 1000000000ll) /* no completion for this long: a hang */
#define FLAGS_RS   VYRE_CONNECT_RESUMABLE
#define FLAGS_RC   VYRE_CONNECT_RECONNECT

/* Local buffer indexes: inputs, then each slot's output, then its transient. */
#define OUT(s) (INPUTS + (s))
#define TMP(s) (INPUTS + SLOTS + (s))
#define N_BUFS (INPUTS + 2u * SLOTS)

static const struct {
	const char *domain;
	uint32_t flags;
} cfg[PRODUCERS] = {
    {"rs-a", FLAGS_RS},
    {"rs-a", FLAGS_RC},
    {"rs-a", FLAGS_RS | VYRE_CONNECT_RERUN},
    {"rs-b", FLAGS_RC | VYRE_CONNECT_RERUN},
    {"rs-b", FLAGS_RS},
    {"rs-b", FLAGS_RC},
    {NULL, FLAGS_RS},
};

/* What a producer tells the parent; written by the producer only, but stop. */
struct page {
	uint32_t ready;
	uint32_t stop; /* set by the parent: finish what is queued, check, exit */
	uint64_t completed;
	uint64_t submitted;
	uint64_t restarted;   /* CQEs with VYRE_E_RESTARTED */
	uint64_t reported;    /* the sum of what vyre_reconnect returned */
	uint32_t reconnects;  /* vyre_reconnect calls that took */
	uint32_t disconnects; /* VYRE_E_DISCONNECTED seen */
	char why[256];	      /* the first failure, or "" */
};

struct slot_item {
	struct vyre_work_item it;
	uint32_t flags;	  /* VYRE_SQE_* */
	uint32_t in, out; /* local buffer indexes (N_BUFS: none) */
	uint64_t user_data;
	int32_t status;
	uint64_t result;
	int done;
};

struct slot {
	struct slot_item item[2]; /* a chain has two */
	uint32_t n, n_sub, n_done;
};

struct producer {
	unsigned id;
	uint32_t flags;
	struct page *pg;
	struct vyre_client *c;
	uint64_t rng;
	uint32_t handle[N_BUFS];
	void *ptr[N_BUFS];
	uint8_t *local; /* the oracle's copy: buffer b at b * BUF_BYTES */
	uint8_t *seen;	/* a bit per user_data with a CQE */
	uint64_t next_ud, low_unseen;
	struct slot slot[SLOTS];
	int pending; /* a slot whose chain is half submitted, or -1 */
};

static int failed;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

static int pfail(struct producer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int pfail(struct producer *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->pg->why[0]) {
		va_start(ap, fmt);
		vsnprintf(p->pg->why, sizeof(p->pg->why), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static uint32_t input_word(unsigned id, uint32_t b, uint32_t w)
{
	return (id + 1) * 0x9e3779b9u ^ (b << 24) ^ (w * 2654435761u);
}

/* The buffers: input 0 and output 0 carry names, the rest not. */
static int make_buffers(struct producer *p)
{
	char name[VYRE_BUFFER_NAME_MAX];

	for (uint32_t b = 0; b < N_BUFS; b++) {
		const uint32_t flags = b >= TMP(0) ? VYRE_BUF_TRANSIENT : 0;
		int rc;

		if (b == 0 || b == OUT(0)) {
			snprintf(name, sizeof(name), "p%u-%s", p->id, b == 0 ? "in" : "out");
			rc = vyre_buffer_create(p->c, name, BUF_BYTES, flags, &p->handle[b]);
		} else {
			rc = vyre_buffer_alloc(p->c, BUF_BYTES, flags, &p->handle[b]);
		}
		if (rc != 0)
			return pfail(p, "buffer %u: %s", b, vyre_strerror(rc));
		p->ptr[b] = vyre_buffer_ptr(p->c, p->handle[b], NULL);
		if (!p->ptr[b] != (flags != 0))
			return pfail(p, "buffer %u: pointer %p", b, p->ptr[b]);
	}
	for (uint32_t b = 0; b < INPUTS; b++) {
		uint32_t *v = p->ptr[b], *l = (uint32_t *)(p->local + b * BUF_BYTES);

		for (uint32_t w = 0; w < BUF_BYTES / 4; w++)
			v[w] = l[w] = input_word(p->id, b, w);
	}
	return 0;
}

static void item(struct slot_item *si, uint32_t op, uint32_t in, uint32_t out, uint32_t param,
		 const uint32_t *handle, uint32_t flags)
{
	memset(si, 0, sizeof(*si));
	si->it = (struct vyre_work_item){op, in < N_BUFS ? handle[in] : 0, handle[out], param};
	si->flags = flags;
	si->in = in;
	si->out = out;
}

/* The slot's next item: ADD, XOR (sometimes a FENCE), SUM, FILL or a COPY -> MUL chain. */
static void generate(struct producer *p, uint32_t s)
{
	struct slot *sl = &p->slot[s];
	const uint64_t r = rel_rand(&p->rng);
	const uint32_t in = (uint32_t)(r >> 8) % INPUTS, param = (uint32_t)(r >> 32);

	sl->n = 1;
	sl->n_sub = sl->n_done = 0;
	switch (r % 5) {
	case 0:
		item(&sl->item[0], VYRE_OP_ADD, in, OUT(s), param, p->handle, 0);
		break;
	case 1:
		item(&sl->item[0], VYRE_OP_XOR, in, OUT(s), param, p->handle,
		     (r >> 4) % 8 == 0 ? VYRE_SQE_FENCE : 0);
		break;
	case 2:
		item(&sl->item[0], VYRE_OP_SUM, in, OUT(s), 0, p->handle, 0);
		break;
	case 3:
		item(&sl->item[0], VYRE_OP_FILL, N_BUFS, OUT(s), param, p->handle, 0);
		break;
	default:
		item(&sl->item[0], VYRE_OP_COPY, in, TMP(s), 0, p->handle, VYRE_SQE_CHAIN);
		item(&sl->item[1], VYRE_OP_MUL, TMP(s), OUT(s), param | 1, p->handle, 0);
		sl->n = 2;
	}
}

static int oracle(struct producer *p, const struct slot_item *si, uint64_t *result)
{
	struct vyre_heap_view heap = {p->local, (uint64_t)N_BUFS * BUF_BYTES};
	struct vyre_exec_item x = {.op = si->it.op_handle, .param = si->it.param};

	if (si->in < N_BUFS) {
		x.in_off = (uint64_t)si->in * BUF_BYTES;
		x.in_bytes = BUF_BYTES;
	}
	x.out_off = (uint64_t)si->out * BUF_BYTES;
	x.out_bytes = BUF_BYTES;
	return vyre_exec_one(&heap, &x, result);
}

/* Every item of a slot has its CQE: check them in order against the oracle. */
static int settle(struct producer *p, uint32_t s)
{
	struct slot *sl = &p->slot[s];

	for (uint32_t k = 0; k < sl->n; k++) {
		struct slot_item *si = &sl->item[k];
		uint8_t *want = p->local + si->out * BUF_BYTES;
		uint64_t result;

		if (si->status == VYRE_E_RESTARTED) {
			if (p->flags & VYRE_CONNECT_RERUN)
				return pfail(p, "item %" PRIu64 ": RESTARTED though RERUN",
					     si->user_data);
			/* it may have run, wholly or in part: its output is what it is */
			if (p->ptr[si->out])
				memcpy(want, p->ptr[si->out], BUF_BYTES);
			continue;
		}
		const int st = oracle(p, si, &result);

		if (si->status != st || si->result != result)
			return pfail(p,
				     "item %" PRIu64 " (op %u): status %d result %" PRIu64
				     ", oracle %d %" PRIu64,
				     si->user_data, si->it.op_handle, si->status, si->result, st,
				     result);
		if (p->ptr[si->out] && memcmp(p->ptr[si->out], want, BUF_BYTES) != 0)
			return pfail(p, "item %" PRIu64 " (op %u): output differs from the oracle",
				     si->user_data, si->it.op_handle);
	}
	sl->n = 0;
	return 0;
}

static int note_cqe(struct producer *p, const struct vyre_cqe *q)
{
	const uint64_t u = q->user_data;

	if (u >= p->next_ud || (p->seen[u / 8] >> (u % 8)) & 1)
		return pfail(p, "CQE for user_data %" PRIu64 " %s", u,
			     u >= p->next_ud ? "never submitted" : "seen twice");
	p->seen[u / 8] |= (uint8_t)(1u << (u % 8));
	p->pg->completed++;
	p->pg->restarted += q->status == VYRE_E_RESTARTED;
	for (uint32_t s = 0; s < SLOTS; s++) {
		struct slot *sl = &p->slot[s];

		for (uint32_t k = 0; k < sl->n_sub; k++) {
			struct slot_item *si = &sl->item[k];

			if (si->user_data != u || si->done)
				continue;
			if ((si->flags & VYRE_SQE_FENCE) && p->low_unseen != u)
				return pfail(
				    p, "FENCE item %" PRIu64 " completed before item %" PRIu64, u,
				    p->low_unseen);
			si->done = 1;
			si->status = q->status;
			si->result = q->result;
			while (p->low_unseen < p->next_ud &&
			       (p->seen[p->low_unseen / 8] >> (p->low_unseen % 8)) & 1)
				p->low_unseen++;
			return ++sl->n_done == sl->n ? settle(p, s) : 0;
		}
	}
	return pfail(p, "CQE for user_data %" PRIu64 ": no slot waits for it", u);
}

/* vyred is gone: reconnect now, or leave it to vyre_wait (VYRE_CONNECT_RECONNECT). */
static int gone(struct producer *p)
{
	p->pg->disconnects++;
	if (p->flags & VYRE_CONNECT_RECONNECT)
		return 0;
	const int rc = vyre_reconnect(p->c, STALL_NS);

	if (rc < 0)
		return pfail(p, "vyre_reconnect: %s", vyre_strerror(rc));
	p->pg->reported += (uint64_t)rc;
	p->pg->reconnects++;
	return 0;
}

/* Submits the slot's next unsubmitted item: 0, 1 (SQ full) or -1. */
static int submit_one(struct producer *p, uint32_t s)
{
	struct slot *sl = &p->slot[s];
	struct slot_item *si = &sl->item[sl->n_sub];
	const int rc = vyre_submit(p->c, &si->it, p->next_ud, si->flags);

	if (rc == VYRE_E_AGAIN)
		return 1;
	if (rc == VYRE_E_DISCONNECTED)
		return gone(p) ? -1 : 1;
	if (rc != 0)
		return pfail(p, "vyre_submit: %s", vyre_strerror(rc));
	si->user_data = p->next_ud++;
	sl->n_sub++;
	p->pg->submitted++;
	p->pending = sl->n_sub < sl->n ? (int)s : -1;
	return 0;
}

/*
 * Submits a half-submitted chain's second item first (it must be the next
 * one), then, with @fill, the next item of every idle slot.
 */
static int submit_more(struct producer *p, int fill)
{
	while (p->pending >= 0) {
		const int rc = submit_one(p, (uint32_t)p->pending);

		if (rc)
			return rc < 0 ? -1 : 0;
	}
	for (uint32_t s = 0; fill && s < SLOTS && p->next_ud + 2 < MAX_ITEMS; s++) {
		if (p->slot[s].n)
			continue;
		generate(p, s);
		for (int rc; p->slot[s].n_sub < p->slot[s].n;) {
			rc = submit_one(p, s);
			if (rc && !p->slot[s].n_sub)
				p->slot[s].n = 0; /* nothing of it went in: generate anew later */
			if (rc)
				return rc < 0 ? -1 : 0;
		}
	}
	return 0;
}

static int outstanding(const struct producer *p)
{
	for (uint32_t s = 0; s < SLOTS; s++)
		if (p->slot[s].n)
			return 1;
	return 0;
}

static int run(struct producer *p)
{
	struct vyre_cqe cqes[CQE_BATCH];
	uint64_t last = rel_now_ns();

	for (int stop;
	     !(stop = __atomic_load_n(&p->pg->stop, __ATOMIC_ACQUIRE)) || outstanding(p);) {
		if (submit_more(p, !stop))
			return -1;
		const int n = vyre_wait(p->c, cqes, CQE_BATCH, 100 * 1000000ll);

		for (int i = 0; i < n; i++)
			if (note_cqe(p, &cqes[i]))
				return -1;
		if (n > 0)
			last = rel_now_ns();
		else if (n == VYRE_E_DISCONNECTED && gone(p))
			return -1;
		else if (n < 0 && n != VYRE_E_TIMEDOUT && n != VYRE_E_DISCONNECTED)
			return pfail(p, "vyre_wait: %s", vyre_strerror(n));
		if (rel_now_ns() - last > (uint64_t)STALL_NS)
			return pfail(p, "no completion for 30 s (%s)", vyre_strerror(n));
	}
	return 0;
}

/* After the run: inputs, pointers, names, exactly-once, the RESTARTED count. */
static int final_checks(struct producer *p)
{
	char name[VYRE_BUFFER_NAME_MAX];

	for (uint32_t b = 0; b < N_BUFS; b++) {
		void *ptr = vyre_buffer_ptr(p->c, p->handle[b], NULL);

		if (ptr != p->ptr[b])
			return pfail(p, "buffer %u moved: %p, was %p", b, ptr, p->ptr[b]);
		if (b < INPUTS && memcmp(ptr, p->local + b * BUF_BYTES, BUF_BYTES) != 0)
			return pfail(p, "input %u lost its bytes", b);
	}
	for (uint32_t b = 0; b <= OUT(0); b += OUT(0)) {
		uint32_t h = 0, bytes = 0, flags = 1;
		int rc;

		snprintf(name, sizeof(name), "p%u-%s", p->id, b == 0 ? "in" : "out");
		rc = vyre_buffer_open(p->c, name, &h, &bytes, &flags);
		if (rc != 0 || h != p->handle[b] || bytes != BUF_BYTES || flags != 0)
			return pfail(p, "open %s: %s, handle %u (was %u), %u bytes", name,
				     vyre_strerror(rc), h, p->handle[b], bytes);
	}
	if (p->low_unseen != p->next_ud)
		return pfail(p, "user_data %" PRIu64 " has no CQE (%" PRIu64 " submitted)",
			     p->low_unseen, p->next_ud);
	if ((p->flags & VYRE_CONNECT_RERUN) && p->pg->restarted)
		return pfail(p, "%" PRIu64 " RESTARTED with RERUN", p->pg->restarted);
	if (!(p->flags & (VYRE_CONNECT_RERUN | VYRE_CONNECT_RECONNECT)) &&
	    p->pg->restarted != p->pg->reported)
		return pfail(p, "%" PRIu64 " RESTARTED CQEs, vyre_reconnect reported %" PRIu64,
			     p->pg->restarted, p->pg->reported);
	const int rc = vyre_reconnect(p->c, 0);

	if (rc != 0)
		return pfail(p, "vyre_reconnect on a live connection: %d", rc);
	return 0;
}

static void producer_main(const char *socket, unsigned id, struct page *pg, uint64_t seed)
{
	struct vyre_connect_opts o = {.socket_path = socket,
				      .domain = cfg[id].domain,
				      .sq_entries = 64,
				      .cq_entries = 64,
				      .heap_bytes = HEAP_BYTES,
				      .flags = cfg[id].flags};
	static struct producer p;
	int rc;

	p.id = id;
	p.flags = cfg[id].flags;
	p.pg = pg;
	p.rng = seed;
	p.pending = -1;
	p.local = calloc(N_BUFS, BUF_BYTES);
	p.seen = calloc(MAX_ITEMS / 8, 1);
	if (!p.local || !p.seen)
		_exit(2);
	rc = vyre_connect(&o, &p.c);
	if (rc != 0) {
		pfail(&p, "connect: %s", vyre_strerror(rc));
		_exit(1);
	}
	rc = make_buffers(&p);
	__atomic_store_n(&pg->ready, 1, __ATOMIC_RELEASE);
	if (rc == 0)
		rc = run(&p);
	if (rc == 0)
		rc = final_checks(&p);
	vyre_close(p.c);
	_exit(rc ? 1 : 0);
}

static uint64_t completed(struct page *pg)
{
	return __atomic_load_n(&pg->completed, __ATOMIC_RELAXED);
}

/* Waits until every running producer completed @more items past @base[]; 0 or -1. */
static int wait_progress(struct page *pages, const pid_t *pids, const uint64_t *base, uint64_t more)
{
	const uint64_t until = rel_now_ns() + 60 * 1000000000ull;

	for (uint32_t k = 0; k < PRODUCERS; k++)
		while (completed(&pages[k]) < base[k] + more) {
			if (!rel_child_running(pids[k]) || rel_now_ns() > until) {
				printf("producer %u: %" PRIu64 " completions, waited for %" PRIu64
				       ": %s\n",
				       k, completed(&pages[k]), base[k] + more, pages[k].why);
				return -1;
			}
			rel_sleep_ns(1000000);
		}
	return 0;
}

static void edge_cases(const char *socket, struct vyre_test_daemon *d)
{
	struct vyre_connect_opts o = {.socket_path = socket, .flags = VYRE_CONNECT_RESUMABLE};
	struct vyre_connect_opts plain = {.socket_path = socket};
	struct vyre_client *c = NULL, *n = NULL;
	char line[160];

	if (vyre_connect(&o, &c) != 0 || vyre_connect(&plain, &n) != 0) {
		check(0, "connect for the edge cases");
		goto out;
	}
	check(vyre_reconnect(c, 0) == 0, "vyre_reconnect on a live connection returns 0");
	vyre_test_daemon_kill(d);
	/* the socket hangs up some time after the kill: until then the connection looks live */
	struct vyre_cqe q;
	int rc;

	for (int i = 0; i < 100 && (rc = vyre_wait(c, &q, 1, 100 * 1000000ll)) == VYRE_E_TIMEDOUT;
	     i++)
		;
	check(rc == VYRE_E_DISCONNECTED, "the connection sees the kill");
	rc = vyre_reconnect(n, 50 * 1000000ll);

	snprintf(line, sizeof(line), "vyre_reconnect of a connection not resumable: %s",
		 vyre_strerror(rc));
	check(rc == VYRE_E_INVAL, line);
	const uint64_t t0 = rel_now_ns();

	rc = vyre_reconnect(c, 50 * 1000000ll);
	const double ms = (double)(rel_now_ns() - t0) / 1e6;

	snprintf(line, sizeof(line), "vyre_reconnect(50 ms) with no vyred: %s after %.1f ms",
		 vyre_strerror(rc), ms);
	check(rc == VYRE_E_TIMEDOUT && ms >= 45 && ms < 2000, line);
out:
	if (c)
		vyre_close(c);
	if (n)
		vyre_close(n);
}

/* Some producer has seen an item that a kill caught accepted and not completed. */
static int in_flight_at_a_kill(const struct page *pages)
{
	for (unsigned k = 0; k < PRODUCERS; k++)
		if (__atomic_load_n(&pages[k].restarted, __ATOMIC_ACQUIRE) +
			__atomic_load_n(&pages[k].reported, __ATOMIC_ACQUIRE) >
		    0)
			return 1;
	return 0;
}

int main(void)
{
	/* the GPU machine runs it on the CUDA backend: VYRE_TEST_BACKEND=cuda */
	const char *backend = getenv("VYRE_TEST_BACKEND") ? getenv("VYRE_TEST_BACKEND") : "cpu";
	const char *first[] = {"--backend", backend, NULL};
	struct vyre_test_daemon d[MAX_KILLS + 1];
	unsigned kills = 0;
	struct page *pages = rel_shared_alloc(PRODUCERS * sizeof(struct page));
	uint64_t rng = rel_seed("test_resume"), base[PRODUCERS];
	pid_t pids[PRODUCERS];
	char line[512];

	memset(d, 0, sizeof(d));
	if (!pages || vyre_test_daemon_start(&d[0], first) != 0)
		return 1;
	const char *again[] = {"--backend", backend, "--socket", d[0].socket, NULL};

	for (unsigned k = 0; k < PRODUCERS; k++) {
		const uint64_t seed = rel_rand(&rng);

		fflush(stdout);
		pids[k] = fork();
		if (pids[k] == 0)
			producer_main(d[0].socket, k, &pages[k], seed);
	}
	memset(base, 0, sizeof(base));
	int ok = wait_progress(pages, pids, base, 4 * SLOTS) == 0;

	check(ok, "every producer runs on the first vyred");
	for (unsigned kill = 1; ok && kill <= MAX_KILLS; kill++) {
		if (kill > KILLS && in_flight_at_a_kill(pages))
			break;
		kills = kill;
		for (unsigned k = 0; k < PRODUCERS; k++)
			base[k] = completed(&pages[k]);
		vyre_test_daemon_kill(&d[kill - 1]);
		const uint64_t t0 = rel_now_ns();

		ok = vyre_test_daemon_start(&d[kill], again) == 0;
		snprintf(line, sizeof(line), "kill %u: a new vyred on the same socket (%.1f ms)",
			 kill, (double)(rel_now_ns() - t0) / 1e6);
		check(ok, line);
		/* more than were in flight at the kill: the new vyred completed some */
		ok = ok && wait_progress(pages, pids, base, 4 * SLOTS) == 0;
		snprintf(line, sizeof(line), "kill %u: every producer carries on (%.1f ms)", kill,
			 (double)(rel_now_ns() - t0) / 1e6);
		check(ok, line);
	}
	for (unsigned k = 0; k < PRODUCERS; k++)
		__atomic_store_n(&pages[k].stop, 1, __ATOMIC_RELEASE);
	uint64_t restarted = 0, reported = 0, submitted = 0;

	for (unsigned k = 0; k < PRODUCERS; k++) {
		const int st = rel_wait_child(pids[k], 120 * 1000000000ull);
		const struct page *pg = &pages[k];

		if (st < 0) {
			kill(pids[k], SIGKILL);
			rel_wait_child(pids[k], 10 * 1000000000ull);
		}
		snprintf(line, sizeof(line),
			 "producer %u (%s, flags %#x): %" PRIu64 " items, %u disconnects, %u "
			 "reconnects, %" PRIu64 " RESTARTED, %" PRIu64 " reported%s%s",
			 k, cfg[k].domain ? cfg[k].domain : "private", cfg[k].flags, pg->submitted,
			 pg->disconnects, pg->reconnects, pg->restarted, pg->reported,
			 pg->why[0] ? ": " : "", pg->why);
		check(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, line);
		restarted += pg->restarted;
		reported += pg->reported;
		submitted += pg->submitted;
	}
	snprintf(line, sizeof(line),
		 "%" PRIu64 " items, %" PRIu64 " accepted and not completed at a kill (%" PRIu64
		 " completed RESTARTED)",
		 submitted, restarted > reported ? restarted : reported, restarted);
	check(restarted + reported > 0, line);
	if (d[kills].pid > 0) {
		edge_cases(d[0].socket, &d[kills]);
		for (unsigned i = 0; i <= kills; i++)
			if (failed && d[i].log[0])
				vyre_test_daemon_dump_log(&d[i]);
	}
	for (unsigned i = 0; i <= kills; i++)
		vyre_test_daemon_cleanup(&d[i]);
	rel_shared_free(pages, PRODUCERS * sizeof(struct page));
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
