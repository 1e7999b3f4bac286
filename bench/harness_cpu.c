/* SPDX-License-Identifier: MIT */
/*
 * bench/harness_cpu.c - vyred's CPU time over a measurement window, read
 * from /proc for vyred and its GPU workers (harness_cpu.h says how).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness_cpu.h"

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
