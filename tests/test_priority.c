/* SPDX-License-Identifier: MIT */
/*
 * test_priority - priority classes (docs/design.md 8.9) against a real vyred
 * on the CPU backend.
 *
 *  - bounds: without flags class 1 is refused with VYRE_E_PERM;
 *    --priority-max 1 allows 1 and refuses 2; --priority uid:NAME=2 and
 *    gid:G=3, G a supplementary group of a forked child (as root); bad
 *    values of the three flags exit 2 naming the flag;
 *  - order: with --inflight 1, a class-0 flooder (another process) keeps
 *    its SQ full of slow items beside a class-2 client. The accept log's
 *    length is read just before each class-2 item is published: at most
 *    one batch of the flooder, of at most --priority-batch items, is
 *    accepted from then until that item; every flooder batch is that
 *    short while the class-2 client is connected (the exit log's batch
 *    count); every result equals the sequential oracle's. The same run
 *    with both clients in class 0 (the control) lets whole SQs of flood
 *    in ahead of the item, so the check can fail;
 *  - placement over loops (the loop of a client's domain from vyred's
 *    log): with 2 loops and a class above 0 allowed, two class-0 private
 *    clients, then a class-1 one: the class-1 domain is on a loop without
 *    class-0 clients; a class-0 client made after it is not put beside it
 *    although that loop has the fewest clients. With 3 loops, classes 1
 *    and 2 first get a loop each and three class-0 clients share the third
 *    (by the fewest clients the last would join class 2's). The control,
 *    with no class above 0 allowed, alternates the loops as before.
 */
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../gpu/backend.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define WAIT_NS	     (60ll * 1000000000ll)
#define FLOOD_SQ     64u
#define FLOOD_BYTES  (1u << 20)
#define PRIO_BATCH   8u
#define HIGH_TAG     (1ull << 40)
#define HIGH_ITEMS   20u
#define CONTROL_RUNS 6u
#define SMALL	     256u
#define SUPP_GID     4242u

static struct vyre_test_daemon daemon_;

static int try_connect(uint32_t priority, struct vyre_client **c)
{
	struct vyre_connect_opts o = {.socket_path = daemon_.socket, .priority = priority};

	return vyre_connect(&o, c);
}

/* 0 when connecting with @priority gives @want (and the connection is closed again). */
static int expect_connect(uint32_t priority, int want)
{
	struct vyre_client *c = NULL;
	int rc = try_connect(priority, &c);

	if (c)
		vyre_close(c);
	if (rc != want)
		FAIL("class %u: %s, want %s", priority, vyre_strerror(rc), vyre_strerror(want));
	return 0;
}

static int start(const char *const *extra)
{
	return vyre_test_daemon_start(&daemon_, extra);
}

static int finish(void)
{
	return vyre_test_daemon_finish(&daemon_);
}

/* A forked child with @gid as its only supplementary group asks for class 3: 0 if allowed. */
static int supplementary_connect(void)
{
	const gid_t g = SUPP_GID;
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(setgroups(1, &g) != 0 ? 3 : expect_connect(3, 0) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		FAIL("the child of gid %u did not run", SUPP_GID);
	if (WEXITSTATUS(st) != 0)
		FAIL("the child of supplementary gid %u: exit %d", SUPP_GID, WEXITSTATUS(st));
	return 0;
}

static int bounds(void)
{
	const char *max1[] = {"--backend", "cpu", "--priority-max", "1", NULL};
	const struct passwd *pw = getpwuid(getuid());
	char uid_rule[128], gid_rule[64];

	if (start((const char *[]){"--backend", "cpu", NULL}) || expect_connect(0, 0) ||
	    expect_connect(1, VYRE_E_PERM) || expect_connect(3, VYRE_E_PERM))
		return -1;
	if (!vyre_test_log_has(daemon_.log, "priority class 1 above its bound 0"))
		FAIL("the refusal is not logged");
	if (finish())
		return -1;
	if (start(max1) || expect_connect(1, 0) || expect_connect(2, VYRE_E_PERM) || finish())
		return -1;
	if (!pw)
		FAIL("no passwd entry for uid %u", (unsigned)getuid());
	snprintf(uid_rule, sizeof(uid_rule), "uid:%s=2", pw->pw_name);
	snprintf(gid_rule, sizeof(gid_rule), "gid:%u=3", SUPP_GID);
	const char *rules[] = {"--backend",  "cpu",    "--priority", uid_rule,
			       "--priority", gid_rule, NULL};

	if (start(rules) || expect_connect(2, 0) || expect_connect(3, VYRE_E_PERM))
		return -1;
	if (getuid() != 0)
		printf("not root: the supplementary gid rule is not tried\n");
	else if (supplementary_connect() != 0)
		return -1;
	return finish();
}

/* vyred with @flag @value must exit 2 and name the flag. */
static int refused(const char *flag, const char *value)
{
	char path[4096], log[] = "/tmp/vyre-prio-XXXXXX";
	int fd = mkstemp(log), st = 0;
	pid_t pid;

	if (fd < 0)
		FAIL("mkstemp");
	vyre_test_vyred_path(path, sizeof(path));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		execl(path, path, "--socket", "/tmp/vyre-prio-never.sock", flag, value,
		      (char *)NULL);
		_exit(127);
	}
	close(fd);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		FAIL("vyred %s %s did not run", flag, value);
	const int named = vyre_test_log_has(log, flag);

	unlink(log);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 2 || !named)
		FAIL("vyred %s '%s': status %d, flag named %d; want exit 2, named", flag, value, st,
		     named);
	return 0;
}

static int bad_values(void)
{
	static const char *const cases[][2] = {
	    {"--priority-max", "4"},	{"--priority-max", "x"},
	    {"--priority", "uid:0=4"},	{"--priority", "uid:=1"},
	    {"--priority", "pid:0=1"},	{"--priority", "uid:0"},
	    {"--priority", "gid:0=1x"}, {"--priority", "gid:no-such-group-vyre=1"},
	    {"--priority-batch", "0"},	{"--priority-batch", "-5"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (refused(cases[i][0], cases[i][1]) != 0)
			return -1;
	return 0;
}

/* ---- the flooder: its own process, SQ kept full of slow scans until told to stop ---- */

static int flood(int stop_fd, int ready_fd)
{
	struct vyre_connect_opts o = {.socket_path = daemon_.socket,
				      .sq_entries = FLOOD_SQ,
				      .cq_entries = 2 * FLOOD_SQ,
				      .heap_bytes = 4ull << 20};
	struct vyre_client *c;
	uint32_t in, table, out[FLOOD_SQ];
	uint64_t next = 0, done = 0;

	if (fcntl(stop_fd, F_SETFL, O_NONBLOCK) != 0 || vyre_connect(&o, &c) != 0 ||
	    vyre_buffer_alloc(c, FLOOD_BYTES, 0, &in) != 0 ||
	    vyre_buffer_alloc(c, (uint32_t)vyre_dfa_table_bytes(1), 0, &table) != 0)
		return 1;
	uint32_t *t = vyre_buffer_ptr(c, table, NULL);
	uint8_t *p = vyre_buffer_ptr(c, in, NULL);

	/* one state that accepts after every byte: the result is the input length */
	t[0] = 1;
	t[1] = 0;
	t[2] = 1;
	memset(p, 'a', FLOOD_BYTES);
	for (uint32_t k = 0; k < FLOOD_SQ; k++)
		if (vyre_buffer_alloc(c, 4, 0, &out[k]) != 0)
			return 1;
	if (write(ready_fd, "r", 1) != 1)
		return 1;
	for (int stopping = 0;;) {
		char b;

		stopping = stopping || read(stop_fd, &b, 1) != -1;
		while (!stopping && next - done < FLOOD_SQ) {
			struct vyre_work_item it = {VYRE_OP_DFA_SCAN, in, out[next % FLOOD_SQ],
						    table};

			if (vyre_submit(c, &it, next, 0) != 0)
				break;
			next++;
		}
		if (stopping && done == next)
			break;
		struct vyre_cqe cqe[FLOOD_SQ];
		int n = vyre_wait(c, cqe, FLOOD_SQ, WAIT_NS);

		if (n <= 0)
			return 2;
		for (int k = 0; k < n; k++)
			if (cqe[k].status != 0 || cqe[k].result != FLOOD_BYTES ||
			    cqe[k].user_data != done++)
				return 3;
	}
	vyre_close(c);
	return 0;
}

/* ---- the class-2 client ---- */

static uint32_t log_lines(void)
{
	FILE *f = fopen(daemon_.accept_log, "r");
	uint32_t n = 0;
	int ch;

	while (f && (ch = fgetc(f)) != EOF)
		n += ch == '\n';
	if (f)
		fclose(f);
	return n;
}

/* One XOR of SMALL bytes, its output and CQE against vyre_exec_sequential. */
static int high_item(struct vyre_client *c, uint32_t in, uint32_t out, uint32_t i)
{
	uint8_t *pi = vyre_buffer_ptr(c, in, NULL), *po = vyre_buffer_ptr(c, out, NULL);
	uint8_t heap[2 * SMALL];
	struct vyre_heap_view view = {heap, sizeof(heap)};
	struct vyre_exec_item it = {.op = VYRE_OP_XOR,
				    .param = 0x9e3779b9u * (i + 1),
				    .in_bytes = SMALL,
				    .out_bytes = SMALL,
				    .out_off = SMALL};
	struct vyre_exec_result want;
	struct vyre_work_item w = {VYRE_OP_XOR, in, out, it.param};
	struct vyre_cqe cqe;

	for (uint32_t k = 0; k < SMALL; k++)
		pi[k] = (uint8_t)(k * 31u + i);
	memcpy(heap, pi, SMALL);
	memset(heap + SMALL, 0, SMALL);
	vyre_exec_sequential(&view, &it, 1, &want);
	if (vyre_submit(c, &w, HIGH_TAG | i, 0) != 0)
		FAIL("submit class-2 item %u", i);
	if (vyre_wait(c, &cqe, 1, WAIT_NS) != 1 || cqe.user_data != (HIGH_TAG | i))
		FAIL("no CQE for class-2 item %u", i);
	if (cqe.status != want.status || cqe.result != want.result ||
	    memcmp(po, heap + SMALL, SMALL) != 0)
		FAIL("class-2 item %u: status %d result %" PRIu64 " differ from the oracle's", i,
		     cqe.status, cqe.result);
	return 0;
}

/*
 * Flood items accepted after mark[i] (the log's length when item i was
 * published) and before item i itself: the most over the items.
 */
static int most_ahead(const uint32_t *mark, uint32_t n, uint32_t *most, uint64_t *flood_items)
{
	FILE *f = fopen(daemon_.accept_log, "r");
	unsigned id;
	uint64_t ud;
	uint32_t line = 0, ahead = 0, item = 0;

	if (!f)
		FAIL("no accept log");
	*most = 0;
	*flood_items = 0;
	while (fscanf(f, "%u %" SCNu64, &id, &ud) == 2) {
		if (ud & HIGH_TAG) {
			if ((ud & ~HIGH_TAG) != item)
				break;
			*most = ahead > *most ? ahead : *most;
			ahead = 0;
			item++;
		} else {
			*flood_items += 1;
			ahead += item < n && line >= mark[item];
		}
		line++;
	}
	fclose(f);
	if (item != n)
		FAIL("the accept log has %u class-2 items in order, want %u", item, n);
	return 0;
}

/* Batches vyred says it completed, from its exit log. */
static int64_t batches_done(void)
{
	FILE *f = fopen(daemon_.log, "r");
	char line[512];
	long long n = -1;

	while (f && fgets(line, sizeof(line), f)) {
		const char *s = strstr(line, "stopped after ");

		if (s)
			sscanf(s, "stopped after %lld batches", &n);
	}
	if (f)
		fclose(f);
	return n;
}

/* One run; @high: the second client's class. Returns the most flood items ahead of one. */
static int run_order(uint32_t high, uint32_t n, uint32_t *most)
{
	const char *extra[] = {
	    "--backend",      "cpu", "--inflight",	 "1", "--loops", "1", "--cpu-threads", "1",
	    "--priority-max", "2",   "--priority-batch", "8", NULL};
	int stop[2], ready[2], st;
	uint32_t mark[HIGH_ITEMS], in, out;
	uint64_t flood_items;
	struct vyre_client *c;
	char b;

	_Static_assert(PRIO_BATCH == 8, "--priority-batch 8 above");
	if (pipe2(stop, O_CLOEXEC) || pipe2(ready, O_CLOEXEC) || start(extra))
		FAIL("set-up");
	if (try_connect(high, &c) != 0 || vyre_buffer_alloc(c, SMALL, 0, &in) != 0 ||
	    vyre_buffer_alloc(c, SMALL, 0, &out) != 0)
		FAIL("class-%u client", high);
	fflush(NULL);
	pid_t pid = fork();

	if (pid == 0) {
		close(stop[1]);
		close(ready[0]);
		_exit(flood(stop[0], ready[1]));
	}
	close(stop[0]);
	close(ready[1]);
	if (pid < 0 || read(ready[0], &b, 1) != 1 ||
	    vyre_test_wait_dispatched(&daemon_, 2, WAIT_NS))
		FAIL("the flooder did not start");
	for (uint32_t i = 0; i < n; i++) {
		mark[i] = log_lines();
		if (high_item(c, in, out, i) != 0)
			return -1;
	}
	close(stop[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		FAIL("flooder: status %d (1 set-up, 2 wait, 3 a result not the oracle's)", st);
	vyre_close(c);
	if (most_ahead(mark, n, most, &flood_items) != 0)
		return -1;
	if (vyre_test_daemon_stop(&daemon_) != 0) {
		vyre_test_daemon_dump_log(&daemon_);
		FAIL("vyred did not stop cleanly");
	}
	const int64_t batches = batches_done();

	vyre_test_daemon_cleanup(&daemon_);
	printf("class %u beside class 0: %" PRIu64 " flood items in %" PRId64
	       " batches; at most %u flood items accepted ahead of a class-%u item\n",
	       high, flood_items, batches, *most, high);
	/* a class-2 item is a batch of its own; every flood batch held at most PRIO_BATCH items */
	if (high &&
	    (batches < 0 || (uint64_t)batches - n < (flood_items + PRIO_BATCH - 1) / PRIO_BATCH))
		FAIL("%" PRIu64 " flood items in %" PRId64 " batches: some held more than %u",
		     flood_items, batches - n, PRIO_BATCH);
	return 0;
}

static int order(void)
{
	uint32_t most;

	if (run_order(2, HIGH_ITEMS, &most) != 0)
		return -1;
	if (most > PRIO_BATCH)
		FAIL("%u flood items were accepted ahead of a class-2 item: more than one batch",
		     most);
	/*
	 * The control depends on the flood being ahead when the item comes, which a
	 * slow build (ASan, TSan) misses now and then: it gets a few tries.
	 */
	most = 0;
	for (int tries = 0; tries < 5 && most <= PRIO_BATCH; tries++)
		if (run_order(0, CONTROL_RUNS, &most) != 0)
			return -1;
	if (most <= PRIO_BATCH)
		FAIL("control: with one class, only %u flood items ahead (the check cannot fail)",
		     most);
	return 0;
}

/* Clients of classes @cls[0..n) connect in turn to a vyred of @loops loops; @loop gets theirs. */
static int place_clients(const uint32_t *cls, uint32_t n, uint32_t loops, int *loop)
{
	struct vyre_client *c[8];

	if (n > 8)
		FAIL("at most 8 clients");
	for (uint32_t i = 0; i < n; i++)
		if (try_connect(cls[i], &c[i]) != 0)
			FAIL("class-%u client %u did not connect", cls[i], i);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t dom = vyre_test_logged_domain(&daemon_, i + 1);

		if (!dom)
			FAIL("vyred did not log client %u joining a domain", i + 1);
		/* loop L numbers its domains L + 1, L + 1 + loops, ... */
		loop[i] = (int)((dom - 1) % loops);
	}
	for (uint32_t i = 0; i < n; i++)
		vyre_close(c[i]);
	return 0;
}

static int placement(void)
{
	const char *two[] = {"--backend", "cpu", "--loops", "2", "--priority-max", "1", NULL};
	const char *three[] = {"--backend", "cpu", "--loops", "3", "--priority-max", "2", NULL};
	const char *one_class[] = {"--backend", "cpu", "--loops", "2", NULL};
	static const uint32_t mixed[] = {0, 0, 1, 0}, zeros[] = {0, 0, 0, 0},
			      up[] = {1, 2, 0, 0, 0};
	int loop[8];

	if (start(two) || place_clients(mixed, 4, 2, loop) || finish())
		return -1;
	printf("2 loops, classes allowed: class 0 on loops %d and %d, class 1 on %d, then class "
	       "0 on %d\n",
	       loop[0], loop[1], loop[2], loop[3]);
	if (loop[2] == loop[0] || loop[2] == loop[1])
		FAIL("the class-1 domain is on loop %d, beside a class-0 client", loop[2]);
	if (loop[3] == loop[2])
		FAIL("a class-0 domain went to loop %d, beside the class-1 client", loop[3]);
	/* the third class-0 client would go beside the class-2 one by the fewest clients */
	if (start(three) || place_clients(up, 5, 3, loop) || finish())
		return -1;
	printf("3 loops: class 1 on loop %d, class 2 on %d, then class 0 on %d, %d and %d\n",
	       loop[0], loop[1], loop[2], loop[3], loop[4]);
	if (loop[1] == loop[0])
		FAIL("classes 1 and 2 share loop %d with a loop free", loop[0]);
	for (uint32_t i = 2; i < 5; i++)
		if (loop[i] == loop[0] || loop[i] == loop[1])
			FAIL("class-0 client %u is on loop %d, beside a higher class", i, loop[i]);
	if (start(one_class) || place_clients(zeros, 4, 2, loop) || finish())
		return -1;
	for (uint32_t i = 0; i < 4; i++)
		if (loop[i] != (int)(i % 2))
			FAIL(
			    "without classes, private domain %u is on loop %d, want %u (the fewest "
			    "clients)",
			    i, loop[i], i % 2);
	return 0;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (bounds() != 0 || bad_values() != 0 || placement() != 0 || order() != 0)
		return 1;
	printf("priorities: ok\n");
	return 0;
}
