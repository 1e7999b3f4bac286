/* SPDX-License-Identifier: MIT */
/*
 * test_named_buffers - named buffers (docs/design.md section 5) against a
 * real vyred on the CPU backend:
 *  - processes of one domain create, open, list and free buffers by name
 *    and see each other's bytes, also through items;
 *  - bad names (empty, 49 bytes, bad characters, a leading '.') are
 *    VYRE_E_INVAL; a duplicate is VYRE_E_EXIST; a name of another domain
 *    is VYRE_E_NOENT; a named device buffer opens with its flags;
 *  - a freed name (by name or by handle) is gone and may be used again;
 *  - a free that waits for an in-flight batch keeps the name until then;
 *  - a domain that closes takes its names with it;
 *  - --max-buffers counts named buffers; a refused create leaves no name;
 *  - hundreds of names list completely and in order, also past thousands
 *    of unnamed buffers (several LIST stretches);
 *  - a uid that may not join a domain cannot reach its names (as root:
 *    fork + setuid(65534), else skipped with a message).
 * The shared part runs once on one loop and once with --loops 2 --gpus 0,1.
 */
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../gpu/ops.h"
#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define HEAP_BYTES (64ull << 20)
#define BIG_BYTES  (48u << 20)
#define WAIT_NS	   (120ll * 1000000000ll)
#define CHILDREN   3
#define MANY	   300u
#define NOBODY	   65534u

static struct vyre_test_daemon dmn;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int connect_to(const char *domain, struct vyre_client **c)
{
	struct vyre_connect_opts o = {
	    .socket_path = dmn.socket, .domain = domain, .heap_bytes = HEAP_BYTES};
	int rc = vyre_connect(&o, c);

	if (rc != 0)
		FAIL("connect (domain %s): %s", domain ? domain : "private", vyre_strerror(rc));
	return 0;
}

static int expect(int got, int want, const char *what, const char *name)
{
	if (got != want)
		FAIL("%s '%s': %s, want %s", what, name, vyre_strerror(got), vyre_strerror(want));
	return 0;
}

static int create(struct vyre_client *c, const char *name, uint32_t bytes, uint32_t *h)
{
	return expect(vyre_buffer_create(c, name, bytes, 0, h), 0, "create", name);
}

/* Opens @name and checks its size; *h gets its handle. */
static int open_sized(struct vyre_client *c, const char *name, uint32_t bytes, uint32_t *h)
{
	uint32_t got_bytes = 0, flags = 99;
	int rc = vyre_buffer_open(c, name, h, &got_bytes, &flags);

	if (rc != 0)
		FAIL("open '%s': %s", name, vyre_strerror(rc));
	if (got_bytes != bytes || flags != 0 || *h == 0)
		FAIL("open '%s': %u bytes, flags %u, handle %u", name, got_bytes, flags, *h);
	return 0;
}

static uint32_t *words(struct vyre_client *c, uint32_t h)
{
	uint32_t bytes = 0;

	return vyre_buffer_ptr(c, h, &bytes);
}

static int submit_wait(struct vyre_client *c, uint32_t op, uint32_t in, uint32_t out,
		       uint32_t param, uint64_t user_data, struct vyre_cqe *cqe)
{
	struct vyre_work_item it = {op, in, out, param};
	int rc = vyre_submit(c, &it, user_data, 0);

	if (rc != 0)
		FAIL("submit %" PRIu64 ": %s", user_data, vyre_strerror(rc));
	rc = vyre_wait(c, cqe, 1, WAIT_NS);
	if (rc != 1 || cqe->user_data != user_data || cqe->status != 0)
		FAIL("item %" PRIu64 ": %s, status %d", user_data, rc < 0 ? vyre_strerror(rc) : "-",
		     cqe->status);
	return 0;
}

/* vyre_buffer_list must give exactly @n entries named as @want (in order). */
static int expect_list(struct vyre_client *c, const char *const *want, uint32_t n)
{
	struct vyre_buffer_info out[16];
	int got = vyre_buffer_list(c, out, 16);

	if (got != (int)n)
		FAIL("list: %d entries (%s), want %u", got, got < 0 ? vyre_strerror(got) : "-", n);
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(out[i].name, want[i]) != 0)
			FAIL("list entry %u is '%s', want '%s'", i, out[i].name, want[i]);
	return 0;
}

/* ---- processes ---- */

/* Child @i: reads alpha, makes child-@i = alpha + 100 + @i through an ADD item. */
static int child(int i)
{
	struct vyre_client *c;
	struct vyre_cqe cqe;
	uint32_t alpha, mine, seen = 0;
	char name[24];
	struct vyre_buffer_info out[8];

	snprintf(name, sizeof(name), "child-%d", i);
	if (connect_to("shared", &c) || open_sized(c, "alpha", 64, &alpha))
		return -1;
	const uint32_t *a = words(c, alpha);

	if (!a)
		FAIL("child %d: alpha has no address", i);
	for (uint32_t k = 0; k < 16; k++)
		if (a[k] != k * 3 + 1)
			FAIL("child %d: alpha[%u] = %u", i, k, a[k]);
	if (create(c, name, 64, &mine) ||
	    submit_wait(c, VYRE_OP_ADD, alpha, mine, 100 + (uint32_t)i, 1, &cqe))
		return -1;
	int n = vyre_buffer_list(c, out, 8);

	for (int k = 0; k < n && k < 8; k++)
		seen += strcmp(out[k].name, "alpha") == 0 || strcmp(out[k].name, name) == 0;
	if (n < 2 || seen != 2)
		FAIL("child %d: list of %d entries lacks alpha or its own", i, n);
	vyre_close(c);
	return 0;
}

static int run_children(int (*fn)(int), int n)
{
	pid_t pids[CHILDREN];

	fflush(NULL);
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(fn(i) == 0 ? 0 : 1);
	}
	for (int i = 0; i < n; i++) {
		int st;

		if (pids[i] < 0 || waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			FAIL("child %d failed", i);
	}
	return 0;
}

/* Another process frees child-1 and alpha by name. */
static int freer(int i)
{
	struct vyre_client *c;

	(void)i;
	if (connect_to("shared", &c) ||
	    expect(vyre_buffer_free_name(c, "child-1"), 0, "free", "child-1") ||
	    expect(vyre_buffer_free_name(c, "alpha"), 0, "free", "alpha"))
		return -1;
	vyre_close(c);
	return 0;
}

static int processes(void)
{
	static const char *const all[] = {"alpha", "child-0", "child-1", "child-2"};
	static const char *const left[] = {"child-0", "child-2"};
	struct vyre_client *p;
	uint32_t alpha, h;

	if (connect_to("shared", &p) || create(p, "alpha", 64, &alpha))
		return -1;
	uint32_t *a = words(p, alpha);

	for (uint32_t k = 0; k < 16; k++)
		a[k] = k * 3 + 1;
	if (run_children(child, CHILDREN) || expect_list(p, all, 4))
		return -1;
	for (int i = 0; i < CHILDREN; i++) {
		if (open_sized(p, all[i + 1], 64, &h))
			return -1;
		const uint32_t *w = words(p, h);

		for (uint32_t k = 0; w && k < 16; k++)
			if (w[k] != k * 3 + 1 + 100 + (uint32_t)i)
				FAIL("%s[%u] = %u", all[i + 1], k, w[k]);
		if (!w)
			FAIL("%s has no address", all[i + 1]);
	}
	if (run_children(freer, 1) || expect_list(p, left, 2) ||
	    expect(vyre_buffer_open(p, "child-1", &h, NULL, NULL), VYRE_E_NOENT, "open",
		   "child-1") ||
	    expect(vyre_buffer_open(p, "alpha", &h, NULL, NULL), VYRE_E_NOENT, "open", "alpha"))
		return -1;
	vyre_close(p);
	printf("ok: %d processes create, open, list and free by name and share bytes\n",
	       CHILDREN + 2);
	return 0;
}

/* ---- names and domains ---- */

static int bad_names(void)
{
	char long_name[VYRE_BUFFER_NAME_MAX + 2];
	const char *bad[] = {"",	long_name, "a b",   "a/b", "x\n", "caf\xc3\xa9",
			     ".hidden", "-dash",   "_under"};
	struct vyre_client *c;
	uint32_t h;

	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	if (connect_to(NULL, &c))
		return -1;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (expect(vyre_buffer_create(c, bad[i], 64, 0, &h), VYRE_E_INVAL, "create",
			   bad[i]) ||
		    expect(vyre_buffer_open(c, bad[i], &h, NULL, NULL), VYRE_E_INVAL, "open",
			   bad[i]) ||
		    expect(vyre_buffer_free_name(c, bad[i]), VYRE_E_INVAL, "free", bad[i]))
			return -1;
	if (expect(vyre_buffer_create(c, NULL, 64, 0, &h), VYRE_E_INVAL, "create", "(null)") ||
	    expect(vyre_buffer_open(c, NULL, &h, NULL, NULL), VYRE_E_INVAL, "open", "(null)") ||
	    expect(vyre_buffer_free_name(c, NULL), VYRE_E_INVAL, "free", "(null)") ||
	    expect(vyre_buffer_create(c, "odd", 6, 0, &h), VYRE_E_INVAL, "create 6 bytes", "odd") ||
	    expect(vyre_buffer_list(c, NULL, 1), VYRE_E_INVAL, "list into NULL", "-"))
		return -1;
	long_name[VYRE_BUFFER_NAME_MAX] = '\0'; /* 48 bytes: the longest name */
	if (create(c, long_name, 64, &h) || create(c, "9.lives_Here-x", 4, &h) ||
	    open_sized(c, long_name, 64, &h))
		return -1;
	vyre_close(c);
	printf("ok: bad names are refused with E_INVAL; 48 bytes and every allowed character "
	       "work\n");
	return 0;
}

static int duplicates_and_domains(void)
{
	struct vyre_client *a, *b, *other, *priv;
	uint32_t ha, hb, hc, h, bytes = 0, flags = 0;

	if (connect_to("d1", &a) || connect_to("d1", &b) || connect_to("d2", &other) ||
	    connect_to(NULL, &priv) || create(a, "dup", 64, &ha) ||
	    expect(vyre_buffer_create(a, "dup", 64, 0, &h), VYRE_E_EXIST, "create again", "dup") ||
	    expect(vyre_buffer_create(b, "dup", 128, VYRE_BUF_DEVICE, &h), VYRE_E_EXIST,
		   "create from another client", "dup") ||
	    create(other, "dup", 32, &hc) || open_sized(b, "dup", 64, &hb) ||
	    open_sized(other, "dup", 32, &h))
		return -1;
	if (hb != ha || h != hc || hc == ha)
		FAIL("handles: a %u, b opened %u; other domain %u, opened %u", ha, hb, hc, h);
	if (expect(vyre_buffer_open(priv, "dup", &h, NULL, NULL), VYRE_E_NOENT, "open private",
		   "dup") ||
	    expect(vyre_buffer_free_name(priv, "dup"), VYRE_E_NOENT, "free private", "dup") ||
	    expect(vyre_buffer_list(priv, NULL, 0), 0, "list private", "-") ||
	    expect(vyre_buffer_list(other, NULL, 0), 1, "list d2", "-"))
		return -1;
	/* a named device buffer: flags come back, its bytes are not the client's */
	if (expect(vyre_buffer_create(a, "dev", 256, VYRE_BUF_DEVICE, &h), 0, "create device",
		   "dev") ||
	    expect(vyre_buffer_open(b, "dev", &hb, &bytes, &flags), 0, "open device", "dev"))
		return -1;
	if (hb != h || bytes != 256 || flags != VYRE_BUF_DEVICE || vyre_buffer_ptr(b, hb, NULL))
		FAIL("device buffer opened as handle %u, %u bytes, flags %u", hb, bytes, flags);
	/* a handle opened by name works in items of the opener */
	struct vyre_cqe cqe;

	if (submit_wait(b, VYRE_OP_FILL, 0, hb, 7, 2, &cqe) ||
	    submit_wait(b, VYRE_OP_COPY, hb, ha, 0, 3, &cqe))
		return -1;
	if (words(a, ha)[15] != 7)
		FAIL("COPY through the opened device buffer: %u", words(a, ha)[15]);
	vyre_close(a);
	vyre_close(b);
	vyre_close(other);
	vyre_close(priv);
	printf("ok: duplicates get E_EXIST; other domains see E_NOENT and have names of their "
	       "own\n");
	return 0;
}

static int free_and_reuse(void)
{
	struct vyre_client *a, *b;
	uint32_t h1, h2, h3, h;

	if (connect_to("reuse", &a) || connect_to("reuse", &b) || create(a, "r", 64, &h1) ||
	    expect(vyre_buffer_free_name(b, "r"), 0, "free", "r") ||
	    expect(vyre_buffer_open(a, "r", &h, NULL, NULL), VYRE_E_NOENT, "open freed", "r") ||
	    expect(vyre_buffer_free_name(b, "r"), VYRE_E_NOENT, "free again", "r"))
		return -1;
	if (vyre_buffer_ptr(b, h1, NULL) != NULL)
		FAIL("a freed buffer still has an address");
	if (create(a, "r", 128, &h2) || open_sized(b, "r", 128, &h))
		return -1;
	if (h2 == h1 || h != h2)
		FAIL("reused name: old handle %u, new %u, opened %u", h1, h2, h);
	/* a free by handle frees the name too */
	if (expect(vyre_buffer_free(b, h2), 0, "free by handle", "r") ||
	    expect(vyre_buffer_open(a, "r", &h, NULL, NULL), VYRE_E_NOENT, "open", "r") ||
	    create(b, "r", 4, &h3) || open_sized(a, "r", 4, &h))
		return -1;
	if (h != h3)
		FAIL("opened %u, created %u", h, h3);
	vyre_close(a);
	vyre_close(b);
	printf("ok: a name freed by name or by handle is gone and can be used again\n");
	return 0;
}

/* ---- a free behind an in-flight batch ---- */

struct pending_free {
	struct vyre_client *c;
	volatile int sent, done, rc;
};

static void *free_big(void *arg)
{
	struct pending_free *f = arg;

	__atomic_store_n(&f->sent, 1, __ATOMIC_RELEASE);
	f->rc = vyre_buffer_free_name(f->c, "big");
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int wait_dispatched(uint64_t user_data)
{
	return vyre_test_wait_dispatched(&dmn, user_data, WAIT_NS);
}

/* The big buffer, and a one-state DFA that accepts every byte: the scan's result is its length. */
static int slow_setup(struct vyre_client *a, uint32_t *big, uint32_t *table, uint32_t *out)
{
	uint32_t bytes = (uint32_t)vyre_dfa_table_bytes(1);

	if (create(a, "big", BIG_BYTES, big) || vyre_buffer_alloc(a, bytes, 0, table) ||
	    vyre_buffer_alloc(a, 4, 0, out))
		FAIL("buffers for the slow item");
	uint8_t *p = (uint8_t *)words(a, *big);
	uint32_t *w = words(a, *table);

	for (uint32_t i = 0; i < BIG_BYTES; i++)
		p[i] = (uint8_t)(i * 7u + 1u);
	w[0] = 1;
	w[1] = 0;
	w[2] = 1;
	for (uint32_t i = 3; i < bytes / 4; i++)
		w[i] = 0;
	return 0;
}

static int deferred_free(void)
{
	struct vyre_client *a, *b;
	struct pending_free f = {0};
	struct vyre_work_item it;
	struct vyre_cqe cqe;
	uint32_t big, table, out, h;
	pthread_t t;

	if (connect_to("slow", &a) || connect_to("slow", &b) || slow_setup(a, &big, &table, &out))
		return -1;
	it = (struct vyre_work_item){VYRE_OP_DFA_SCAN, big, out, table};
	if (vyre_submit(a, &it, 30, 0) != 0 || wait_dispatched(30))
		return -1;
	f.c = b;
	if (pthread_create(&t, NULL, free_big, &f) != 0)
		FAIL("pthread_create");
	while (!__atomic_load_n(&f.sent, __ATOMIC_ACQUIRE))
		usleep(100);
	usleep(2000); /* the FREE_NAME reaches vyred, which holds it behind the batch */
	int open_rc = vyre_buffer_open(a, "big", &h, NULL, NULL);
	int create_rc = vyre_buffer_create(a, "big", 4, 0, &out);
	int listed = vyre_buffer_list(a, NULL, 0);
	int freed_early = __atomic_load_n(&f.done, __ATOMIC_ACQUIRE);
	int posted_early = vyre_reap(a, &cqe, 1);

	if (posted_early != 0 || freed_early) {
		/* the batch ended before the checks, so they prove nothing: say so */
		pthread_join(t, NULL);
		FAIL("the slow item ended before the checks ran (CQE %d, free %d)", posted_early,
		     freed_early);
	}
	if (open_rc != 0 || h != big || create_rc != VYRE_E_EXIST || listed != 1)
		FAIL("while the free waits: open %s (handle %u of %u), create %s, list %d",
		     vyre_strerror(open_rc), h, big, vyre_strerror(create_rc), listed);
	int n = vyre_wait(a, &cqe, 1, WAIT_NS);

	pthread_join(t, NULL);
	if (n != 1 || cqe.status != 0 || cqe.result != BIG_BYTES || f.rc != 0)
		FAIL("slow item: %d CQE, status %d, result %" PRIu64 "; free %s", n, cqe.status,
		     cqe.result, vyre_strerror(f.rc));
	if (expect(vyre_buffer_open(a, "big", &h, NULL, NULL), VYRE_E_NOENT, "open after", "big"))
		return -1;
	vyre_close(a);
	vyre_close(b);
	printf("ok: a free behind an in-flight batch keeps the name until the batch completes\n");
	return 0;
}

/* ---- many names, domains that close, limits ---- */

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int many_names(void)
{
	static char names[MANY][16];
	static const char *sorted[MANY];
	static struct vyre_buffer_info out[MANY + 8];
	struct vyre_client *c;
	uint32_t h, filler;

	if (connect_to(NULL, &c))
		return -1;
	/* thousands of unnamed buffers first, so the names lie past several LIST stretches */
	for (uint32_t i = 0; i < 9000; i++)
		if (vyre_buffer_alloc(c, 4, 0, &filler) != 0)
			FAIL("filler buffer %u", i);
	for (uint32_t i = 0; i < MANY; i++) {
		uint32_t k = (i * 7919u) % MANY; /* created out of name order */

		snprintf(names[i], sizeof(names[i]), "n%c-%u", 'a' + k % 26, k);
		sorted[i] = names[i];
		if (create(c, names[i], 4 * (k % 8), &h) || vyre_buffer_alloc(c, 4, 0, &filler))
			return -1;
	}
	qsort(sorted, MANY, sizeof(sorted[0]), cmp_str);
	int n = vyre_buffer_list(c, out, MANY + 8);

	if (n != (int)MANY)
		FAIL("list: %d of %u names", n, MANY);
	for (uint32_t i = 0; i < MANY; i++) {
		uint32_t bytes = 0, flags = 9;

		if (strcmp(out[i].name, sorted[i]) != 0)
			FAIL("list entry %u: '%s', want '%s'", i, out[i].name, sorted[i]);
		if (vyre_buffer_open(c, out[i].name, &h, &bytes, &flags) != 0 ||
		    h != out[i].handle || bytes != out[i].bytes || flags != out[i].flags)
			FAIL("entry '%s' disagrees with its open", out[i].name);
	}
	memset(out, 0, sizeof(out));
	if (vyre_buffer_list(c, NULL, 0) != (int)MANY ||
	    vyre_buffer_list(c, out, 10) != (int)MANY || strcmp(out[9].name, sorted[9]) != 0 ||
	    out[10].name[0] != '\0')
		FAIL("list with a short array");
	for (uint32_t i = 0; i < MANY; i += 3)
		if (vyre_buffer_free_name(c, sorted[i]) != 0)
			FAIL("free '%s'", sorted[i]);
	n = vyre_buffer_list(c, out, MANY);
	if (n != (int)(MANY - (MANY + 2) / 3) || strcmp(out[0].name, sorted[1]) != 0)
		FAIL("list after freeing every third name: %d entries, first '%s'", n,
		     n > 0 ? out[0].name : "-");
	vyre_close(c);
	printf("ok: %u names list completely and in order past 9000 unnamed buffers\n", MANY);
	return 0;
}

static int domain_close(void)
{
	struct vyre_client *a, *b;
	uint32_t h;
	const uint64_t until = now_ns() + 10000000000ull;

	if (connect_to("eph", &a) || create(a, "x", 64, &h))
		return -1;
	vyre_close(a);
	/* vyred sees the hang-up in its own time: ask until the new domain is fresh */
	for (;;) {
		if (connect_to("eph", &b))
			return -1;
		int rc = vyre_buffer_open(b, "x", &h, NULL, NULL);

		vyre_close(b);
		if (rc == VYRE_E_NOENT)
			break;
		if (rc != 0 || now_ns() > until)
			FAIL("open 'x' after its domain closed: %s", vyre_strerror(rc));
		usleep(1000);
	}
	printf("ok: a domain that closes takes its names with it\n");
	return 0;
}

static int start(const char *const *extra)
{
	const char *args[16] = {"--backend", "cpu", "--inflight", "4", "--cpu-threads", "2"};
	int n = 6;

	for (int i = 0; extra && extra[i] && n < 15; i++)
		args[n++] = extra[i];
	args[n] = NULL;
	return vyre_test_daemon_start(&dmn, args);
}

static int stop(void)
{
	return vyre_test_daemon_finish(&dmn);
}

static int shared_suite(const char *const *extra, const char *what)
{
	printf("-- %s\n", what);
	if (start(extra) || processes() || bad_names() || duplicates_and_domains() ||
	    free_and_reuse() || deferred_free() || many_names() || domain_close())
		return -1;
	return stop();
}

/* Creates @prefix0 .. @prefix7 in @c: every handle slot of a --max-buffers 8 loop. */
static int fill_slots(struct vyre_client *c, char prefix)
{
	char name[3] = {prefix, '0', '\0'};
	uint32_t h;

	for (int i = 0; i < 8; i++) {
		name[1] = (char)('0' + i);
		if (create(c, name, 4, &h))
			return -1;
	}
	return 0;
}

/*
 * A domain closes with its names while a new one reuses every slot they
 * had: the new names must resolve, the old ones must not.
 */
static int slots_reused(void)
{
	static const char *const want[] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"};
	struct vyre_client *c;
	uint32_t h;
	const uint64_t until = now_ns() + 10000000000ull;

	if (connect_to("eph", &c) || fill_slots(c, 'a'))
		return -1;
	vyre_close(c);
	for (;;) {
		if (connect_to("eph", &c))
			return -1;
		int rc = vyre_buffer_open(c, "a0", &h, NULL, NULL);

		if (rc == VYRE_E_NOENT)
			break;
		vyre_close(c);
		if (rc != 0 || now_ns() > until)
			FAIL("open 'a0' after its domain closed: %s", vyre_strerror(rc));
		usleep(1000);
	}
	if (fill_slots(c, 'c') || expect_list(c, want, 8))
		return -1;
	for (int i = 0; i < 8; i++)
		if (open_sized(c, want[i], 4, &h) ||
		    expect(vyre_buffer_open(c, "a1", &h, NULL, NULL), VYRE_E_NOENT, "open", "a1"))
			return -1;
	vyre_close(c);
	return 0;
}

static int limits(void)
{
	static const char *const args[] = {"--max-buffers", "8", NULL};
	struct vyre_client *c;
	uint32_t h;
	const uint64_t until = now_ns() + 10000000000ull;

	if (start(args) || slots_reused())
		return -1;
	/* the domain of slots_reused closes in vyred's own time */
	for (;;) {
		if (connect_to(NULL, &c))
			return -1;
		int rc = vyre_buffer_create(c, "b0", 4, 0, &h);

		if (rc == 0)
			break;
		vyre_close(c);
		if (rc != VYRE_E_NOMEM || now_ns() > until)
			FAIL("create 'b0' in an empty loop: %s", vyre_strerror(rc));
		usleep(1000);
	}
	if (expect(vyre_buffer_free_name(c, "b0"), 0, "free", "b0") || fill_slots(c, 'b'))
		return -1;
	if (expect(vyre_buffer_create(c, "b8", 4, 0, &h), VYRE_E_NOMEM, "create past the limit",
		   "b8") ||
	    expect(vyre_buffer_open(c, "b8", &h, NULL, NULL), VYRE_E_NOENT, "open refused", "b8") ||
	    expect(vyre_buffer_create(c, "b0", 4, 0, &h), VYRE_E_EXIST, "create", "b0") ||
	    expect(vyre_buffer_free_name(c, "b3"), 0, "free", "b3") || create(c, "b8", 4, &h) ||
	    expect(vyre_buffer_list(c, NULL, 0), 8, "list", "-"))
		return -1;
	vyre_close(c);
	printf("ok: named buffers count against --max-buffers; a refused create leaves no name; "
	       "names of a closed domain leave their slots clean\n");
	return stop();
}

/* As uid 65534: refused by root's domain, and its names are out of reach from any other. */
static int nobody(int i)
{
	struct vyre_connect_opts o = {
	    .socket_path = dmn.socket, .domain = "rootdom", .heap_bytes = 1u << 20};
	struct vyre_client *c = NULL;
	uint32_t h;

	(void)i;
	if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
		FAIL("setuid");
	int rc = vyre_connect(&o, &c);

	if (rc != VYRE_E_PERM)
		FAIL("uid %u joining root's domain: %s", NOBODY, vyre_strerror(rc));
	if (connect_to(NULL, &c) ||
	    expect(vyre_buffer_open(c, "secret", &h, NULL, NULL), VYRE_E_NOENT, "open", "secret") ||
	    expect(vyre_buffer_list(c, NULL, 0), 0, "list", "-"))
		return -1;
	vyre_close(c);
	if (connect_to("nobodydom", &c) || create(c, "secret", 4, &h))
		return -1;
	vyre_close(c);
	return 0;
}

static int other_uid(void)
{
	static const char *const args[] = {"--allow-uid", "0", "--allow-uid", "65534", NULL};
	struct vyre_client *root;
	uint32_t h, mine;

	if (geteuid() != 0) {
		printf("skip: a uid not allowed into the domain (needs root to run as uid %u)\n",
		       NOBODY);
		return 0;
	}
	if (start(args) || chmod(dmn.dir, 0755) != 0 || chmod(dmn.socket, 0666) != 0 ||
	    connect_to("rootdom", &root) || create(root, "secret", 64, &mine) ||
	    run_children(nobody, 1) || open_sized(root, "secret", 64, &h) ||
	    expect(vyre_buffer_list(root, NULL, 0), 1, "list", "-"))
		return -1;
	if (h != mine)
		FAIL("root's 'secret' is now handle %u, was %u", h, mine);
	vyre_close(root);
	printf("ok: uid %u may not join root's domain and cannot reach its names\n", NOBODY);
	return stop();
}

int main(void)
{
	static const char *const two_loops[] = {"--loops", "2", "--gpus", "0,1", NULL};
	int rc = shared_suite(NULL, "one loop") ||
		 shared_suite(two_loops, "--loops 2 --gpus 0,1") || limits() || other_uid();

	if (rc) {
		vyre_test_daemon_dump_log(&dmn);
		vyre_test_daemon_cleanup(&dmn);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
