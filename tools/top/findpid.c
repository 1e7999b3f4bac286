/* SPDX-License-Identifier: MIT */
/*
 * Finding vyred from its socket: /proc/net/unix maps the listening socket's
 * path to a socket inode, and the process that holds "socket:[inode]" among
 * its /proc/PID/fd links is the daemon. Paths are matched as vyred bound
 * them, or after resolving symbolic links. Under systemd socket activation
 * PID 1 holds the same socket (and keeps it while vyred is not running), so
 * a process named vyred wins and PID 1 is never the answer.
 *
 * Where vyred is the supervisor of GPU workers, its children are found too
 * (top_find_workers), and which GPUs each one serves.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "top.h"

#define SO_ACCEPTCON_FLAG 0x10000ul /* __SO_ACCEPTCON: the socket listens */

int top_unix_listener_inode(FILE *net_unix, const char *path, unsigned long *inode)
{
	char line[PATH_MAX + 128];
	char resolved[PATH_MAX];
	const char *alt = realpath(path, resolved) ? resolved : path;
	while (fgets(line, sizeof(line), net_unix)) {
		unsigned long refs, proto, flags, ino;
		unsigned type, state;
		int off = 0;
		if (sscanf(line, "%*[0-9a-fA-F]: %lx %lx %lx %x %x %lu %n", &refs, &proto, &flags,
			   &type, &state, &ino, &off) != 6 ||
		    off == 0)
			continue;
		char *p = line + off;
		p[strcspn(p, "\n")] = '\0';
		if ((flags & SO_ACCEPTCON_FLAG) && (strcmp(p, path) == 0 || strcmp(p, alt) == 0)) {
			*inode = ino;
			return 0;
		}
	}
	return -ENOENT;
}

static int holds_socket(const char *pid_dir, const char *want)
{
	char fd_dir[300], link[600], target[64];
	snprintf(fd_dir, sizeof(fd_dir), "/proc/%s/fd", pid_dir);
	DIR *d = opendir(fd_dir);
	if (!d)
		return 0;
	int found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", fd_dir, e->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found = strcmp(target, want) == 0;
	}
	closedir(d);
	return found;
}

int top_pick_owner(const struct top_owner *o, size_t n)
{
	int best = -1;
	for (size_t i = 0; i < n; i++) {
		if (o[i].pid == 1)
			continue;
		int named = strcmp(o[i].comm, "vyred") == 0;
		int best_named = best >= 0 && strcmp(o[best].comm, "vyred") == 0;
		if (best < 0 || named > best_named ||
		    (named == best_named && o[i].pid < o[best].pid))
			best = (int)i;
	}
	return best;
}

static void read_comm(const char *pid_dir, char *comm, size_t len)
{
	char path[300];
	snprintf(path, sizeof(path), "/proc/%s/comm", pid_dir);
	comm[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

int top_find_socket_owner(const char *path, pid_t *pid, char *why, size_t why_len)
{
	FILE *f = fopen("/proc/net/unix", "r");
	if (!f) {
		snprintf(why, why_len, "cannot read /proc/net/unix: %s", strerror(errno));
		return -errno;
	}
	unsigned long inode = 0;
	int err = top_unix_listener_inode(f, path, &inode);
	fclose(f);
	if (err) {
		snprintf(why, why_len,
			 "no process listens on %s: is vyred running? (or use -p PID)", path);
		return err;
	}
	char want[48];
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	DIR *proc = opendir("/proc");
	if (!proc) {
		snprintf(why, why_len, "cannot read /proc: %s", strerror(errno));
		return -errno;
	}
	struct dirent *e;
	struct top_owner owners[TOP_OWNERS_MAX];
	size_t n = 0;
	while ((e = readdir(proc)) != NULL && n < TOP_OWNERS_MAX) {
		if (!isdigit((unsigned char)e->d_name[0]) || !holds_socket(e->d_name, want))
			continue;
		owners[n].pid = (pid_t)strtol(e->d_name, NULL, 10);
		read_comm(e->d_name, owners[n].comm, sizeof(owners[n].comm));
		n++;
	}
	closedir(proc);
	int best = top_pick_owner(owners, n);
	if (best < 0 && n > 0) {
		snprintf(why, why_len,
			 "only PID 1 holds %s (systemd socket activation): vyred starts on the "
			 "first connection; run a client, or use -p PID",
			 path);
		return -ESRCH;
	}
	if (best < 0) {
		snprintf(why, why_len,
			 "%s is listening (inode %lu) but no visible process holds it: another "
			 "user's vyred needs root or -p PID",
			 path, inode);
		return -ESRCH;
	}
	*pid = owners[best].pid;
	return 0;
}

/*
 * A supervisor's GPU workers (docs/design.md 8.8): vyred itself, started
 * again by the supervisor with `--gpus LIST --gpu-worker FD:ORDINAL`
 * appended to its command line (the last --gpus is the list as the
 * supervisor resolved it). Its GPUs are the entries of LIST naming
 * ORDINAL, numbered from 0 in the worker as vyred's config_gpus.c numbers
 * them.
 */

/* The device ordinal (below 1024) that @s starts with, -1 if none; *@end after it. */
static long ordinal_at(const char *s, const char **end)
{
	char *e;
	*end = s;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long v = strtoul(s, &e, 10);
	*end = e;
	return errno || v >= 1024 ? -1 : (long)v;
}

/* The value of @word when it is --NAME=VALUE, or of the next word when it is --NAME. */
static const char *option_value(const char *word, const char *next, const char *name)
{
	size_t n = strlen(name);
	if (strncmp(word, "--", 2) != 0 || strncmp(word + 2, name, n) != 0)
		return NULL;
	if (word[2 + n] == '=')
		return word + 3 + n;
	return word[2 + n] == '\0' ? next : NULL;
}

int top_worker_gpus(const char *argv, size_t len, struct vyre_bpf_worker *w)
{
	const char *gpus = NULL, *spec = NULL;
	const char *last = argv + len;
	memset(w, 0, sizeof(*w));
	for (const char *word = argv; word < last;) {
		const char *stop = memchr(word, '\0', (size_t)(last - word));
		if (!stop)
			break;
		const char *next = stop + 1 < last ? stop + 1 : NULL;
		if (next && !memchr(next, '\0', (size_t)(last - next)))
			next = NULL;
		const char *v;
		if ((v = option_value(word, next, "gpus")) != NULL)
			gpus = v;
		else if ((v = option_value(word, next, "gpu-worker")) != NULL)
			spec = v;
		word = stop + 1;
	}
	if (!spec)
		return 0;
	const char *colon = strchr(spec, ':'), *end = spec;
	long ordinal = colon ? ordinal_at(colon + 1, &end) : -1;
	if (ordinal < 0 || *end != '\0' || !gpus)
		return -1;
	/* "0,1,1": index 0 is ordinal 0, 1 and 2 ordinal 1 */
	for (uint32_t index = 0; *gpus; index++) {
		long o = ordinal_at(gpus, &end);
		if (o < 0 || (*end != ',' && *end != '\0') || index >= VYRE_BPF_MAX_GPUS)
			return -1;
		if (o == ordinal)
			w->gpu[w->n_gpus++] = index;
		gpus = *end ? end + 1 : end;
	}
	return w->n_gpus ? 1 : -1;
}

int top_proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "pid (comm) ": state ppid, then 17 fields up to starttime (field 22) */
	const char *p = strrchr(buf, ')');
	int parent;
	char state;
	unsigned long long t;
	if (!p || sscanf(p + 1,
			 " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
			 "%*d %llu",
			 &state, &parent, &t) != 3)
		return -EINVAL;
	if (state == 'Z' || state == 'X')
		return -ESRCH; /* exited, not yet reaped */
	if (ppid)
		*ppid = (pid_t)parent;
	if (start)
		*start = t;
	return 0;
}

int top_proc_cmdline(pid_t pid, char *buf, size_t cap, size_t *len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	*len = fread(buf, 1, cap, f);
	fclose(f);
	return 0;
}

size_t top_find_workers(pid_t parent, struct top_worker_proc *out, size_t max)
{
	char path[64];
	struct stat exe;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)parent);
	if (stat(path, &exe) != 0)
		return 0;
	DIR *proc = opendir("/proc");
	if (!proc)
		return 0;
	size_t n = 0;
	struct dirent *e;
	char cmdline[8192];
	while (n < max && (e = readdir(proc)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10), ppid;
		unsigned long long start;
		struct stat st;
		size_t len;
		if (top_proc_stat(pid, &ppid, &start) != 0 || ppid != parent)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		if (stat(path, &st) != 0 || st.st_dev != exe.st_dev || st.st_ino != exe.st_ino)
			continue;
		/* a child not yet started again as a worker has the supervisor's command line */
		if (top_proc_cmdline(pid, cmdline, sizeof(cmdline), &len) != 0 ||
		    top_worker_gpus(cmdline, len, &out[n].gpus) != 1)
			continue;
		out[n].pid = pid;
		out[n].start = start;
		n++;
	}
	closedir(proc);
	return n;
}
