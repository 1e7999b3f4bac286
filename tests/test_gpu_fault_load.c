/* SPDX-License-Identifier: MIT */
/*
 * test_gpu_fault_load - a device fault on one GPU of two while both serve
 * producers (docs/design.md 8.5, 8.8 "One process a device", 3):
 *
 * vyred --gpus 0,1 runs a worker process a device. A fault on one device
 * (VYRE_{CPU,CUDA}_INJECT=fault, VYRE_INJECT_DEVICE=K, VYRE_INJECT_AFTER:
 * in that backend's batch 201, while batches run) ends only that worker:
 * its in-flight items complete with VYRE_E_DEVICE, its clients are
 * disconnected, resumable ones reconnect and their domains are adopted on
 * a GPU that serves, the supervisor starts a new worker for the device,
 * and the other device's worker never notices.
 *
 * Run twice, the fault on ordinal 1 and then on ordinal 0, each with a
 * fresh vyred. Four producer processes (clients 1-4, private domains that
 * alternate GPUs) keep DEPTH items each in flight for RUN_NS: ADD, XOR or
 * MUL of a random parameter over one of their input buffers of random
 * words into the slot's output, each status-0 result checked against the
 * oracle (vyre_exec_one) and the inputs against their copies. The two on
 * the GPU that faults are resumable and reconnecting; they may see
 * VYRE_E_DEVICE or VYRE_E_RESTARTED only for items submitted before they
 * saw the fault (at most DEPTH), must resume once and complete MIN_ITEMS
 * more. The other two must never see an error or a disconnect. The log
 * must tell the loss ("1 of 2 GPUs still serve") and the new worker
 * ("serving again"), the other GPU's worker must not have lost its device
 * or exited, a new private client must be served after the fault and vyred
 * must exit 0 at SIGTERM.
 *
 * Figures (not checked): the longest gap between two completions a
 * producer of the GPU that serves saw near the fault, against its median
 * and its longest elsewhere; how long each producer of the faulting GPU
 * was without service.
 *
 * Backend: $VYRE_TEST_BACKEND (default cpu, whose --gpus entries are
 * labels); with cuda it needs two devices and exits 77 with fewer.
 * Producers report through a pipe each; every wait is bounded and every
 * process is reaped.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "../gpu/backend.h"
#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define PRODUCERS  4u
#define DEPTH	   8u /* items a producer keeps in flight, one a slot */
#define INPUTS	   4u
#define WORDS	   4096u
#define BUF_BYTES  (WORDS * 4u)
#define HEAP_BYTES (1u << 20)
#define MS	   1000000ull
#define RUN_NS	   (1500 * MS)
/* status-0 items every producer completes, a resumed one after its resume */
#define MIN_ITEMS     64u
#define NEAR_PRE_NS   (100 * MS)   /* "near the fault": from this before it ... */
#define NEAR_POST_NS  (1000 * MS)  /* ... to this after */
#define FAULT_WAIT_NS (30000 * MS) /* the fault and both resumes come within this */
#define STALL_NS      (10000 * MS) /* a producer with items in flight and no completion */
#define DONE_WAIT_NS  (30000 * MS)
#define MAX_TIMES     (1u << 21)
#define INJECT_AFTER  "200"

enum msg_type { MSG_READY = 1, MSG_FAULT, MSG_RESUMED, MSG_DONE, MSG_GO, MSG_STOP };

/* What a producer tells the parent. */
struct report {
	uint32_t client_id;   /* libvyre's, now: a resume brings a new one */
	uint32_t reconnects;  /* resumes seen (the client id changed) */
	uint32_t disconnects; /* VYRE_E_DISCONNECTED returned */
	uint32_t failed;
	uint64_t ok, device, restarted, ok_after_resume;
	uint64_t fault_ns;    /* first sign of the fault: an error CQE, a disconnect or a resume */
	uint64_t last_ok_ns;  /* the last status-0 completion before it */
	uint64_t resumed_ns;  /* the first status-0 completion after the resume */
	uint64_t gap_max_ns;  /* between two completions: the longest */
	uint64_t gap_near_ns; /* the longest near the fault (the parent says when it came) */
	uint64_t gap_p50_ns;
	char why[256];
};

/* Both directions: GO and STOP (t_ns: when the fault came) down, the rest up. */
struct msg {
	uint32_t type;
	uint32_t producer;
	uint64_t t_ns;
	struct report r;
};

struct slot {
	int busy;
	uint64_t seq;
	uint32_t in; /* input index */
	struct vyre_work_item it;
};

struct producer {
	unsigned id;
	int faulty; /* on the GPU that faults: resumable and reconnecting */
	int ctl, rep;
	struct vyre_client *c;
	uint64_t rng;
	uint32_t in_h[INPUTS], out_h[DEPTH];
	uint32_t *in_p[INPUTS], *out_p[DEPTH];
	uint32_t in_copy[INPUTS][WORDS];
	uint32_t want[WORDS]; /* the oracle's output */
	struct slot slot[DEPTH];
	uint32_t in_flight; /* busy slots */
	uint64_t next_seq;
	uint64_t fault_seq; /* items from here on were submitted after the fault was seen */
	int stopping, resumed_sent;
	uint64_t parent_fault_ns;
	uint64_t *times; /* completions (returns of vyre_wait with CQEs) */
	uint32_t n_times;
	struct report r;
};

struct child {
	pid_t pid;
	int ctl, rep; /* the parent's ends */
	int done;
	struct msg m; /* the last message */
};

static struct vyre_test_daemon daemon_;

static int pfail(struct producer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int pfail(struct producer *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->r.why[0]) {
		va_start(ap, fmt);
		vsnprintf(p->r.why, sizeof(p->r.why), fmt, ap);
		va_end(ap);
	}
	p->r.failed = 1;
	return -1;
}

static int send_msg(int fd, uint32_t type, uint32_t producer, uint64_t t_ns, const struct report *r)
{
	struct msg m = {.type = type, .producer = producer, .t_ns = t_ns};

	if (r)
		m.r = *r;
	return write(fd, &m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : -1;
}

/* 1 with a message in @m, 0 when none came in @timeout_ms, -1 at EOF or on an error. */
static int recv_msg(int fd, struct msg *m, int timeout_ms)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	int rc = poll(&pf, 1, timeout_ms);

	if (rc < 0 && errno == EINTR)
		return 0;
	if (rc <= 0)
		return rc;
	return read(fd, m, sizeof(*m)) == (ssize_t)sizeof(*m) ? 1 : -1;
}

/* ---- a producer ---------------------------------------------------------- */

static int make_buffers(struct producer *p)
{
	for (uint32_t b = 0; b < INPUTS + DEPTH; b++) {
		uint32_t *h = b < INPUTS ? &p->in_h[b] : &p->out_h[b - INPUTS];
		const int rc = vyre_buffer_alloc(p->c, BUF_BYTES, 0, h);
		uint32_t *w = rc == 0 ? vyre_buffer_ptr(p->c, *h, NULL) : NULL;

		if (!w)
			return pfail(p, "buffer %u: %s", b, vyre_strerror(rc));
		if (b >= INPUTS) {
			p->out_p[b - INPUTS] = w;
			continue;
		}
		p->in_p[b] = w;
		for (uint32_t i = 0; i < WORDS; i += 2) {
			const uint64_t r = rel_rand(&p->rng);

			w[i] = p->in_copy[b][i] = (uint32_t)r;
			w[i + 1] = p->in_copy[b][i + 1] = (uint32_t)(r >> 32);
		}
	}
	return 0;
}

/* The first sign of the fault: from here on no item may fail. */
static void fault_seen(struct producer *p)
{
	if (p->fault_seq != UINT64_MAX)
		return;
	p->fault_seq = p->next_seq;
	p->r.fault_ns = rel_now_ns();
	send_msg(p->rep, MSG_FAULT, p->id, p->r.fault_ns, NULL);
}

static int disconnected(struct producer *p)
{
	p->r.disconnects++;
	if (!p->faulty)
		return pfail(p, "disconnected, though its GPU did not fault");
	fault_seen(p); /* the next vyre_wait reconnects (VYRE_CONNECT_RECONNECT) */
	return 0;
}

/* 1 when the producer has done what it must before it stops. */
static int enough(const struct producer *p)
{
	if (p->r.ok < MIN_ITEMS)
		return 0;
	/* a fault that never came is the parent's to report */
	return !p->faulty || p->r.ok_after_resume >= MIN_ITEMS ||
	       (p->fault_seq == UINT64_MAX && !p->r.reconnects);
}

static int submit_idle(struct producer *p)
{
	static const uint32_t ops[] = {VYRE_OP_ADD, VYRE_OP_XOR, VYRE_OP_MUL};

	for (uint32_t s = 0; s < DEPTH; s++) {
		struct slot *sl = &p->slot[s];

		if (sl->busy)
			continue;
		const uint64_t r = rel_rand(&p->rng);

		sl->in = (uint32_t)(r >> 8) % INPUTS;
		sl->seq = p->next_seq;
		sl->it = (struct vyre_work_item){ops[r % 3], p->in_h[sl->in], p->out_h[s],
						 (uint32_t)(r >> 32)};
		/* what the last item left there must not pass for this one's output */
		for (uint32_t i = 0; i < WORDS; i++)
			p->out_p[s][i] = (uint32_t)(r >> 16) ^ i;
		const int rc = vyre_submit(p->c, &sl->it, sl->seq * DEPTH + s, 0);

		if (rc == VYRE_E_AGAIN)
			return 0;
		if (rc == VYRE_E_DISCONNECTED)
			return disconnected(p);
		if (rc != 0)
			return pfail(p, "vyre_submit: %s", vyre_strerror(rc));
		sl->busy = 1;
		p->in_flight++;
		p->next_seq++;
	}
	return 0;
}

static int check_output(struct producer *p, const struct slot *sl, uint32_t s,
			const struct vyre_cqe *q)
{
	const struct vyre_heap_view heaps[2] = {{(uint8_t *)p->in_copy[sl->in], BUF_BYTES},
						{(uint8_t *)p->want, BUF_BYTES}};
	const struct vyre_exec_item x = {.op = sl->it.op_handle,
					 .param = sl->it.param,
					 .out_heap = 1,
					 .in_bytes = BUF_BYTES,
					 .out_bytes = BUF_BYTES};
	uint64_t result;
	const int st = vyre_exec_one(heaps, &x, &result);

	if (st != 0 || q->result != result)
		return pfail(p, "item %" PRIu64 " (op %u): result %" PRIu64 ", oracle %d %" PRIu64,
			     sl->seq, sl->it.op_handle, q->result, st, result);
	if (memcmp(p->out_p[s], p->want, BUF_BYTES) != 0)
		return pfail(p,
			     "item %" PRIu64 " (op %u, param %#x): output differs from the oracle",
			     sl->seq, sl->it.op_handle, sl->it.param);
	if (memcmp(p->in_p[sl->in], p->in_copy[sl->in], BUF_BYTES) != 0)
		return pfail(p, "input %u changed (seen at item %" PRIu64 ")", sl->in, sl->seq);
	return 0;
}

static int on_cqe(struct producer *p, const struct vyre_cqe *q, uint64_t now)
{
	const uint32_t s = (uint32_t)(q->user_data % DEPTH);
	const uint64_t seq = q->user_data / DEPTH;
	struct slot *sl = &p->slot[s];

	if (!sl->busy || sl->seq != seq)
		return pfail(p, "CQE for user_data %" PRIu64 ": no such item in flight",
			     q->user_data);
	sl->busy = 0;
	p->in_flight--;
	if (q->status == 0) {
		if (check_output(p, sl, s, q))
			return -1;
		p->r.ok++;
		if (p->r.reconnects && !p->r.ok_after_resume++)
			p->r.resumed_ns = now;
		else if (p->fault_seq == UINT64_MAX)
			p->r.last_ok_ns = now;
		return 0;
	}
	if (!p->faulty || (q->status != VYRE_E_DEVICE && q->status != VYRE_E_RESTARTED))
		return pfail(p, "item %" PRIu64 " (op %u) completed with %s%s", seq,
			     sl->it.op_handle, vyre_strerror(q->status),
			     p->faulty ? "" : ", though its GPU did not fault");
	fault_seen(p);
	if (seq >= p->fault_seq)
		return pfail(p,
			     "item %" PRIu64
			     ", submitted after the fault was seen (at item %" PRIu64
			     "), completed with %s",
			     seq, p->fault_seq, vyre_strerror(q->status));
	p->r.device += q->status == VYRE_E_DEVICE;
	p->r.restarted += q->status == VYRE_E_RESTARTED;
	if (p->r.device + p->r.restarted > DEPTH)
		return pfail(p, "%" PRIu64 " items failed, more than the %u in flight",
			     p->r.device + p->r.restarted, DEPTH);
	return 0;
}

/* A STOP from the parent (or its end) sets stopping. */
static int read_ctl(struct producer *p)
{
	struct msg m;
	const int rc = recv_msg(p->ctl, &m, 0);

	if (rc == 0)
		return 0;
	p->stopping = 1;
	if (rc < 0 || m.type != MSG_STOP)
		return pfail(p, "the parent is gone");
	p->parent_fault_ns = m.t_ns;
	return 0;
}

static int run(struct producer *p)
{
	struct vyre_cqe cqes[DEPTH];
	uint64_t last = rel_now_ns(), stop_at = 0;

	for (;;) {
		if (!p->stopping && read_ctl(p))
			return -1;
		if (p->stopping && !stop_at)
			stop_at = rel_now_ns();
		if (p->stopping && enough(p) && !p->in_flight)
			return 0;
		if ((!p->stopping || !enough(p)) && submit_idle(p))
			return -1;
		const int n = vyre_wait(p->c, cqes, DEPTH, 50 * (int64_t)MS);
		const uint64_t now = rel_now_ns();

		if (p->faulty && rel_client_id(p->c) != p->r.client_id) {
			fault_seen(p);
			p->r.reconnects++;
			p->r.client_id = rel_client_id(p->c);
		}
		for (int i = 0; i < n; i++)
			if (on_cqe(p, &cqes[i], now))
				return -1;
		if (n > 0) {
			last = now;
			if (p->n_times < MAX_TIMES)
				p->times[p->n_times++] = now;
		} else if (n == VYRE_E_DISCONNECTED && disconnected(p)) {
			return -1;
		} else if (n < 0 && n != VYRE_E_TIMEDOUT && n != VYRE_E_DISCONNECTED) {
			return pfail(p, "vyre_wait: %s", vyre_strerror(n));
		}
		if (p->faulty && !p->resumed_sent && p->r.ok_after_resume >= MIN_ITEMS) {
			p->resumed_sent = 1;
			send_msg(p->rep, MSG_RESUMED, p->id, now, NULL);
		}
		if (p->in_flight && now - last > STALL_NS)
			return pfail(p, "no completion for %llu s (%s)", STALL_NS / 1000 / MS,
				     vyre_strerror(n));
		if (stop_at && now - stop_at > DONE_WAIT_NS / 2)
			return pfail(p,
				     "not done %llu s after the stop (%" PRIu64
				     " completed since the resume)",
				     DONE_WAIT_NS / 2000 / MS, p->r.ok_after_resume);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The gaps between completions: longest, longest near the fault, median. */
static void gaps(struct producer *p)
{
	const uint64_t f = p->parent_fault_ns;

	if (p->n_times < 2)
		return;
	for (uint32_t i = 0; i + 1 < p->n_times; i++) {
		const uint64_t g = p->times[i + 1] - p->times[i];

		if (g > p->r.gap_max_ns)
			p->r.gap_max_ns = g;
		if (f && p->times[i + 1] + NEAR_PRE_NS >= f && p->times[i] <= f + NEAR_POST_NS &&
		    g > p->r.gap_near_ns)
			p->r.gap_near_ns = g;
		p->times[i] = g; /* times[i] is not read again */
	}
	qsort(p->times, p->n_times - 1, sizeof(p->times[0]), cmp_u64);
	p->r.gap_p50_ns = p->times[(p->n_times - 1) / 2];
}

/* After the run: the inputs and the buffers' places are as they were. */
static int final_checks(struct producer *p)
{
	for (uint32_t b = 0; b < INPUTS; b++) {
		if (vyre_buffer_ptr(p->c, p->in_h[b], NULL) != p->in_p[b])
			return pfail(p, "input %u moved", b);
		if (memcmp(p->in_p[b], p->in_copy[b], BUF_BYTES) != 0)
			return pfail(p, "input %u lost its words", b);
	}
	for (uint32_t s = 0; s < DEPTH; s++)
		if (vyre_buffer_ptr(p->c, p->out_h[s], NULL) != p->out_p[s])
			return pfail(p, "output %u moved", s);
	return 0;
}

static void producer_main(const char *socket, unsigned id, int faulty, int ctl, int rep,
			  uint64_t seed)
{
	const struct vyre_connect_opts o = {
	    .socket_path = socket,
	    .sq_entries = 64,
	    .cq_entries = 64,
	    .heap_bytes = HEAP_BYTES,
	    .flags = faulty ? VYRE_CONNECT_RESUMABLE | VYRE_CONNECT_RECONNECT : 0};
	static struct producer p;
	struct msg m;
	int rc;

	p.id = id;
	p.faulty = faulty;
	p.ctl = ctl;
	p.rep = rep;
	p.rng = seed;
	p.fault_seq = UINT64_MAX;
	p.times = malloc(MAX_TIMES * sizeof(p.times[0]));
	rc = p.times ? vyre_connect(&o, &p.c) : VYRE_E_NOMEM;
	if (rc != 0) {
		p.c = NULL;
		pfail(&p, "connect: %s", vyre_strerror(rc));
	} else {
		p.r.client_id = rel_client_id(p.c);
		rc = make_buffers(&p);
	}
	send_msg(rep, MSG_READY, id, rel_now_ns(), &p.r);
	if (rc == 0 && (recv_msg(ctl, &m, 60000) != 1 || m.type != MSG_GO))
		rc = pfail(&p, "no GO from the parent");
	if (rc == 0)
		rc = run(&p);
	if (rc == 0)
		rc = final_checks(&p);
	gaps(&p);
	send_msg(rep, MSG_DONE, id, rel_now_ns(), &p.r);
	if (p.c)
		vyre_close(p.c);
	_exit(rc ? 1 : 0);
}

/* ---- the parent ---------------------------------------------------------- */

static int spawn(struct child *ch, unsigned id, int faulty, uint64_t seed)
{
	int ctl[2], rep[2];

	if (pipe(ctl) != 0)
		return -1;
	if (pipe(rep) != 0) {
		close(ctl[0]);
		close(ctl[1]);
		return -1;
	}
	fflush(NULL);
	ch[id].pid = fork();
	if (ch[id].pid == 0) {
		close(ctl[1]);
		close(rep[0]);
		for (unsigned k = 0; k < id; k++) {
			close(ch[k].ctl);
			close(ch[k].rep);
		}
		producer_main(daemon_.socket, id, faulty, ctl[0], rep[1], seed);
	}
	close(ctl[0]);
	close(rep[1]);
	ch[id].ctl = ctl[1];
	ch[id].rep = rep[0];
	return ch[id].pid > 0 ? 0 : -1;
}

/* Waits for child @id's next message (up to @timeout_ns): 0, or -1 after printing why. */
static int await(struct child *ch, unsigned id, uint32_t type, uint64_t timeout_ns)
{
	const uint64_t until = rel_now_ns() + timeout_ns;

	while (rel_now_ns() < until) {
		const int rc = recv_msg(ch[id].rep, &ch[id].m, 10);

		if (rc < 0)
			FAIL("producer %u ended without a word", id);
		if (rc > 0 && ch[id].m.type == MSG_DONE)
			ch[id].done = 1;
		if (rc > 0 && (ch[id].m.type == type || ch[id].m.type == MSG_DONE))
			return ch[id].m.type == type && !ch[id].m.r.failed ? 0 : -1;
	}
	FAIL("producer %u: no message %u in %llu ms", id, type, timeout_ns / MS);
}

/* Stops and reaps the producers still running. */
static void reap_all(struct child *ch, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		if (ch[k].pid > 0 && rel_wait_child(ch[k].pid, 100 * MS) < 0) {
			kill(ch[k].pid, SIGKILL);
			rel_wait_child(ch[k].pid, 10000 * MS);
		}
		ch[k].pid = 0;
		if (ch[k].ctl >= 0)
			close(ch[k].ctl);
		if (ch[k].rep >= 0)
			close(ch[k].rep);
		ch[k].ctl = ch[k].rep = -1;
	}
}

/* STOP (the fault's time in it) to every producer, then each one's DONE and exit status. */
static int stop_all(struct child *ch, unsigned n, uint64_t fault_ns)
{
	int rc = 0;

	for (unsigned k = 0; k < n; k++)
		if (!ch[k].done)
			send_msg(ch[k].ctl, MSG_STOP, k, fault_ns, NULL);
	for (unsigned k = 0; k < n; k++) {
		if (!ch[k].done && await(ch, k, MSG_DONE, DONE_WAIT_NS) != 0)
			rc = -1;
		const int st = rel_wait_child(ch[k].pid, 10000 * MS);

		if (st >= 0)
			ch[k].pid = 0;
		if (ch[k].m.r.failed || st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("FAIL producer %u (client %u): %s (exit status %#x)\n", k,
			       ch[k].m.r.client_id, ch[k].m.r.why[0] ? ch[k].m.r.why : "-", st);
			rc = -1;
		}
	}
	return rc;
}

/*
 * Until the faulting GPU's producers resumed (RESUMED) and RUN_NS passed:
 * the earliest time one of them saw the fault in *fault_ns. 0 or -1.
 */
static int watch(struct child *ch, const int *faulty, uint64_t go_ns, uint64_t *fault_ns)
{
	unsigned resumed = 0;

	for (uint64_t now = go_ns; now - go_ns < RUN_NS || resumed < 2; now = rel_now_ns()) {
		struct pollfd pf[PRODUCERS];

		if (now - go_ns > FAULT_WAIT_NS)
			FAIL("%s in %llu s",
			     *fault_ns ? "the faulting GPU's producers did not resume"
				       : "no fault was seen",
			     FAULT_WAIT_NS / 1000 / MS);
		for (unsigned k = 0; k < PRODUCERS; k++)
			pf[k] = (struct pollfd){.fd = ch[k].rep, .events = POLLIN};
		if (poll(pf, PRODUCERS, 10) <= 0)
			continue;
		for (unsigned k = 0; k < PRODUCERS; k++) {
			if (!(pf[k].revents & (POLLIN | POLLHUP)))
				continue;
			if (read(ch[k].rep, &ch[k].m, sizeof(ch[k].m)) != (ssize_t)sizeof(ch[k].m))
				FAIL("producer %u ended without a word", k);
			if (ch[k].m.type == MSG_DONE) {
				ch[k].done = 1;
				FAIL("producer %u stopped early: %s", k, ch[k].m.r.why);
			}
			if (ch[k].m.type == MSG_FAULT && faulty[k] &&
			    (!*fault_ns || ch[k].m.t_ns < *fault_ns))
				*fault_ns = ch[k].m.t_ns;
			resumed += ch[k].m.type == MSG_RESUMED;
		}
	}
	return 0;
}

/* Waits (bounded) until the log has @what. */
static int log_waits_for(const char *what, uint64_t timeout_ns)
{
	const uint64_t until = rel_now_ns() + timeout_ns;

	while (!vyre_test_log_has(daemon_.log, what))
		if (rel_now_ns() > until)
			return 0;
		else
			rel_sleep_ns(5 * MS);
	return 1;
}

static double ms_of(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* The log says the fault stayed in GPU @k's worker, which was started again. */
static int check_log(unsigned k)
{
	char line[96];

	if (!log_waits_for("serving again", 10000 * MS))
		FAIL("no new worker for GPU %u: the log never says \"serving again\"", k);
	if (!vyre_test_log_has(daemon_.log, "1 of 2 GPUs still serve"))
		FAIL("the log does not say \"1 of 2 GPUs still serve\"");
	snprintf(line, sizeof(line), "GPU %u (ordinal %u): device lost in worker", k, k);
	if (!vyre_test_log_has(daemon_.log, line))
		FAIL("the log does not have \"%s\"", line);
	/* the other worker neither lost its device nor exited */
	snprintf(line, sizeof(line), "GPU %u (ordinal %u): device lost", 1 - k, 1 - k);
	if (vyre_test_log_has(daemon_.log, line))
		FAIL("the GPU that did not fault noticed: the log has \"%s\"", line);
	for (unsigned i = 0; i < 2; i++) {
		snprintf(line, sizeof(line), "GPU %u (ordinal %u): worker %s", 1 - k, 1 - k,
			 i ? "killed" : "exited");
		if (vyre_test_log_has(daemon_.log, line))
			FAIL("the GPU that did not fault noticed: the log has \"%s\"", line);
	}
	return 0;
}

/* A new private client after the fault completes MIN_ITEMS items; its GPU in *gpu. */
static int new_client(struct child *ch, uint64_t seed, int *gpu)
{
	if (spawn(ch, PRODUCERS, 0, seed) != 0 || await(ch, PRODUCERS, MSG_READY, 20000 * MS) != 0)
		FAIL("a new private client after the fault: %s", ch[PRODUCERS].m.r.why);
	*gpu = vyre_test_logged_gpu(&daemon_, ch[PRODUCERS].m.r.client_id);
	send_msg(ch[PRODUCERS].ctl, MSG_GO, PRODUCERS, 0, NULL);
	if (stop_all(ch + PRODUCERS, 1, 0) != 0)
		FAIL("the new private client after the fault was not served");
	return 0;
}

static void figures(const struct child *ch, const int *faulty, unsigned k, uint64_t go_ns,
		    uint64_t fault_ns, int new_gpu)
{
	printf("fault on GPU %u, %.1f ms after the producers started:\n", k,
	       ms_of(fault_ns - go_ns));
	for (unsigned i = 0; i < PRODUCERS; i++) {
		const struct report *r = &ch[i].m.r;

		if (!faulty[i])
			printf("  producer %u (GPU %u, serves on): %" PRIu64
			       " items; longest gap between completions near the fault %.2f ms "
			       "(median gap %.3f ms, longest of the run %.2f ms)\n",
			       i, 1 - k, r->ok, ms_of(r->gap_near_ns), ms_of(r->gap_p50_ns),
			       ms_of(r->gap_max_ns));
		else
			printf("  producer %u (GPU %u, faults): %" PRIu64 " items, %" PRIu64
			       " VYRE_E_DEVICE, %" PRIu64 " VYRE_E_RESTARTED; without service "
			       "%.1f ms; resumed as client %u on GPU %d, %" PRIu64
			       " items after it\n",
			       i, k, r->ok, r->device, r->restarted,
			       ms_of(r->resumed_ns - (r->last_ok_ns ? r->last_ok_ns : go_ns)),
			       r->client_id, vyre_test_logged_gpu(&daemon_, r->client_id),
			       r->ok_after_resume);
	}
	printf("  a new private client after the fault: served on GPU %d\n", new_gpu);
}

/* What the reports must say (the producers checked every item themselves). */
static int check_reports(const struct child *ch, const int *faulty)
{
	uint64_t device = 0;

	for (unsigned i = 0; i < PRODUCERS; i++) {
		const struct report *r = &ch[i].m.r;

		if (r->ok < MIN_ITEMS)
			FAIL("producer %u completed %" PRIu64 " items", i, r->ok);
		if (!faulty[i] && (r->device || r->restarted || r->disconnects || r->reconnects))
			FAIL("producer %u of the GPU that serves on was touched by the fault", i);
		if (faulty[i] && (r->reconnects != 1 || r->ok_after_resume < MIN_ITEMS))
			FAIL("producer %u of the faulting GPU: %u resumes, %" PRIu64
			     " items after, want 1 and %u or more",
			     i, r->reconnects, r->ok_after_resume, MIN_ITEMS);
		device += r->device;
	}
	if (device == 0)
		FAIL("no item completed with VYRE_E_DEVICE: did the fault happen?");
	return 0;
}

static int scenario_in(const char *backend, unsigned k, uint64_t *rng, struct child *ch)
{
	const char *const args[] = {"--backend", backend,      "--gpus", "0,1", "--loops",
				    "1",	 "--inflight", "4",	 NULL};
	const char *inject = strcmp(backend, "cuda") == 0 ? "VYRE_CUDA_INJECT" : "VYRE_CPU_INJECT";
	char ordinal[16];
	int faulty[PRODUCERS], new_gpu = -1;
	uint64_t go_ns, fault_ns = 0;
	int rc;

	snprintf(ordinal, sizeof(ordinal), "%u", k);
	setenv(inject, "fault", 1);
	setenv("VYRE_INJECT_DEVICE", ordinal, 1);
	setenv("VYRE_INJECT_AFTER", INJECT_AFTER, 1);
	rc = vyre_test_daemon_start(&daemon_, args);
	unsetenv(inject);
	unsetenv("VYRE_INJECT_DEVICE");
	unsetenv("VYRE_INJECT_AFTER");
	if (rc != 0)
		return -1;
	/* one after the other: clients 1-4, private domains on GPUs 0, 1, 0, 1 */
	for (unsigned i = 0; i < PRODUCERS; i++) {
		faulty[i] = i % 2 == k;
		if (spawn(ch, i, faulty[i], rel_rand(rng)) != 0 ||
		    await(ch, i, MSG_READY, 20000 * MS) != 0)
			FAIL("producer %u did not start: %s", i, ch[i].m.r.why);
		const int gpu = vyre_test_logged_gpu(&daemon_, ch[i].m.r.client_id);

		if (ch[i].m.r.client_id != i + 1 || gpu != (int)(i % 2))
			FAIL("producer %u is client %u on GPU %d, want client %u on GPU %u", i,
			     ch[i].m.r.client_id, gpu, i + 1, i % 2);
	}
	go_ns = rel_now_ns();
	for (unsigned i = 0; i < PRODUCERS; i++)
		send_msg(ch[i].ctl, MSG_GO, i, 0, NULL);
	rc = watch(ch, faulty, go_ns, &fault_ns);
	if (stop_all(ch, PRODUCERS, fault_ns) != 0 || rc != 0)
		return -1;
	if (check_reports(ch, faulty) != 0 || check_log(k) != 0 ||
	    new_client(ch, rel_rand(rng), &new_gpu) != 0)
		return -1;
	figures(ch, faulty, k, go_ns, fault_ns, new_gpu);
	/* vyre_test_daemon_stop, with a bound */
	const uint64_t term_ns = rel_now_ns();

	kill(daemon_.pid, SIGTERM);
	/* past the supervisor's own 30 s grace for its workers */
	const int st = rel_wait_child(daemon_.pid, 60000 * MS);

	printf("  vyred stopped %.1f ms after SIGTERM\n", (double)(rel_now_ns() - term_ns) / 1e6);
	if (st < 0)
		FAIL("vyred did not exit in 60 s after SIGTERM");
	daemon_.pid = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAIL("vyred ended with status %#x after SIGTERM, want exit 0", st);
	return 0;
}

static int scenario(const char *backend, unsigned k, uint64_t *rng)
{
	struct child ch[PRODUCERS + 1];
	int rc;

	memset(ch, 0, sizeof(ch));
	for (unsigned i = 0; i <= PRODUCERS; i++)
		ch[i].ctl = ch[i].rep = -1;
	rc = scenario_in(backend, k, rng, ch);
	reap_all(ch, PRODUCERS + 1);
	if (rc != 0)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	printf("%s: a fault on GPU %u under load\n", rc ? "FAIL" : "ok  ", k);
	return rc;
}

int main(void)
{
	/* the GPU machine runs it on the CUDA backend: VYRE_TEST_BACKEND=cuda */
	const char *backend = getenv("VYRE_TEST_BACKEND") ? getenv("VYRE_TEST_BACKEND") : "cpu";
	uint64_t rng;
	int rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(backend, "cuda") == 0) {
		char why[256] = "";
		const int devices =
		    vyre_cuda_backend ? vyre_cuda_backend->devices(NULL, 0, why, sizeof(why)) : 0;

		if (!vyre_cuda_backend) {
			printf("skip: %s\n", vyre_cuda_unavailable);
			return 77;
		}
		if (devices < 2) {
			printf("skip: needs two CUDA devices, %d usable here%s%s\n",
			       devices < 0 ? 0 : devices, why[0] ? ": " : "", why);
			return 77;
		}
	}
	rng = rel_seed("test_gpu_fault_load");
	/* the fault on ordinal 1, then on ordinal 0 */
	for (unsigned k = 2; k-- > 0 && rc == 0;)
		rc = scenario(backend, k, &rng);
	printf("%s\n", rc ? "FAILED" : "PASS");
	return rc ? 1 : 0;
}
