/* SPDX-License-Identifier: MIT */
/*
 * The io_uring event loop. Everything vyred waits for is an io_uring
 * operation: accept on the listening socket, a read on the signalfd, a poll
 * on each client socket, and while idle one doorbell wait per client: an
 * IORING_OP_FUTEX_WAIT on its SQ doorbell word, or, when the kernel lacks
 * futex operations (or --doorbell eventfd), a read of an eventfd the client
 * writes, and a read of the backend's completion eventfd while batches run
 * (a backend without one is polled: the loop does not sleep while its
 * batches run). After a batch the loop spins adaptively before sleeping, so
 * busy clients never need a syscall to reach it.
 *
 * The loop owns the sockets, io_uring, timers and signals; the pipeline
 * (pipeline.h) takes batches through their stages and leaves what the loop
 * must do afterwards in the daemon's wake and drop lists.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "conns.h"
#include "control.h"
#include "daemon.h"
#include "drain.h"
#include "gpus.h"
#include "inbox.h"
#include "log.h"
#include "loop.h"
#include "pipeline.h"
#include "sd.h"
#include "server.h"
#include "trace.h"
#include "uring.h"

#define RING_ENTRIES	  1024u
#define SPIN_MIN_NS	  1000u
#define SHUTDOWN_DRAIN_NS 2000000000ull
/* pauses between looks at the backend while batches run */
#define RUNNING_TRAIN 2

static void arm_signal(struct vyre_daemon *d)
{
	if (d->signal_fd < 0)
		return;
	vyre_uring_read(&d->ring, d->signal_fd, d->signal_buf, sizeof(struct signalfd_siginfo),
			VYRE_IO_SIGNAL, 0);
	d->signal_armed = 1;
}

/* One read of an eventfd of the loop's own (the backend's, the inbox), at most one armed. */
static void arm_efd_read(struct vyre_daemon *d, enum vyre_io_kind kind, int fd, uint64_t *buf,
			 int *armed)
{
	if (*armed || fd < 0)
		return;
	vyre_uring_read(&d->ring, fd, buf, sizeof(*buf), kind, 0);
	*armed = 1;
}

static void arm_backend(struct vyre_daemon *d)
{
	arm_efd_read(d, VYRE_IO_BACKEND, d->backend_fd, &d->backend_efd_buf,
		     &d->backend_read_armed);
}

static void arm_inbox(struct vyre_daemon *d)
{
	arm_efd_read(d, VYRE_IO_INBOX, d->inbox_fd, &d->inbox_buf, &d->inbox_armed);
}

/*
 * The gpu_state probe's clock: one timeout a second per loop, always armed,
 * since a tracer that attaches cannot wake a sleeping loop. It is the only
 * wake-up an idle loop gets; untraced it costs that and a semaphore load
 * (two in loop 0, which also names the ops: op_info).
 * The kernel copies the timespec when the timeout is submitted.
 */
static void arm_gpu_tick(struct vyre_daemon *d)
{
	static struct __kernel_timespec period = {.tv_sec = 1};

	if (d->stopping)
		return;
	vyre_uring_timeout(&d->ring, &period, VYRE_IO_GPU_TICK);
}

static void on_gpu_tick(struct vyre_daemon *d)
{
	vyre_trace_gpu_state(d);
	vyre_trace_op_info(d);
	arm_gpu_tick(d);
}

/*
 * systemd's watchdog (sd.h) is fed by a timeout in loop 0's own ring: the
 * ping goes out only when the loop comes round to reap it, so a loop that
 * hangs (a stage that never returns, a wait that never wakes) stops pinging
 * and systemd restarts vyred.
 */
static void arm_watchdog(struct vyre_daemon *d)
{
	const uint64_t ns = vyre_sd_watchdog_ns();

	if (d->loop_index != 0 || !ns || d->watchdog_armed || d->stopping)
		return;
	d->watchdog.tv_sec = (long long)(ns / 1000000000u);
	d->watchdog.tv_nsec = (long long)(ns % 1000000000u);
	vyre_uring_timeout(&d->ring, &d->watchdog, VYRE_IO_WATCHDOG);
	d->watchdog_armed = 1;
}

static void on_watchdog(struct vyre_daemon *d)
{
	d->watchdog_armed = 0;
	if (d->stopping)
		return;
	vyre_sd_notify("WATCHDOG=1");
	arm_watchdog(d);
}

static void arm_waiter(struct vyre_daemon *d, struct vyre_conn *c, uint32_t seen)
{
	struct io_uring_sqe *sqe;

	if (c->waiter_armed)
		return;
	sqe = vyre_uring_sqe(&d->ring);
	if (d->use_futex)
		vyre_uring_prep_futex_wait(sqe, &c->region.hdr->sq_doorbell, seen);
	else
		io_uring_prep_read(sqe, c->sq_efd, &c->efd_buf, sizeof(c->efd_buf), 0);
	io_uring_sqe_set_data64(sqe, vyre_io_tag(VYRE_IO_WAIT, c->slot));
	c->waiter_armed = 1;
	c->pending_ops++;
}

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
}

int vyre_loop_block_signals(void)
{
	sigset_t set;

	stop_signals(&set);
	signal(SIGPIPE, SIG_IGN);
	return pthread_sigmask(SIG_BLOCK, &set, NULL) == 0 ? 0 : -1;
}

int vyre_loop_init(struct vyre_daemon *d)
{
	sigset_t set;
	struct io_uring_params p;

	stop_signals(&set);
	/* loop 0 takes the signals; the others hear of them through their inbox */
	if (d->loop_index == 0)
		d->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->loop_index == 0 && d->signal_fd < 0) {
		vyre_log("signalfd: %s", strerror(errno));
		return -1;
	}
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = RING_ENTRIES * 4;
	int rc = io_uring_queue_init_params(RING_ENTRIES, &d->ring, &p);

	if (rc < 0) {
		vyre_log("io_uring_queue_init: %s", strerror(-rc));
		return -1;
	}
	int have_futex = vyre_uring_probe_futex(&d->ring);

	if (d->cfg.doorbell == VYRE_DOORBELL_FUTEX && !have_futex) {
		vyre_log("--doorbell futex: this kernel's io_uring has no FUTEX_WAIT (needs 6.7+)");
		return -1;
	}
	d->use_futex = have_futex && d->cfg.doorbell != VYRE_DOORBELL_EVENTFD;
	if (d->loop_index == 0 && d->use_futex)
		vyre_log("doorbells: io_uring FUTEX_WAIT on each idle client's SQ doorbell");
	else if (d->loop_index == 0)
		vyre_log("doorbells: eventfd reads through io_uring (%s)",
			 have_futex ? "--doorbell eventfd"
				    : "this kernel's io_uring has no FUTEX_WAIT");
	d->spin_ns = d->cfg.spin_max_us * 1000u;
	d->backend_fd =
	    d->backend_ops->completion_fd ? d->backend_ops->completion_fd(d->backend) : -1;
	return 0;
}

static void on_signal(struct vyre_daemon *d, int res)
{
	const struct signalfd_siginfo *si = (const void *)d->signal_buf;

	d->signal_armed = 0;
	if (res == (int)sizeof(*si)) {
		vyre_log("%s: draining, then exiting", strsignal((int)si->ssi_signo));
		d->stopping = 1;
		vyre_server_unlisten(d);
		vyre_loops_stop(d);
		return;
	}
	if (!d->stopping)
		arm_signal(d);
}

/* Adopt every client loop 0 handed over (inbox.h). */
static void adopt_inbox(struct vyre_daemon *d)
{
	const uint32_t n = vyre_inbox_take(d);

	for (uint32_t k = 0; k < n; k++)
		vyre_control_adopt(d, &d->inbox_work[k]);
}

/* Loop 0 handed clients over, or every loop is to stop. */
static void on_inbox(struct vyre_daemon *d)
{
	d->inbox_armed = 0;
	adopt_inbox(d);
	if (__atomic_load_n(&d->sh->stopping, __ATOMIC_ACQUIRE))
		d->stopping = 1;
	if (!d->stopping)
		arm_inbox(d);
}

static void on_conn_op(struct vyre_daemon *d, enum vyre_io_kind kind, struct vyre_conn *c, int res)
{
	switch (kind) {
	case VYRE_IO_POLL:
		c->poll_armed = 0;
		if (c->state == VYRE_CONN_HANDSHAKE || c->state == VYRE_CONN_ACTIVE) {
			if (res < 0 && res != -ECANCELED)
				vyre_conn_close(d, c, 0);
			else if (res > 0)
				vyre_control_readable(d, c);
		}
		break;
	case VYRE_IO_WAIT:
		c->waiter_armed = 0;
		break;
	default: /* VYRE_IO_EFD_WRITE */
		c->efd_write_armed = 0;
		if (c->efd_write_again && c->state == VYRE_CONN_ACTIVE && res != -ECANCELED) {
			c->efd_write_again = 0;
			vyre_conn_write_eventfd(d, c);
		}
		break;
	}
	vyre_conn_op_done(d, c);
}

/* Handles every completion that is ready, without blocking. */
static void reap_cqes(struct vyre_daemon *d)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&d->ring, &cqe) == 0) {
		uint64_t data = cqe->user_data;
		int res = cqe->res;
		enum vyre_io_kind kind = vyre_io_kind(data);
		uint32_t slot = vyre_io_slot(data);

		io_uring_cqe_seen(&d->ring, cqe);
		if (kind == VYRE_IO_ACCEPT)
			vyre_server_on_accept(d, res);
		else if (kind == VYRE_IO_BACKEND)
			d->backend_read_armed = 0;
		else if (kind == VYRE_IO_INBOX)
			on_inbox(d);
		else if (kind == VYRE_IO_TICK)
			vyre_server_on_tick(d);
		else if (kind == VYRE_IO_GPU_TICK)
			on_gpu_tick(d);
		else if (kind == VYRE_IO_WATCHDOG)
			on_watchdog(d);
		else if (kind == VYRE_IO_SIGNAL)
			on_signal(d, res);
		else if ((kind == VYRE_IO_POLL || kind == VYRE_IO_WAIT ||
			  kind == VYRE_IO_EFD_WRITE) &&
			 slot < d->n_conn_slots)
			on_conn_op(d, kind, &d->conns[slot], res);
	}
}

/* Something to drain from @c; a client whose ring indexes are broken is closed. */
static int has_work(struct vyre_daemon *d, struct vyre_conn *c)
{
	int pending = vyre_sq_pending(&c->sq);
	int space = pending > 0 ? vyre_cq_space(&c->cq) : 0;

	if (pending < 0 || space < 0) {
		c->drop_why = vyre_bad_ring_index;
		vyre_conn_close(d, c, VYRE_E_PROTO);
		return 1;
	}
	/*
	 * Items waiting on a full CQ are not work: the client's reap kicks us.
	 * Nor are those of a client with --client-batches batches in flight, or
	 * a FENCE behind its batches: their completion wakes us. Nor a chain
	 * whose last item is not published: that publish kicks us.
	 */
	return pending > 0 && (uint32_t)space > c->inflight && c->batches < d->client_batches &&
	       vyre_drain_ready(d, c, (uint32_t)space - c->inflight);
}

/*
 * The loop's GPU is lost and none of its batches runs (gpus.h): its
 * clients go, the last first, as each close moves another into its place.
 */
static void drop_all(struct vyre_daemon *d, int reason)
{
	while (d->n_active)
		vyre_conn_close(d, &d->conns[d->active[d->n_active - 1]], reason);
}

/*
 * Sleep until a doorbell, a control message or a signal. Every client is
 * told to wake us (need-wakeup), then re-checked: anything published before
 * the flag was visible is found here; anything after rings the doorbell.
 */
static void sleep_on_doorbells(struct vyre_daemon *d)
{
	uint32_t bit = d->use_futex ? VYRE_SQ_WAKE_FUTEX : VYRE_SQ_WAKE_EVENTFD;
	int work = 0;

	for (uint32_t s = 0; s < d->n_conn_slots; s++) {
		struct vyre_conn *c = &d->conns[s];

		if (c->state != VYRE_CONN_ACTIVE)
			continue;
		struct vyre_region_header *h = c->region.hdr;
		uint32_t seen;

		/* A taken bit means a producer is waking us already: stay up. */
		if (!vyre_sleep_prepare(&h->sq_need_wakeup, &h->sq_doorbell, bit, &seen) ||
		    has_work(d, c)) {
			work = 1;
			break;
		}
		arm_waiter(d, c, seen);
	}
	if (!work) {
		if (d->n_running)
			arm_backend(d);
		io_uring_submit_and_wait(&d->ring, 1);
	}
	/* Awake: producers need no syscall to reach us until we sleep again. */
	for (uint32_t s = 0; s < d->n_conn_slots; s++)
		if (d->conns[s].state == VYRE_CONN_ACTIVE)
			vyre_sleep_finish(&d->conns[s].region.hdr->sq_need_wakeup, bit);
}

static int all_conns_free(const struct vyre_daemon *d)
{
	for (uint32_t s = 0; s < d->n_conn_slots; s++)
		if (d->conns[s].state != VYRE_CONN_FREE)
			return 0;
	return 1;
}

/* What the stages left for the loop: clients to drop, clients to wake, deferred frees. */
static void after_step(struct vyre_daemon *d)
{
	for (uint32_t k = 0; k < d->n_drop; k++) {
		struct vyre_conn *c = &d->conns[d->drop[k]];
		int reason = c->drop_reason;

		c->drop_reason = 0;
		if (reason)
			vyre_conn_close(d, c, reason);
	}
	d->n_drop = 0;
	for (uint32_t k = 0; k < d->n_wake; k++) {
		struct vyre_conn *c = &d->conns[d->wake[k]];

		c->wake_listed = 0;
		if (c->state == VYRE_CONN_ACTIVE)
			vyre_conn_write_eventfd(d, c);
	}
	d->n_wake = 0;
	if (d->n_deferred)
		vyre_control_retry(d);
}

static int step(struct vyre_daemon *d, int64_t timeout_ns)
{
	int n = vyre_pipeline_step(d, timeout_ns);

	after_step(d);
	return n;
}

/*
 * After SIGTERM (or a device that cannot recover): keep accepting what
 * clients had queued, for a bounded time, complete every batch in flight,
 * then close every client.
 */
static int shut_down(struct vyre_daemon *d)
{
	uint64_t until = vyre_now_ns() + SHUTDOWN_DRAIN_NS;

	while (d->n_running || vyre_now_ns() < until) {
		if (step(d, d->n_running ? 1000000 : 0) == 0 && !d->n_running)
			break;
	}
	for (uint32_t s = 0; s < d->n_conn_slots; s++)
		vyre_conn_close(d, &d->conns[s], VYRE_E_DISCONNECTED);
	if (d->accept_armed)
		vyre_uring_cancel(&d->ring, VYRE_IO_ACCEPT, 0);
	if (d->signal_armed)
		vyre_uring_cancel(&d->ring, VYRE_IO_SIGNAL, 0);
	if (d->backend_read_armed)
		vyre_uring_cancel(&d->ring, VYRE_IO_BACKEND, 0);
	if (d->inbox_armed)
		vyre_uring_cancel(&d->ring, VYRE_IO_INBOX, 0);
	if (d->watchdog_armed)
		vyre_uring_cancel(&d->ring, VYRE_IO_WATCHDOG, 0);
	io_uring_submit(&d->ring);
	while (!all_conns_free(d) || d->accept_armed || d->signal_armed || d->backend_read_armed ||
	       d->inbox_armed || d->watchdog_armed) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&d->ring, &cqe) != 0)
			break;
		reap_cqes(d);
	}
	/* clients handed to this loop while it stopped are told so */
	adopt_inbox(d);
	return 0;
}

/*
 * The spin budget follows the gaps between batches: a gap short enough that
 * spinning would have bridged it doubles the budget (up to --spin-us), a
 * longer one halves it, so a busy daemon never sleeps between batches and an
 * idle one stops burning a CPU.
 */
static void adapt_spin(struct vyre_daemon *d, uint64_t gap_ns)
{
	uint32_t spin_max = d->cfg.spin_max_us * 1000u;

	if (gap_ns <= spin_max)
		d->spin_ns = d->spin_ns * 2 > spin_max	? spin_max
			     : d->spin_ns < SPIN_MIN_NS ? SPIN_MIN_NS
							: d->spin_ns * 2;
	else
		d->spin_ns /= 2;
}

/*
 * Some active client with fewer than --client-batches batches in flight has
 * its next SQE published (its markers alone are read): one with that many
 * cannot be taken.
 */
static int any_published(const struct vyre_daemon *d)
{
	for (uint32_t k = 0; k < d->n_active; k++) {
		const struct vyre_conn *c = &d->conns[d->active[k]];

		if (c->batches < d->client_batches && vyre_sq_published(&c->sq))
			return 1;
	}
	return 0;
}

int vyre_loop_run(struct vyre_daemon *d)
{
	uint64_t idle_since = 0;

	vyre_server_arm_accept(d);
	arm_signal(d);
	arm_inbox(d);
	arm_gpu_tick(d);
	arm_watchdog(d);
	io_uring_submit(&d->ring);
	while (!d->stopping) {
		reap_cqes(d);
		if (d->stopping || __atomic_load_n(&d->sh->stopping, __ATOMIC_RELAXED))
			break;
		if (vyre_gpus_check(d))
			drop_all(d, VYRE_E_DEVICE);
		/* Re-armed polls and eventfd writes go out now, not when we next idle. */
		if (io_uring_sq_ready(&d->ring))
			io_uring_submit(&d->ring);
		int n = step(d, 0);

		if (n > 0) {
			if (idle_since)
				adapt_spin(d, vyre_now_ns() - idle_since);
			idle_since = 0;
			continue;
		}
		/*
		 * A backend without a completion fd is watched by polling while it
		 * runs; the clock is not read meanwhile (it cost a tenth of the loop).
		 */
		const int polling = d->n_running && d->backend_fd < 0;
		uint64_t now = idle_since;

		if (!polling || !idle_since)
			now = vyre_now_ns();
		if (!idle_since)
			idle_since = now;
		if (polling || now - idle_since < d->spin_ns) {
			/*
			 * A pause costs about 140 cycles on recent Xeons: look for a
			 * published SQE after each one, not after a train of them,
			 * or the train is added to the latency of the next item.
			 * While batches run, the backend is looked at as often.
			 */
			const int train = d->n_running ? RUNNING_TRAIN : 32;

			for (int i = 0; i < train && !any_published(d); i++)
				vyre_cpu_relax();
			continue;
		}
		sleep_on_doorbells(d);
	}
	/* a signal, another loop, or this loop's device: every loop stops */
	d->stopping = 1;
	if (d->loop_index == 0)
		vyre_sd_notify("STOPPING=1\nSTATUS=draining: completing the batches in flight");
	vyre_loops_stop(d);
	return shut_down(d);
}
