/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_cuda_e2e.c - the "cuda" suite's end-to-end rows: a producer's
 * submit -> CQE through a vyred --backend cuda it starts, each item back to
 * back and after a random pause, with vyred's loop and the producer pinned
 * to different cores or not.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vyre/vyre.h"
#include "bench.h"
#include "bench_cuda_e2e.h"
#include "harness_client.h"
#include "harness_clock.h"
#include "harness_stats.h"
#include "harness_vyred.h"

#define SUITE "cuda"

static int vyred_ready(const char *log, pid_t pid)
{
	char line[512];
	int ready = 0;

	for (int tries = 0; tries < 6000 && !ready; tries++) {
		FILE *fp = fopen(log, "r");
		const struct timespec pause = {0, 10000000};

		while (fp && !ready && fgets(line, sizeof(line), fp))
			ready = strstr(line, "vyred: ready") != NULL;
		if (fp)
			fclose(fp);
		if (ready || waitpid(pid, NULL, WNOHANG) == pid)
			break;
		nanosleep(&pause, NULL);
	}
	return ready;
}

static int e2e_session(struct vyre_bench_ctx *ctx, const char *sock, const char *mname, int pinned)
{
	const struct vyre_connect_opts o = {.socket_path = sock};
	const uint32_t n = ctx->quick ? 2000 : 20000;
	struct vyre_client *c;
	struct vyre_bench_samples s[2];
	struct vyre_cqe cqe = {0};
	uint32_t in, out;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int err = vyre_bench_client_open(&o, 64, &c, &in, &out);

	if (err)
		return err;
	err = vyre_bench_samples_init(&s[0], n);
	if (!err && (err = vyre_bench_samples_init(&s[1], n)) != 0)
		vyre_bench_samples_free(&s[0]);
	if (err) {
		vyre_close(c);
		return err;
	}
	const struct vyre_work_item it = {VYRE_OP_ADD, in, out, 1};
	/*
	 * Blocks of 500 back-to-back items alternate with blocks where each item
	 * waits a random 0-4 us first: back to back, the loop's period can lock
	 * onto the device's poll reads, for better or worse; random gaps give the
	 * latency of items that arrive at any moment.
	 */
	for (uint32_t i = 0; i < 2 * n + 200 && !err; i++) {
		const uint32_t k = i < 200 ? 0 : (i - 200) / 500 % 2;

		if (k) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			const uint64_t until = vyre_bench_now_ns() + rng % 4000;
			while (vyre_bench_now_ns() < until)
				;
		}
		const uint64_t t0 = vyre_bench_ticks();
		while ((err = vyre_submit(c, &it, i, VYRE_SQE_NODEDUPE)) == VYRE_E_AGAIN)
			;
		if (!err)
			err = vyre_wait(c, &cqe, 1, 1000000000ll);
		err = err == 1 ? cqe.status : (err ? err : VYRE_E_TIMEDOUT);
		if (i >= 200)
			vyre_bench_sample(&s[k], vyre_bench_ticks() - t0);
	}
	for (uint32_t k = 0; k < 2; k++) {
		char name[64];

		snprintf(name, sizeof(name), "e2e vyred %s%s%s", mname, pinned ? " pinned" : "",
			 k ? " random gaps" : "");
		if (!err)
			vyre_bench_report_latency(ctx, SUITE, name, &s[k]);
		vyre_bench_samples_free(&s[k]);
	}
	vyre_close(c);
	return err;
}

/* 1 when @cpu and @other share a core (SMT siblings), per sysfs. */
static int siblings(int cpu, int other)
{
	char path[96], list[256];
	FILE *f;
	int lo, hi, n, sib = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
		 cpu);
	f = fopen(path, "r");
	if (!f || !fgets(list, sizeof(list), f)) {
		if (f)
			fclose(f);
		return 0;
	}
	fclose(f);
	for (char *p = list; !sib && *p;) {
		if (sscanf(p, "%d%n", &lo, &n) != 1)
			break;
		p += n;
		hi = lo;
		if (*p == '-' && sscanf(p + 1, "%d%n", &hi, &n) == 1)
			p += 1 + n;
		sib = other >= lo && other <= hi;
		if (*p == ',')
			p++;
	}
	return sib;
}

/*
 * Two CPUs this process may use, on different cores, avoiding CPU 0 (where
 * interrupts usually land): vyred's loop and the producer. 0 when found.
 */
static int pick_cpus(int *daemon, int *client)
{
	cpu_set_t set;

	*daemon = *client = -1;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (int c = 1; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (*daemon < 0)
			*daemon = c;
		else if (!siblings(*daemon, c)) {
			*client = c;
			return 0;
		}
	}
	return -1;
}

/*
 * vyred --backend cuda --mode @mname and one producer; with @pinned, vyred's
 * loop and the producer each on a CPU of their own (pick_cpus).
 */
int vyre_bench_cuda_e2e(struct vyre_bench_ctx *ctx, const char *mname, int pinned)
{
	char vyred[PATH_MAX], dir[] = "/tmp/vyre-bench-cuda-XXXXXX";
	char sock[64], log[64], loop_cpu[16];
	int dcpu = -1, ccpu = -1;
	cpu_set_t mine;
	pid_t pid;
	int err;

	if (pinned &&
	    (pick_cpus(&dcpu, &ccpu) != 0 || sched_getaffinity(0, sizeof(mine), &mine) != 0)) {
		fprintf(stderr, "cuda: pinned e2e rows skipped: no two CPUs on different cores\n");
		return 0;
	}
	snprintf(loop_cpu, sizeof(loop_cpu), "%d", dcpu);
	if (!vyre_bench_find_vyred(vyred, sizeof(vyred))) {
		fprintf(stderr, "cuda: e2e rows skipped: no vyred next to vyre-bench\n");
		return 0;
	}
	if (!mkdtemp(dir))
		return -errno;
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	pid = fork();
	if (pid == 0) {
		if (!freopen(log, "w", stderr))
			_exit(127);
		if (pinned)
			execl(vyred, "vyred", "--socket", sock, "--backend", "cuda", "--mode",
			      mname, "--cpu", loop_cpu, (char *)NULL);
		else
			execl(vyred, "vyred", "--socket", sock, "--backend", "cuda", "--mode",
			      mname, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || !vyred_ready(log, pid)) {
		fprintf(stderr, "cuda: vyred --backend cuda --mode %s did not start:\n", mname);
		vyre_bench_print_log(log, SUITE, NULL);
		err = -1;
	} else {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(ccpu, &one);
		if (pinned)
			sched_setaffinity(0, sizeof(one), &one);
		err = e2e_session(ctx, sock, mname, pinned);
		if (pinned)
			sched_setaffinity(0, sizeof(mine), &mine);
		if (err)
			fprintf(stderr, "cuda: e2e %s: %s\n", mname, vyre_strerror(err));
	}
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		if (!err)
			vyre_bench_print_log(
			    log, SUITE, NULL); /* its last line: where vyred spent each batch */
	}
	unlink(log);
	unlink(sock);
	rmdir(dir);
	return err;
}
