/* SPDX-License-Identifier: MIT */
/*
 * bench/bench_modules_dir.c - the "modules" suite's ops directory (see
 * bench_modules_dir.h). vyred loads every *.opmod of the directory and the
 * files each names from the same directory, refusing links and files that
 * are not its own (or root's) or are writable by others: so they are
 * copies, owned by whoever runs vyre-bench (and vyred).
 */
#include "bench_modules_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_modules_ops.h"

static const char stand_in[] = "// stand-in: vyre-bench was built without nvcc\n";

/* Writes @n bytes of @p to @path, mode 0644; 0 or errno. */
static int put(const char *path, const void *p, size_t n)
{
	const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int err = fd < 0 ? errno : 0;

	for (size_t off = 0; !err && off < n;) {
		const ssize_t w = write(fd, (const char *)p + off, n - off);

		if (w < 0)
			err = errno;
		else
			off += (size_t)w;
	}
	if (fd >= 0 && (fchmod(fd, 0644) != 0 || close(fd) != 0) && !err)
		err = errno;
	return err;
}

/* Copies @src to @dst; 0 or errno (ENOENT when @src is missing). */
static int copy(const char *src, const char *dst)
{
	FILE *f = fopen(src, "rb");
	char *buf = NULL;
	long n = -1;
	int err;

	if (!f)
		return errno;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
		buf = malloc((size_t)n + 1);
	err = buf && fread(buf, 1, (size_t)n, f) == (size_t)n ? 0 : EIO;
	fclose(f);
	if (!err)
		err = put(dst, buf, (size_t)n);
	free(buf);
	return err;
}

void vyre_modules_dir_remove(struct vyre_modules_dir *d)
{
	DIR *dir = d->path[0] ? opendir(d->path) : NULL;
	struct dirent *e;
	char file[PATH_MAX];

	while (dir && (e = readdir(dir)))
		if (e->d_name[0] != '.') {
			snprintf(file, sizeof(file), "%s/%s", d->path, e->d_name);
			unlink(file);
		}
	if (dir)
		closedir(dir);
	if (d->path[0])
		rmdir(d->path);
	d->path[0] = '\0';
}

/* Copies example @name's three files; 0, else -1 and why. */
static int stage_one(struct vyre_modules_dir *d, const char *name, int ptx_optional, char *why,
		     size_t why_len)
{
	static const char *const files[] = {"%s.opmod", "libvyre_op_%s.so", "%s.ptx"};
	char file[64], src[PATH_MAX + 256], dst[PATH_MAX];

	for (unsigned i = 0; i < 3; i++) {
		snprintf(file, sizeof(file), files[i], name);
		snprintf(src, sizeof(src), "%s/%s/%s", d->src, name, file);
		snprintf(dst, sizeof(dst), "%s/%s", d->path, file);
		int err = copy(src, dst);

		if (err == ENOENT && i == 2 && ptx_optional) {
			d->stand_in = 1;
			err = put(dst, stand_in, sizeof(stand_in) - 1);
		}
		if (err) {
			snprintf(why, why_len, "%s: %s", err == ENOENT ? src : dst, strerror(err));
			return -1;
		}
	}
	return 0;
}

int vyre_modules_dir_stage(struct vyre_modules_dir *d, int ptx_optional, char *why, size_t why_len)
{
	char self[PATH_MAX];
	const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	memset(d, 0, sizeof(*d));
	if (n <= 0) {
		snprintf(why, why_len, "/proc/self/exe: %s", strerror(errno));
		return -1;
	}
	self[n] = '\0';
	snprintf(d->src, sizeof(d->src), "%s/examples/ops", dirname(self));
	snprintf(d->path, sizeof(d->path), "/tmp/vyre-bench-ops-XXXXXX");
	if (!mkdtemp(d->path)) {
		snprintf(why, why_len, "a temporary directory: %s", strerror(errno));
		d->path[0] = '\0';
		return -1;
	}
	if (chmod(d->path, 0755) != 0) {
		snprintf(why, why_len, "chmod 0755 %s: %s", d->path, strerror(errno));
		vyre_modules_dir_remove(d);
		return -1;
	}
	for (unsigned i = 0; i < VYRE_MODULES_OPS; i++)
		if (stage_one(d, vyre_modules_ops[i].name, ptx_optional, why, why_len)) {
			vyre_modules_dir_remove(d);
			return -1;
		}
	return 0;
}
