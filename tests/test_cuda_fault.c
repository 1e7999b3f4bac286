/* SPDX-License-Identifier: MIT */
/*
 * Faults of the CUDA backend. Every scenario runs in a fresh child process
 * (a CUDA context does not survive fork, and a sticky CUDA error lasts as
 * long as its process):
 *   - a process holding the resident persistent kernel is killed with
 *     SIGKILL; a new backend in another process then starts and passes;
 *   - an illegal address (test hook), in both modes: every in-flight item
 *     completes with VYRE_E_DEVICE, reap reports the slot promptly with
 *     VYRE_E_DEVICE, the backend says
 *     it is unusable and fails later submits at once (CUDA keeps the error
 *     for the life of the process); a new process then passes;
 *   - a block that never reaches a device-wide barrier (test hook), in both
 *     modes: the watchdog aborts the launch, reap reports the slot with
 *     VYRE_E_TIMEDOUT, its items complete with VYRE_E_DEVICE, and the same
 *     backend then passes;
 *   - the host heartbeat stops: the persistent kernel leaves by itself and
 *     the next batch restarts it.
 * Nothing may hang: every reap has a timeout and a timeout fails the test.
 * Exits 77 without a GPU.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_backend.h"
#include "test_cuda_gen.h"

#define HEAP_BYTES   (1u << 20)
#define POLL_TIMEOUT 20000000000ll

static uint32_t failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

struct rig {
	struct vyre_backend *b;
	uint8_t *heap, *want;
	struct gen_batch *g;
	struct vyre_exec_result *expect;
	struct gen_rng rng;
	const char *mode;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int rig_open(struct rig *r, enum vyre_cuda_mode mode, uint64_t seed)
{
	struct vyre_backend_config cfg = {
	    .max_heaps = 2, .max_items = GEN_MAX_ITEMS, .cuda_mode = mode, .device = 0};
	char why[512];
	int err;

	memset(r, 0, sizeof(*r));
	r->mode = mode == VYRE_CUDA_PERSISTENT ? "persistent" : "launch";
	r->rng.s = seed;
	r->heap = gen_heap_map(HEAP_BYTES);
	r->want = malloc(HEAP_BYTES);
	r->g = malloc(sizeof(*r->g));
	r->expect = malloc(GEN_MAX_ITEMS * sizeof(*r->expect));
	if (!r->heap || !r->want || !r->g || !r->expect) {
		printf("FAIL: out of memory\n");
		return -1;
	}
	err = vyre_cuda_backend->init(&r->b, &cfg, why, sizeof(why));
	if (err) {
		printf("FAIL %s: init: %s\n", r->mode, why);
		return -1;
	}
	err = vyre_cuda_backend->register_heap(r->b, 0, r->heap, HEAP_BYTES);
	if (err) {
		printf("FAIL %s: register_heap: %s\n", r->mode, vyre_cuda_last_error(r->b));
		return -1;
	}
	return 0;
}

static void rig_close(struct rig *r)
{
	if (r->b)
		vyre_cuda_backend->shutdown(r->b);
	free(r->expect);
	free(r->g);
	free(r->want);
	gen_heap_unmap(r->heap, HEAP_BYTES);
}

/* @n random batches that must match the oracle; returns the failures. */
static uint32_t run_ok(struct rig *r, uint32_t n, const char *after)
{
	char msg[512];
	uint32_t bad = 0;

	for (uint32_t i = 0; i < n; i++) {
		gen_batch(&r->rng, r->heap, HEAP_BYTES, i % 2 ? GEN_PLAN_GROUPED : GEN_PLAN_SERIAL,
			  i % 8 ? 64 : GEN_MAX_ITEMS, r->g);
		memcpy(r->want, r->heap, HEAP_BYTES);
		gen_oracle(r->want, HEAP_BYTES, r->g, r->expect);
		int done = gen_run_one(r->b, &r->g->batch, POLL_TIMEOUT);
		if (done != 1) {
			printf("FAIL %s after %s: batch %u: submit/reap %d: %s\n", r->mode, after,
			       i, done, vyre_cuda_last_error(r->b));
			bad++;
			if (done == 0)
				break;
			continue;
		}
		if (gen_compare(r->g, r->expect, r->heap, r->want, HEAP_BYTES, msg, sizeof(msg))) {
			printf("FAIL %s after %s: batch %u: %s\n", r->mode, after, i, msg);
			bad++;
		}
	}
	failures += bad;
	return bad;
}

/* Inject @what into a device batch: it must fail as a whole with VYRE_E_DEVICE, promptly. */
static void injected_fault(struct rig *r, uint32_t what, const char *name)
{
	const int want = what == VYRE_CUDA_INJECT_STALL ? VYRE_E_TIMEDOUT : VYRE_E_DEVICE;
	struct vyre_cuda_stats before, after;
	struct vyre_slot_done sd = {0, 1};
	double t0;
	int err, n = 0;

	vyre_cuda_get_stats(r->b, &before);
	gen_device_batch(r->g, 0);
	CHECK(vyre_cuda_inject(r->b, what) == 0, "%s", name);
	t0 = now_ms();
	err = vyre_cuda_backend->submit(r->b, 0, &r->g->batch);
	if (err == 0) {
		CHECK(vyre_cuda_backend->submit(r->b, 0, &r->g->batch) == VYRE_E_INVAL,
		      "%s: a second submit to a busy slot", r->mode);
		n = vyre_cuda_backend->reap(r->b, &sd, 1, POLL_TIMEOUT);
	}
	printf("%s %s: submit %d, reap %d (slot %u status %d) after %.1f ms: %s\n", r->mode, name,
	       err, n, sd.slot, sd.status, now_ms() - t0, vyre_cuda_last_error(r->b));
	CHECK(err == 0 && n == 1 && sd.slot == 0 && sd.status == want, "%s %s: status %d", r->mode,
	      name, sd.status);
	for (uint32_t i = 0; i < r->g->batch.n_items; i++)
		CHECK(r->g->results[i].status == VYRE_E_DEVICE && r->g->results[i].result == 0,
		      "%s %s: item %u status %d", r->mode, name, i, r->g->results[i].status);
	vyre_cuda_get_stats(r->b, &after);
	CHECK(after.faults == before.faults + 1, "%s %s: faults", r->mode, name);
	if (what == VYRE_CUDA_INJECT_STALL) {
		CHECK(after.watchdog_trips == before.watchdog_trips + 1, "%s %s: watchdog", r->mode,
		      name);
		CHECK(vyre_cuda_usable(r->b), "%s %s: unusable after a watchdog trip: %s", r->mode,
		      name, vyre_cuda_last_error(r->b));
		run_ok(r, 40, name);
		return;
	}
	/* a sticky CUDA error: unusable from now on, and saying so at once */
	CHECK(!vyre_cuda_usable(r->b), "%s %s: still claims to be usable", r->mode, name);
	gen_device_batch(r->g, 0);
	t0 = now_ms();
	err = vyre_cuda_backend->submit(r->b, 0, &r->g->batch);
	CHECK(err == VYRE_E_DEVICE, "%s %s: a later submit returned %d", r->mode, name, err);
	for (uint32_t i = 0; i < r->g->batch.n_items; i++)
		CHECK(r->g->results[i].status == VYRE_E_DEVICE, "%s %s: later item %u status %d",
		      r->mode, name, i, r->g->results[i].status);
	printf("%s %s: a later submit failed with %d after %.3f ms\n", r->mode, name, err,
	       now_ms() - t0);
}

static void heartbeat_exit(struct rig *r)
{
	struct vyre_cuda_stats before, after;
	const struct timespec idle = {1, 0};

	vyre_cuda_get_stats(r->b, &before);
	CHECK(vyre_cuda_pause_heartbeat(r->b, 1) == 0, "pause");
	nanosleep(&idle, NULL);
	CHECK(vyre_cuda_pause_heartbeat(r->b, 0) == 0, "resume");
	run_ok(r, 40, "a stopped heartbeat");
	vyre_cuda_get_stats(r->b, &after);
	printf("%s heartbeat: %llu exit(s), %llu kernel start(s) since\n", r->mode,
	       (unsigned long long)(after.heartbeat_exits - before.heartbeat_exits),
	       (unsigned long long)(after.kernel_starts - before.kernel_starts));
	CHECK(after.heartbeat_exits > before.heartbeat_exits, "the kernel did not leave");
	CHECK(after.kernel_starts > before.kernel_starts, "the kernel was not restarted");
}

/* Holds the resident kernel until killed; writes one byte to @fd when it is ready. */
static void hold_kernel(int fd)
{
	struct rig r;

	if (rig_open(&r, VYRE_CUDA_PERSISTENT, 7) != 0 || run_ok(&r, 20, "start") != 0)
		_exit(1);
	if (write(fd, "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

/* A new process after another one: the GPU must work, first batch timed. */
static void fresh_process(int mode)
{
	struct rig r;
	const double t0 = now_ms();

	if (rig_open(&r, (enum vyre_cuda_mode)mode, 8) == 0) {
		if (run_ok(&r, 1, "a previous process") == 0)
			printf("new %s backend: first batch done %.1f ms after it started\n",
			       r.mode, now_ms() - t0);
		run_ok(&r, 40, "a previous process");
	} else {
		failures++;
	}
	rig_close(&r);
}

static void kill_resident(void)
{
	int fds[2], status = 0;
	char c = 0;
	pid_t pid;

	if (pipe(fds) != 0) {
		printf("FAIL: pipe\n");
		failures++;
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		hold_kernel(fds[1]);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		printf("FAIL: the child holding the kernel did not get ready (status %d)\n",
		       status);
		failures++;
		close(fds[0]);
		return;
	}
	close(fds[0]);
	const double t0 = now_ms();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child status %d", status);
	failures += gen_in_child(fresh_process, VYRE_CUDA_PERSISTENT, &failures);
	printf("after SIGKILL of the kernel's owner: the next process passed, %.1f ms after the "
	       "kill\n",
	       now_ms() - t0);
}

static void sticky_fault(int mode)
{
	struct rig r;

	if (rig_open(&r, (enum vyre_cuda_mode)mode, 100 + (uint64_t)mode) == 0) {
		printf("%s: %s\n", r.mode, vyre_cuda_describe(r.b));
		run_ok(&r, 40, "start");
		injected_fault(&r, VYRE_CUDA_INJECT_FAULT, "illegal address");
	} else {
		failures++;
	}
	rig_close(&r); /* must not hang on the dead context */
}

static void watchdog_and_heartbeat(int mode)
{
	struct rig r;

	if (rig_open(&r, (enum vyre_cuda_mode)mode, 200 + (uint64_t)mode) == 0) {
		run_ok(&r, 40, "start");
		injected_fault(&r, VYRE_CUDA_INJECT_STALL, "barrier stall");
		if (mode == VYRE_CUDA_PERSISTENT)
			heartbeat_exit(&r);
	} else {
		failures++;
	}
	rig_close(&r);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* short limits so the faults show quickly; children inherit them */
	setenv("VYRE_CUDA_WATCHDOG_MS", "300", 1);
	setenv("VYRE_CUDA_HEARTBEAT_MS", "250", 1);
	const int skip = gen_require_gpu_in_child();

	if (skip)
		return skip;
	kill_resident();
	for (int mode = VYRE_CUDA_PERSISTENT; mode <= VYRE_CUDA_LAUNCH; mode++) {
		failures += gen_in_child(sticky_fault, mode, &failures);
		failures += gen_in_child(fresh_process, mode, &failures);
		failures += gen_in_child(watchdog_and_heartbeat, mode, &failures);
	}
	printf("cuda fault: %u failure(s)\n", failures);
	return failures ? 1 : 0;
}
