/* SPDX-License-Identifier: MIT */
/*
 * Peer credentials against vyred's allow lists and domain permissions, with
 * real processes of another uid (fork + setuid(65534); needs root):
 *  - a uid not on the allow list gets VYRE_E_PERM;
 *  - --allow-uid lets it in, to a private domain or one it creates, but not
 *    into a domain root created (VYRE_E_PERM);
 *  - --allow-gid admits members of a supplementary group (SO_PEERGROUPS)
 *    and still refuses a peer outside it.
 * After each refusal a root client is still served.
 */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define NOBODY	65534u
#define GROUP	4242u
#define WAIT_NS (30ll * 1000000000ll)

static struct vyre_test_daemon dmn;

/* One ADD through @c, checked: proves the connection is served. */
static int served(struct vyre_client *c)
{
	uint32_t in, out;
	struct vyre_cqe cqe;

	if (vyre_buffer_alloc(c, 4, 0, &in) || vyre_buffer_alloc(c, 4, 0, &out))
		return -1;
	struct vyre_work_item it = {VYRE_OP_ADD, in, out, 41};

	*(uint32_t *)vyre_buffer_ptr(c, in, NULL) = 1;
	if (vyre_submit(c, &it, 1, 0) != 0 || vyre_wait(c, &cqe, 1, WAIT_NS) != 1 ||
	    cqe.status != 0)
		return -1;
	return *(uint32_t *)vyre_buffer_ptr(c, out, NULL) == 42 ? 0 : -1;
}

/* In a child running as uid/gid 65534 with @groups: connect to @domain and expect @want. */
static int as_nobody(const gid_t *groups, size_t n_groups, const char *domain, int want)
{
	fflush(NULL); /* the child must not repeat buffered output */
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct vyre_connect_opts o = {
		    .socket_path = dmn.socket, .domain = domain, .heap_bytes = 1u << 20};
		struct vyre_client *c = NULL;

		if (setgroups(n_groups, groups) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			_exit(3);
		int rc = vyre_connect(&o, &c);

		if (rc != want) {
			fprintf(stderr, "uid %u domain %s: got %s, want %s\n", NOBODY,
				domain ? domain : "(private)", vyre_strerror(rc),
				vyre_strerror(want));
			_exit(1);
		}
		_exit(rc == 0 && served(c) != 0 ? 2 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAIL("uid %u, domain %s: child status 0x%x", NOBODY, domain ? domain : "(private)",
		     st);
	return 0;
}

static int start(const char *const *args)
{
	if (vyre_test_daemon_start(&dmn, args) != 0)
		return -1;
	/* Let uid 65534 reach the socket, so vyred's own check is what refuses it. */
	if (chmod(dmn.dir, 0755) != 0 || chmod(dmn.socket, 0666) != 0)
		FAIL("chmod");
	return 0;
}

static int stop(void)
{
	return vyre_test_daemon_finish(&dmn);
}

static int root_served(void)
{
	struct vyre_connect_opts o = {.socket_path = dmn.socket, .heap_bytes = 1u << 20};
	struct vyre_client *c;

	if (vyre_connect(&o, &c) != 0 || served(c) != 0)
		FAIL("root client not served");
	vyre_close(c);
	return 0;
}

static int default_allow_list(void)
{
	if (start(NULL) || as_nobody(NULL, 0, NULL, VYRE_E_PERM) || root_served() || stop())
		return -1;
	printf("ok: uid %u refused by the default allow list (the daemon's uid)\n", NOBODY);
	return 0;
}

static int allow_uid_and_domains(void)
{
	static const char *const args[] = {"--allow-uid", "0", "--allow-uid", "65534", NULL};
	struct vyre_connect_opts o = {.domain = "rootdom", .heap_bytes = 1u << 20};
	struct vyre_client *root;

	if (start(args))
		return -1;
	o.socket_path = dmn.socket;
	if (vyre_connect(&o, &root) != 0)
		FAIL("root creates rootdom");
	if (as_nobody(NULL, 0, NULL, 0) || as_nobody(NULL, 0, "nobodydom", 0) ||
	    as_nobody(NULL, 0, "rootdom", VYRE_E_PERM) || served(root))
		return -1;
	vyre_close(root);
	if (stop())
		return -1;
	printf("ok: --allow-uid admits uid %u; it may not join root's domain\n", NOBODY);
	return 0;
}

static int allow_gid(void)
{
	static const char *const args[] = {"--allow-uid", "0", "--allow-gid", "4242", NULL};
	const gid_t member[1] = {GROUP};

	if (start(args) || as_nobody(member, 1, NULL, 0) || as_nobody(NULL, 0, NULL, VYRE_E_PERM) ||
	    root_served() || stop())
		return -1;
	printf("ok: --allow-gid admits a supplementary member, refuses others\n");
	return 0;
}

int main(void)
{
	if (geteuid() != 0) {
		printf("skip: needs root to run peers as uid %u\n", NOBODY);
		return 77;
	}
	int rc = default_allow_list() || allow_uid_and_domains() || allow_gid();

	if (rc) {
		vyre_test_daemon_dump_log(&dmn);
		vyre_test_daemon_cleanup(&dmn);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
