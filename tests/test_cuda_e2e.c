/* SPDX-License-Identifier: MIT */
/*
 * End to end with vyred on the GPU:
 *   1. tests/test_integration (8 producer processes, private and shared
 *      domains, heap and device buffers, every CQE and buffer compared with
 *      the oracle) and tests/test_device_buffers (device buffers: every op,
 *      validate once per write, --device-bytes-max exhaustion and release),
 *      tests/test_chains and tests/test_ranges (items on byte ranges of
 *      heap and device buffers) against vyred --backend cuda, in persistent and in launch mode: a
 *      wrapper script given as $VYRED adds the flags;
 *   2. vyred --backend cuda --mode persistent is killed with SIGKILL while
 *      its persistent kernel is resident; a new vyred then starts on the same
 *      GPU and a client session passes. How long that took is printed (a
 *      figure, not an assertion);
 *   3. a device fault inside vyred (VYRE_CUDA_INJECT=fault: an illegal
 *      address, which CUDA keeps for the life of the context): the item in
 *      flight completes with VYRE_E_DEVICE, vyred says why and exits 1 within
 *      seconds, and a new vyred passes a session;
 *   4. a stalled device-wide barrier (VYRE_CUDA_INJECT=stall): the watchdog
 *      fails the item with VYRE_E_DEVICE and the same vyred recovers;
 *   5. SIGKILL of vyred, and a device fault, while 4 producers keep several
 *      slots busy: no producer hangs or sees another error, the fault's
 *      vyred exits 1 after several batches were in flight, a new one serves;
 *   6. two GPUs (docs/design.md 8.8): --gpus 0,1 on a host with two, else
 *      0,0 (two GPUs of one device): SIGKILL with a grid resident on each, a
 *      new vyred serves; a device fault on GPU 1 while GPU 0 keeps serving
 *      (two devices only: on one device both GPUs share the context, so the
 *      fault loses both and vyred exits 1, which is checked instead); and
 *      test_integration's two-GPU run (1.) on those GPUs;
 *   7. fault containment (docs/design.md 8.5): resumable clients of two
 *      domains, one of which faults the device; vyred exits 1, a new one
 *      starts on the same socket, both clients resume with their named
 *      buffers' handles and bytes, and both run items again.
 * Exits 77 without a GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_backend.h"
#include "test_cuda_gen.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define WORDS 256u

static uint32_t failures;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int self_dir(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		return -1;
	self[n] = '\0';
	snprintf(out, len, "%s", dirname(self));
	return 0;
}

/*
 * Run the test program @name (beside this one) with $VYRED = a wrapper that
 * adds --backend cuda --mode @mode, and $VYRE_TEST_BACKEND=cuda.
 */
static void run_test(const char *name, const char *mode)
{
	char dir[PATH_MAX], wrapper[] = "/tmp/vyre-cuda-e2e-XXXXXX", prog[PATH_MAX + 32];
	char vyred[PATH_MAX + 32];
	int status = 0;
	FILE *f;

	if (self_dir(dir, sizeof(dir)) != 0) {
		failures++;
		return;
	}
	snprintf(prog, sizeof(prog), "%s/%s", dir, name);
	snprintf(vyred, sizeof(vyred), "%s/../vyred", dir);
	int fd = mkstemp(wrapper);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		printf("FAIL: cannot write the vyred wrapper\n");
		failures++;
		return;
	}
	fprintf(f, "#!/bin/sh\nexec '%s' --backend cuda --mode %s \"$@\"\n", vyred, mode);
	fclose(f);
	chmod(wrapper, 0755);
	printf("== %s with vyred --backend cuda --mode %s\n", name, mode);
	const double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		setenv("VYRED", wrapper, 1);
		setenv("VYRE_TEST_BACKEND", "cuda", 1);
		execl(prog, prog, (char *)NULL);
		_exit(126);
	}
	waitpid(pid, &status, 0);
	unlink(wrapper);
	const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	printf("== %s (%s): exit %d after %.0f ms\n", name, mode, rc, now_ms() - t0);
	if (rc != 0) {
		printf("FAIL: %s against vyred --backend cuda --mode %s\n", name, mode);
		failures++;
	}
}

/* One client session: ADD, SUM and an in-place XOR, checked against values computed here. */
static int session(const char *sock, int rounds)
{
	const struct vyre_connect_opts o = {.socket_path = sock};
	struct vyre_client *c;
	uint32_t a, b, s;
	int err = vyre_connect(&o, &c);

	if (err) {
		printf("FAIL: connect: %s\n", vyre_strerror(err));
		return -1;
	}
	err = vyre_buffer_alloc(c, 4 * WORDS, 0, &a);
	if (!err)
		err = vyre_buffer_alloc(c, 4 * WORDS, 0, &b);
	if (!err)
		err = vyre_buffer_alloc(c, 4, 0, &s);
	uint32_t *pa = err ? NULL : vyre_buffer_ptr(c, a, NULL);
	uint32_t *pb = err ? NULL : vyre_buffer_ptr(c, b, NULL);
	uint32_t *ps = err ? NULL : vyre_buffer_ptr(c, s, NULL);
	for (int r = 0; r < rounds && pa && pb && ps && !err; r++) {
		const uint32_t k = 5 + (uint32_t)r;
		const struct vyre_work_item items[3] = {
		    {VYRE_OP_ADD, a, b, k}, {VYRE_OP_SUM, b, s, 0}, {VYRE_OP_XOR, a, a, 0xff}};
		uint32_t want_a[WORDS], sum = 0;
		struct vyre_cqe cqe[3] = {{0}};
		int got = 0;

		for (uint32_t i = 0; i < WORDS; i++) {
			pa[i] = i * 2654435761u + (uint32_t)r;
			sum += pa[i] + k;
			want_a[i] = pa[i] ^ 0xff;
		}
		for (int i = 0; i < 3 && !err; i++)
			err = vyre_submit(c, &items[i], (uint64_t)i, i == 2 ? VYRE_SQE_FENCE : 0);
		while (!err && got < 3) {
			int n = vyre_wait(c, cqe + got, 3 - (uint32_t)got, 5000000000ll);
			err = n < 0 ? n : 0;
			got += n > 0 ? n : 0;
		}
		for (int i = 0; i < got && !err; i++) {
			if (cqe[i].status != 0)
				err = cqe[i].status;
			if (cqe[i].user_data == 1 && cqe[i].result != sum)
				err = VYRE_E_PROTO;
		}
		for (uint32_t i = 0; i < WORDS && !err; i++)
			if (pa[i] != want_a[i] || pb[i] != (want_a[i] ^ 0xff) + k)
				err = VYRE_E_PROTO;
		if (!err && *ps != sum)
			err = VYRE_E_PROTO;
	}
	if (err)
		printf("FAIL: session: %s\n", vyre_strerror(err));
	vyre_close(c);
	return err ? -1 : 0;
}

static void kill_vyred(void)
{
	const char *const extra[] = {"--backend", "cuda", "--mode", "persistent",
				     "--gpus",	  "0",	  NULL};
	struct vyre_test_daemon d;
	double t0;

	printf("== SIGKILL of vyred while its persistent kernel is resident\n");
	if (vyre_test_daemon_start(&d, extra) != 0) {
		failures++;
		return;
	}
	if (session(d.socket, 20) != 0) {
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	t0 = now_ms();
	vyre_test_daemon_kill(&d);
	vyre_test_daemon_cleanup(&d);
	if (vyre_test_daemon_start(&d, extra) != 0) {
		printf("FAIL: no new vyred after the SIGKILL\n");
		failures++;
		return;
	}
	const double ready = now_ms() - t0;
	const int first = session(d.socket, 1);
	const double first_ms = now_ms() - t0;
	if (first != 0 || session(d.socket, 50) != 0) {
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	printf("after SIGKILL: new vyred ready after %.1f ms, first session done after %.1f ms\n",
	       ready, first_ms);
	if (vyre_test_daemon_stop(&d) != 0) {
		printf("FAIL: vyred did not stop cleanly\n");
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	vyre_test_daemon_cleanup(&d);
}

/* One ADD over a 64-byte buffer; its CQE status, or a negative error of the wait. */
static int one_item(const char *sock, struct vyre_client **out)
{
	const struct vyre_connect_opts o = {.socket_path = sock};
	struct vyre_client *c;
	struct vyre_cqe cqe;
	uint32_t buf;
	int err = vyre_connect(&o, &c);

	if (err)
		return err;
	err = vyre_buffer_alloc(c, 64, 0, &buf);
	if (!err) {
		const struct vyre_work_item it = {VYRE_OP_ADD, buf, buf, 1};
		err = vyre_submit(c, &it, 7, 0);
	}
	if (!err) {
		const int n = vyre_wait(c, &cqe, 1, 10000000000ll);
		err = n == 1 ? cqe.status : n < 0 ? n : VYRE_E_TIMEDOUT;
	}
	*out = c;
	return err;
}

/* The exit status of @d within @ms, or -1 (then it is killed). */
static int exit_within(struct vyre_test_daemon *d, double ms)
{
	const double t0 = now_ms();
	int st;

	while (now_ms() - t0 < ms) {
		const pid_t r = waitpid(d->pid, &st, WNOHANG);

		if (r == d->pid) {
			d->pid = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(10000);
	}
	return -1;
}

/* After vyred died (@what): a new one on the same GPU serves a session and stops cleanly. */
static void new_vyred_serves(const char *const *extra, const char *what)
{
	struct vyre_test_daemon d;

	if (vyre_test_daemon_start(&d, extra) != 0 || session(d.socket, 5) != 0) {
		printf("FAIL: a new vyred after %s\n", what);
		vyre_test_daemon_dump_log(&d);
		failures++;
	} else if (vyre_test_daemon_stop(&d) != 0) {
		printf("FAIL: the new vyred did not stop cleanly\n");
		failures++;
	}
	vyre_test_daemon_cleanup(&d);
}

/* vyred with @extra whose device faults on its first batch; a failure is counted. */
static int start_faulting(struct vyre_test_daemon *d, const char *const *extra)
{
	setenv("VYRE_CUDA_INJECT", "fault", 1);
	const int started = vyre_test_daemon_start(d, extra);

	unsetenv("VYRE_CUDA_INJECT");
	if (started != 0)
		failures++;
	return started;
}

static void device_fault(void)
{
	const char *const extra[] = {"--backend", "cuda", "--mode", "persistent",
				     "--gpus",	  "0",	  NULL};
	struct vyre_test_daemon d;
	struct vyre_client *c = NULL;

	printf("== a device fault inside vyred\n");
	if (start_faulting(&d, extra) != 0)
		return;
	const double t0 = now_ms();
	const int status = one_item(d.socket, &c);
	const int rc = exit_within(&d, 10000);
	const double gone_ms = now_ms() - t0;
	int ok = status == VYRE_E_DEVICE && rc == 1 && vyre_test_log_has(d.log, "device fault") &&
		 vyre_test_log_has(d.log, "exit status 1");

	if (c) {
		struct vyre_cqe cqe;
		/* the client learns that vyred is gone */
		const int w = vyre_wait(c, &cqe, 1, 5000000000ll);
		if (w != VYRE_E_DISCONNECTED) {
			printf("FAIL: after vyred exited, vyre_wait returned %d\n", w);
			ok = 0;
		}
		vyre_close(c);
	}
	printf("device fault: item status %d (%s), vyred exit %d after %.0f ms\n", status,
	       vyre_strerror(status), rc, gone_ms);
	if (!ok) {
		printf("FAIL: want status VYRE_E_DEVICE, exit 1 and the cause in the log\n");
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	vyre_test_daemon_cleanup(&d);
	new_vyred_serves(extra, "the device fault");
}

/* A resumable client of domain @name with a named buffer of 16 words 0x77000000 + i. */
static int kept_client(const char *sock, const char *name, struct vyre_client **c, uint32_t *h)
{
	const struct vyre_connect_opts o = {
	    .socket_path = sock, .domain = name, .flags = VYRE_CONNECT_RESUMABLE};
	int err = vyre_connect(&o, c);

	if (!err)
		err = vyre_buffer_create(*c, "kept", 64, 0, h);
	uint32_t *w = err ? NULL : vyre_buffer_ptr(*c, *h, NULL);

	for (uint32_t i = 0; w && i < 16; i++)
		w[i] = 0x77000000u + i;
	return err;
}

/* ADD @k to the named buffer, waited for: the CQE status, or a negative error. */
static int add_kept(struct vyre_client *c, uint32_t h, uint32_t k)
{
	const struct vyre_work_item it = {VYRE_OP_ADD, h, h, k};
	struct vyre_cqe cqe;
	int err = vyre_submit(c, &it, k, 0);

	if (!err) {
		const int n = vyre_wait(c, &cqe, 1, 10000000000ll);
		err = n == 1 ? cqe.status : n < 0 ? n : VYRE_E_TIMEDOUT;
	}
	return err;
}

/* The named buffer resolves to @h at the same address, its words 0x77000000 + i + @added. */
static int kept_intact(struct vyre_client *c, uint32_t h, uint32_t added)
{
	uint32_t again = 0;
	const uint32_t *w = vyre_buffer_ptr(c, h, NULL);

	if (vyre_buffer_open(c, "kept", &again, NULL, NULL) != 0 || again != h || !w)
		return 0;
	for (uint32_t i = 0; i < 16; i++)
		if (w[i] != 0x77000000u + i + added)
			return 0;
	return 1;
}

static void fault_then_resume(void)
{
	const char *const extra[] = {"--backend", "cuda", "--mode", "persistent",
				     "--gpus",	  "0",	  NULL};
	struct vyre_test_daemon d, next;
	struct vyre_client *faulty = NULL, *bystander = NULL;
	uint32_t hf = 0, hb = 0;
	int ok = 1;

	printf("== fault containment: resumable clients resume after a device fault\n");
	if (start_faulting(&d, extra) != 0)
		return;
	if (kept_client(d.socket, "faulty", &faulty, &hf) != 0 ||
	    kept_client(d.socket, "bystander", &bystander, &hb) != 0) {
		printf("FAIL: resumable clients could not set up\n");
		ok = 0;
	}
	const int st = ok ? add_kept(faulty, hf, 1) : 0;
	const int rc = exit_within(&d, 10000);
	const char *const again[] = {"--backend", "cuda",     "--mode", "persistent", "--gpus",
				     "0",	  "--socket", d.socket, NULL};
	const double t0 = now_ms();

	if (ok && (st != VYRE_E_DEVICE || rc != 1)) {
		printf("FAIL: the faulting item: %s, vyred exit %d; want VYRE_E_DEVICE and 1\n",
		       vyre_strerror(st), rc);
		ok = 0;
	}
	if (ok && vyre_test_daemon_start(&next, again) != 0) {
		printf("FAIL: no new vyred on the same socket\n");
		failures++;
		ok = 0;
	} else if (ok) {
		const int rf = vyre_reconnect(faulty, 10000000000ll);
		const int rb = vyre_reconnect(bystander, 10000000000ll);
		const double resumed_ms = now_ms() - t0;

		/* the faulting ADD may have run before the fault: its words are + 0 or + 1 */
		const uint32_t fa = kept_intact(faulty, hf, 0) ? 0 : 1;
		if (rf < 0 || rb < 0 || !kept_intact(bystander, hb, 0) ||
		    !kept_intact(faulty, hf, fa) || add_kept(bystander, hb, 2) != 0 ||
		    add_kept(faulty, hf, 3) != 0 || !kept_intact(bystander, hb, 2) ||
		    !kept_intact(faulty, hf, fa + 3)) {
			printf("FAIL: after the fault: reconnect %d / %d, buffers or items wrong\n",
			       rf, rb);
			vyre_test_daemon_dump_log(&next);
			ok = 0;
		} else {
			printf("fault containment: both domains resumed with their buffers %.0f ms "
			       "after the new vyred was started\n",
			       resumed_ms);
		}
		if (vyre_test_daemon_stop(&next) != 0)
			ok = 0;
		vyre_test_daemon_cleanup(&next);
	}
	if (!ok) {
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	vyre_close(faulty);
	vyre_close(bystander);
	vyre_test_daemon_cleanup(&d);
}

static void watchdog(void)
{
	const char *const extra[] = {"--backend", "cuda", "--mode", "persistent",
				     "--gpus",	  "0",	  NULL};
	struct vyre_test_daemon d;
	struct vyre_client *c = NULL;

	printf("== a stalled barrier inside vyred: the watchdog, then recovery\n");
	setenv("VYRE_CUDA_INJECT", "stall", 1);
	setenv("VYRE_CUDA_WATCHDOG_MS", "300", 1);
	const int started = vyre_test_daemon_start(&d, extra);
	unsetenv("VYRE_CUDA_INJECT");
	unsetenv("VYRE_CUDA_WATCHDOG_MS");
	if (started != 0) {
		failures++;
		return;
	}
	const int status = one_item(d.socket, &c);
	if (c)
		vyre_close(c);
	printf("watchdog: item status %d (%s)\n", status, vyre_strerror(status));
	if (status != VYRE_E_DEVICE || session(d.socket, 5) != 0 ||
	    vyre_test_daemon_stop(&d) != 0) {
		printf("FAIL: want VYRE_E_DEVICE, then sessions on the same vyred\n");
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	vyre_test_daemon_cleanup(&d);
}

/*
 * Producers that keep several slots busy: each has a private domain and
 * submits ADDs over a 64 KiB buffer, @per_round at a time, until vyred goes
 * away or @seconds pass. They start together (a pipe is the starting gun), so
 * the first batches of all of them are in flight at once. A child exits 0
 * when every CQE it got was a success or VYRE_E_DEVICE and it learned of the
 * end of vyred (VYRE_E_DISCONNECTED) or ran out of time; 1 otherwise.
 */
#define LOAD_PRODUCERS 4u
#define LOAD_BYTES     65536u

static int producer(const char *sock, int gun, double seconds)
{
	const struct vyre_connect_opts o = {.socket_path = sock};
	struct vyre_client *c;
	struct vyre_cqe cqe[4];
	uint32_t buf[4];
	char go;

	if (vyre_connect(&o, &c) != 0)
		return 1;
	for (uint32_t i = 0; i < 4; i++)
		if (vyre_buffer_alloc(c, LOAD_BYTES, 0, &buf[i]) != 0)
			return 1;
	if (read(gun, &go, 1) != 1)
		return 1;
	const double t0 = now_ms();

	while (now_ms() - t0 < seconds * 1000.0) {
		for (uint32_t i = 0; i < 4; i++) {
			const struct vyre_work_item it = {VYRE_OP_ADD, buf[i], buf[i], i + 1};

			if (vyre_submit(c, &it, i, 0) != 0)
				return 0; /* vyred gone: the region says so */
		}
		for (uint32_t got = 0; got < 4;) {
			const int n = vyre_wait(c, cqe, 4 - got, 10000000000ll);

			if (n == VYRE_E_DISCONNECTED)
				return 0;
			if (n <= 0)
				return 1;
			for (int k = 0; k < n; k++)
				if (cqe[k].status != 0 && cqe[k].status != VYRE_E_DEVICE)
					return 1;
			got += (uint32_t)n;
		}
	}
	vyre_close(c);
	return 0;
}

/* Forks the producers; *gun is the write end that starts them (close it). */
static int start_producers(const char *sock, double seconds, pid_t *kids, int *gun)
{
	int p[2];

	if (pipe(p) != 0)
		return -1;
	for (uint32_t i = 0; i < LOAD_PRODUCERS; i++) {
		fflush(NULL);
		kids[i] = fork();
		if (kids[i] == 0) {
			close(p[1]);
			alarm(60);
			_exit(producer(sock, p[0], seconds));
		}
	}
	close(p[0]);
	*gun = p[1];
	return 0;
}

static int producers_ok(const pid_t *kids)
{
	int ok = 1;

	for (uint32_t i = 0; i < LOAD_PRODUCERS; i++) {
		int st;

		if (kids[i] <= 0 || waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			ok = 0;
	}
	return ok;
}

/* Start them all at once: one byte each, then the write end closes. */
static void fire(int gun)
{
	for (uint32_t i = 0; i < LOAD_PRODUCERS; i++)
		if (write(gun, "g", 1) != 1)
			break;
	close(gun);
}

/*
 * SIGKILL while producers keep slots busy, and a device fault with several
 * batches in flight: nothing hangs, every producer learns the end, the
 * fault's items fail with VYRE_E_DEVICE, and a new vyred serves. With one
 * event loop the producers share its slots; with two, each loop has its own
 * backend on the one device, and a fault found by one stops both.
 */
static void several_in_flight(int fault, const char *loops)
{
	const char *const extra[] = {"--backend",  "cuda", "--mode",  "persistent", "--gpus", "0",
				     "--inflight", "4",	   "--loops", loops,	    NULL};
	struct vyre_test_daemon d;
	pid_t kids[LOAD_PRODUCERS];
	int gun, ok = 1;

	printf("== %s with %u producers keeping slots busy, %s event loop(s)\n",
	       fault ? "a device fault" : "SIGKILL of vyred", LOAD_PRODUCERS, loops);
	if (fault)
		setenv("VYRE_CUDA_INJECT", "fault", 1);
	const int started = vyre_test_daemon_start(&d, extra);
	unsetenv("VYRE_CUDA_INJECT");
	if (started != 0 || start_producers(d.socket, 5.0, kids, &gun) != 0) {
		failures++;
		return;
	}
	usleep(200000); /* connected and allocated */
	fire(gun);
	if (fault) {
		const int rc = exit_within(&d, 10000);

		ok = rc == 1 && vyre_test_log_has(d.log, "exit status 1");
		/* one loop: the four producers' batches overlapped in its slots */
		if (!strcmp(loops, "1"))
			ok = ok && !vyre_test_log_has(d.log, "at most 1 batches in flight");
		printf("device fault with slots busy: vyred exit %d\n", rc);
	} else {
		usleep(300000);
		vyre_test_daemon_kill(&d);
	}
	if (!producers_ok(kids)) {
		printf("FAIL: a producer saw an unexpected status or hung\n");
		ok = 0;
	}
	if (!ok) {
		printf("FAIL: want every producer to end cleanly%s\n",
		       fault ? ", vyred exit 1 with several batches in flight" : "");
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	vyre_test_daemon_cleanup(&d);
	new_vyred_serves(extra, "the SIGKILL or fault");
}

/* Clients on GPU 0 and GPU 1 (private domains take the GPUs in turn), one item each run. */
static int both_gpus_busy(const char *sock, struct vyre_client *c[2], int want1)
{
	const int s0 = one_item(sock, &c[0]);
	const int s1 = one_item(sock, &c[1]);

	if (s0 != 0 || s1 != want1) {
		printf("FAIL: items on GPU 0 and 1: %s and %s, want ok and %s\n", vyre_strerror(s0),
		       vyre_strerror(s1), want1 ? vyre_strerror(want1) : "ok");
		return -1;
	}
	return 0;
}

static void two_gpus(const char *gpus, int devices)
{
	const char *const extra[] = {"--backend", "cuda",    "--mode", "persistent", "--gpus",
				     gpus,	  "--loops", "1",      NULL};
	struct vyre_test_daemon d;
	struct vyre_client *c[2] = {NULL, NULL};

	printf("== two GPUs (--gpus %s): SIGKILL with both grids resident\n", gpus);
	if (vyre_test_daemon_start(&d, extra) != 0) {
		failures++;
		return;
	}
	if (both_gpus_busy(d.socket, c, 0) != 0 || !vyre_test_log_has(d.log, "2 GPUs")) {
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	vyre_test_daemon_kill(&d);
	for (int i = 0; i < 2; i++)
		if (c[i])
			vyre_close(c[i]);
	vyre_test_daemon_cleanup(&d);
	new_vyred_serves(extra, "a SIGKILL with two GPUs");

	printf("== two GPUs (--gpus %s): a device fault on GPU 1\n", gpus);
	setenv("VYRE_CUDA_INJECT", "fault", 1);
	if (devices >= 2)
		setenv("VYRE_INJECT_DEVICE", "1", 1);
	const int started = vyre_test_daemon_start(&d, extra);
	unsetenv("VYRE_CUDA_INJECT");
	unsetenv("VYRE_INJECT_DEVICE");
	if (started != 0) {
		failures++;
		return;
	}
	int ok = 1;

	if (devices >= 2) {
		/* GPU 0 serves on: 20 sessions after the fault, then a clean stop */
		ok = both_gpus_busy(d.socket, c, VYRE_E_DEVICE) == 0;
		for (int r = 0; r < 20 && ok; r++)
			ok = session(d.socket, 5) == 0;
		ok = ok && vyre_test_log_has(d.log, "1 of 2 GPUs still serve");
		for (int i = 0; i < 2; i++)
			vyre_close(c[i]);
		ok = ok && vyre_test_daemon_stop(&d) == 0;
		printf("fault on GPU 1 of 2 devices: GPU 0 %s\n", ok ? "served on" : "FAILED");
	} else {
		/* one device: the fault is on both of its GPUs, nothing is left */
		const int s0 = one_item(d.socket, &c[0]);
		const int rc = exit_within(&d, 10000);

		ok = s0 == VYRE_E_DEVICE && rc == 1 &&
		     vyre_test_log_has(d.log, "0 of 2 GPUs still serve") &&
		     vyre_test_log_has(d.log, "no usable GPU is left");
		if (c[0])
			vyre_close(c[0]);
		printf("fault on one device serving as 2 GPUs: item %s, vyred exit %d; a fault on "
		       "GPU 1 while GPU 0 serves on needs two devices: not made here\n",
		       vyre_strerror(s0), rc);
	}
	if (!ok) {
		printf("FAIL: device fault with two GPUs\n");
		vyre_test_daemon_dump_log(&d);
		failures++;
	}
	vyre_test_daemon_cleanup(&d);
	new_vyred_serves(extra, "a device fault with two GPUs");
}

int main(void)
{

	setvbuf(stdout, NULL, _IOLBF, 0);
	const int skip = gen_require_gpu();

	if (skip)
		return skip;
	kill_vyred();
	device_fault();
	fault_then_resume();
	watchdog();
	several_in_flight(0, "1");
	several_in_flight(1, "1");
	several_in_flight(0, "2");
	several_in_flight(1, "2");
	char why[256];
	const int devices = vyre_cuda_backend->devices(NULL, 0, why, sizeof(why));
	const char *gpus = devices >= 2 ? "0,1" : "0,0";

	two_gpus(gpus, devices);
	setenv("VYRE_TEST_GPUS", gpus, 1);
	run_test("test_integration", "persistent");
	run_test("test_integration", "launch");
	run_test("test_device_buffers", "persistent");
	run_test("test_device_buffers", "launch");
	run_test("test_chains", "persistent");
	run_test("test_chains", "launch");
	run_test("test_ranges", "persistent");
	run_test("test_ranges", "launch");
	printf("cuda e2e: %u failure(s)\n", failures);
	return failures ? 1 : 0;
}
