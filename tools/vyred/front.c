/* SPDX-License-Identifier: MIT */
/*
 * vyred's supervisor (front.h): starts one GPU worker per device, takes
 * connections and hands each to the worker of its domain, and restarts a
 * worker that exits. It never touches a client's rings: a connection is
 * passed on before its HELLO is read (the HELLO is only peeked at).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "front.h"
#include "front_conn.h"
#include "front_route.h"
#include "log.h"
#include "sd.h"
#include "server.h"
#include "worker_link.h"

#define MAX_PENDING	   256u
#define RESTART_FIRST_NS   100000000ull	 /* a worker that served is started again after this */
#define RESTART_BACKOFF_NS 1000000000ull /* doubled after each start that failed */
#define MAX_FAILED_STARTS  5u
#define STOP_GRACE_NS	   30000000000ull /* SIGTERM to the workers, then SIGKILL */

/* a connection whose HELLO has not come yet */
struct pending {
	int fd;
	uint64_t deadline;
	int waiting; /* its HELLO came and waits for a worker to start: not polled */
};

struct front {
	const struct vyre_daemon_config *cfg;
	int argc;
	char **argv;
	struct vyre_worker workers[VYRED_MAX_GPUS];
	struct vyre_front_routes fr;
	struct pending pending[MAX_PENDING];
	uint32_t n_pending;
	int listen_fd;
	int listen_passed;
	int signal_fd;
	int ready;    /* every first start is over and one serves: announced */
	int stopping; /* SIGTERM: waiting for the workers to exit */
	uint64_t stop_at;
	int status; /* the exit status */
	uint32_t next_client_id;
	char gpus_arg[VYRED_MAX_GPUS * 8];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int vyre_front_wanted(const struct vyre_daemon_config *cfg, const struct vyre_shared *sh)
{
	if (cfg->worker_fd >= 0)
		return 0;
	for (uint32_t g = 1; g < sh->n_gpus; g++)
		if (sh->gpus[g].ordinal != sh->gpus[0].ordinal)
			return 1;
	return 0;
}

/* One worker per device ordinal, in the order --gpus first names them. */
static void plan_workers(struct front *f, const struct vyre_shared *sh)
{
	size_t at = 0;

	for (uint32_t g = 0; g < sh->n_gpus; g++) {
		struct vyre_worker *w = NULL;

		at += (size_t)snprintf(f->gpus_arg + at, sizeof(f->gpus_arg) - at, "%s%u",
				       g ? "," : "", sh->gpus[g].ordinal);
		for (uint32_t k = 0; k < f->fr.n_workers && !w; k++)
			if (f->workers[k].ordinal == sh->gpus[g].ordinal)
				w = &f->workers[k];
		if (w) {
			w->n_gpus++;
			continue;
		}
		w = &f->workers[f->fr.n_workers++];
		memset(w, 0, sizeof(*w));
		w->ordinal = sh->gpus[g].ordinal;
		w->first = g;
		w->n_gpus = 1;
		w->chan = -1;
		w->pid = -1;
	}
}

/*
 * In the child: become the worker (never returns). Only async-signal-safe
 * calls: the driver's threads may hold locks the fork copied.
 */
static void exec_worker(char **argv, pid_t parent)
{
	static const char failed[] = "vyred: cannot start a GPU worker (exec failed)\n";
	sigset_t none;

	/* the worker dies with the supervisor: a new vyred must find the devices free */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(127);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv("/proc/self/exe", argv);
	if (write(STDERR_FILENO, failed, sizeof(failed) - 1) < 0)
		_exit(127);
	_exit(127);
}

static int spawn(struct front *f, uint32_t k)
{
	struct vyre_worker *w = &f->workers[k];
	int sv[2];
	const pid_t parent = getpid();
	char spec[32];
	char **argv = calloc((size_t)f->argc + 5, sizeof(*argv));

	if (!argv || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		vyre_log("GPU %u: socketpair: %s", w->first, strerror(errno));
		free(argv);
		return -1;
	}
	snprintf(spec, sizeof(spec), "%d:%u", sv[1], w->ordinal);
	for (int i = 0; i < f->argc; i++)
		argv[i] = f->argv[i];
	/* later flags win: the list as resolved here, and this worker's part of it */
	argv[f->argc] = "--gpus";
	argv[f->argc + 1] = f->gpus_arg;
	argv[f->argc + 2] = "--gpu-worker";
	argv[f->argc + 3] = spec;
	const pid_t pid = fork();

	if (pid == 0) {
		/* the worker's end survives exec; the supervisor's does not */
		fcntl(sv[1], F_SETFD, 0);
		exec_worker(argv, parent);
	}
	free(argv);
	close(sv[1]);
	if (pid < 0) {
		vyre_log("GPU %u: fork: %s", w->first, strerror(errno));
		close(sv[0]);
		return -1;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	vyre_front_drop(&f->fr, k);
	w->pid = pid;
	w->chan = sv[0];
	w->state = VYRE_WORKER_STARTING;
	vyre_log("GPU %u (ordinal %u): worker pid %d starting", w->first, w->ordinal, (int)pid);
	return 0;
}

static void announce(struct front *f)
{
	char status[256], msg[320];
	const uint32_t serving = vyre_front_serving(&f->fr);
	uint32_t gpus = 0;

	for (uint32_t k = 0; k < f->fr.n_workers; k++)
		gpus += f->workers[k].n_gpus;
	snprintf(status, sizeof(status), "%u GPUs, %u worker processes (one a device, %u serving)",
		 gpus, f->fr.n_workers, serving);
	vyre_log("ready (pid %d): %s", (int)getpid(), status);
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=serving: %s", status);
	vyre_sd_notify(msg);
	f->ready = 1;
}

/* "N of M GPUs" for the log */
static const char *serving_words(const struct front *f, char *buf, size_t len)
{
	uint32_t n = 0, all = 0;

	for (uint32_t k = 0; k < f->fr.n_workers; k++) {
		all += f->workers[k].n_gpus;
		n += f->workers[k].state == VYRE_WORKER_READY ? f->workers[k].n_gpus : 0;
	}
	snprintf(buf, len, "%u of %u GPUs", n, all);
	return buf;
}

static void on_event(struct front *f, uint32_t k, const struct vyre_link_msg *m)
{
	struct vyre_worker *w = &f->workers[k];
	char words[48];

	if (m->type == VYRE_LINK_READY && w->state == VYRE_WORKER_STARTING) {
		w->state = VYRE_WORKER_READY;
		w->failed_starts = 0;
		if (w->lost_at)
			vyre_log("GPU %u (ordinal %u): serving again, %.1f ms after it was lost; "
				 "%s serve",
				 w->first, w->ordinal, (double)(now_ns() - w->lost_at) / 1e6,
				 serving_words(f, words, sizeof(words)));
	} else if (m->type == VYRE_LINK_LOST && w->state == VYRE_WORKER_READY) {
		w->state = VYRE_WORKER_LOST;
		w->lost_at = now_ns();
		vyre_front_drop(&f->fr, k);
		vyre_log("GPU %u (ordinal %u): device lost in worker pid %d; %s still "
			 "serve; its clients are disconnected once their items completed and "
			 "a new worker starts when this one exits",
			 w->first, w->ordinal, w->pid, serving_words(f, words, sizeof(words)));
	} else if (m->type == VYRE_LINK_GONE && w->state == VYRE_WORKER_READY) {
		vyre_front_gone(&f->fr, k, m->route, m->client_id);
	} else if (m->type == VYRE_LINK_REGION && w->state == VYRE_WORKER_READY) {
		vyre_front_region(&f->fr, k, m->client_id, m->dev, m->ino);
	}
}

static void read_events(struct front *f, uint32_t k)
{
	struct vyre_link_msg m;
	ssize_t n;

	while (f->workers[k].chan >= 0 &&
	       (n = recv(f->workers[k].chan, &m, sizeof(m), MSG_DONTWAIT)) > 0)
		if (n == (ssize_t)sizeof(m))
			on_event(f, k, &m);
}

/* Worker @k's process ended with @status. */
static void worker_exited(struct front *f, uint32_t k, int status)
{
	struct vyre_worker *w = &f->workers[k];
	const int served = w->state == VYRE_WORKER_READY || w->state == VYRE_WORKER_LOST;
	const uint64_t now = now_ns();
	char words[48];

	read_events(f, k);
	close(w->chan);
	w->chan = -1;
	w->pid = -1;
	w->state = VYRE_WORKER_DOWN;
	vyre_front_drop(&f->fr, k);
	if (!w->lost_at || served)
		w->lost_at = now;
	if (WIFSIGNALED(status))
		vyre_log("GPU %u (ordinal %u): worker killed by signal %d", w->first, w->ordinal,
			 WTERMSIG(status));
	else
		vyre_log("GPU %u (ordinal %u): worker exited with status %d", w->first, w->ordinal,
			 WEXITSTATUS(status));
	if (f->stopping)
		return;
	if (served) {
		w->restart_at = now + RESTART_FIRST_NS;
	} else if (++w->failed_starts >= MAX_FAILED_STARTS || !f->ready) {
		w->left_out = 1;
		vyre_log("GPU %u (ordinal %u): its worker failed to start %u time%s: left out",
			 w->first, w->ordinal, w->failed_starts, w->failed_starts > 1 ? "s" : "");
	} else {
		w->restart_at = now + (RESTART_BACKOFF_NS << (w->failed_starts - 1));
	}
	vyre_log("%s still serve", serving_words(f, words, sizeof(words)));
}

static void reap(struct front *f)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (uint32_t k = 0; k < f->fr.n_workers; k++)
			if (f->workers[k].pid == pid)
				worker_exited(f, k, status);
}

static void start_stopping(struct front *f, int status)
{
	if (f->stopping)
		return;
	f->stopping = 1;
	f->status = status;
	f->stop_at = now_ns() + STOP_GRACE_NS;
	vyre_sd_notify("STOPPING=1");
	for (uint32_t k = 0; k < f->fr.n_workers; k++)
		if (f->workers[k].pid > 0)
			kill(f->workers[k].pid, SIGTERM);
	for (uint32_t p = 0; p < f->n_pending; p++)
		close(f->pending[p].fd);
	f->n_pending = 0;
}

static void on_signals(struct front *f)
{
	struct signalfd_siginfo si;

	while (read(f->signal_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap(f);
		else if (!f->stopping)
			vyre_log("signal %u: stopping every GPU worker", si.ssi_signo);
		if (si.ssi_signo != SIGCHLD)
			start_stopping(f, 0);
	}
	reap(f);
}

/*
 * Peek at pending connection @p's first message: 1 when it was placed or
 * dropped, 0 to wait for more.
 */
static int try_place(struct front *f, struct pending *p, int late)
{
	uint8_t buf[VYRE_MSG_MAX_SIZE];
	struct vyre_msg m;
	struct stat region;
	const ssize_t n = vyre_front_first_message(p->fd, buf, sizeof(buf), MSG_PEEK, &region);

	if (n < 0 && (errno == EAGAIN || errno == EINTR) && !late)
		return 0;
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(p->fd); /* gone before its HELLO */
		return 1;
	}
	/* no HELLO (late, or malformed): any worker answers it as vyred does */
	const int hello =
	    n > 0 && vyre_msg_decode(buf, (size_t)n, &m) == 0 && m.type == VYRE_MSG_HELLO;
	uint32_t k = VYRE_FRONT_NO_WORKER, route;
	int rc;

	/* a RESUME of a region a worker still holds goes there (worker_link.h) */
	if (hello && (m.u.hello.flags & VYRE_HELLO_RESUME) && region.st_ino)
		k = vyre_front_region_worker(&f->fr, (uint64_t)region.st_dev,
					     (uint64_t)region.st_ino);
	if (k != VYRE_FRONT_NO_WORKER)
		rc = vyre_front_place_on(&f->fr, m.u.hello.domain, k, &route);
	else
		rc = vyre_front_place(&f->fr, f->cfg, hello ? m.u.hello.domain : "", &k, &route);

	if (rc == VYRE_E_AGAIN && !late) {
		/* a worker is starting: its READY wakes us; up to the HELLO's deadline */
		p->waiting = 1;
		return 0;
	}
	if (rc != 0) {
		vyre_front_refuse(p->fd, hello ? m.id : 0, rc == VYRE_E_AGAIN ? VYRE_E_DEVICE : rc);
		return 1;
	}
	if (vyre_front_hand_over(f->workers[k].chan, p->fd, route, ++f->next_client_id) != 0) {
		vyre_log("handing a client to GPU %u: %s", f->workers[k].first, strerror(errno));
		vyre_front_gone(&f->fr, k, route, 0);
		vyre_front_refuse(p->fd, hello ? m.id : 0, VYRE_E_NOMEM);
		return 1;
	}
	close(p->fd);
	return 1;
}

static void place_pending(struct front *f)
{
	const uint64_t now = now_ns();

	for (uint32_t i = 0; i < f->n_pending;) {
		if (try_place(f, &f->pending[i], now >= f->pending[i].deadline))
			f->pending[i] = f->pending[--f->n_pending];
		else
			i++;
	}
}

static void on_listen(struct front *f)
{
	int fd;

	while (f->n_pending < MAX_PENDING &&
	       (fd = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		f->pending[f->n_pending].fd = fd;
		f->pending[f->n_pending].waiting = 0;
		f->pending[f->n_pending++].deadline =
		    now_ns() + (uint64_t)f->cfg->hello_timeout_ms * 1000000ull;
	}
}

static void restart_due(struct front *f)
{
	const uint64_t now = now_ns();

	for (uint32_t k = 0; k < f->fr.n_workers; k++) {
		struct vyre_worker *w = &f->workers[k];

		if (w->state == VYRE_WORKER_DOWN && !w->left_out && w->restart_at &&
		    now >= w->restart_at) {
			w->restart_at = 0;
			if (spawn(f, k) != 0)
				w->restart_at = now + RESTART_BACKOFF_NS;
		}
	}
}

/* 1 while a worker serves or may yet serve. */
static int any_hope(const struct front *f)
{
	for (uint32_t k = 0; k < f->fr.n_workers; k++)
		if (f->workers[k].state != VYRE_WORKER_DOWN || !f->workers[k].left_out)
			return 1;
	return 0;
}

static int first_starts_over(const struct front *f)
{
	for (uint32_t k = 0; k < f->fr.n_workers; k++)
		if (f->workers[k].state == VYRE_WORKER_STARTING)
			return 0;
	return 1;
}

static int all_exited(const struct front *f)
{
	for (uint32_t k = 0; k < f->fr.n_workers; k++)
		if (f->workers[k].pid > 0)
			return 0;
	return 1;
}

/* The next timer: a restart, a HELLO's deadline, the watchdog, the stop's grace. */
static int poll_timeout_ms(const struct front *f, uint64_t watchdog_at)
{
	uint64_t next = watchdog_at ? watchdog_at : UINT64_MAX;
	const uint64_t now = now_ns();

	for (uint32_t k = 0; k < f->fr.n_workers; k++)
		if (f->workers[k].state == VYRE_WORKER_DOWN && f->workers[k].restart_at &&
		    f->workers[k].restart_at < next)
			next = f->workers[k].restart_at;
	/* a pending connection wakes poll when its HELLO comes; else at its deadline */
	for (uint32_t p = 0; p < f->n_pending; p++)
		if (f->pending[p].deadline < next)
			next = f->pending[p].deadline;
	if (f->stopping && f->stop_at < next)
		next = f->stop_at;
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now) / 1000000ull + 1);
}

static int serve(struct front *f)
{
	const uint64_t watchdog = vyre_sd_watchdog_ns();
	uint64_t watchdog_at = watchdog ? now_ns() + watchdog : 0;

	while (!(f->stopping && all_exited(f))) {
		struct pollfd pfd[2 + MAX_PENDING + VYRED_MAX_GPUS];
		uint32_t n = 0, chan_at;

		pfd[n++] = (struct pollfd){.fd = f->signal_fd, .events = POLLIN};
		pfd[n++] = (struct pollfd){
		    .fd =
			f->ready && !f->stopping && f->n_pending < MAX_PENDING ? f->listen_fd : -1,
		    .events = POLLIN};
		chan_at = n;
		for (uint32_t k = 0; k < f->fr.n_workers; k++)
			pfd[n++] = (struct pollfd){.fd = f->workers[k].chan, .events = POLLIN};
		for (uint32_t p = 0; p < f->n_pending; p++)
			pfd[n++] = (struct pollfd){
			    .fd = f->pending[p].waiting ? -1 : f->pending[p].fd, .events = POLLIN};
		if (poll(pfd, n, poll_timeout_ms(f, watchdog_at)) < 0 && errno != EINTR) {
			vyre_log("poll: %s", strerror(errno));
			return 1;
		}
		if (pfd[0].revents)
			on_signals(f);
		for (uint32_t k = 0; k < f->fr.n_workers; k++)
			if (pfd[chan_at + k].revents & POLLIN)
				read_events(f, k);
		if (pfd[1].revents)
			on_listen(f);
		if (f->n_pending)
			place_pending(f);
		if (!f->ready && !f->stopping && first_starts_over(f)) {
			if (vyre_front_serving(&f->fr) != f->fr.n_workers) {
				vyre_log("not every GPU's worker started: stopping");
				start_stopping(f, 1);
			} else {
				announce(f);
			}
		}
		if (!f->stopping) {
			restart_due(f);
			if (!any_hope(f)) {
				vyre_log("no usable GPU is left: stopping (exit status 1) so that "
					 "vyred can be restarted");
				start_stopping(f, 1);
			}
		}
		if (watchdog && now_ns() >= watchdog_at) {
			vyre_sd_notify("WATCHDOG=1");
			watchdog_at = now_ns() + watchdog;
		}
		if (f->stopping && now_ns() >= f->stop_at) {
			for (uint32_t k = 0; k < f->fr.n_workers; k++)
				if (f->workers[k].pid > 0)
					kill(f->workers[k].pid, SIGKILL);
			f->stop_at = UINT64_MAX;
		}
	}
	return f->status;
}

/* The socket, as vyred alone would: the same path rules (server.c). */
static int listen_front(struct front *f)
{
	static struct vyre_daemon probe;

	probe.cfg = *f->cfg;
	probe.cfg.worker_fd = -1;
	if (vyre_server_listen(&probe) != 0)
		return -1;
	f->listen_fd = probe.listen_fd;
	f->listen_passed = probe.listen_passed;
	fcntl(f->listen_fd, F_SETFD, FD_CLOEXEC);
	fcntl(f->listen_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

static int setup_signals(struct front *f)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	f->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return f->signal_fd < 0 ? -1 : 0;
}

/* A restarted worker runs without the test hooks that made the first one fault. */
static void forget_fault_hooks(void)
{
	unsetenv("VYRE_CUDA_INJECT");
	unsetenv("VYRE_CPU_INJECT");
	unsetenv("VYRE_INJECT_DEVICE");
	unsetenv("VYRE_INJECT_AFTER");
}

int vyre_front_run(const struct vyre_daemon_config *cfg, const struct vyre_shared *sh, int argc,
		   char **argv)
{
	static struct front f;
	int status = 1;

	f.cfg = cfg;
	f.argc = argc;
	f.argv = argv;
	f.signal_fd = f.listen_fd = -1;
	plan_workers(&f, sh);
	f.fr.workers = f.workers;
	/* a route per connection the workers can hold, at most */
	if (vyre_front_routes_init(&f.fr, (cfg->max_clients + 16) * f.fr.n_workers) != 0 ||
	    setup_signals(&f) != 0) {
		vyre_log("cannot set up the supervisor: %s", strerror(errno));
		goto out;
	}
	if (listen_front(&f) != 0)
		goto out;
	vyre_log("%u GPUs on %u devices: one worker process a device (a device fault "
		 "stays in its process)",
		 sh->n_gpus, f.fr.n_workers);
	for (uint32_t k = 0; k < f.fr.n_workers; k++)
		if (spawn(&f, k) != 0)
			start_stopping(&f, 1);
	forget_fault_hooks();
	status = serve(&f);
out:
	for (uint32_t k = 0; k < f.fr.n_workers; k++)
		if (f.workers[k].chan >= 0)
			close(f.workers[k].chan);
	if (f.listen_fd >= 0) {
		if (!f.listen_passed)
			unlink(cfg->socket_path);
		close(f.listen_fd);
	}
	if (f.signal_fd >= 0)
		close(f.signal_fd);
	vyre_front_routes_fini(&f.fr);
	return status;
}
