/* SPDX-License-Identifier: MIT */
#include "harness.h"

#include "vyre/vyre.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double ns_per_tick = 1.0;

int vyre_bench_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

static cpu_set_t original_cpus;
static int original_saved;

int vyre_bench_pin(int cpu)
{
	cpu_set_t set;

	if (!original_saved && sched_getaffinity(0, sizeof(original_cpus), &original_cpus) == 0)
		original_saved = 1;
	CPU_ZERO(&set);
	CPU_SET(cpu % vyre_bench_cpus(), &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void vyre_bench_unpin(void)
{
	if (original_saved)
		sched_setaffinity(0, sizeof(original_cpus), &original_cpus);
}

int vyre_bench_consumer_cpu(void)
{
	return vyre_bench_cpus() - 1;
}

int vyre_bench_producer_cpu(unsigned i)
{
	int others = vyre_bench_cpus() - 1;

	return others > 0 ? (int)(i % (unsigned)others) : 0;
}

void *vyre_bench_shared_alloc(size_t bytes)
{
	int fd = memfd_create("vyre-bench", MFD_CLOEXEC);
	void *p = MAP_FAILED;

	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)bytes) == 0)
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

void vyre_bench_shared_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
uint64_t vyre_bench_ticks(void)
{
	return __builtin_ia32_rdtsc();
}

void vyre_bench_clock_calibrate(void)
{
	uint64_t t0 = monotonic_ns(), c0 = vyre_bench_ticks(), t1, c1;

	do {
		t1 = monotonic_ns();
	} while (t1 - t0 < 20000000);
	c1 = vyre_bench_ticks();
	ns_per_tick = c1 > c0 ? (double)(t1 - t0) / (double)(c1 - c0) : 1.0;
}
#else
uint64_t vyre_bench_ticks(void)
{
	return monotonic_ns();
}

void vyre_bench_clock_calibrate(void)
{
	ns_per_tick = 1.0;
}
#endif

double vyre_bench_ticks_to_ns(uint64_t ticks)
{
	return (double)ticks * ns_per_tick;
}

pid_t vyre_bench_spawn(int cpu, int (*fn)(void *arg), void *arg)
{
	/* a child must never write out the parent's buffered output again */
	fflush(NULL);
	pid_t pid = fork();

	if (pid == 0) {
		if (cpu >= 0)
			vyre_bench_pin(cpu);
		_exit(fn(arg));
	}
	return pid;
}

int vyre_bench_reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int vyre_bench_samples_init(struct vyre_bench_samples *s, size_t cap)
{
	s->n = 0;
	s->cap = cap;
	s->ticks = calloc(cap ? cap : 1, sizeof(*s->ticks));
	return s->ticks ? 0 : -ENOMEM;
}

void vyre_bench_samples_free(struct vyre_bench_samples *s)
{
	free(s->ticks);
	memset(s, 0, sizeof(*s));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double vyre_bench_quantile_ns_from(struct vyre_bench_samples *s, size_t from, double q)
{
	if (from >= s->n)
		return 0;
	size_t n = s->n - from;

	qsort(s->ticks + from, n, sizeof(*s->ticks), cmp_u64);
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);

	return vyre_bench_ticks_to_ns(s->ticks[from + (i < n ? i : n - 1)]);
}

double vyre_bench_quantile_ns(struct vyre_bench_samples *s, double q)
{
	return vyre_bench_quantile_ns_from(s, 0, q);
}

double vyre_bench_report_latency(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
				 struct vyre_bench_samples *s)
{
	double p50 = vyre_bench_quantile_ns(s, 0.50);

	vyre_bench_report(ctx, suite, name, "p50", p50, "ns");
	vyre_bench_report(ctx, suite, name, "p99", vyre_bench_quantile_ns(s, 0.99), "ns");
	vyre_bench_report(ctx, suite, name, "p999", vyre_bench_quantile_ns(s, 0.999), "ns");
	return p50;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double vyre_bench_median(double *v, unsigned n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

double vyre_bench_paired_ratio(const double *a, const double *b, unsigned n)
{
	double r[VYRE_BENCH_MAX_ROUNDS] = {0};

	if (n > VYRE_BENCH_MAX_ROUNDS)
		n = VYRE_BENCH_MAX_ROUNDS;
	for (unsigned i = 0; i < n; i++)
		r[i] = b[i] > 0 ? a[i] / b[i] : 0;
	return vyre_bench_median(r, n);
}

int vyre_bench_await_daemon(const char *socket, pid_t *pid)
{
	struct vyre_connect_opts o = {.socket_path = socket};

	for (int i = 0; i < 1000; i++) {
		struct vyre_client *c;

		if (vyre_connect(&o, &c) == 0) {
			vyre_close(c);
			return 0;
		}
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			*pid = -1;
			return -1;
		}
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	return -1;
}

const char *vyre_bench_find_vyred(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	snprintf(buf, len, "%s/vyred", dirname(self));
	return access(buf, X_OK) == 0 ? buf : NULL;
}

void vyre_bench_print_log(const char *path, const char *suite, const char *const *show)
{
	char line[512];
	FILE *fp = fopen(path, "r");

	while (fp && fgets(line, sizeof(line), fp)) {
		int hit = !show;

		for (unsigned i = 0; show && show[i] && !hit; i++)
			hit = strstr(line, show[i]) != NULL;
		if (hit)
			fprintf(stderr, "%s:   %s", suite, line);
	}
	if (fp)
		fclose(fp);
}

void vyre_bench_vyred_stop(struct vyre_bench_vyred *d, const char *suite, const char *const *show)
{
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		vyre_bench_reap(d->pid);
		if (show)
			vyre_bench_print_log(d->log, suite, show);
	}
	d->pid = -1;
	unlink(d->log);
	unlink(d->sock);
	rmdir(d->dir);
}

pid_t vyre_bench_vyred_exec(struct vyre_bench_vyred *d, const char *bin, const char *const *args)
{
	const char *argv[32];
	unsigned n = 0;

	argv[n++] = bin;
	argv[n++] = "--socket";
	argv[n++] = d->sock;
	for (unsigned i = 0; args && args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	fflush(NULL);
	d->pid = fork();
	if (d->pid == 0) {
		const int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	return d->pid;
}

int vyre_bench_vyred_start(struct vyre_bench_vyred *d, const char *suite, const char *bin,
			   const char *const *args)
{
	snprintf(d->dir, sizeof(d->dir), "/tmp/vyre-bench-%s-XXXXXX", suite);
	d->pid = -1;
	if (!mkdtemp(d->dir)) {
		fprintf(stderr, "%s: mkdtemp: %s\n", suite, strerror(errno));
		return -1;
	}
	snprintf(d->sock, sizeof(d->sock), "%s/vyre.sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/vyred.log", d->dir);
	if (vyre_bench_vyred_exec(d, bin, args) > 0 &&
	    vyre_bench_await_daemon(d->sock, &d->pid) == 0)
		return 0;
	fprintf(stderr, "%s: vyred did not start:\n", suite);
	vyre_bench_print_log(d->log, suite, NULL);
	vyre_bench_vyred_stop(d, suite, NULL);
	return -1;
}

int vyre_bench_vyred_has_flag(const char *bin, const char *flag)
{
	char cmd[PATH_MAX + 32], line[256];
	int found = 0;

	snprintf(cmd, sizeof(cmd), "'%s' --help 2>&1", bin);
	fflush(NULL);
	FILE *p = popen(cmd, "r");

	while (p && fgets(line, sizeof(line), p))
		found |= strstr(line, flag) != NULL;
	if (p)
		pclose(p);
	return found;
}

/* @v when @bin lists --@flag, else 0 after saying it is not passed. */
static unsigned flag_if_known(const char *suite, const char *bin, const char *flag, unsigned v)
{
	char dashed[32];

	snprintf(dashed, sizeof(dashed), "--%s", flag);
	if (!v || vyre_bench_vyred_has_flag(bin, dashed))
		return v;
	fprintf(stderr, "%s: %s has no %s: %s %u not passed\n", suite, bin, dashed, dashed, v);
	return 0;
}

void vyre_bench_vyred_opts(const struct vyre_bench_ctx *ctx, const char *suite, const char *bin,
			   struct vyre_bench_vyred_opts *o)
{
	char inflight[24] = "", loops[24] = "";

	memset(o, 0, sizeof(*o));
	o->inflight = flag_if_known(suite, bin, "inflight", ctx->inflight);
	o->loops = flag_if_known(suite, bin, "loops", ctx->loops);
	o->extra = ctx->vyred_args;
	o->n_extra = ctx->n_vyred_args;
	snprintf(o->inflight_arg, sizeof(o->inflight_arg), "%u", o->inflight);
	snprintf(o->loops_arg, sizeof(o->loops_arg), "%u", o->loops);
	if (o->inflight)
		snprintf(inflight, sizeof(inflight), " inflight=%u", o->inflight);
	if (o->loops)
		snprintf(loops, sizeof(loops), " loops=%u", o->loops);
	snprintf(o->tag, sizeof(o->tag), "%s%s", inflight, loops);
}

unsigned vyre_bench_vyred_opts_args(const struct vyre_bench_vyred_opts *o, const char **args,
				    unsigned n)
{
	if (o->inflight) {
		args[n++] = "--inflight";
		args[n++] = o->inflight_arg;
	}
	if (o->loops) {
		args[n++] = "--loops";
		args[n++] = o->loops_arg;
	}
	for (unsigned i = 0; i < o->n_extra; i++)
		args[n++] = o->extra[i];
	return n;
}

int vyre_bench_cuda_loaded(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "libcuda.so") != NULL;
	if (f)
		fclose(f);
	return found;
}
