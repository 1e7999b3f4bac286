/* SPDX-License-Identifier: MIT */
/*
 * test_crash - producers SIGKILLed at random points while vyred serves others.
 *
 * 16 producer processes run against one vyred: 4 honest survivors checking
 * every CQE and buffer against the oracle (test_crash_honest.h), and 12
 * victim slots, each running one victim after another and SIGKILLing it at a
 * random moment: during connect, in the middle of a control message (every
 * item allocates its own buffer first), between reserving and publishing an
 * SQE, while reaping. Half the victims work in a shared domain that this
 * process keeps alive (a new one every 32 victims, so domains are also torn
 * down under the crashes); each of their items fills its own fresh buffer
 * with a unique tag, so after a kill every item is checked: vyred's accept
 * log lists it and its buffer holds its tag, or it is absent and its buffer
 * is still zero - executed or never accepted, nothing in between.
 *
 * After each kill the victim's region (and a private victim's heap) must
 * leave vyred's mappings; the time that takes is reported against the
 * 100 ms promise (asserted only with VYRE_TEST_STRICT_TIMING=1, since CI
 * machines under sanitizers are slow). At the end vyred must still be up,
 * its descriptors and memfd mappings back at their baseline, the survivors
 * must have matched the oracle, and SIGTERM must stop it cleanly.
 *
 * VYRE_TEST_SCALE=N multiplies the kills (default 600); VYRE_TEST_SEED
 * replays a run's random choices (kill times stay subject to scheduling).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vyre/vyre.h"

#include "test_crash_honest.h"
#include "test_crash_proc.h"
#include "test_integration_daemon.h"

#define PRODUCERS     16u
#define SURVIVORS     4u
#define SLOTS	      (PRODUCERS - SURVIVORS)
#define KILLS	      600u
#define MAX_HANDLES   2048u
#define KILL_WITHIN   (6 * 1000000ull) /* a victim lives up to 6 ms */
#define RECLAIM_LIMIT (5 * 1000000000ull)
#define RECLAIM_GOAL  (100 * 1000000ull)
#define GENS	      4u
#define GEN_SPAWNS    32u

/* What one victim tells the parent, through memory shared across fork. */
struct victim_page {
	uint32_t ready; /* connected and described below */
	uint32_t client_id;
	uint64_t region_ino;
	uint64_t heap_ino;
	uint32_t n; /* buffers [0, n) are recorded, each before its item is submitted */
	uint32_t handle[MAX_HANDLES];
	uint64_t offset[MAX_HANDLES]; /* in the domain heap */
};

struct slot {
	pid_t pid;
	uint32_t instance;
	int shared;   /* in a shared domain, else a private domain */
	uint32_t gen; /* the shared domain: victims-<gen> */
	uint64_t kill_at;
	struct victim_page *page;
	uint8_t accepted[MAX_HANDLES / 8];
};

struct run {
	struct vyre_test_daemon d;
	/* One observer keeps each shared domain alive; a new domain every GEN_SPAWNS spawns. */
	struct vyre_client *observer[GENS];
	uint32_t gen_live[GENS];
	uint32_t gen;
	struct slot slots[SLOTS];
	int accept_fd; /* vyred's accept log, read as it grows */
	char log_buf[8192];
	size_t log_len;
	uint64_t rng;
	uint64_t kills, connected, items_checked, items_accepted;
	uint64_t *reclaim_ns;
	uint64_t n_reclaim;
	int failed;
};

static uint32_t tag(uint32_t instance, uint32_t j)
{
	return ((instance << 11) | j) ^ 0x80000000u;
}

static void domain_name(char *buf, size_t len, uint32_t gen)
{
	snprintf(buf, len, "victims-%u", gen);
}

static void victim_main(const char *socket, uint32_t instance, const char *domain,
			struct victim_page *page, uint64_t seed)
{
	struct vyre_connect_opts o = {.socket_path = socket, .domain = domain, .sq_entries = 64};
	struct vyre_client *c;
	struct vyre_cqe cqes[32];
	uint64_t rng = seed, heap_bytes;

	if (vyre_connect(&o, &c) != 0)
		_exit(0);
	const uint8_t *heap = rel_client_heap(c, &heap_bytes);

	rel_client_inodes(c, &page->region_ino, &page->heap_ino);
	page->client_id = rel_client_id(c);
	__atomic_store_n(&page->ready, 1, __ATOMIC_RELEASE);
	for (uint32_t j = 0; j < MAX_HANDLES; j++) {
		uint32_t h;
		uint64_t r = rel_rand(&rng);

		if (vyre_buffer_alloc(c, 4, 0, &h) != 0)
			break;
		page->handle[j] = h;
		page->offset[j] = (uint64_t)((const uint8_t *)vyre_buffer_ptr(c, h, NULL) - heap);
		__atomic_store_n(&page->n, j + 1, __ATOMIC_RELEASE);
		struct vyre_work_item it = {VYRE_OP_FILL, 0, h, tag(instance, j)};

		while (vyre_submit(c, &it, j, (r & 7) == 0 ? VYRE_SQE_FENCE : 0) == VYRE_E_AGAIN)
			vyre_wait(c, cqes, 32, 1000000);
		if ((r >> 8) % 4 == 0)
			vyre_reap(c, cqes, 32);
		if ((r >> 12) % 16 == 0)
			vyre_wait(c, cqes, 32, 200000);
	}
	for (;;)
		pause();
}

static int open_generation(struct run *run, uint32_t gen)
{
	char name[32];
	struct vyre_connect_opts o = {.socket_path = run->d.socket, .domain = name};

	domain_name(name, sizeof(name), gen);
	run->gen_live[gen % GENS] = 0;
	return vyre_connect(&o, &run->observer[gen % GENS]);
}

static void retire_generation(struct run *run, uint32_t gen)
{
	uint32_t g = gen % GENS;

	if (run->gen_live[g] == 0 && gen != run->gen && run->observer[g]) {
		vyre_close(run->observer[g]);
		run->observer[g] = NULL;
	}
}

static void spawn(struct run *run, struct slot *s, uint32_t instance)
{
	uint64_t seed = rel_rand(&run->rng);
	char domain[32];

	if (instance && instance % GEN_SPAWNS == 0) {
		if (run->observer[(run->gen + 1) % GENS]) {
			printf("too many shared domains still in use\n");
			run->failed = 1;
			return;
		}
		if (open_generation(run, run->gen + 1) != 0) {
			printf("cannot create shared domain %u\n", run->gen + 1);
			run->failed = 1;
			return;
		}
		run->gen++;
		retire_generation(run, run->gen - 1);
	}
	memset(s->page, 0, sizeof(*s->page));
	memset(s->accepted, 0, sizeof(s->accepted));
	s->instance = instance;
	s->shared = instance % 2 == 0;
	s->gen = run->gen;
	run->gen_live[s->gen % GENS]++;
	domain_name(domain, sizeof(domain), s->gen);
	s->kill_at = rel_now_ns() + rel_rand(&run->rng) % KILL_WITHIN;
	fflush(stdout);
	s->pid = fork();
	if (s->pid == 0)
		victim_main(run->d.socket, instance, s->shared ? domain : NULL, s->page, seed);
}

/* An old shared domain without live victims: closing its observer ends the domain. */
/* Records one accept-log line "client user_data" in the bitmap of its shared victim. */
static void accept_line(struct run *run, const char *line)
{
	unsigned client;
	unsigned long long user_data;

	if (sscanf(line, "%u %llu", &client, &user_data) != 2 || user_data >= MAX_HANDLES)
		return;
	for (uint32_t k = 0; k < SLOTS; k++) {
		struct slot *s = &run->slots[k];

		if (s->pid && s->shared && __atomic_load_n(&s->page->ready, __ATOMIC_ACQUIRE) &&
		    s->page->client_id == client)
			s->accepted[user_data / 8] |= (uint8_t)(1u << (user_data % 8));
	}
}

/* Reads what vyred appended to its accept log; a partial last line waits for the rest. */
static void read_accept_log(struct run *run)
{
	for (;;) {
		ssize_t n = read(run->accept_fd, run->log_buf + run->log_len,
				 sizeof(run->log_buf) - 1 - run->log_len);

		if (n <= 0)
			return;
		run->log_len += (size_t)n;
		run->log_buf[run->log_len] = '\0';
		char *line = run->log_buf, *nl;

		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			accept_line(run, line);
			line = nl + 1;
		}
		run->log_len -= (size_t)(line - run->log_buf);
		memmove(run->log_buf, line, run->log_len);
	}
}

/* Waits until vyred no longer maps @ino; returns the time it took, or UINT64_MAX. */
static uint64_t wait_unmapped(struct run *run, uint64_t ino, uint64_t since)
{
	for (;;) {
		int has = rel_maps_has_inode(run->d.pid, ino);
		uint64_t now = rel_now_ns();

		if (has == 0)
			return now - since;
		if (has < 0 || now - since > RECLAIM_LIMIT)
			return UINT64_MAX;
		rel_sleep_ns(200000);
	}
}

static void check_items(struct run *run, struct slot *s)
{
	const struct victim_page *p = s->page;
	uint64_t heap_bytes;
	const uint8_t *heap = rel_client_heap(run->observer[s->gen % GENS], &heap_bytes);

	for (uint32_t j = 0; j < p->n; j++) {
		int accepted = (s->accepted[j / 8] >> (j % 8)) & 1;
		uint32_t v;

		if (p->offset[j] > heap_bytes - 4) {
			printf("victim %u item %u: offset %llu outside the heap\n", s->instance, j,
			       (unsigned long long)p->offset[j]);
			run->failed = 1;
			return;
		}
		memcpy(&v, heap + p->offset[j], 4);
		if (v != (accepted ? tag(s->instance, j) : 0)) {
			printf("victim %u (client %u) item %u: %s but its buffer holds %#x\n",
			       s->instance, p->client_id, j,
			       accepted ? "accepted" : "never accepted", v);
			run->failed = 1;
		}
		run->items_checked++;
		run->items_accepted += (uint64_t)accepted;
	}
}

static void kill_victim(struct run *run, struct slot *s)
{
	kill(s->pid, SIGKILL);
	rel_wait_child(s->pid, RECLAIM_LIMIT);
	uint64_t dead = rel_now_ns();

	run->kills++;
	if (__atomic_load_n(&s->page->ready, __ATOMIC_ACQUIRE)) {
		uint64_t t = wait_unmapped(run, s->page->region_ino, dead);

		run->connected++;
		if (t != UINT64_MAX && !s->shared)
			t = wait_unmapped(run, s->page->heap_ino, dead);
		if (t == UINT64_MAX) {
			printf("victim %u (client %u): vyred still maps its memory %llu s after "
			       "its death\n",
			       s->instance, s->page->client_id,
			       (unsigned long long)(RECLAIM_LIMIT / 1000000000ull));
			run->failed = 1;
		} else {
			run->reclaim_ns[run->n_reclaim++] = t;
		}
		if (s->shared) {
			read_accept_log(run);
			check_items(run, s);
		}
	}
	s->pid = 0;
	run->gen_live[s->gen % GENS]--;
	retire_generation(run, s->gen);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static pid_t start_survivor(const char *socket, uint64_t seed, const volatile int *stop)
{
	fflush(stdout);
	pid_t pid = fork();

	if (pid == 0) {
		struct rel_honest_opts o = {.socket = socket,
					    .seed = seed,
					    .stop = stop,
					    .wait_timeout_ns = 20 * 1000000000ll};
		struct rel_honest_result r;
		int rc = rel_honest_run(&o, &r);

		printf("survivor %d: %" PRIu64 " items, %" PRIu64 " deduplicated, %" PRIu64
		       " back-pressured: %s\n",
		       (int)getpid(), r.submitted, r.deduped, r.again, rc ? r.why : "oracle ok");
		fflush(stdout);
		_exit(rc ? 1 : 0);
	}
	return pid;
}

static void report_reclaim(struct run *run)
{
	if (run->n_reclaim == 0) {
		printf("no victim got as far as connecting\n");
		run->failed = 1;
		return;
	}
	qsort(run->reclaim_ns, run->n_reclaim, sizeof(uint64_t), cmp_u64);
	uint64_t p50 = run->reclaim_ns[run->n_reclaim / 2];
	uint64_t p99 = run->reclaim_ns[run->n_reclaim * 99 / 100];
	uint64_t max = run->reclaim_ns[run->n_reclaim - 1];

	printf("region reclaim after death: p50 %.2f ms, p99 %.2f ms, max %.2f ms (promise "
	       "%llu ms)\n",
	       p50 / 1e6, p99 / 1e6, max / 1e6, (unsigned long long)(RECLAIM_GOAL / 1000000));
	if (max > RECLAIM_GOAL && getenv("VYRE_TEST_STRICT_TIMING")) {
		printf("reclaim took longer than %llu ms\n",
		       (unsigned long long)(RECLAIM_GOAL / 1000000));
		run->failed = 1;
	}
}

static void kill_loop(struct run *run, uint64_t kills)
{
	uint32_t spawned = 0;

	while (run->kills < kills && !run->failed) {
		for (uint32_t k = 0; k < SLOTS; k++) {
			struct slot *s = &run->slots[k];

			if (!s->pid && spawned < kills)
				spawn(run, s, spawned++);
			else if (s->pid && rel_now_ns() >= s->kill_at)
				kill_victim(run, s);
		}
		if (!rel_child_running(run->d.pid)) {
			printf("vyred died\n");
			run->failed = 1;
		}
		rel_sleep_ns(100000);
	}
	for (uint32_t k = 0; k < SLOTS; k++)
		if (run->slots[k].pid)
			kill_victim(run, &run->slots[k]);
}

int main(void)
{
	static struct run run;
	const char *extra[] = {"--backend", "cpu", "--max-clients", "64", NULL};
	uint64_t kills = KILLS * vyre_test_scale();
	struct rel_baseline base;
	int rc = 1;
	pid_t survivors[SURVIVORS];
	volatile int *stop = rel_shared_alloc(4096);
	struct victim_page *pages = rel_shared_alloc(SLOTS * sizeof(struct victim_page));

	run.accept_fd = -1;
	run.rng = rel_seed("test_crash");
	run.reclaim_ns = calloc(kills + SLOTS, sizeof(uint64_t));
	if (!stop || !pages || !run.reclaim_ns)
		return 1;
	for (uint32_t k = 0; k < SLOTS; k++)
		run.slots[k].page = &pages[k];
	if (vyre_test_daemon_start(&run.d, extra) != 0)
		return 1;
	if (rel_baseline_take(&run.d, &base) != 0)
		goto out;
	for (uint32_t i = 0; i < SURVIVORS; i++)
		survivors[i] = start_survivor(run.d.socket, rel_rand(&run.rng), stop);
	run.accept_fd = open(run.d.accept_log, O_RDONLY | O_CLOEXEC);
	if (run.accept_fd < 0 || open_generation(&run, 0) != 0) {
		printf("cannot observe the shared domain\n");
		goto out;
	}
	kill_loop(&run, kills);
	*stop = 1;
	for (uint32_t i = 0; i < SURVIVORS; i++) {
		int st = rel_wait_child(survivors[i], 120 * 1000000000ull);

		if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("survivor %u failed (status %#x)\n", i, (unsigned)st);
			run.failed = 1;
		}
	}
	for (uint32_t g = 0; g < GENS; g++) {
		vyre_close(run.observer[g]);
		run.observer[g] = NULL;
	}
	printf("%" PRIu64 " producers killed (%" PRIu64 " after connecting); %" PRIu64
	       " items of shared-domain victims checked, %" PRIu64 " of them accepted\n",
	       run.kills, run.connected, run.items_checked, run.items_accepted);
	report_reclaim(&run);
	if (!rel_child_running(run.d.pid)) {
		printf("vyred died\n");
		run.failed = 1;
	} else if (rel_baseline_check(&run.d, &base) != 0) {
		run.failed = 1;
	}
	if (run.items_accepted == 0) {
		printf("no victim item was ever accepted: the kills came too early to test much\n");
		run.failed = 1;
	}
	if (!run.failed && vyre_test_daemon_stop(&run.d) != 0) {
		printf("vyred did not stop cleanly on SIGTERM\n");
		run.failed = 1;
	}
	rc = run.failed;
out:
	if (rc)
		vyre_test_daemon_dump_log(&run.d);
	for (uint32_t g = 0; g < GENS; g++)
		vyre_close(run.observer[g]);
	if (run.accept_fd >= 0)
		close(run.accept_fd);
	vyre_test_daemon_cleanup(&run.d);
	printf("%s\n", rc ? "FAILED" : "ok");
	return rc ? 1 : 0;
}
