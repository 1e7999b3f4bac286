/* SPDX-License-Identifier: MIT */
/*
 * test_gpus - one vyred over several GPUs (docs/design.md 8.8), on the CPU
 * backend, which takes --gpus as labels for instances of its own, so that
 * placement, routing and fault containment run without a GPU:
 *
 *  - placement: private domains made while others live take the GPUs in
 *    turn; a pinned named domain (--domain-gpu) goes where it is pinned;
 *    every client of a named domain follows it; the domain ids vyred logs
 *    tell the loop, and the loop tells the GPU (loops are numbered GPU by
 *    GPU);
 *  - device buffers count against their own GPU's --device-bytes-max;
 *  - a device fault on GPU 1 (VYRE_CPU_INJECT=fault VYRE_INJECT_DEVICE=1):
 *    the faulting item completes with VYRE_E_DEVICE, GPU 1's clients are
 *    disconnected, GPU 0's clients go on and new domains go to GPU 0; a
 *    new worker serves GPU 1 again (a client of a domain pinned there is
 *    served); vyred logs the loss and exits 0 at SIGTERM;
 *  - a resumable client of GPU 1 reconnects after the fault and its domain
 *    is adopted on GPU 0 with its named buffer intact (8.5);
 *  - faults on every GPU: each GPU's worker process exits and a new one
 *    serves, vyred itself goes on (a fault is sticky for its process);
 *  - bad input at the supervisor: a connection closed before its HELLO,
 *    garbage, silence past --hello-timeout-ms: answered or closed, and both
 *    GPUs serve on;
 *  - bad --gpus and --domain-gpu values are refused with exit 2.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_integration_daemon.h"
#include "vyre/vyre.h"

#define LOOPS_PER_GPU 2u
#define GPUS	      2u
#define WORDS	      64u
#define WAIT_NS	      (30ll * 1000000000ll)

static struct vyre_test_daemon daemon_;

static int connect_to(const char *domain, struct vyre_client **c)
{
	const struct vyre_connect_opts o = {
	    .socket_path = daemon_.socket, .domain = domain, .heap_bytes = 1u << 20};

	return vyre_connect(&o, c);
}

/*
 * The GPU of the domain client @id joined, from vyred's log, or -1. Clients
 * are numbered from 1 in the order they connect. A loop may log the join
 * just after its reply, so the line is waited for (bounded).
 */
static int logged_gpu(uint32_t id)
{
	const int gpu = vyre_test_logged_gpu(&daemon_, id);

	/* two devices: a worker process each, whose lines name their GPU */
	if (gpu != -2)
		return gpu;
	const uint32_t dom = vyre_test_logged_domain(&daemon_, id);

	/* loop L numbers its domains L + 1, L + 1 + loops, ... */
	return dom ? (int)(((dom - 1) % (LOOPS_PER_GPU * GPUS)) / LOOPS_PER_GPU) : -1;
}

/* ADD @param over a fresh buffer of 1s, waited for: the CQE status (0 when the words are right). */
static int add_round(struct vyre_client *c, uint32_t param)
{
	uint32_t h;
	struct vyre_cqe cqe;
	int rc = vyre_buffer_alloc(c, WORDS * 4, 0, &h);

	if (rc != 0)
		return rc;
	uint32_t *w = vyre_buffer_ptr(c, h, NULL);

	for (uint32_t i = 0; w && i < WORDS; i++)
		w[i] = 1;
	const struct vyre_work_item it = {VYRE_OP_ADD, h, h, param};

	rc = vyre_submit(c, &it, param, 0);
	if (rc == 0)
		rc = vyre_wait(c, &cqe, 1, WAIT_NS);
	if (rc == 1)
		rc = cqe.status;
	else if (rc >= 0)
		rc = VYRE_E_TIMEDOUT;
	for (uint32_t i = 0; rc == 0 && i < WORDS; i++)
		if (w[i] != 1 + param)
			rc = VYRE_E_INVAL;
	vyre_buffer_free(c, h);
	return rc;
}

static int placement(void)
{
	static const char *const args[] = {"--backend",	   "cpu",      "--gpus",
					   "0,1",	   "--loops",  "2",
					   "--domain-gpu", "pinned=1", "--device-bytes-max",
					   "8192",	   NULL};
	struct vyre_client *priv[4], *pinned[2], *team[2];
	uint32_t dev[2];
	int rc;

	if (vyre_test_daemon_start(&daemon_, args) != 0)
		return -1;
	for (uint32_t i = 0; i < 4; i++)
		if ((rc = connect_to(NULL, &priv[i])) != 0)
			FAIL("private %u: %s", i, vyre_strerror(rc));
	for (uint32_t i = 0; i < 2; i++)
		if ((rc = connect_to("pinned", &pinned[i])) != 0 ||
		    (rc = connect_to("team", &team[i])) != 0)
			FAIL("named %u: %s", i, vyre_strerror(rc));
	/* clients 1-4 private, then pinned and team by turns: 5, 7 and 6, 8 */
	for (uint32_t i = 0; i < 4; i++) {
		const int g = logged_gpu(i + 1);

		if (g != (int)(i % 2))
			FAIL("private domain %u went to GPU %d, want %u (GPUs in turn)", i, g,
			     i % 2);
	}
	if (logged_gpu(5) != 1 || logged_gpu(7) != 1)
		FAIL("the pinned domain's clients are on GPUs %d and %d, want 1", logged_gpu(5),
		     logged_gpu(7));
	if (logged_gpu(6) < 0 || logged_gpu(8) != logged_gpu(6))
		FAIL("the team clients are on GPUs %d and %d", logged_gpu(6), logged_gpu(8));
	for (uint32_t i = 0; i < 4; i++)
		if ((rc = add_round(priv[i], 10 + i)) != 0)
			FAIL("private %u: ADD: %s", i, vyre_strerror(rc));
	/* each GPU has its own 8 KiB of device buffers: GPU 0's full does not fill GPU 1's */
	if ((rc = vyre_buffer_alloc(priv[0], 8192, VYRE_BUF_DEVICE, &dev[0])) != 0)
		FAIL("8 KiB device buffer on GPU 0: %s", vyre_strerror(rc));
	if ((rc = vyre_buffer_alloc(priv[2], 4, VYRE_BUF_DEVICE, &dev[1])) != VYRE_E_NOMEM)
		FAIL("GPU 0 past its --device-bytes-max: %s, want VYRE_E_NOMEM",
		     rc ? vyre_strerror(rc) : "allocated");
	if ((rc = vyre_buffer_alloc(priv[1], 8192, VYRE_BUF_DEVICE, &dev[1])) != 0)
		FAIL("8 KiB device buffer on GPU 1: %s", vyre_strerror(rc));
	printf("placement: private domains alternate, the pinned domain is on GPU 1, device "
	       "bytes are per GPU\n");
	for (uint32_t i = 0; i < 4; i++)
		vyre_close(priv[i]);
	for (uint32_t i = 0; i < 2; i++) {
		vyre_close(pinned[i]);
		vyre_close(team[i]);
	}
	rc = vyre_test_daemon_stop(&daemon_);
	if (rc != 0)
		FAIL("vyred exit %d after SIGTERM, want 0", rc);
	if (!vyre_test_log_has(daemon_.log, "ready (pid") ||
	    !vyre_test_log_has(daemon_.log, "2 GPUs, 2 worker processes") ||
	    !vyre_test_log_has(daemon_.log, "1 GPU, 2 event loops"))
		FAIL("vyred did not say it runs 2 GPUs in 2 workers of 2 loops");
	return 0;
}

/* A raw connection to vyred's socket; -1 on failure. */
static int raw_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (strlen(daemon_.socket) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(sa.sun_path, daemon_.socket, strlen(daemon_.socket) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Bad input at the supervisor (docs/design.md 8.8): a connection that
 * closes before its HELLO, one that sends garbage (answered and dropped by
 * a worker) and one that says nothing for longer than --hello-timeout-ms;
 * vyred serves a client on each GPU meanwhile and after.
 */
static int supervisor_bad_input(void)
{
	static const char *const args[] = {"--backend",		 "cpu", "--gpus", "0,1",
					   "--hello-timeout-ms", "300", NULL};
	static const char garbage[] = "not a vyre message at all, not even close";
	struct vyre_client *a, *b;
	char reply[256];
	int rc;

	if (vyre_test_daemon_start(&daemon_, args) != 0)
		return -1;
	const int quiet = raw_connect();
	int gone = raw_connect();

	if (quiet < 0 || gone < 0)
		FAIL("raw connections to the supervisor");
	close(gone);
	gone = raw_connect();
	if (gone < 0 || send(gone, garbage, sizeof(garbage), 0) != (ssize_t)sizeof(garbage))
		FAIL("garbage sent");
	/* answered (an ERROR) or closed: never left hanging */
	struct timeval tv = {5, 0};

	setsockopt(gone, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	const ssize_t n = recv(gone, reply, sizeof(reply), 0);

	if (n < 0)
		FAIL("a garbage HELLO got no answer in 5 s");
	close(gone);
	if ((rc = connect_to(NULL, &a)) != 0 || (rc = connect_to(NULL, &b)) != 0)
		FAIL("clients beside the bad connections: %s", vyre_strerror(rc));
	if ((rc = add_round(a, 1)) != 0 || (rc = add_round(b, 2)) != 0)
		FAIL("items beside the bad connections: %s", vyre_strerror(rc));
	/* the silent one is closed after the timeout, by a worker */
	setsockopt(quiet, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (recv(quiet, reply, sizeof(reply), 0) < 0)
		FAIL("a connection without HELLO was not closed within 5 s");
	close(quiet);
	if ((rc = add_round(a, 3)) != 0 || (rc = add_round(b, 4)) != 0)
		FAIL("items after the bad connections: %s", vyre_strerror(rc));
	vyre_close(a);
	vyre_close(b);
	if ((rc = vyre_test_daemon_stop(&daemon_)) != 0)
		FAIL("vyred exit %d after SIGTERM, want 0", rc);
	printf("bad input at the supervisor: answered or closed, both GPUs serve on\n");
	return 0;
}

/* @c's next calls see vyred gone within a few seconds. */
static int sees_gone(struct vyre_client *c)
{
	int rc = 0;

	for (int tries = 0; tries < 1000 && rc != VYRE_E_DISCONNECTED; tries++) {
		struct timespec ts = {0, 5000000};
		uint32_t h;

		nanosleep(&ts, NULL);
		rc = vyre_buffer_alloc(c, 4, 0, &h);
	}
	return rc == VYRE_E_DISCONNECTED ? 0 : -1;
}

/* vyred with @args whose GPU 1 faults on its first batch (VYRE_CPU_INJECT). */
static int start_gpu1_faults(const char *const *args)
{
	int rc;

	setenv("VYRE_CPU_INJECT", "fault", 1);
	setenv("VYRE_INJECT_DEVICE", "1", 1);
	rc = vyre_test_daemon_start(&daemon_, args);
	unsetenv("VYRE_CPU_INJECT");
	unsetenv("VYRE_INJECT_DEVICE");
	return rc;
}

static int one_gpu_faults(void)
{
	static const char *const args[] = {
	    "--backend", "cpu", "--gpus", "0,1", "--loops", "2", "--domain-gpu", "pinned=1", NULL};
	struct vyre_client *a, *b, *b2, *c, *p;
	int rc;

	if (start_gpu1_faults(args) != 0)
		return -1;
	/* a (client 1) on GPU 0, b and b2 (clients 2 and 3, one domain) on GPU 1 */
	if ((rc = connect_to(NULL, &a)) != 0 || (rc = connect_to("doomed", &b)) != 0 ||
	    (rc = connect_to("doomed", &b2)) != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	if (logged_gpu(1) != 0 || logged_gpu(2) != 1 || logged_gpu(3) != 1)
		FAIL("clients on GPUs %d, %d and %d, want 0, 1 and 1", logged_gpu(1), logged_gpu(2),
		     logged_gpu(3));
	if ((rc = add_round(a, 1)) != 0)
		FAIL("GPU 0 before the fault: %s", vyre_strerror(rc));
	rc = add_round(b, 2);
	if (rc != VYRE_E_DEVICE)
		FAIL("the item GPU 1 faulted on: %s, want VYRE_E_DEVICE",
		     rc ? vyre_strerror(rc) : "ok");
	/* GPU 1's clients are disconnected once its batches are over */
	for (int tries = 0; tries < 400 && rc != VYRE_E_DISCONNECTED; tries++) {
		struct timespec ts = {0, 5000000};
		uint32_t h;

		nanosleep(&ts, NULL);
		rc = vyre_buffer_alloc(b2, 4, 0, &h);
	}
	if (rc != VYRE_E_DISCONNECTED)
		FAIL("a client of the lost GPU: %s, want VYRE_E_DISCONNECTED", vyre_strerror(rc));
	for (uint32_t r = 0; r < 50; r++)
		if ((rc = add_round(a, 3 + r)) != 0)
			FAIL("GPU 0 after GPU 1's fault, round %u: %s", r, vyre_strerror(rc));
	if ((rc = connect_to(NULL, &c)) != 0)
		FAIL("a new private client after the fault: %s", vyre_strerror(rc));
	if (logged_gpu(4) != 0)
		FAIL("a new domain went to GPU %d, want 0 (1 is lost)", logged_gpu(4));
	if ((rc = add_round(c, 7)) != 0)
		FAIL("the new client: %s", vyre_strerror(rc));
	/* GPU 1's new worker (started without the fault hook) takes its pinned domain */
	if ((rc = connect_to("pinned", &p)) != 0)
		FAIL("a domain pinned to GPU 1 after its fault: %s", vyre_strerror(rc));
	else if (logged_gpu(5) != 1 || (rc = add_round(p, 8)) != 0)
		FAIL("the pinned domain after GPU 1's fault: GPU %d, %s", logged_gpu(5),
		     vyre_strerror(rc));
	else
		vyre_close(p);
	vyre_close(a);
	vyre_close(b);
	vyre_close(b2);
	vyre_close(c);
	rc = vyre_test_daemon_stop(&daemon_);
	if (rc != 0)
		FAIL("vyred exit %d after SIGTERM with one GPU left, want 0", rc);
	if (!vyre_test_log_has(daemon_.log, "GPU 1 (ordinal 1, cpu): device lost") ||
	    !vyre_test_log_has(daemon_.log, "1 of 2 GPUs still serve"))
		FAIL("vyred did not log GPU 1's loss");
	printf("a fault on GPU 1: its item fails with VYRE_E_DEVICE, its clients are "
	       "disconnected, GPU 0 serves on\n");
	return 0;
}

/*
 * Fault containment (docs/design.md 8.5): a resumable client of a domain on
 * the GPU that faults is disconnected like the others, reconnects to the
 * same vyred, and its domain is adopted on the GPU still serving, its named
 * buffer's handle and bytes intact.
 */
static int fault_resumes_elsewhere(void)
{
	static const char *const args[] = {"--backend", "cpu", "--gpus", "0,1",
					   "--loops",	"2",   NULL};
	struct vyre_connect_opts o = {
	    .socket_path = daemon_.socket, .domain = "kept", .flags = VYRE_CONNECT_RESUMABLE};
	struct vyre_client *a, *k;
	uint32_t data, again;
	int rc;

	if (start_gpu1_faults(args) != 0)
		return -1;
	o.socket_path = daemon_.socket;
	if ((rc = connect_to(NULL, &a)) != 0 || (rc = vyre_connect(&o, &k)) != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	if (logged_gpu(1) != 0 || logged_gpu(2) != 1)
		FAIL("clients on GPUs %d and %d, want 0 and 1", logged_gpu(1), logged_gpu(2));
	if ((rc = vyre_buffer_create(k, "data", WORDS * 4, 0, &data)) != 0)
		FAIL("create: %s", vyre_strerror(rc));
	uint32_t *w = vyre_buffer_ptr(k, data, NULL);

	for (uint32_t i = 0; i < WORDS; i++)
		w[i] = 0x5eed0000u + i;
	if ((rc = add_round(k, 2)) != VYRE_E_DEVICE)
		FAIL("the item GPU 1 faulted on: %s, want VYRE_E_DEVICE",
		     rc ? vyre_strerror(rc) : "ok");
	if (sees_gone(k) != 0)
		FAIL("the resumable client of the lost GPU was not disconnected");
	if ((rc = vyre_reconnect(k, WAIT_NS)) < 0)
		FAIL("reconnect after the fault: %s", vyre_strerror(rc));
	if ((rc = add_round(k, 9)) != 0)
		FAIL("the resumed domain does not run on GPU 0: %s", vyre_strerror(rc));
	if ((rc = vyre_buffer_open(k, "data", &again, NULL, NULL)) != 0 || again != data ||
	    vyre_buffer_ptr(k, data, NULL) != w)
		FAIL("the named buffer after the resume: %s, handle %#x want %#x",
		     vyre_strerror(rc), again, data);
	for (uint32_t i = 0; i < WORDS; i++)
		if (w[i] != 0x5eed0000u + i)
			FAIL("word %u of the kept buffer is %#x after the resume", i, w[i]);
	if ((rc = add_round(a, 3)) != 0)
		FAIL("GPU 0's own client after the resume: %s", vyre_strerror(rc));
	vyre_close(a);
	vyre_close(k);
	if ((rc = vyre_test_daemon_stop(&daemon_)) != 0)
		FAIL("vyred exit %d after SIGTERM, want 0", rc);
	printf("a fault on GPU 1: its resumable client resumes on GPU 0 with its buffers\n");
	return 0;
}

/*
 * A device fault stays in its worker process (docs/design.md 8.8): with
 * both GPUs faulting, each worker exits and is started again, and vyred
 * serves new clients on both without being restarted.
 */
static int every_gpu_faults(void)
{
	static const char *const args[] = {"--backend", "cpu", "--gpus", "0,1",
					   "--loops",	"1",   NULL};
	struct vyre_client *a, *b, *c[2];
	int rc;

	setenv("VYRE_CPU_INJECT", "fault", 1);
	rc = vyre_test_daemon_start(&daemon_, args);
	unsetenv("VYRE_CPU_INJECT");
	if (rc != 0)
		return -1;
	if ((rc = connect_to(NULL, &a)) != 0 || (rc = connect_to(NULL, &b)) != 0)
		FAIL("connect: %s", vyre_strerror(rc));
	if ((rc = add_round(a, 1)) != VYRE_E_DEVICE || (rc = add_round(b, 1)) != VYRE_E_DEVICE)
		FAIL("items on faulting GPUs: %s, want VYRE_E_DEVICE",
		     rc ? vyre_strerror(rc) : "ok");
	if (sees_gone(a) != 0 || sees_gone(b) != 0)
		FAIL("the clients of the lost GPUs were not disconnected");
	vyre_close(a);
	vyre_close(b);
	/* new workers come up without the fault hook: both GPUs serve again */
	for (int tries = 0; tries < 2000; tries++) {
		struct timespec ts = {0, 5000000};

		if (vyre_test_log_count(daemon_.log, "serving again") >= 2)
			break;
		nanosleep(&ts, NULL);
	}
	if (vyre_test_log_count(daemon_.log, "serving again") < 2)
		FAIL("both GPUs' workers did not serve again after their faults");
	if (kill(daemon_.pid, 0) != 0)
		FAIL("vyred stopped with both GPUs faulted once");
	for (uint32_t i = 0; i < 2; i++) {
		if ((rc = connect_to(NULL, &c[i])) != 0)
			FAIL("a new client after both faults: %s", vyre_strerror(rc));
		if ((rc = add_round(c[i], 5 + i)) != 0)
			FAIL("new client %u after both faults: %s", i, vyre_strerror(rc));
	}
	if (logged_gpu(3) == logged_gpu(4))
		FAIL("the new private domains are both on GPU %d, want one on each", logged_gpu(3));
	vyre_close(c[0]);
	vyre_close(c[1]);
	if ((rc = vyre_test_daemon_stop(&daemon_)) != 0)
		FAIL("vyred exit %d after SIGTERM, want 0", rc);
	printf("faults on every GPU: each worker is started again, vyred serves on\n");
	return 0;
}

/* vyred @args... exits with status 2 and says which flag. */
static int refused(const char *flag, const char *value, const char *flag2, const char *value2)
{
	char path[512];
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(127);
		execl(vyre_test_vyred_path(path, sizeof(path)), "vyred", "--socket",
		      "/nonexistent/vyre.sock", flag, value, flag2, value2, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		FAIL("cannot run vyred");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 2)
		FAIL("vyred %s '%s' %s '%s': status 0x%x, want exit 2", flag, value,
		     flag2 ? flag2 : "", value2 ? value2 : "", st);
	return 0;
}

static int bad_flags(void)
{
	static const char *const gpus[] = {"", "0,,1", "a", "0,", "-1", "1024", ",0", " 0", "0 1"};

	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++)
		if (refused("--gpus", gpus[i], NULL, NULL) != 0)
			return -1;
	if (refused("--gpus", "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", NULL, NULL) != 0 ||
	    refused("--domain-gpu", "x", NULL, NULL) != 0 ||
	    refused("--domain-gpu", "=1", NULL, NULL) != 0 ||
	    refused("--domain-gpu", "x=", NULL, NULL) != 0 ||
	    refused("--domain-gpu", "x=16", NULL, NULL) != 0 ||
	    refused("--domain-gpu", "x=2", "--gpus", "0,1") != 0 ||
	    refused("--domain-gpu", "x=1", "--domain-gpu", "x=0") != 0 ||
	    refused("--loops", "17", NULL, NULL) != 0)
		return -1;
	printf("bad --gpus and --domain-gpu values are refused\n");
	return 0;
}

int main(void)
{
	static int (*const with_daemon[])(void) = {placement, supervisor_bad_input, one_gpu_faults,
						   fault_resumes_elsewhere, every_gpu_faults};
	int rc = bad_flags();

	for (size_t i = 0; rc == 0 && i < sizeof(with_daemon) / sizeof(with_daemon[0]); i++) {
		rc = with_daemon[i]();
		if (rc != 0)
			vyre_test_daemon_dump_log(&daemon_);
		vyre_test_daemon_cleanup(&daemon_);
	}
	if (rc == 0)
		printf("PASS\n");
	return rc == 0 ? 0 : 1;
}
