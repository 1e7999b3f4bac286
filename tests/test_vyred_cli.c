/* SPDX-License-Identifier: MIT */
/*
 * vyred's command line: every bad value is refused before anything starts,
 * with the flag named and a usage exit status (2); a value that parses but
 * cannot be applied (--cpu of a CPU this process may not use) fails start-up
 * with status 1 and the reason; a good --cpu pins the event loop and vyred
 * serves and stops as usual.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_integration_daemon.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: " __VA_ARGS__);                                              \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* Run vyred with @args (NULL-terminated); its exit status (-1: killed after 10 s) and stderr. */
static int run(const char *const *args, char *err, size_t err_len)
{
	char path[PATH_MAX + 16], log[] = "/tmp/vyre-cli-XXXXXX";
	const char *argv[32];
	int argc = 0, fd = mkstemp(log), st = 0;
	pid_t pid;

	if (fd < 0)
		return -1;
	argv[argc++] = vyre_test_vyred_path(path, sizeof(path));
	argv[argc++] = "--socket";
	argv[argc++] = "/tmp/vyre-cli-never.sock";
	for (int i = 0; args[i] && argc < 30; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (int i = 0; pid > 0 && i < 1000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			pid = 0;
			break;
		}
		usleep(10000);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		st = -1;
	}
	ssize_t n = pread(fd, err, err_len - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(log);
	return st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void refused(const char *const *args, int want_status, const char *want_text)
{
	char err[4096];
	const int rc = run(args, err, sizeof(err));

	CHECK(rc == want_status && strstr(err, want_text),
	      "vyred %s %s: exit %d, want %d and '%s' in: %s", args[0], args[1] ? args[1] : "", rc,
	      want_status, want_text, err);
}

/* A CPU this process may not run on, or -1. */
static int forbidden_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (!CPU_ISSET(c, &set))
			return c;
	return -1;
}

int main(void)
{
	char cpu[16];
	struct vyre_test_daemon d;
	const char *const pin0[] = {"--cpu", "0", NULL};

	setvbuf(stdout, NULL, _IOLBF, 0);
	refused((const char *const[]){"--cpu", "abc", NULL}, 2, "invalid value for --cpu: 'abc'");
	refused((const char *const[]){"--cpu", "-1", NULL}, 2, "invalid value for --cpu");
	refused((const char *const[]){"--cpu", "1024", NULL}, 2, "invalid value for --cpu");
	refused((const char *const[]){"--cpu", "", NULL}, 2, "invalid value for --cpu");
	refused((const char *const[]){"--max-batch", "0", NULL}, 2,
		"invalid value for --max-batch");
	refused((const char *const[]){"--backend", "tpu", NULL}, 2, "--backend");
	refused((const char *const[]){"--inflight", "0", NULL}, 2, "invalid value for --inflight");
	refused((const char *const[]){"--inflight", "65", NULL}, 2, "invalid value for --inflight");
	refused((const char *const[]){"--client-batches", "0", NULL}, 2,
		"invalid value for --client-batches");
	refused((const char *const[]){"--client-batches", "65", NULL}, 2,
		"invalid value for --client-batches");
	refused((const char *const[]){"--inflight", "2", "--client-batches", "3", NULL}, 2,
		"--client-batches: 3 is more than --inflight 2");
	refused((const char *const[]){"--loops", "0", NULL}, 2, "invalid value for --loops");
	refused((const char *const[]){"--loops", "17", NULL}, 2, "invalid value for --loops");
	refused((const char *const[]){"--loops", "many", NULL}, 2, "invalid value for --loops");
	refused((const char *const[]){"--min-share", "0", NULL}, 2,
		"invalid value for --min-share");
	refused((const char *const[]){"--spin-us", "99999999999", NULL}, 2,
		"invalid value for --spin-us");
	refused((const char *const[]){"--hello-timeout-ms", "0", NULL}, 2,
		"invalid value for --hello-timeout-ms");
	refused((const char *const[]){"--device-bytes-max", "-5", NULL}, 2,
		"invalid value for --device-bytes-max");
	refused((const char *const[]){"--max-device-buffers", "65537", NULL}, 2,
		"invalid value for --max-device-buffers");
	/* each is a heap, and an exec item's heap index has 16 bits (gpu/ops.h) */
	refused(
	    (const char *const[]){"--max-domains", "1000", "--max-device-buffers", "65000", NULL},
	    2, "--max-domains 1000 plus --max-device-buffers 65000 is more than");
	refused((const char *const[]){"--no-such-flag", NULL}, 2, "");
	const int c = forbidden_cpu();
	if (c >= 0) {
		snprintf(cpu, sizeof(cpu), "%d", c);
		char want[48];
		snprintf(want, sizeof(want), "--cpu %d:", c);
		refused((const char *const[]){"--backend", "cpu", "--cpu", cpu, NULL}, 1, want);
	}

	if (vyre_test_daemon_start(&d, pin0) != 0) {
		printf("FAIL: vyred --cpu 0 did not start\n");
		return 1;
	}
	/* a loop pins itself when it starts to run, maybe after "ready": read the log at exit */
	CHECK(vyre_test_daemon_stop(&d) == 0, "vyred --cpu 0 did not stop cleanly");
	CHECK(vyre_test_log_has(d.log, "event loop 0 pinned to CPU 0"),
	      "vyred --cpu 0 did not say it pinned its loop");
	vyre_test_daemon_cleanup(&d);

	/* --loops 2 --cpu 0: loop L on CPU L */
	cpu_set_t allowed;
	const char *const two_pinned[] = {"--loops", "2", "--cpu", "0", NULL};

	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_ISSET(0, &allowed) &&
	    CPU_ISSET(1, &allowed)) {
		if (vyre_test_daemon_start(&d, two_pinned) != 0) {
			printf("FAIL: vyred --loops 2 --cpu 0 did not start\n");
			return 1;
		}
		CHECK(vyre_test_log_has(d.log, "2 event loops"),
		      "vyred --loops 2 ran another count");
		CHECK(vyre_test_daemon_stop(&d) == 0, "vyred --loops 2 did not stop cleanly");
		CHECK(vyre_test_log_has(d.log, "event loop 1 pinned to CPU 1"),
		      "vyred --loops 2 --cpu 0 did not pin loop 1 to CPU 1");
		vyre_test_daemon_cleanup(&d);
	} else {
		printf("--loops 2 --cpu 0 not tried: CPUs 0 and 1 are not both allowed here\n");
	}
	printf("vyred cli: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
