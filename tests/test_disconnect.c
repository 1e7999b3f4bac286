/* SPDX-License-Identifier: MIT */
/*
 * Disconnects against a real vyred:
 *  - a producer with items in flight is SIGKILLed (repeatedly): vyred frees
 *    its region and its private domain (its fd count and its memfd mappings
 *    return to the baseline), keeps the buffers it allocated in a shared
 *    domain for the clients still there, and keeps serving them;
 *  - vyre_close with items in flight: the same;
 *  - SIGTERM while a client has items queued: every accepted item gets its
 *    CQE, then vyre_wait says VYRE_E_DISCONNECTED, and vyred exits 0 having
 *    removed its socket;
 *  - SIGKILL of vyred while a client sleeps in vyre_wait: the client gets
 *    VYRE_E_DISCONNECTED (not a hang, not a timeout).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define WAIT_NS	  (60ll * 1000000000ll)
#define KILLS	  4u /* x VYRE_TEST_SCALE */
#define BIG_BYTES (256u << 10)
#define IN_FLIGHT 256u

static struct vyre_test_daemon dmn;

/* Mappings of vyred's memfds of one kind ("vyre-region", "vyre-heap"). */
static int count_maps(pid_t pid, const char *what)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

struct footprint {
	int fds, regions, heaps;
};

static void footprint(struct footprint *fp)
{
	fp->fds = vyre_test_fd_count(dmn.pid);
	fp->regions = count_maps(dmn.pid, "vyre-region");
	fp->heaps = count_maps(dmn.pid, "vyre-heap");
}

/* Until vyred is back to @base; bounded, so a leak fails instead of hanging. */
static int wait_footprint(const struct footprint *base, const char *after)
{
	struct footprint now;

	for (int i = 0; i < 6000; i++) {
		footprint(&now);
		if (now.fds == base->fds && now.regions == base->regions &&
		    now.heaps == base->heaps)
			return 0;
		usleep(10000);
	}
	FAIL("after %s vyred holds %d fds, %d region and %d heap mappings; %d, %d, %d expected",
	     after, now.fds, now.regions, now.heaps, base->fds, base->regions, base->heaps);
}

static int connect_to(const char *domain, struct vyre_client **c)
{
	struct vyre_connect_opts o = {.socket_path = dmn.socket,
				      .domain = domain,
				      .heap_bytes = 8u << 20,
				      .sq_entries = 1024};
	int rc = vyre_connect(&o, c);

	if (rc != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	return 0;
}

/*
 * The doomed producer: leaves a buffer in the shared domain (its handle and
 * contents tagged with @round, sent up @pipe_w), fills its private SQ with
 * slow items, then dies or closes with them in flight.
 */
static int doomed(int pipe_w, uint32_t round, int by_kill)
{
	struct vyre_client *priv, *shr;
	uint32_t big, sum, kept;

	if (connect_to(NULL, &priv) || connect_to("shared", &shr))
		return -1;
	if (vyre_buffer_alloc(shr, 16, 0, &kept) || vyre_buffer_alloc(priv, BIG_BYTES, 0, &big) ||
	    vyre_buffer_alloc(priv, 4, 0, &sum))
		FAIL("alloc");
	uint32_t *k = vyre_buffer_ptr(shr, kept, NULL);

	for (int i = 0; i < 4; i++)
		k[i] = round * 100 + (uint32_t)i;
	memset(vyre_buffer_ptr(priv, big, NULL), 1, BIG_BYTES);
	for (uint32_t i = 0; i < IN_FLIGHT; i++) {
		struct vyre_work_item it = {VYRE_OP_SUM, big, sum, 0};

		if (vyre_submit(priv, &it, i, 0) != 0)
			FAIL("submit");
	}
	if (write(pipe_w, &kept, sizeof(kept)) != sizeof(kept))
		FAIL("pipe");
	if (by_kill)
		raise(SIGKILL);
	vyre_close(priv);
	vyre_close(shr);
	return 0;
}

static int witness_uses(struct vyre_client *w, uint32_t kept, uint32_t round)
{
	uint32_t bytes = 0, out;
	const uint32_t *k = vyre_buffer_ptr(w, kept, &bytes);
	struct vyre_cqe cqe;

	if (!k || bytes != 16 || k[3] != round * 100 + 3)
		FAIL("round %u: the dead client's shared buffer is gone", round);
	if (vyre_buffer_alloc(w, 4, 0, &out))
		FAIL("alloc");
	struct vyre_work_item it = {VYRE_OP_SUM, kept, out, 0};

	if (vyre_submit(w, &it, round, 0) != 0 || vyre_wait(w, &cqe, 1, WAIT_NS) != 1 ||
	    cqe.status != 0 || cqe.result != round * 400 + 6)
		FAIL("round %u: the witness was not served", round);
	return vyre_buffer_free(w, out) == 0 ? 0 : -1;
}

static int producer_deaths(void)
{
	struct vyre_client *w;
	struct footprint base;
	uint32_t rounds = KILLS * (uint32_t)vyre_test_scale();

	if (connect_to("shared", &w))
		return -1;
	footprint(&base);
	for (uint32_t r = 1; r <= rounds * 2; r++) {
		int by_kill = r <= rounds;
		int p[2];
		uint32_t kept;
		int st;

		if (pipe(p) != 0)
			FAIL("pipe");
		fflush(NULL); /* the child must not repeat buffered output */
		pid_t pid = fork();

		if (pid == 0) {
			close(p[0]);
			_exit(doomed(p[1], r, by_kill) == 0 ? 0 : 1);
		}
		close(p[1]);
		if (read(p[0], &kept, sizeof(kept)) != sizeof(kept))
			FAIL("round %u: the producer failed before its items were queued", r);
		close(p[0]);
		waitpid(pid, &st, 0);
		if (by_kill ? !WIFSIGNALED(st) : (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
			FAIL("round %u: producer status 0x%x", r, st);
		if (wait_footprint(&base, by_kill ? "SIGKILL of a producer" : "vyre_close") != 0 ||
		    witness_uses(w, kept, r) != 0)
			return -1;
	}
	printf("ok: %u producers SIGKILLed and %u closed with %u items in flight; vyred back to "
	       "%d fds, %d regions, %d heaps each time\n",
	       rounds, rounds, IN_FLIGHT, base.fds, base.regions, base.heaps);
	vyre_close(w);
	return 0;
}

static int sigterm_completes_accepted(void)
{
	struct vyre_client *c;
	struct vyre_cqe cqe[64];
	uint32_t in, out, got = 0;
	const uint32_t n = 500;
	int rc;

	if (connect_to(NULL, &c))
		return -1;
	if (vyre_buffer_alloc(c, 4096, 0, &in) || vyre_buffer_alloc(c, 4096, 0, &out))
		FAIL("alloc");
	for (uint32_t i = 0; i < n; i++) {
		struct vyre_work_item it = {VYRE_OP_ADD, in, out, i};

		if (vyre_submit(c, &it, i, 0) != 0)
			FAIL("submit");
	}
	kill(dmn.pid, SIGTERM);
	while ((rc = vyre_wait(c, cqe, 64, WAIT_NS)) > 0) {
		for (int i = 0; i < rc; i++)
			if (cqe[i].user_data != got++ || cqe[i].status != 0)
				FAIL("CQE %u after SIGTERM is wrong", got - 1);
	}
	if (rc != VYRE_E_DISCONNECTED)
		FAIL("after SIGTERM vyre_wait gave %s, not VYRE_E_DISCONNECTED", vyre_strerror(rc));
	if (got != n)
		FAIL("%u of %u queued items completed before the shutdown", got, n);
	vyre_close(c);
	rc = vyre_test_daemon_stop(&dmn);
	if (rc != 0)
		FAIL("vyred exited %d after SIGTERM", rc);
	if (access(dmn.socket, F_OK) == 0)
		FAIL("vyred left its socket behind");
	vyre_test_daemon_cleanup(&dmn);
	printf("ok: SIGTERM completed all %u queued items, then VYRE_E_DISCONNECTED; exit 0, "
	       "socket removed\n",
	       n);
	return 0;
}

static int daemon_killed_while_waiting(void)
{
	struct vyre_client *c;
	struct vyre_cqe cqe;

	if (vyre_test_daemon_start(&dmn, NULL) != 0 || connect_to(NULL, &c))
		return -1;
	fflush(NULL); /* the child must not repeat buffered output */
	pid_t pid = fork();

	if (pid == 0) {
		/* Kill vyred once the parent sleeps in vyre_wait. */
		usleep(100000);
		kill(dmn.pid, SIGKILL);
		_exit(0);
	}
	int rc = vyre_wait(c, &cqe, 1, WAIT_NS);

	waitpid(pid, NULL, 0);
	if (rc != VYRE_E_DISCONNECTED)
		FAIL("vyre_wait after vyred died: %s", vyre_strerror(rc));
	struct vyre_work_item it = {VYRE_OP_NOP, 0, 0, 0};

	rc = vyre_submit(c, &it, 1, 0);
	vyre_close(c);
	waitpid(dmn.pid, NULL, 0);
	dmn.pid = 0;
	printf("ok: vyred SIGKILLed under a sleeping vyre_wait: VYRE_E_DISCONNECTED "
	       "(a later submit gives %s)\n",
	       vyre_strerror(rc));
	return 0;
}

int main(void)
{
	int rc;

	if (vyre_test_daemon_start(&dmn, NULL) != 0)
		return 1;
	rc = producer_deaths() || sigterm_completes_accepted() || daemon_killed_while_waiting();
	if (rc)
		vyre_test_daemon_dump_log(&dmn);
	vyre_test_daemon_cleanup(&dmn);
	if (rc)
		return 1;
	printf("PASS\n");
	return 0;
}
