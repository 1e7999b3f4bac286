/* SPDX-License-Identifier: MIT */
/*
 * test_fuzz_replay - runs every committed input of every fuzz harness:
 * tests/fuzz/corpus/<harness>/ (the seeds and what fuzzing kept) and
 * tests/fuzz/regressions/<harness>/ (every crash ever found, kept forever).
 * Built with the project's compiler and sanitizers, so it checks the same
 * promises in every CI configuration even where libFuzzer is missing. A
 * broken promise traps; the signal handler names the input first.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#ifndef FUZZ_DIR
#error "FUZZ_DIR must name tests/fuzz"
#endif

#define REPLAY_MAX_INPUT (1u << 20)

int vyre_fuzz_decode(const uint8_t *data, size_t size);
int vyre_fuzz_dfa(const uint8_t *data, size_t size);
int vyre_fuzz_plan(const uint8_t *data, size_t size);
int vyre_fuzz_proto(const uint8_t *data, size_t size);
int vyre_fuzz_ring(const uint8_t *data, size_t size);
int vyre_fuzz_submit(const uint8_t *data, size_t size);

static const struct harness {
	const char *name;
	int (*run)(const uint8_t *data, size_t size);
} harnesses[] = {
    {"decode", vyre_fuzz_decode}, {"dfa", vyre_fuzz_dfa},   {"plan", vyre_fuzz_plan},
    {"proto", vyre_fuzz_proto},	  {"ring", vyre_fuzz_ring}, {"submit", vyre_fuzz_submit},
};

static char current[512];

static void on_fatal(int sig)
{
	static const char msg[] = "\nfuzz replay died on input: ";

	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, current, strnlen(current, sizeof(current)));
	(void)!write(2, "\n", 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int replay_file(const struct harness *h, const char *path, uint8_t *buf)
{
	FILE *f = fopen(path, "rb");

	if (!f)
		return -1;
	size_t n = fread(buf, 1, REPLAY_MAX_INPUT, f);
	int err = ferror(f);

	fclose(f);
	if (err)
		return -1;
	snprintf(current, sizeof(current), "%s", path);
	h->run(buf, n);
	return 0;
}

/* Replays every regular file of DIR; returns how many, or -1 on a read error. */
static long replay_dir(const struct harness *h, const char *dir, uint8_t *buf)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long count = 0;
	char path[512];

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (replay_file(h, path, buf) != 0) {
			fprintf(stderr, "cannot read %s\n", path);
			count = -1;
			break;
		}
		count++;
	}
	closedir(d);
	return count;
}

int main(void)
{
	uint8_t *buf = malloc(REPLAY_MAX_INPUT);
	long total = 0;
	char dir[512];

	if (!buf)
		return 1;
	signal(SIGILL, on_fatal);
	signal(SIGTRAP, on_fatal);
	signal(SIGABRT, on_fatal);
	for (size_t i = 0; i < sizeof(harnesses) / sizeof(harnesses[0]); i++) {
		const struct harness *h = &harnesses[i];

		snprintf(dir, sizeof(dir), "%s/corpus/%s", FUZZ_DIR, h->name);
		long seeds = replay_dir(h, dir, buf);

		snprintf(dir, sizeof(dir), "%s/regressions/%s", FUZZ_DIR, h->name);
		long regressions = replay_dir(h, dir, buf);

		if (seeds <= 0 || regressions < 0) {
			printf("%s: %s\n", h->name,
			       seeds == 0 ? "empty corpus" : "unreadable input");
			free(buf);
			return 1;
		}
		printf("%-7s %ld corpus inputs, %ld regressions: ok\n", h->name, seeds,
		       regressions);
		total += seeds + regressions;
	}
	printf("%ld inputs replayed\n", total);
	free(buf);
	return 0;
}
