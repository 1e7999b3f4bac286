/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_restart.c - suite "restart": the pause of a restart without
 * loss (docs/design.md sections 3 and 11, issue 14).
 *
 * PRODUCERS resumable producer processes (VYRE_CONNECT_RESUMABLE), half in
 * domain "restart-a", half in "restart-b", keep SLOTS items each in flight
 * (ADD of a named input into one output buffer per slot). Each round the
 * suite SIGKILLs vyred and at once starts a new one on the same socket with
 * the same flags; every producer sees VYRE_E_DISCONNECTED and calls
 * vyre_reconnect. Reported, over producers and rounds:
 *   - "kill->first completion": from the kill to the complete_ns of the
 *     producer's first successful CQE posted by the new vyred (p50, max);
 *   - "kill->ready": from the kill to the new vyred's ready line (its
 *     start-up, CUDA initialization included on a GPU);
 *   - the items completed VYRE_E_RESTARTED (equal, per producer, to what
 *     vyre_reconnect reported, else the suite fails).
 * Every successful output is checked, and at the end every producer checks
 * that its input kept its bytes, its buffers did not move and its name
 * opens to the same handle: the suite fails otherwise. vyred runs on --backend cpu with --backend
 * cpu, else --backend auto (CUDA where it starts), plus --inflight, --loops and
 * --vyred-arg.
 */
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "harness_procs.h"
#include "harness_vyred.h"

#define SUITE	     "restart"
#define PRODUCERS    4u
#define QUICK_PROD   2u
#define ROUNDS	     5u
#define QUICK_ROUNDS 1u
#define SLOTS	     32u
#define WORDS	     256u
#define WARM_ITEMS   2000u /* completions each producer needs between kills */
#define QUICK_WARM   200u
#define HEAP_BYTES   (8u << 20)
#define WAIT_S	     60
#define RECONNECT_NS (60 * 1000000000ll)
#define READY_LINE   "vyred: ready"

struct line {
	_Alignas(64) uint64_t v;
};

struct prod {
	struct line ready, done, failed, items;
	struct line restarted;	     /* CQEs with VYRE_E_RESTARTED */
	struct line reported;	     /* the sum of vyre_reconnect's returns */
	struct line round;	     /* the last round it reconnected in, + 1 */
	uint64_t resumed_ns[ROUNDS]; /* complete_ns of its first success on round r's vyred */
	char why[160];
};

struct board {
	struct line stop;
	struct line round; /* rounds whose vyred has been spawned */
	uint64_t kill_ns[ROUNDS], spawn_ns[ROUNDS];
	struct prod p[PRODUCERS];
};

struct child_arg {
	const char *socket;
	struct board *b;
	unsigned id;
};

static int pfail(struct prod *p, const char *what, int rc)
{
	snprintf(p->why, sizeof(p->why), "%s: %s", what, vyre_strerror(rc));
	__atomic_store_n(&p->failed.v, 1, __ATOMIC_RELEASE);
	return 1;
}

static uint32_t in_word(unsigned id, uint32_t w)
{
	return (id + 1) * 0x01000193u + w * 0x9e3779b9u;
}

/* vyred is gone: resume with the next one; remember the round it belongs to. */
static int reconnect(struct vyre_client *c, const struct board *b, struct prod *p)
{
	const int rc = vyre_reconnect(c, RECONNECT_NS);

	if (rc < 0)
		return pfail(p, "vyre_reconnect", rc);
	p->reported.v += (uint64_t)rc;
	p->round.v = __atomic_load_n(&b->round.v, __ATOMIC_ACQUIRE);
	return 0;
}

static int on_cqe(const struct vyre_cqe *q, const uint32_t *in, uint32_t *const *out,
		  const struct board *b, struct prod *p)
{
	const uint32_t s = (uint32_t)(q->user_data % SLOTS), param = (uint32_t)(q->user_data >> 8);

	if (q->status == VYRE_E_RESTARTED) {
		p->restarted.v++;
		return 0;
	}
	if (q->status != 0)
		return pfail(p, "an item", q->status);
	if (out[s][0] != in[0] + param || out[s][WORDS - 1] != in[WORDS - 1] + param)
		return pfail(p, "an output differs from in + param", VYRE_E_INVAL);
	const uint64_t r = p->round.v;

	if (r && !p->resumed_ns[r - 1] && q->complete_ns > b->spawn_ns[r - 1])
		p->resumed_ns[r - 1] = q->complete_ns;
	__atomic_store_n(&p->items.v, p->items.v + 1, __ATOMIC_RELEASE);
	return 0;
}

static int producer(void *arg)
{
	const struct child_arg *a = arg;
	struct board *b = a->b;
	struct prod *p = &b->p[a->id];
	char name[32];
	struct vyre_connect_opts o = {.socket_path = a->socket,
				      .domain = a->id % 2 ? "restart-b" : "restart-a",
				      .sq_entries = 2 * SLOTS,
				      .cq_entries = 2 * SLOTS,
				      .heap_bytes = HEAP_BYTES,
				      .flags = VYRE_CONNECT_RESUMABLE};
	struct vyre_client *c;
	uint32_t hin, hout[SLOTS], *in, *out[SLOTS], busy = 0;
	struct vyre_cqe cqes[SLOTS];
	uint64_t seq = 1;
	int rc;

	snprintf(name, sizeof(name), "in-%u", a->id);
	if ((rc = vyre_connect(&o, &c)) || (rc = vyre_buffer_create(c, name, WORDS * 4, 0, &hin)))
		return pfail(p, "connect", rc);
	in = vyre_buffer_ptr(c, hin, NULL);
	for (uint32_t w = 0; w < WORDS; w++)
		in[w] = in_word(a->id, w);
	for (uint32_t s = 0; s < SLOTS; s++)
		if ((rc = vyre_buffer_alloc(c, WORDS * 4, 0, &hout[s])) ||
		    !(out[s] = vyre_buffer_ptr(c, hout[s], NULL)))
			return pfail(p, "vyre_buffer_alloc", rc);
	__atomic_store_n(&p->ready.v, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&b->stop.v, __ATOMIC_ACQUIRE) || busy) {
		for (uint32_t s = 0; s < SLOTS && !__atomic_load_n(&b->stop.v, __ATOMIC_RELAXED);
		     s++) {
			if (busy >> s & 1)
				continue;
			const struct vyre_work_item it = {VYRE_OP_ADD, hin, hout[s], (uint32_t)seq};

			rc = vyre_submit(c, &it, seq << 8 | s, 0);
			if (rc == VYRE_E_DISCONNECTED && reconnect(c, b, p))
				return 1;
			if (rc)
				break;
			busy |= 1u << s;
			seq = (seq + 1) & 0xffffffu;
		}
		const int n = vyre_wait(c, cqes, SLOTS, 100 * 1000000ll);

		for (int i = 0; i < n; i++) {
			busy &= ~(1u << (cqes[i].user_data % SLOTS));
			if (on_cqe(&cqes[i], in, out, b, p))
				return 1;
		}
		if (n == VYRE_E_DISCONNECTED && reconnect(c, b, p))
			return 1;
		if (n < 0 && n != VYRE_E_TIMEDOUT && n != VYRE_E_DISCONNECTED)
			return pfail(p, "vyre_wait", n);
	}
	uint32_t h = 0;

	for (uint32_t w = 0; w < WORDS; w++)
		if (in[w] != in_word(a->id, w))
			return pfail(p, "the input lost its bytes", VYRE_E_INVAL);
	if (vyre_buffer_ptr(c, hin, NULL) != in || vyre_buffer_ptr(c, hout[0], NULL) != out[0])
		return pfail(p, "a buffer moved", VYRE_E_INVAL);
	if ((rc = vyre_buffer_open(c, name, &h, NULL, NULL)) || h != hin)
		return pfail(p, "its name opens to another handle", rc ? rc : VYRE_E_INVAL);
	if (p->restarted.v != p->reported.v)
		return pfail(p, "RESTARTED CQEs differ from vyre_reconnect's count", VYRE_E_INVAL);
	vyre_close(c);
	__atomic_store_n(&p->done.v, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Waits until each producer completed @want items (or failed); 0 or -1. */
static int await_items(const struct board *b, unsigned n, const uint64_t *want)
{
	const uint64_t until = vyre_bench_now_ns() + WAIT_S * 1000000000ull;

	for (unsigned i = 0; i < n; i++)
		while (__atomic_load_n(&b->p[i].items.v, __ATOMIC_ACQUIRE) < want[i]) {
			if (b->p[i].failed.v || vyre_bench_now_ns() > until) {
				fprintf(stderr, "restart: producer %u: %s\n", i,
					b->p[i].failed.v ? b->p[i].why : "no progress");
				return -1;
			}
			nanosleep(&(struct timespec){0, 1000000}, NULL);
		}
	return 0;
}

static int log_has(const char *path, const char *what)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int hit = 0;

	while (f && !hit && fgets(line, sizeof(line), f))
		hit = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return hit;
}

/* SIGKILL vyred, start the next one at once; its ready time from the kill, or -1. */
static double restart(struct vyre_bench_vyred *d, const char *bin, const char *const *args,
		      struct board *b, unsigned r)
{
	b->kill_ns[r] = vyre_bench_now_ns();
	kill(d->pid, SIGKILL);
	vyre_bench_reap(d->pid);
	b->spawn_ns[r] = vyre_bench_now_ns();
	unlink(d->log); /* the ready line looked for is the new vyred's */
	__atomic_store_n(&b->round.v, r + 1, __ATOMIC_RELEASE);
	if (vyre_bench_vyred_exec(d, bin, args) < 0)
		return -1;
	for (uint64_t until = b->spawn_ns[r] + WAIT_S * 1000000000ull;
	     vyre_bench_now_ns() < until;) {
		if (log_has(d->log, READY_LINE))
			return (double)(vyre_bench_now_ns() - b->kill_ns[r]);
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			d->pid = -1;
			break;
		}
		nanosleep(&(struct timespec){0, 200000}, NULL);
	}
	fprintf(stderr, "restart: the new vyred did not get ready:\n");
	vyre_bench_print_log(d->log, SUITE, NULL);
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void report_spread(struct vyre_bench_ctx *ctx, const char *name, uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	vyre_bench_report(ctx, SUITE, name, "p50", (double)v[n / 2], "ns");
	vyre_bench_report(ctx, SUITE, name, "max", (double)v[n - 1], "ns");
}

/* Each round: every producer warmed up, a kill, a new vyred, every producer resumed. */
static int rounds(struct vyre_bench_ctx *ctx, struct vyre_bench_vyred *d, const char *bin,
		  const char *const *args, struct board *b, unsigned n, unsigned n_rounds)
{
	uint64_t want[PRODUCERS], ready[ROUNDS], pause[PRODUCERS * ROUNDS], restarted = 0;
	const uint64_t warm = ctx->quick ? QUICK_WARM : WARM_ITEMS;

	for (unsigned r = 0; r < n_rounds; r++) {
		for (unsigned i = 0; i < n; i++)
			want[i] = b->p[i].items.v + warm;
		if (await_items(b, n, want))
			return -1;
		const double t = restart(d, bin, args, b, r);

		if (t < 0)
			return -1;
		ready[r] = (uint64_t)t;
		const uint64_t until = vyre_bench_now_ns() + WAIT_S * 1000000000ull;

		for (unsigned i = 0; i < n; i++)
			while (!__atomic_load_n(&b->p[i].resumed_ns[r], __ATOMIC_ACQUIRE)) {
				if (b->p[i].failed.v || vyre_bench_now_ns() > until) {
					fprintf(stderr, "restart: producer %u did not resume: %s\n",
						i, b->p[i].why);
					return -1;
				}
				nanosleep(&(struct timespec){0, 1000000}, NULL);
			}
		for (unsigned i = 0; i < n; i++)
			pause[r * n + i] = b->p[i].resumed_ns[r] - b->kill_ns[r];
	}
	char name[64];

	snprintf(name, sizeof(name), "kill->first completion %up", n);
	report_spread(ctx, name, pause, n * n_rounds);
	report_spread(ctx, "kill->ready", ready, n_rounds);
	for (unsigned i = 0; i < n; i++)
		restarted += b->p[i].restarted.v;
	snprintf(name, sizeof(name), "restarted items %up %ur", n, n_rounds);
	vyre_bench_report(ctx, SUITE, name, "count", (double)restarted, "items");
	return 0;
}

static int restart_suite(struct vyre_bench_ctx *ctx)
{
	char bin[PATH_MAX];
	struct vyre_bench_vyred_opts va;
	struct vyre_bench_vyred d = {0};
	const char *args[3 + VYRE_BENCH_VYRED_OPTS_ARGS];
	const unsigned n = ctx->quick ? QUICK_PROD : PRODUCERS;
	const unsigned n_rounds = ctx->quick ? QUICK_ROUNDS : ROUNDS;
	struct child_arg ca[PRODUCERS];
	pid_t pids[PRODUCERS];
	unsigned k = 0;
	int rc = 0;

	if (!vyre_bench_find_vyred(bin, sizeof(bin))) {
		fprintf(stderr, "restart: skipped: no vyred next to vyre-bench\n");
		return 0;
	}
	vyre_bench_vyred_opts(ctx, SUITE, bin, &va);
	args[k++] = "--backend";
	args[k++] = ctx->cpu_only ? "cpu" : "auto";
	k = vyre_bench_vyred_opts_args(&va, args, k);
	args[k] = NULL;
	struct board *b = vyre_bench_shared_alloc(sizeof(*b));

	if (!b || vyre_bench_vyred_start(&d, SUITE, bin, args))
		return -1;
	vyre_bench_print_log(d.log, SUITE, (const char *const[]){"backend", READY_LINE, NULL});
	for (unsigned i = 0; i < n; i++) {
		ca[i] = (struct child_arg){d.sock, b, i};
		pids[i] = vyre_bench_spawn(vyre_bench_producer_cpu(i), producer, &ca[i]);
	}
	rc = rounds(ctx, &d, bin, args, b, n, n_rounds);
	__atomic_store_n(&b->stop.v, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < n; i++) {
		if (vyre_bench_reap(pids[i]) != 0 || !b->p[i].done.v) {
			fprintf(stderr, "restart: producer %u failed: %s\n", i, b->p[i].why);
			rc = -1;
		}
	}
	vyre_bench_vyred_stop(&d, SUITE, rc ? (const char *const[]){"", NULL} : NULL);
	vyre_bench_shared_free(b, sizeof(*b));
	return rc;
}

VYRE_BENCH_SUITE(restart,
		 "the pause of a restart without loss: kill vyred under resumable producers, "
		 "start a new one",
		 restart_suite)
