/* SPDX-License-Identifier: MIT */
/*
 * test_resume_hostile - forged RESUME hellos (docs/design.md section 3,
 * "Validation"; ring/proto.h, ring/ledger.h) against a new vyred.
 *
 * Raw resumable HELLOs to a first vyred give the test a region, heap and
 * ledger memfd for domain "hx" (with two unnamed buffers and a named one)
 * and for domain "hp"; then that vyred is SIGKILLed and a new one started
 * on the same socket, with honest producers on it all along. Each forged
 * RESUME must be refused with VYRE_E_PROTO and a hang-up, and vyred must log
 * it: a heap memfd not sealed, a heap of another size than the ledger's, a
 * regular file for the heap, a heap sealed against writing or handed over
 * read-only, a heap (and ledger) of a size that is not a page multiple, a ledger with a bad magic,
 * an entry outside the heap, two overlapping entries, a handle twice, a bad name, another domain's
 * name; a region whose sq_tail is more than a ring ahead, whose sq_accepted is behind cq_tail,
 * whose size is not its header's; too few descriptors. Then the genuine RESUME is taken (its
 * buffers resolve to the same offsets and its name opens), the same region again is refused with
 * VYRE_E_PROTO (it belongs to a live connection), copies of the region and
 * heap for the live domain with VYRE_E_EXIST, and, as root, uid 65534
 * resuming root's domain "hp" with VYRE_E_PERM, and with VYRE_E_PROTO when it
 * hands over its own copy of root's ledger (a ledger vyred did not make). vyred must be alive and
 * the honest producers must match the oracle at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "../ring/ledger.h"
#include "../ring/proto.h"
#include "test_crash_honest.h"
#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define HONEST	   2u
#define RING	   64u
#define HEAP_BYTES (1u << 20)
#define BUF_BYTES  4096u
#define NOBODY	   65534u
#define NO_REPLY   1 /* resume(): vyred hung up without a reply */

/* What a resumable connection to the first vyred left in the test's hands. */
struct kept {
	int region, heap, ledger;
	uint32_t handle[3]; /* two unnamed buffers, then "named" */
	uint64_t off[3];
};

static const char *sock_path;
static const char *sock_dir;
static int in_child; /* vyred is not this process's child: its parent checks it */
static int failed;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failed |= !ok;
}

static int dial(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 10};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		printf("connect %s: %m\n", sock_path);
		if (s >= 0)
			close(s);
		return -1;
	}
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return s;
}

static void close_fds(const int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		close(fds[i]);
}

/*
 * A HELLO for @domain with @flags and @fds (after a fresh eventfd, @n of
 * them). Returns the socket, the reply's status in *status (NO_REPLY when
 * vyred hung up without one) and its descriptors in @out.
 */
static int hello(const char *domain, uint32_t flags, const int *fds, unsigned n, int *status,
		 struct vyre_msg *reply, int *out, unsigned *n_out)
{
	struct vyre_msg m = {.type = VYRE_MSG_HELLO, .id = 1};
	int tx[VYRE_MSG_MAX_FDS], s = dial();

	*n_out = 0;
	*status = NO_REPLY;
	if (s < 0)
		return -1;
	tx[0] = eventfd(0, EFD_CLOEXEC);
	for (unsigned i = 0; i < n && i + 1 < VYRE_MSG_MAX_FDS; i++)
		tx[i + 1] = fds[i];
	m.u.hello.sq_entries = RING;
	m.u.hello.cq_entries = RING;
	m.u.hello.heap_bytes = HEAP_BYTES;
	m.u.hello.flags = flags;
	snprintf(m.u.hello.domain, sizeof(m.u.hello.domain), "%s", domain);
	int rc = vyre_msg_send(s, &m, tx, n + 1);

	close(tx[0]);
	if (rc == 0)
		rc = vyre_msg_recv(s, reply, out, VYRE_MSG_MAX_FDS, n_out, 0);
	if (rc == 0 && reply->type == VYRE_MSG_HELLO_REPLY)
		*status = reply->u.hello_reply.status;
	else if (rc == 0 && reply->type == VYRE_MSG_ERROR)
		*status = reply->u.error;
	return s;
}

/* One request on a live raw connection; the BUFFER_REPLY's status, or a receive error. */
static int request(int s, struct vyre_msg *m, struct vyre_msg *reply)
{
	int fds[VYRE_MSG_MAX_FDS];
	unsigned n = 0;
	int rc = vyre_msg_send(s, m, NULL, 0);

	if (rc == 0)
		rc = vyre_msg_recv(s, reply, fds, VYRE_MSG_MAX_FDS, &n, 0);
	close_fds(fds, n);
	if (rc == 0 && reply->type != VYRE_MSG_BUFFER_REPLY)
		return VYRE_E_PROTO;
	return rc ? rc : reply->u.buffer_reply.status;
}

static int lookup(int s, uint32_t handle, uint64_t *off)
{
	struct vyre_msg m = {.type = VYRE_MSG_LOOKUP, .id = 2}, r = {0};

	m.u.buffer.handle = handle;
	const int rc = request(s, &m, &r);

	*off = r.u.buffer_reply.offset;
	return rc;
}

/* A resumable connection to @domain with three buffers; its socket, kept open. */
static int make_kept(const char *domain, struct kept *k)
{
	struct vyre_msg r;
	int fds[VYRE_MSG_MAX_FDS], status;
	unsigned n;
	int s = hello(domain, VYRE_HELLO_RESUMABLE, NULL, 0, &status, &r, fds, &n);

	if (s < 0 || status != 0 || n != 4) {
		printf("resumable HELLO to %s: %s with %u fds\n", domain, vyre_strerror(status), n);
		close_fds(fds, n);
		return -1;
	}
	k->region = fds[0];
	k->heap = fds[1];
	close(fds[2]);
	k->ledger = fds[3];
	for (int b = 0; b < 3; b++) {
		struct vyre_msg m = {.id = 10u + (uint32_t)b};

		if (b < 2) {
			m.type = VYRE_MSG_ALLOC;
			m.u.buffer.bytes = BUF_BYTES;
		} else {
			m.type = VYRE_MSG_CREATE;
			m.u.named.bytes = BUF_BYTES;
			snprintf(m.u.named.name, sizeof(m.u.named.name), "named");
		}
		if (request(s, &m, &r) != 0)
			return -1;
		k->handle[b] = r.u.buffer_reply.handle;
		k->off[b] = r.u.buffer_reply.offset;
	}
	return s;
}

/* A new memfd of @bytes holding @fd's first bytes, sealed with @seals. */
static int clone_fd(int fd, uint64_t bytes, int seals)
{
	struct stat st;
	int c = memfd_create("vyre-forged", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	static uint8_t buf[1 << 16];

	if (c < 0 || fstat(fd, &st) != 0 || ftruncate(c, (off_t)bytes) != 0)
		return -1;
	for (off_t at = 0; at < st.st_size && (uint64_t)at < bytes; at += (off_t)sizeof(buf)) {
		ssize_t got = pread(fd, buf, sizeof(buf), at);

		if (got <= 0)
			return -1;
		if ((uint64_t)at + (uint64_t)got > bytes)
			got = (ssize_t)(bytes - (uint64_t)at);
		if (pwrite(c, buf, (size_t)got, at) != got)
			return -1;
	}
	if (seals && fcntl(c, F_ADD_SEALS, seals) != 0)
		return -1;
	return c;
}

static uint64_t fd_bytes(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* A forged copy of a region or ledger, same size and seals, changed by @edit. */
static int forge(int fd, void (*edit)(void *p, void *arg), void *arg)
{
	const uint64_t bytes = fd_bytes(fd);
	const int seals = fcntl(fd, F_GET_SEALS);
	int c = clone_fd(fd, bytes, 0);
	void *p = c < 0 ? MAP_FAILED : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c, 0);

	if (p == MAP_FAILED || seals < 0)
		return -1;
	edit(p, arg);
	munmap(p, bytes);
	return fcntl(c, F_ADD_SEALS, seals) == 0 ? c : -1;
}

static int log_lines(const char *log)
{
	FILE *f = fopen(log, "r");
	int n = 0, ch;

	while (f && (ch = fgetc(f)) != EOF)
		n += ch == '\n';
	if (f)
		fclose(f);
	return n;
}

/*
 * RESUME of @domain with @n of {region, heap, ledger}; must be answered with
 * @want and, when refused, a hang-up and a new line in vyred's log. Returns the
 * socket of an accepted resume (-1 otherwise); closes nothing of @fds.
 */
static int expect_resume(const struct vyre_test_daemon *d, const char *what, const char *domain,
			 int region, int heap, int ledger, unsigned n, int want)
{
	const int fds[3] = {region, heap, ledger}, before = log_lines(d->log);
	struct vyre_msg r;
	int got[VYRE_MSG_MAX_FDS], status;
	unsigned n_got;
	char line[256];
	int s = hello(domain, VYRE_HELLO_RESUMABLE | VYRE_HELLO_RESUME, fds, n, &status, &r, got,
		      &n_got);
	int ok = s >= 0 && status == want;

	close_fds(got, n_got);
	if (ok && want == 0) {
		ok = n_got == 4 && r.u.hello_reply.restarted == 0;
	} else if (ok) {
		struct vyre_msg m;
		unsigned nf = 0;

		ok = vyre_msg_recv(s, &m, got, VYRE_MSG_MAX_FDS, &nf, 0) == VYRE_E_DISCONNECTED;
		close_fds(got, nf);
		for (int i = 0; i < 100 && log_lines(d->log) <= before; i++)
			rel_sleep_ns(1000000);
		ok = ok && log_lines(d->log) > before;
	}
	snprintf(line, sizeof(line), "%s: %s (want %s)%s", what,
		 status == NO_REPLY ? "no reply" : vyre_strerror(status), vyre_strerror(want),
		 ok || status != want ? "" : ", but no hang-up or no log line");
	check(ok && (in_child || rel_child_running(d->pid)), line);
	if (want != 0 || !ok) {
		if (s >= 0)
			close(s);
		return -1;
	}
	return s;
}

/* ---- edits ---- */

struct ledger_edit {
	const struct kept *k;
	int what;
};

enum { L_MAGIC, L_OUTSIDE, L_OVERLAP, L_DUP_HANDLE, L_BAD_NAME, L_DOMAIN };

static const char *const ledger_case[] = {
    "ledger with a bad magic",	      "ledger entry outside the heap",
    "two overlapping ledger entries", "a handle twice in the ledger",
    "a ledger entry with a bad name", "a ledger of another domain",
};

/* The used entry of @handle, or NULL. */
static struct vyre_ledger_entry *entry(void *p, uint32_t handle)
{
	struct vyre_ledger_header *h = p;
	struct vyre_ledger_entry *e = (struct vyre_ledger_entry *)(h + 1);

	for (uint32_t i = 0; i < h->high && i < h->capacity; i++)
		if (e[i].handle == handle)
			return &e[i];
	return NULL;
}

static void edit_ledger(void *p, void *arg)
{
	const struct ledger_edit *le = arg;
	struct vyre_ledger_header *h = p;
	struct vyre_ledger_entry *a = entry(p, le->k->handle[0]), *b = entry(p, le->k->handle[1]),
				 *named = entry(p, le->k->handle[2]);

	if (!a || !b || !named) {
		h->magic = 0; /* still refused; reported below */
		printf("the ledger lacks the buffers' entries\n");
		failed = 1;
		return;
	}
	switch (le->what) {
	case L_MAGIC:
		h->magic ^= 1;
		break;
	case L_OUTSIDE:
		a->off = h->heap_bytes;
		break;
	case L_OVERLAP:
		b->off = a->off;
		break;
	case L_DUP_HANDLE:
		b->handle = a->handle;
		break;
	case L_BAD_NAME:
		memcpy(named->name, "na me", 5);
		break;
	default:
		memcpy(h->domain, "hz", 2);
	}
}

struct region_edit {
	int what;
};

enum { R_TAIL, R_ACCEPTED };

static void edit_region(void *p, void *arg)
{
	const struct region_edit *re = arg;
	struct vyre_region_header *h = p;

	if (re->what == R_TAIL) {
		h->sq_tail = h->sq_head + h->sq_entries + 1;
	} else {
		h->sq_tail = h->sq_head + 4;
		h->cq_tail = h->sq_head + 4;
		h->sq_accepted = h->sq_head + 2;
	}
}

static void edit_heap_bytes(void *p, void *arg)
{
	struct vyre_ledger_header *h = p;

	h->heap_bytes = *(const uint64_t *)arg;
}

/* ---- the cases ---- */

static void heap_cases(const struct vyre_test_daemon *d, const struct kept *k)
{
	const uint64_t bytes = fd_bytes(k->heap);
	const int seals = fcntl(k->heap, F_GET_SEALS);
	char path[] = "/tmp/vyre-heap-XXXXXX";
	int fd;

	fd = clone_fd(k->heap, bytes, 0);
	expect_resume(d, "heap memfd not sealed", "hx", k->region, fd, k->ledger, 3, VYRE_E_PROTO);
	close(fd);
	fd = clone_fd(k->heap, bytes * 2, seals);
	expect_resume(d, "heap of twice the ledger's size", "hx", k->region, fd, k->ledger, 3,
		      VYRE_E_PROTO);
	close(fd);
	fd = clone_fd(k->heap, bytes / 2, seals);
	expect_resume(d, "heap of half the ledger's size", "hx", k->region, fd, k->ledger, 3,
		      VYRE_E_PROTO);
	close(fd);
	fd = mkstemp(path);
	if (fd >= 0) {
		unlink(path);
		if (ftruncate(fd, (off_t)bytes) != 0) {
			close(fd);
			fd = -1;
		}
	}
	check(fd >= 0, "a regular file for the heap made");
	expect_resume(d, "regular file for the heap", "hx", k->region, fd, k->ledger, 3,
		      VYRE_E_PROTO);
	close(fd);
	/* vyred must write the heap: one sealed against writing, a read-only descriptor */
	fd = clone_fd(k->heap, bytes, seals | F_SEAL_WRITE);
	expect_resume(d, "heap sealed against writing", "hx", k->region, fd, k->ledger, 3,
		      VYRE_E_PROTO);
	close(fd);
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", k->heap);
	fd = open(proc, O_RDONLY | O_CLOEXEC);
	expect_resume(d, "read-only descriptor of the heap", "hx", k->region, fd, k->ledger, 3,
		      VYRE_E_PROTO);
	close(fd);
	/* a heap (and its ledger) of a size that is not a page multiple */
	uint64_t odd = bytes - 256;
	int ledger = forge(k->ledger, edit_heap_bytes, &odd);

	fd = clone_fd(k->heap, odd, seals);
	expect_resume(d, "heap not a page multiple", "hx", k->region, fd, ledger, 3, VYRE_E_PROTO);
	close(fd);
	close(ledger);
}

static void ledger_cases(const struct vyre_test_daemon *d, const struct kept *k)
{
	for (int w = L_MAGIC; w <= L_DOMAIN; w++) {
		struct ledger_edit le = {k, w};
		int fd = forge(k->ledger, edit_ledger, &le);

		check(fd >= 0, "forged ledger made");
		expect_resume(d, ledger_case[w], "hx", k->region, k->heap, fd, 3, VYRE_E_PROTO);
		close(fd);
	}
}

static void region_cases(const struct vyre_test_daemon *d, const struct kept *k)
{
	static const char *const what[] = {"sq_tail more than a ring ahead",
					   "sq_accepted behind cq_tail"};

	for (int w = R_TAIL; w <= R_ACCEPTED; w++) {
		struct region_edit re = {w};
		int fd = forge(k->region, edit_region, &re);

		check(fd >= 0, "forged region made");
		expect_resume(d, what[w], "hx", fd, k->heap, k->ledger, 3, VYRE_E_PROTO);
		close(fd);
	}
	int fd = clone_fd(k->region, fd_bytes(k->region) + 4096, fcntl(k->region, F_GET_SEALS));

	expect_resume(d, "region larger than its header says", "hx", fd, k->heap, k->ledger, 3,
		      VYRE_E_PROTO);
	close(fd);
	expect_resume(d, "RESUME with 2 descriptors", "hx", k->region, k->heap, -1, 2,
		      VYRE_E_PROTO);
	expect_resume(d, "RESUME with the eventfd alone", "hx", -1, -1, -1, 0, VYRE_E_PROTO);
}

/* The genuine resume, then the same region again, then copies for the live domain. */
static void live_cases(const struct vyre_test_daemon *d, const struct kept *k)
{
	int s = expect_resume(d, "the genuine RESUME", "hx", k->region, k->heap, k->ledger, 3, 0);

	if (s < 0)
		return;
	int same = 1;

	for (int b = 0; b < 3; b++) {
		uint64_t off = 0;

		same &= lookup(s, k->handle[b], &off) == 0 && off == k->off[b];
	}
	check(same, "the adopted buffers resolve to their old offsets");
	struct vyre_msg m = {.type = VYRE_MSG_OPEN, .id = 3}, r;

	snprintf(m.u.named.name, sizeof(m.u.named.name), "named");
	check(request(s, &m, &r) == 0 && r.u.buffer_reply.handle == k->handle[2],
	      "the adopted name opens to its old handle");
	expect_resume(d, "the region of a live connection", "hx", k->region, k->heap, k->ledger, 3,
		      VYRE_E_PROTO);
	const int rc = clone_fd(k->region, fd_bytes(k->region), fcntl(k->region, F_GET_SEALS));
	const int hc = clone_fd(k->heap, fd_bytes(k->heap), fcntl(k->heap, F_GET_SEALS));

	expect_resume(d, "another heap for the live domain", "hx", rc, hc, k->ledger, 3,
		      VYRE_E_EXIST);
	close(rc);
	close(hc);
	close(s);
}

/* As uid 65534: resume root's domain "hp". */
static void perm_case(const struct vyre_test_daemon *d, const struct kept *k)
{
	if (geteuid() != 0) {
		printf("skip: resuming a domain the uid may not join (needs root to run as uid "
		       "%u)\n",
		       NOBODY);
		return;
	}
	if (chmod(sock_dir, 0755) != 0 || chmod(sock_path, 0666) != 0 || chmod(d->dir, 0755) != 0) {
		check(0, "chmod the socket for uid 65534");
		return;
	}
	fflush(stdout);
	pid_t pid = fork();

	if (pid == 0) {
		in_child = 1;
		if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			_exit(2);
		expect_resume(d, "uid 65534 resumes root's domain", "hp", k->region, k->heap,
			      k->ledger, 3, VYRE_E_PERM);
		/* its own exact copy of root's ledger names root as the creator: not a vyred's */
		const int copy =
		    clone_fd(k->ledger, fd_bytes(k->ledger), fcntl(k->ledger, F_GET_SEALS));

		expect_resume(d, "uid 65534 hands over a ledger it made", "hp", k->region, k->heap,
			      copy, 3, VYRE_E_PROTO);
		fflush(stdout);
		_exit(failed);
	}
	const int st = rel_wait_child(pid, 30 * 1000000000ull);

	check(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "uid 65534 refused with PERM");
}

int main(void)
{
	const char *first[] = {"--backend", "cpu", NULL};
	struct vyre_test_daemon a, b;
	struct kept hx, hp;
	volatile int *stop = rel_shared_alloc(4096);
	uint64_t rng = rel_seed("test_resume_hostile");
	pid_t honest[HONEST];

	memset(&b, 0, sizeof(b));
	if (!stop || vyre_test_daemon_start(&a, first) != 0)
		return 1;
	sock_path = a.socket;
	sock_dir = a.dir;
	const int sx = make_kept("hx", &hx), sp = make_kept("hp", &hp);

	check(sx >= 0 && sp >= 0, "resumable connections with buffers on the first vyred");
	vyre_test_daemon_kill(&a);
	const char *again[] = {"--backend", "cpu",	   "--socket", a.socket, "--allow-uid",
			       "0",	    "--allow-uid", "65534",    NULL};

	if (failed || vyre_test_daemon_start(&b, again) != 0) {
		check(0, "a new vyred on the same socket");
		vyre_test_daemon_cleanup(&a);
		return 1;
	}
	close(sx);
	close(sp);
	for (uint32_t i = 0; i < HONEST; i++)
		honest[i] = rel_honest_spawn(sock_path, rel_rand(&rng), stop);
	heap_cases(&b, &hx);
	ledger_cases(&b, &hx);
	region_cases(&b, &hx);
	live_cases(&b, &hx);
	perm_case(&b, &hp);
	*stop = 1;
	for (uint32_t i = 0; i < HONEST; i++) {
		int st = rel_wait_child(honest[i], 120 * 1000000000ull);

		check(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "an honest producer of the new vyred matched the oracle");
	}
	check(rel_child_running(b.pid), "vyred is alive after every forged RESUME");
	if (failed)
		vyre_test_daemon_dump_log(&b);
	check(vyre_test_daemon_stop(&b) == 0, "vyred stops cleanly");
	vyre_test_daemon_cleanup(&b);
	vyre_test_daemon_cleanup(&a);
	printf("%s\n", failed ? "FAILED" : "ok");
	return failed;
}
