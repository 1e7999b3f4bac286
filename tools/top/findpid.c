/* SPDX-License-Identifier: MIT */
/*
 * Finding vyred from its socket: /proc/net/unix maps the listening socket's
 * path to a socket inode, and the process that holds "socket:[inode]" among
 * its /proc/PID/fd links is the daemon. Paths are matched as vyred bound
 * them, or after resolving symbolic links. Under systemd socket activation
 * PID 1 holds the same socket (and keeps it while vyred is not running), so
 * a process named vyred wins and PID 1 is never the answer.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
