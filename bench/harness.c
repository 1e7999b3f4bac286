/* SPDX-License-Identifier: MIT */
#include "harness.h"

#include "vyre/vyre.h"

#include <ctype.h>
#include <dirent.h>
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
#include <sys/socket.h>
#include <sys/un.h>
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

/* ---- vyred's CPU time over a window ------------------------------------------ */

/*
 * /proc/@pid/stat in @buf from the fields after the name: the name may hold
 * spaces and parentheses, so they start after its last ')'. NULL when gone.
 */
static const char *stat_fields(pid_t pid, char *buf, size_t len)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	const size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');

	return p ? p + 1 : NULL;
}

/* Fields 14..17 of /proc/@pid/stat (utime, stime, cutime, cstime) in ns; -1 when unread. */
static int stat_times(pid_t pid, uint64_t ns[4])
{
	char buf[1024];
	unsigned long long t[4];
	const char *p = stat_fields(pid, buf, sizeof(buf));
	const long hz = sysconf(_SC_CLK_TCK);

	/* after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt */
	if (!p || hz <= 0 ||
	    sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &t[0],
		   &t[1], &t[2], &t[3]) != 4)
		return -1;
	for (int i = 0; i < 4; i++)
		ns[i] = (uint64_t)t[i] * (1000000000ull / (uint64_t)hz);
	return 0;
}

/* CPU ns of process @pid, all its threads: its CPU-time clock, else utime + stime; -1 if gone. */
static int proc_cpu_ns(pid_t pid, uint64_t *ns)
{
	clockid_t clk;
	struct timespec ts;
	uint64_t t[4];

	if (clock_getcpuclockid(pid, &clk) == 0 && clock_gettime(clk, &ts) == 0) {
		*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		return 0;
	}
	if (stat_times(pid, t) != 0)
		return -1;
	*ns = t[0] + t[1];
	return 0;
}

/* Appends the pids in @path (space-separated) to @out; the new count. */
static unsigned read_pids(const char *path, pid_t *out, unsigned n, unsigned cap)
{
	FILE *f = fopen(path, "r");
	int pid;

	while (f && n < cap && fscanf(f, "%d", &pid) == 1)
		out[n++] = pid;
	if (f)
		fclose(f);
	return n;
}

/* The parent of @pid from its /proc stat; -1 when unknown. */
static pid_t parent_of(pid_t pid)
{
	char buf[1024];
	const char *p = stat_fields(pid, buf, sizeof(buf));
	int ppid;

	return p && sscanf(p, " %*c %d", &ppid) == 1 ? ppid : -1;
}

/* The children of @pid (every thread's), into @out (at most @cap); how many. */
static unsigned children_of(pid_t pid, pid_t *out, unsigned cap)
{
	char path[PATH_MAX];
	struct dirent *e;
	unsigned n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	const int have_file = access(path, R_OK) == 0;

	snprintf(path, sizeof(path), have_file ? "/proc/%d/task" : "/proc", (int)pid);
	DIR *d = opendir(path);

	while (d && n < cap && (e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		const pid_t other = (pid_t)atoi(e->d_name);

		if (!have_file) {
			if (parent_of(other) == pid)
				out[n++] = other;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", (int)pid, e->d_name);
		n = read_pids(path, out, n, cap);
	}
	if (d)
		closedir(d);
	return n;
}

void vyre_bench_cpu_start(struct vyre_bench_cpu *c, pid_t pid)
{
	uint64_t t[4];

	memset(c, 0, sizeof(*c));
	c->pid = pid;
	if (pid <= 0 || proc_cpu_ns(pid, &c->ns[0]) != 0)
		return;
	c->ok = 1;
	c->reaped_ns = stat_times(pid, t) == 0 ? t[2] + t[3] : 0;
	c->procs[0] = pid;
	c->n = 1 + children_of(pid, c->procs + 1, VYRE_BENCH_CPU_PROCS - 1);
	for (unsigned i = 1; i < c->n; i++)
		if (proc_cpu_ns(c->procs[i], &c->ns[i]) != 0)
			c->procs[i] = 0; /* gone already */
}

double vyre_bench_cpu_ns(const struct vyre_bench_cpu *c)
{
	pid_t kids[VYRE_BENCH_CPU_PROCS];
	uint64_t now, t[4], gone_at_start = 0;
	double sum;

	if (!c->ok || proc_cpu_ns(c->pid, &now) != 0)
		return -1;
	sum = (double)(now - c->ns[0]);
	const unsigned n = children_of(c->pid, kids, VYRE_BENCH_CPU_PROCS);

	/* a child there at both ends: its difference; one born in the window: all of its time */
	for (unsigned k = 0; k < n; k++) {
		uint64_t at_start = 0;

		for (unsigned i = 1; i < c->n; i++)
			if (c->procs[i] == kids[k])
				at_start = c->ns[i];
		if (proc_cpu_ns(kids[k], &now) == 0 && now >= at_start)
			sum += (double)(now - at_start);
	}
	/*
	 * A child there at the start and gone at the end (a GPU worker that
	 * exited or was restarted in the window): when vyred reaps it, its whole
	 * life's CPU joins vyred's cutime + cstime, so the window gets their
	 * growth less what those children had at the start (clock ticks there:
	 * 10 ms steps at 100 Hz; never below nothing). One not reaped yet is a
	 * zombie, still a child, read above; one never reaped (vyred waits for
	 * its workers, tools/vyred/front.c) would go uncounted.
	 */
	for (unsigned i = 1; i < c->n; i++) {
		int there = 0;

		for (unsigned k = 0; k < n; k++)
			there |= kids[k] == c->procs[i];
		if (c->procs[i] && !there)
			gone_at_start += c->ns[i];
	}
	if (stat_times(c->pid, t) == 0 && t[2] + t[3] > c->reaped_ns + gone_at_start)
		sum += (double)(t[2] + t[3] - c->reaped_ns - gone_at_start);
	return sum;
}

double vyre_bench_cpu_per_item(double ns, uint64_t items)
{
	return ns >= 0 && items > 0 ? ns / (double)items : -1;
}

void vyre_bench_cpu_add(struct vyre_bench_cpu_sum *s, const struct vyre_bench_cpu *c,
			uint64_t items)
{
	const double ns = vyre_bench_cpu_ns(c);

	s->ns = ns < 0 || s->ns < 0 ? -1 : s->ns + ns;
	s->items += items;
}

double vyre_bench_cpu_sum_per_item(const struct vyre_bench_cpu_sum *s)
{
	return vyre_bench_cpu_per_item(s->ns, s->items);
}

void vyre_bench_report_vyred_cpu(struct vyre_bench_ctx *ctx, const char *suite, const char *name,
				 double ns_per_item)
{
	if (ns_per_item >= 0)
		vyre_bench_report(ctx, suite, name, "vyred cpu", ns_per_item, "ns/item");
}

pid_t vyre_bench_socket_pid(const char *socket_path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ucred cred = {.pid = -1};
	socklen_t len = sizeof(cred);
	const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(socket_path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	strcpy(sa.sun_path, socket_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		cred.pid = -1;
	close(fd);
	return cred.pid > 0 ? cred.pid : -1;
}
