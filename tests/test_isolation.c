/* SPDX-License-Identifier: MIT */
/*
 * test_isolation - who may connect, who may join a domain, whose handles
 * resolve, and that the memfds vyred hands out cannot be resized.
 *
 *  - uids: with the socket itself opened to everyone (so vyred's own check is
 *    what answers, not file permissions), a uid vyred does not allow gets
 *    VYRE_E_PERM; an allowed uid, a member of an allowed gid (primary or
 *    supplementary) connects; with the default allow list only vyred's own
 *    uid does.
 *  - domains: a domain created by one uid cannot be joined by another uid of
 *    another group (VYRE_E_PERM); it can by a member of the creator's group
 *    and by root (the documented policy, docs/reliability.md).
 *  - handles: a client of another domain can neither use a buffer handle in
 *    an item (VYRE_E_INVAL, the buffer unchanged), look it up, nor free it,
 *    nor hit any handle near it by guessing.
 *  - seals: the region and heap memfds cannot grow or shrink (ftruncate,
 *    fallocate and writes past the end fail with EPERM) and cannot get new
 *    seals (F_SEAL_SEAL is set).
 *
 * Switching uids needs root; without it the handle and seal checks still run
 * and the test ends with exit 77 saying what was not checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "../ring/proto.h"
#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define UID_A	    1001u /* creates domain "alpha" */
#define UID_B	    1002u /* another user, another group */
#define UID_C	    1003u /* another user in A's group */
#define GID_ALLOWED 2000u
#define NOBODY	    65534u

static int failed;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

/* Lets other uids reach the socket, so that vyred's allow list is what decides. */
static void open_socket_to_all(const struct vyre_test_daemon *d)
{
	chmod(d->dir, 0711);
	chmod(d->socket, 0666);
}

struct identity {
	uid_t uid;
	gid_t gid;
	gid_t extra_gid; /* a supplementary group, or 0 */
};

/*
 * Runs a vyre_connect as @id to @d's socket, joining @domain (NULL: private),
 * in a child process. Returns the vyre_connect result. With @hold, the child
 * stays connected until @hold's read end is closed by the parent, after
 * writing one byte once connected.
 */
static int connect_as(const struct vyre_test_daemon *d, const struct identity *id,
		      const char *domain, int *hold)
{
	int pfd[2];

	if (pipe(pfd) != 0)
		return VYRE_E_NOMEM;
	fflush(stdout);
	pid_t pid = fork();

	if (pid == 0) {
		gid_t groups[1] = {id->extra_gid};
		struct vyre_connect_opts o = {.socket_path = d->socket, .domain = domain};
		struct vyre_client *c;

		close(pfd[0]);
		if (setgroups(id->extra_gid ? 1 : 0, groups) != 0 ||
		    setresgid(id->gid, id->gid, id->gid) != 0 ||
		    setresuid(id->uid, id->uid, id->uid) != 0)
			_exit(100);
		int rc = vyre_connect(&o, &c);

		if (rc == 0 && hold) {
			char b = 1;

			(void)!write(pfd[1], &b, 1);
			pause();
		}
		_exit(-rc);
	}
	close(pfd[1]);
	if (hold) {
		char b = 0;

		/* connected (1 byte) or failed (EOF) */
		if (read(pfd[0], &b, 1) == 1) {
			*hold = pid;
			close(pfd[0]);
			return 0;
		}
	}
	close(pfd[0]);
	int st = rel_wait_child(pid, 30 * 1000000000ull);

	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) == 100)
		return VYRE_E_NOMEM;
	return -WEXITSTATUS(st);
}

static void release(pid_t pid)
{
	kill(pid, SIGKILL);
	rel_wait_child(pid, 10 * 1000000000ull);
}

static void check_connect(const struct vyre_test_daemon *d, const struct identity *id,
			  const char *domain, int want, const char *what)
{
	int rc = connect_as(d, id, domain, NULL);
	char line[256];

	snprintf(line, sizeof(line), "%s: %s (want %s)", what, vyre_strerror(rc),
		 vyre_strerror(want));
	check(rc == want, line);
}

static void uid_checks(void)
{
	const char *allow[] = {"--backend",   "cpu",  "--allow-uid", "0",    "--allow-uid", "1001",
			       "--allow-uid", "1002", "--allow-uid", "1003", "--allow-gid", "2000",
			       NULL};
	const char *dflt[] = {"--backend", "cpu", NULL};
	struct vyre_test_daemon d, only_root;
	const struct identity a = {UID_A, UID_A, 0}, b = {UID_B, UID_B, 0}, c = {UID_C, UID_A, 0},
			      nobody = {NOBODY, NOBODY, 0}, in_group = {3000, GID_ALLOWED, 0},
			      supplementary = {3001, 3001, GID_ALLOWED}, outsider = {3002, 3002, 0},
			      root = {0, 0, 0};
	int holder = 0;

	if (vyre_test_daemon_start(&only_root, dflt) != 0 ||
	    vyre_test_daemon_start(&d, allow) != 0) {
		failed = 1;
		return;
	}
	open_socket_to_all(&only_root);
	open_socket_to_all(&d);
	check_connect(&only_root, &nobody, NULL, VYRE_E_PERM, "default allow list, another uid");
	check_connect(&only_root, &root, NULL, 0, "default allow list, vyred's own uid");
	check_connect(&d, &nobody, NULL, VYRE_E_PERM, "uid not in --allow-uid");
	check_connect(&d, &outsider, NULL, VYRE_E_PERM, "uid and gid not allowed");
	check_connect(&d, &in_group, NULL, 0, "primary gid in --allow-gid");
	check_connect(&d, &supplementary, NULL, 0, "supplementary gid in --allow-gid");

	int rc = connect_as(&d, &a, "alpha", &holder);

	check(rc == 0, "uid 1001 creates domain alpha");
	if (rc == 0) {
		check_connect(&d, &b, "alpha", VYRE_E_PERM, "uid 1002 (other group) joins alpha");
		check_connect(&d, &in_group, "alpha", VYRE_E_PERM,
			      "uid 3000 (allowed) joins alpha");
		check_connect(&d, &c, "alpha", 0, "uid 1003 in alpha's creator's group joins");
		check_connect(&d, &root, "alpha", 0, "root joins alpha");
		release(holder);
	}
	check(rel_child_running(d.pid) && rel_child_running(only_root.pid), "vyred still up");
	check(vyre_test_daemon_stop(&d) == 0 && vyre_test_daemon_stop(&only_root) == 0,
	      "vyred stops cleanly");
	vyre_test_daemon_cleanup(&d);
	vyre_test_daemon_cleanup(&only_root);
}

/* Every way a client of another domain might reach @victim's buffer @h. */
static void handle_checks(const struct vyre_test_daemon *d)
{
	struct vyre_connect_opts o = {.socket_path = d->socket};
	struct vyre_client *victim, *thief;
	uint32_t h, mine, bytes = 0;
	struct vyre_cqe cqe;

	if (vyre_connect(&o, &victim) != 0 || vyre_connect(&o, &thief) != 0 ||
	    vyre_buffer_alloc(victim, 64, 0, &h) != 0 ||
	    vyre_buffer_alloc(thief, 64, 0, &mine) != 0) {
		check(0, "two clients in two private domains");
		return;
	}
	uint32_t *v = vyre_buffer_ptr(victim, h, NULL);

	for (int i = 0; i < 16; i++)
		v[i] = 0x5a5a0000u + (uint32_t)i;
	check(vyre_buffer_ptr(thief, h, &bytes) == NULL, "LOOKUP of another domain's handle fails");
	check(vyre_buffer_free(thief, h) == VYRE_E_INVAL, "FREE of another domain's handle fails");

	const struct vyre_work_item tries[] = {
	    {VYRE_OP_FILL, 0, h, 7},	       /* write it */
	    {VYRE_OP_COPY, h, mine, 0},	       /* read it */
	    {VYRE_OP_ADD, h, h, 1},	       /* both */
	    {VYRE_OP_DFA_SCAN, mine, mine, h}, /* as a table */
	};
	int all_inval = 1;

	for (uint32_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		int rc = vyre_submit(thief, &tries[i], i, VYRE_SQE_FENCE);

		if (rc != 0 || vyre_wait(thief, &cqe, 1, 10 * 1000000000ll) != 1 ||
		    cqe.status != VYRE_E_INVAL)
			all_inval = 0;
	}
	check(all_inval, "items naming another domain's handle complete with VYRE_E_INVAL");

	/* guesses: neighbouring slots and every generation of the handle's slot */
	uint64_t resolved = 0, tried = 0;

	for (uint32_t k = 0; k < 4096; k++) {
		uint32_t guess = k < 2048 ? h + k - 1024 : (h & 0xfffffu) | ((k - 2048) << 20);
		struct vyre_work_item it = {VYRE_OP_FILL, 0, guess, 9};

		if (guess == mine || guess == 0)
			continue;
		while (vyre_submit(thief, &it, k, 0) == VYRE_E_AGAIN)
			if (vyre_wait(thief, &cqe, 1, 10 * 1000000000ll) == 1 && cqe.status == 0)
				resolved++;
		tried++;
	}
	while (vyre_wait(thief, &cqe, 1, 100 * 1000000ll) == 1)
		resolved += cqe.status == 0;
	char line[128];

	snprintf(line, sizeof(line), "%" PRIu64 " guessed handles near it: none resolves", tried);
	check(resolved == 0, line);
	int same = 1;

	for (int i = 0; i < 16; i++)
		same &= v[i] == 0x5a5a0000u + (uint32_t)i;
	check(same, "the victim's buffer is unchanged");
	check(vyre_buffer_ptr(victim, h, NULL) == v, "the victim's handle still resolves for it");
	vyre_close(thief);
	vyre_close(victim);
}

/* A raw HELLO, to keep the memfds vyred sends (libvyre closes the heap's). */
static int raw_hello(const struct vyre_test_daemon *d, int *region, int *heap)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct vyre_msg m;
	int fds[VYRE_MSG_MAX_FDS], efd = eventfd(0, EFD_CLOEXEC), rc = -1;
	unsigned nfds = 0;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	size_t path_len = strlen(d->socket);

	if (path_len >= sizeof(sa.sun_path)) {
		if (s >= 0)
			close(s);
		close(efd);
		return -1;
	}
	memcpy(sa.sun_path, d->socket, path_len + 1);
	memset(&m, 0, sizeof(m));
	m.type = VYRE_MSG_HELLO;
	m.id = 1;
	m.u.hello.heap_bytes = 1 << 20;
	if (s >= 0 && efd >= 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    vyre_msg_send(s, &m, &efd, 1) == 0 && vyre_msg_recv(s, &m, fds, 3, &nfds, 0) == 0 &&
	    m.type == VYRE_MSG_HELLO_REPLY && m.u.hello_reply.status == 0 && nfds == 3) {
		*region = fds[0];
		*heap = fds[1];
		close(fds[2]);
		rc = s;
	} else {
		for (unsigned i = 0; i < nfds; i++)
			close(fds[i]);
		if (s >= 0)
			close(s);
	}
	if (efd >= 0)
		close(efd);
	return rc;
}

static void seal_checks_one(int fd, const char *name)
{
	struct stat st;
	char line[128];
	char byte = 1;

	if (fstat(fd, &st) != 0) {
		check(0, name);
		return;
	}
	int seals = fcntl(fd, F_GET_SEALS);

	snprintf(line, sizeof(line), "%s: sealed against grow, shrink and new seals", name);
	check(seals >= 0 && (seals & (F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)) ==
				(F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL),
	      line);
	snprintf(line, sizeof(line), "%s: ftruncate larger fails with EPERM", name);
	check(ftruncate(fd, st.st_size + 4096) != 0 && errno == EPERM, line);
	snprintf(line, sizeof(line), "%s: ftruncate smaller fails with EPERM", name);
	check(ftruncate(fd, st.st_size / 2) != 0 && errno == EPERM, line);
	snprintf(line, sizeof(line), "%s: ftruncate to 0 fails with EPERM", name);
	check(ftruncate(fd, 0) != 0 && errno == EPERM, line);
	snprintf(line, sizeof(line), "%s: fallocate past the end fails with EPERM", name);
	check(fallocate(fd, 0, st.st_size, 4096) != 0 && errno == EPERM, line);
	snprintf(line, sizeof(line), "%s: a write past the end fails with EPERM", name);
	check(pwrite(fd, &byte, 1, st.st_size) != 1 && errno == EPERM, line);
	snprintf(line, sizeof(line), "%s: adding a seal fails with EPERM", name);
	check(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) != 0 && errno == EPERM, line);
	struct stat after;

	snprintf(line, sizeof(line), "%s: size unchanged (%lld bytes)", name,
		 (long long)st.st_size);
	check(fstat(fd, &after) == 0 && after.st_size == st.st_size, line);
}

static void seal_checks(const struct vyre_test_daemon *d)
{
	int region = -1, heap = -1;
	int s = raw_hello(d, &region, &heap);

	if (s < 0) {
		check(0, "raw HELLO to receive the memfds");
		return;
	}
	seal_checks_one(region, "region memfd");
	seal_checks_one(heap, "heap memfd");
	close(region);
	close(heap);
	close(s);
}

int main(void)
{
	const char *extra[] = {"--backend", "cpu", NULL};
	struct vyre_test_daemon d;

	if (vyre_test_daemon_start(&d, extra) != 0)
		return 1;
	handle_checks(&d);
	seal_checks(&d);
	check(rel_child_running(d.pid), "vyred still up");
	check(vyre_test_daemon_stop(&d) == 0, "vyred stops cleanly");
	vyre_test_daemon_cleanup(&d);
	if (geteuid() == 0)
		uid_checks();
	printf("%s\n", failed ? "FAILED" : "ok");
	if (!failed && geteuid() != 0) {
		printf("uid and domain-join checks need root to act as other uids\n");
		return 77;
	}
	return failed;
}
