/* SPDX-License-Identifier: MIT */
/*
 * test_loops - vyred --loops N against a real vyred on the CPU backend
 * (docs/design.md section 8.7):
 *
 *  - the clients of one named domain all land in one loop and share its
 *    buffers (a second client reads, through an item, what the first wrote),
 *    while private domains go to the loop with the fewest clients: with
 *    three loops, four domains cover every loop (a domain id tells its loop:
 *    loop L numbers L + 1, L + 1 + loops, ...);
 *  - every loop runs batches (the exit log names each loop's count);
 *  - --max-clients counts the clients of every loop together, and a client
 *    that leaves frees its place;
 *  - once a named domain's last client leaves, its name may go to another
 *    loop: a new client of that name gets a fresh domain (the old handles
 *    are gone);
 *  - SIGTERM with clients in every loop: each learns that vyred is gone,
 *    vyred exits 0.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define LOOPS	 3u
#define WORDS	 16u
#define ROUNDS	 200u
#define WAIT_NS	 (30ll * 1000000000ll)
#define HEAP	 (1u << 20)
#define PRIVATES 3u

static struct vyre_test_daemon daemon_;

static int connect_to(const char *domain, struct vyre_client **c)
{
	const struct vyre_connect_opts o = {
	    .socket_path = daemon_.socket, .domain = domain, .heap_bytes = HEAP};

	return vyre_connect(&o, c);
}

/* The domain id vyred logged for client number @nth to join (1-based), or 0. */
static uint32_t logged_domain(const char *name, uint32_t nth)
{
	char line[512], want[96];
	uint32_t seen = 0, id = 0;
	FILE *f = fopen(daemon_.log, "r");

	if (name[0])
		snprintf(want, sizeof(want), "'%s'", name);
	else
		snprintf(want, sizeof(want), "(private)");
	while (f && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "joined domain ");

		if (!p || !strstr(p, want))
			continue;
		if (++seen == nth) {
			id = (uint32_t)strtoul(p + strlen("joined domain "), NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
	return id;
}

/* One ADD of @param from @in to @out by @c, waited for; the CQE status. */
static int add(struct vyre_client *c, uint32_t in, uint32_t out, uint32_t param)
{
	const struct vyre_work_item it = {VYRE_OP_ADD, in, out, param};
	struct vyre_cqe cqe;
	int rc = vyre_submit(c, &it, param, 0);

	if (rc == 0)
		rc = vyre_wait(c, &cqe, 1, WAIT_NS);
	return rc == 1 ? cqe.status : rc < 0 ? rc : VYRE_E_TIMEDOUT;
}

static int shared_domain_and_spread(void)
{
	struct vyre_client *team[2], *priv[PRIVATES];
	uint32_t src, dst, mine[PRIVATES], seen_loops = 0;
	int rc;

	for (uint32_t i = 0; i < 2; i++)
		if ((rc = connect_to("team", &team[i])) != 0)
			FAIL("connect team %u: %s", i, vyre_strerror(rc));
	for (uint32_t i = 0; i < PRIVATES; i++)
		if ((rc = connect_to(NULL, &priv[i])) != 0)
			FAIL("connect private %u: %s", i, vyre_strerror(rc));

	/* the first team client writes; the second reads it through an item */
	if ((rc = vyre_buffer_alloc(team[0], WORDS * 4, 0, &src)) != 0 ||
	    (rc = vyre_buffer_alloc(team[1], WORDS * 4, 0, &dst)) != 0)
		FAIL("alloc: %s", vyre_strerror(rc));
	uint32_t *s = vyre_buffer_ptr(team[0], src, NULL);
	uint32_t *d = vyre_buffer_ptr(team[1], dst, NULL);

	if (!s || !d || !vyre_buffer_ptr(team[1], src, NULL))
		FAIL("the second team client does not see the first one's buffer");
	for (uint32_t w = 0; w < WORDS; w++)
		s[w] = 100 + w;
	if ((rc = add(team[1], src, dst, 7)) != 0)
		FAIL("team ADD: %s", vyre_strerror(rc));
	for (uint32_t w = 0; w < WORDS; w++)
		if (d[w] != 107 + w)
			FAIL("team ADD word %u: %u, want %u", w, d[w], 107 + w);

	/* work on every domain, so that every loop runs batches */
	for (uint32_t i = 0; i < PRIVATES; i++) {
		if ((rc = vyre_buffer_alloc(priv[i], WORDS * 4, 0, &mine[i])) != 0)
			FAIL("alloc private %u: %s", i, vyre_strerror(rc));
	}
	for (uint32_t r = 1; r <= ROUNDS; r++) {
		for (uint32_t i = 0; i < PRIVATES; i++)
			if ((rc = add(priv[i], mine[i], mine[i], 1)) != 0)
				FAIL("private %u round %u: %s", i, r, vyre_strerror(rc));
		if ((rc = add(team[r % 2], dst, dst, 1)) != 0)
			FAIL("team round %u: %s", r, vyre_strerror(rc));
	}
	for (uint32_t i = 0; i < PRIVATES; i++) {
		const uint32_t *p = vyre_buffer_ptr(priv[i], mine[i], NULL);

		if (!p || p[0] != ROUNDS || p[WORDS - 1] != ROUNDS)
			FAIL("private %u: %u after %u ADDs of 1", i, p ? p[0] : 0, ROUNDS);
	}
	if (d[0] != 107 + ROUNDS)
		FAIL("team: %u after %u ADDs of 1, want %u", d[0], ROUNDS, 107 + ROUNDS);

	/* which loops the domains went to */
	const uint32_t team_id = logged_domain("team", 1);

	if (!team_id || logged_domain("team", 2) != team_id)
		FAIL("the team clients joined domains %u and %u", team_id,
		     logged_domain("team", 2));
	seen_loops |= 1u << ((team_id - 1) % LOOPS);
	for (uint32_t i = 1; i <= PRIVATES; i++) {
		const uint32_t id = logged_domain("", i);

		if (!id)
			FAIL("no log line for private client %u", i);
		seen_loops |= 1u << ((id - 1) % LOOPS);
	}
	if (seen_loops != (1u << LOOPS) - 1)
		FAIL("four domains over three loops left a loop out (loops seen: mask 0x%x)",
		     seen_loops);
	printf("4 domains over %u loops; the team shares domain %u\n", LOOPS, team_id);

	for (uint32_t i = 0; i < 2; i++)
		vyre_close(team[i]);
	for (uint32_t i = 0; i < PRIVATES; i++)
		vyre_close(priv[i]);

	/* the name is free again: a fresh domain without the old buffers */
	struct vyre_client *again;

	if ((rc = connect_to("team", &again)) != 0)
		FAIL("connect team again: %s", vyre_strerror(rc));
	if (vyre_buffer_ptr(again, src, NULL))
		FAIL("a new 'team' domain still has the old domain's buffer");
	vyre_close(again);
	return 0;
}

static int client_limit(void)
{
	struct vyre_client *c[5];
	int rc;

	for (uint32_t i = 0; i < 4; i++)
		if ((rc = connect_to(NULL, &c[i])) != 0)
			FAIL("client %u of 4: %s", i, vyre_strerror(rc));
	rc = connect_to(NULL, &c[4]);
	if (rc != VYRE_E_NOMEM)
		FAIL("a fifth client with --max-clients 4 over %u loops: %s, want VYRE_E_NOMEM",
		     LOOPS, rc ? vyre_strerror(rc) : "accepted");
	vyre_close(c[1]);
	/* the departure is seen by vyred when it reads the hang-up: retry briefly */
	for (int tries = 0; tries < 200; tries++) {
		rc = connect_to(NULL, &c[4]);
		if (rc != VYRE_E_NOMEM)
			break;
		struct timespec ts = {0, 5000000};
		nanosleep(&ts, NULL);
	}
	if (rc != 0)
		FAIL("no room after a client left: %s", vyre_strerror(rc));
	printf("--max-clients 4 holds over %u loops; a departure frees a place\n", LOOPS);
	vyre_close(c[0]);
	vyre_close(c[2]);
	vyre_close(c[3]);
	vyre_close(c[4]);
	return 0;
}

static int stop_with_clients(void)
{
	struct vyre_client *c[LOOPS];
	struct vyre_cqe cqe;
	int rc;

	for (uint32_t i = 0; i < LOOPS; i++)
		if ((rc = connect_to(NULL, &c[i])) != 0)
			FAIL("connect %u: %s", i, vyre_strerror(rc));
	if (vyre_test_daemon_stop(&daemon_) != 0)
		FAIL("vyred did not exit 0 after SIGTERM with clients in every loop");
	for (uint32_t i = 0; i < LOOPS; i++) {
		rc = vyre_wait(c[i], &cqe, 1, WAIT_NS);
		if (rc != VYRE_E_DISCONNECTED)
			FAIL("client %u after vyred stopped: %d, want VYRE_E_DISCONNECTED", i, rc);
		vyre_close(c[i]);
	}
	printf("SIGTERM: every loop's client learned it, vyred exited 0\n");
	return 0;
}

static int run(const char *const *extra, int (*body)(void), int stop)
{
	int rc;

	if (vyre_test_daemon_start(&daemon_, extra) != 0)
		return -1;
	rc = body();
	if (stop && vyre_test_daemon_stop(&daemon_) != 0 && rc == 0) {
		fprintf(stderr, "FAIL: vyred did not stop cleanly\n");
		rc = -1;
	}
	if (rc == 0 && body == shared_domain_and_spread) {
		char what[32];

		for (uint32_t l = 0; l < LOOPS && rc == 0; l++) {
			snprintf(what, sizeof(what), "loop %u: 0 batches", l);
			if (vyre_test_log_has(daemon_.log, what)) {
				fprintf(stderr, "FAIL: loop %u ran no batch\n", l);
				rc = -1;
			}
		}
	}
	if (rc != 0)
		vyre_test_daemon_dump_log(&daemon_);
	vyre_test_daemon_cleanup(&daemon_);
	return rc;
}

int main(void)
{
	static const char *const three[] = {"--backend", "cpu", "--loops", "3", NULL};
	static const char *const three_small[] = {"--backend",	   "cpu", "--loops", "3",
						  "--max-clients", "4",	  NULL};
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = run(three, shared_domain_and_spread, 1);
	if (rc == 0)
		rc = run(three_small, client_limit, 1);
	if (rc == 0)
		rc = run(three, stop_with_clients, 0);
	printf("%s\n", rc == 0 ? "PASS" : "FAIL");
	return rc == 0 ? 0 : 1;
}
