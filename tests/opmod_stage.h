/* SPDX-License-Identifier: MIT */
/*
 * tests/opmod_stage.h - staging op module directories for tests
 * (docs/design.md 6.7): files with the modes the loader checks, copies of
 * the example's host object, and the independent CRC32C the example is
 * checked against. Header-only: each test that includes it is one file.
 */
#ifndef VYRE_TEST_OPMOD_STAGE_H
#define VYRE_TEST_OPMOD_STAGE_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The independent CRC32C: one bit at a time, no table. */
static inline uint32_t opmod_stage_crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = crc & 1u ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

/* @n bytes at @p as @dir/@name with @mode (set after writing, so umask cannot change it). */
static inline int opmod_stage_file(const char *dir, const char *name, const void *p, size_t n,
				   mode_t mode)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, p, n) != (ssize_t)n || fchmod(fd, mode) != 0) {
		fprintf(stderr, "opmod_stage: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return close(fd);
}

/* A copy of the shared object at @so as @dir/@name, mode 0644. */
static inline int opmod_stage_copy(const char *so, const char *dir, const char *name)
{
	static char buf[1 << 20];
	const int fd = open(so, O_RDONLY | O_CLOEXEC);
	const ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		fprintf(stderr, "opmod_stage: %s: cannot read\n", so);
		return -1;
	}
	return opmod_stage_file(dir, name, buf, (size_t)n, 0644);
}

#endif /* VYRE_TEST_OPMOD_STAGE_H */
