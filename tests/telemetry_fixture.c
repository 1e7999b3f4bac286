/* SPDX-License-Identifier: MIT */
/*
 * vyre-tm-fixture - a stand-in for vyred that fires the probes of
 * tests/telemetry_pattern.h on command, so vyre-top and the bpftrace scripts
 * can be checked against exact numbers.
 *
 * usage: vyre-tm-fixture [--socket PATH]
 * Prints "ready PID", then reads one command per line from stdin:
 *   connect       client_connect for clients 1 and 2
 *   go N          N more batches of the pattern; prints "done B" (B batches so far)
 *   bad           probes whose struct size is wrong; prints "done B"
 *   gpu           gpu_state for the three loops of telemetry_pattern.h
 *   disconnect    client_disconnect for clients 1 and 2
 *   quit          exit (so does end of input)
 * With --socket it also listens on PATH, as vyred does, for socket discovery.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "telemetry_pattern.h"

static int listen_on(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *sock = NULL;
	if (argc == 3 && strcmp(argv[1], "--socket") == 0)
		sock = argv[2];
	else if (argc != 1) {
		fprintf(stderr, "usage: vyre-tm-fixture [--socket PATH]\n");
		return 2;
	}
	int lfd = -1;
	if (sock && (lfd = listen_on(sock)) < 0) {
		perror("vyre-tm-fixture: listen");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	char line[128];
	uint64_t batches = 0;
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long n;
		if (strcmp(line, "connect\n") == 0) {
			tm_fire_connect();
		} else if (sscanf(line, "go %lu", &n) == 1) {
			for (unsigned long i = 0; i < n; i++)
				tm_fire_batch(++batches);
			printf("done %llu\n", (unsigned long long)batches);
		} else if (strcmp(line, "bad\n") == 0) {
			tm_fire_bad_layout();
			printf("done %llu\n", (unsigned long long)batches);
		} else if (strcmp(line, "gpu\n") == 0) {
			tm_fire_gpu_state();
		} else if (strcmp(line, "disconnect\n") == 0) {
			tm_fire_disconnect();
		} else if (strcmp(line, "quit\n") == 0) {
			break;
		} else {
			fprintf(stderr, "vyre-tm-fixture: unknown command %s", line);
		}
		fflush(stdout);
	}
	if (lfd >= 0) {
		close(lfd);
		unlink(sock);
	}
	return 0;
}
