/* SPDX-License-Identifier: MIT */
/* The op modules of an ops directory, checked and loaded (opmods.h). */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vyre/abi.h"
#include "opmods.h"

#define SUFFIX ".opmod"

struct why {
	char *s;
	size_t len;
};

static int say(struct why *w, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (w->len)
		vsnprintf(w->s, w->len, fmt, ap);
	va_end(ap);
	return rc;
}

/* Who may own and write a file vyred runs: root or @owner, nobody else. */
static int trusted(const struct stat *st, uid_t owner, int want_dir, const char *path,
		   struct why *w)
{
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return say(w, VYRE_E_PERM, "%s: not a %s", path,
			   want_dir ? "directory" : "regular file");
	if (st->st_uid != 0 && st->st_uid != owner)
		return say(w, VYRE_E_PERM, "%s: owned by uid %u, not root or vyred's uid %u", path,
			   (unsigned)st->st_uid, (unsigned)owner);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return say(w, VYRE_E_PERM, "%s: writable by its group or others (mode %03o)", path,
			   (unsigned)(st->st_mode & 0777));
	return 0;
}

/* Opens @name in @dirfd without following a link and checks it: a descriptor, or -1. */
static int open_checked(int dirfd, const char *dir, const char *name, uid_t owner, off_t *bytes,
			struct why *w, int *rc)
{
	struct stat st;
	const int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		*rc = say(w, errno == ENOENT ? VYRE_E_NOENT : VYRE_E_PERM, "%s/%s: %s", dir, name,
			  strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		*rc = say(w, VYRE_E_PERM, "%s/%s: %s", dir, name, strerror(errno));
		close(fd);
		return -1;
	}
	char path[4096 + 256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((*rc = trusted(&st, owner, 0, path, w)) != 0) {
		close(fd);
		return -1;
	}
	if ((unsigned long long)st.st_size > VYRE_OPMODS_MAX_FILE) {
		*rc = say(w, VYRE_E_INVAL, "%s: over %llu bytes", path, VYRE_OPMODS_MAX_FILE);
		close(fd);
		return -1;
	}
	*bytes = st.st_size;
	return fd;
}

/* All @bytes of @fd into a new buffer (one spare zero byte): 0, or an error. */
static int read_all(int fd, off_t bytes, uint8_t **out, const char *name, struct why *w)
{
	uint8_t *p = malloc((size_t)bytes + 1);
	size_t got = 0;

	if (!p)
		return say(w, VYRE_E_NOMEM, "%s: out of memory", name);
	while (got < (size_t)bytes) {
		const ssize_t n = pread(fd, p + got, (size_t)bytes - got, (off_t)got);

		if (n <= 0) {
			free(p);
			return say(w, VYRE_E_INVAL, "%s: %s", name,
				   n < 0 ? strerror(errno) : "shorter than it was");
		}
		got += (size_t)n;
	}
	p[got] = 0;
	*out = p;
	return 0;
}

/* Reads file @name of module @m's directory into *@out and adds it to the digest. */
static int take_file(int dirfd, const char *dir, const char *name, uid_t owner,
		     struct vyre_opmod_module *m, uint8_t **out, size_t *out_bytes, int *fd_out,
		     struct why *w)
{
	off_t bytes;
	int rc = 0;
	const int fd = open_checked(dirfd, dir, name, owner, &bytes, w, &rc);

	if (fd < 0)
		return rc;
	uint8_t *p = NULL;

	rc = read_all(fd, bytes, &p, name, w);
	if (rc == 0) {
		m->digest = vyre_opmod_fnv1a64(m->digest, p, (size_t)bytes);
		if (out) {
			*out = p;
			*out_bytes = (size_t)bytes;
		} else {
			free(p);
		}
	}
	if (fd_out && rc == 0)
		*fd_out = fd;
	else
		close(fd);
	return rc;
}

static void module_free(struct vyre_opmod_module *m)
{
	if (m->dl) {
		dlclose(m->dl);
		close(m->host_fd);
	}
	free(m->ptx);
	free(m->cubin);
	memset(m, 0, sizeof(*m));
}

/* Loads manifest @file of @dir into @m: its checks, its files, its host symbols. */
static int load_module(int dirfd, const char *dir, const char *file, uid_t owner,
		       struct vyre_opmod_module *m, int *optional, struct why *w)
{
	uint8_t *text = NULL;
	size_t text_bytes = 0;
	char perr[256];
	int host_fd = -1, rc;

	memset(m, 0, sizeof(*m));
	m->digest = VYRE_OPMOD_FNV_SEED;
	rc = take_file(dirfd, dir, file, owner, m, &text, &text_bytes, NULL, w);
	if (rc)
		return rc;
	rc = vyre_opmod_parse((const char *)text, text_bytes, &m->man, perr, sizeof(perr));
	free(text);
	if (rc)
		return say(w, rc, "%s/%s: %s", dir, file, perr);
	*optional = m->man.optional;
	rc = take_file(dirfd, dir, m->man.host, owner, m, NULL, NULL, &host_fd, w);
	rc = rc ? rc : take_file(dirfd, dir, m->man.ptx, owner, m, &m->ptx, &m->ptx_bytes, NULL, w);
	if (rc == 0 && m->man.cubin[0])
		rc = take_file(dirfd, dir, m->man.cubin, owner, m, &m->cubin, &m->cubin_bytes, NULL,
			       w);
	if (rc == 0) {
		char self[64];

		/*
		 * The dynamic loader knows an object by its name, and every
		 * host object's is /proc/self/fd/N: the descriptor stays open
		 * while the object is loaded, so that no other module's gets N
		 * and the object already loaded as N in its place. One still
		 * loaded under N (never unloaded by dlclose) is refused.
		 */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", host_fd);
		void *old = dlopen(self, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);

		if (old) {
			dlclose(old);
			rc = say(w, VYRE_E_INVAL,
				 "%s/%s: an object loaded earlier as %s is still "
				 "loaded",
				 dir, m->man.host, self);
		} else if ((m->dl = dlopen(self, RTLD_NOW | RTLD_LOCAL)) == NULL) {
			const char *e = dlerror();

			rc = say(w, VYRE_E_INVAL, "%s/%s: %s", dir, m->man.host, e ? e : "dlopen");
		} else {
			m->host_fd = host_fd;
			host_fd = -1;
		}
	}
	if (host_fd >= 0)
		close(host_fd);
	for (uint32_t i = 0; rc == 0 && i < m->man.n_ops; i++)
		if (!dlsym(m->dl, m->man.ops[i].host_fn))
			rc = say(w, VYRE_E_INVAL, "%s/%s: op %s: no symbol %s in %s", dir, file,
				 m->man.ops[i].name, m->man.ops[i].host_fn, m->man.host);
	if (rc)
		module_free(m);
	return rc;
}

/* Adds @m's ops to @t unless a name or number is taken: 0, or VYRE_E_INVAL. */
static int add_ops(struct vyre_opmods *t, uint32_t mi, const char *dir, struct why *w)
{
	const struct vyre_opmod_module *m = &t->modules[mi];

	for (uint32_t i = 0; i < m->man.n_ops; i++) {
		const struct vyre_opmod_op *op = &m->man.ops[i];
		const uint32_t number = vyre_opmod_number(op->name, m->digest);
		const struct vyre_opmod_loaded *a = vyre_opmods_find(t, op->name);
		const struct vyre_opmod_loaded *b = vyre_opmods_by_number(t, number);

		if (a || b) {
			const struct vyre_opmod_loaded *o = a ? a : b;

			t->n_ops -= i; /* this module's ops so far */
			return say(w, VYRE_E_INVAL, "%s: module %s: op %s %s module %s's op %s",
				   dir, m->man.module, op->name,
				   a ? "has the name of" : "has the number of",
				   t->modules[o->module].man.module, o->spec->name);
		}
		t->ops[t->n_ops++] = (struct vyre_opmod_loaded){
		    number, mi, op, (vyre_op_host_fn *)(uintptr_t)dlsym(m->dl, op->host_fn)};
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The manifests of @dirfd, sorted: a count, or a negative error. */
static int list_manifests(int dirfd, const char *dir, char ***names, struct why *w)
{
	const int fd = dup(dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	char **v = NULL;
	int n = 0, rc = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return say(w, VYRE_E_PERM, "%s: %s", dir, strerror(errno));
	}
	for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
		const size_t len = strlen(e->d_name);

		if (len <= strlen(SUFFIX) || strcmp(e->d_name + len - strlen(SUFFIX), SUFFIX) != 0)
			continue;
		if ((uint32_t)n == VYRE_OPMODS_MAX_MODULES) {
			rc = say(w, VYRE_E_INVAL, "%s: more than %u modules", dir,
				 VYRE_OPMODS_MAX_MODULES);
			break;
		}
		char **nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		char *s = nv ? strdup(e->d_name) : NULL;

		if (nv)
			v = nv;
		if (!s) {
			rc = say(w, VYRE_E_NOMEM, "%s: out of memory", dir);
			break;
		}
		v[n++] = s;
	}
	closedir(d);
	if (rc) {
		for (int i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return rc;
	}
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), by_name);
	*names = v;
	return n;
}

int vyre_opmods_load(const char *dir, uid_t owner, struct vyre_opmods *t, vyre_opmods_note_fn *note,
		     void *ctx, char *why, size_t why_len)
{
	char reason[1024] = "";
	struct why w = {reason, sizeof(reason)};
	struct stat st;
	char **names = NULL;
	int rc, n;

	memset(t, 0, sizeof(*t));
	if (why_len)
		why[0] = 0;
	const int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dirfd < 0) {
		w = (struct why){why, why_len};
		return say(&w, errno == ENOENT ? VYRE_E_NOENT : VYRE_E_PERM, "%s: %s", dir,
			   strerror(errno));
	}
	rc = fstat(dirfd, &st) != 0 ? say(&w, VYRE_E_PERM, "%s: %s", dir, strerror(errno))
				    : trusted(&st, owner, 1, dir, &w);
	n = rc ? rc : list_manifests(dirfd, dir, &names, &w);
	rc = n < 0 ? n : 0;
	if (rc == 0 && n > 0) {
		t->modules = calloc((size_t)n, sizeof(*t->modules));
		t->ops = calloc((size_t)n * VYRE_OP_MODULE_MAX_OPS, sizeof(*t->ops));
		if (!t->modules || !t->ops)
			rc = say(&w, VYRE_E_NOMEM, "%s: out of memory", dir);
	}
	for (int i = 0; rc == 0 && i < n; i++) {
		struct vyre_opmod_module *m = &t->modules[t->n_modules];
		int optional = 0;
		int mrc = load_module(dirfd, dir, names[i], owner, m, &optional, &w);

		if (mrc == 0 && (mrc = add_ops(t, t->n_modules, dir, &w)) != 0)
			module_free(m);
		if (mrc == 0) {
			snprintf(m->file, sizeof(m->file), "%s", names[i]);
			t->n_modules++;
			continue;
		}
		/* a module whose manifest parsed and says optional is left out, not fatal */
		if (optional && mrc != VYRE_E_NOMEM) {
			if (note)
				note(ctx, reason);
			reason[0] = 0;
			continue;
		}
		rc = mrc;
	}
	for (int i = 0; i < (n > 0 ? n : 0); i++)
		free(names[i]);
	free(names);
	close(dirfd);
	if (rc) {
		vyre_opmods_free(t);
		if (why_len)
			snprintf(why, why_len, "%s", reason);
	}
	return rc;
}

void vyre_opmods_free(struct vyre_opmods *t)
{
	for (uint32_t i = 0; t->modules && i < t->n_modules; i++)
		module_free(&t->modules[i]);
	free(t->modules);
	free(t->ops);
	memset(t, 0, sizeof(*t));
}

const struct vyre_opmod_loaded *vyre_opmods_find(const struct vyre_opmods *t, const char *name)
{
	for (uint32_t i = 0; i < t->n_ops; i++)
		if (strcmp(t->ops[i].spec->name, name) == 0)
			return &t->ops[i];
	return NULL;
}

const struct vyre_opmod_loaded *vyre_opmods_by_number(const struct vyre_opmods *t, uint32_t number)
{
	for (uint32_t i = 0; i < t->n_ops; i++)
		if (t->ops[i].number == number)
			return &t->ops[i];
	return NULL;
}
