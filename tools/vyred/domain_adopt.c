/* SPDX-License-Identifier: MIT */
/*
 * A domain a resuming client hands over after a restart (docs/design.md
 * section 3): its heap memfd and its ledger, both untrusted. A named domain
 * that is live already is joined when the client presents its very heap;
 * otherwise the ledger's buffers are adopted under their handles.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "domain_adopt.h"
#include "domains.h"
#include "log.h"
#include "names.h"

/*
 * The size of a heap memfd sealed so that it can never change under our
 * mapping, that we may map writable (not sealed against writing, not handed
 * over read-only), a page multiple as every heap vyred makes.
 */
static int heap_size(const struct vyre_daemon *d, int fd, struct stat *st)
{
	const int need = F_SEAL_SHRINK | F_SEAL_GROW, refuse = F_SEAL_WRITE | F_SEAL_FUTURE_WRITE;
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int seals = fcntl(fd, F_GET_SEALS), mode = fcntl(fd, F_GETFL);

	if (seals < 0 || (seals & need) != need || (seals & refuse) || mode < 0 ||
	    (mode & O_ACCMODE) != O_RDWR || fstat(fd, st) != 0 || !S_ISREG(st->st_mode) ||
	    st->st_size <= 0 || (uint64_t)st->st_size > d->cfg.heap_bytes_max ||
	    (uint64_t)st->st_size % page)
		return VYRE_E_PROTO;
	return 0;
}

/*
 * A ledger a vyred made: a memfd owned by our uid (no client can chown
 * one) and sealed against writing. Without this a client of another uid
 * could hand over a ledger naming a victim as the creator of a domain not
 * yet resumed, and take its name with a heap of its own.
 */
static int ledger_ours(int fd)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	return seals >= 0 && (seals & F_SEAL_FUTURE_WRITE) && fstat(fd, &st) == 0 &&
	       st.st_uid == geteuid();
}

/* The heap ranges the ledger's buffers hold, sorted as the image is; NULL when out of memory. */
static struct vyre_heap_extent *heap_extents(const struct vyre_ledger_image *im, uint32_t *n)
{
	struct vyre_heap_extent *x = malloc(((size_t)im->n + 1) * sizeof(*x));

	*n = 0;
	for (uint32_t i = 0; x && i < im->n; i++) {
		const struct vyre_ledger_entry *e = &im->e[i];
		uint64_t span =
		    ((uint64_t)e->bytes + VYRE_HEAP_ALIGN - 1) & ~(uint64_t)(VYRE_HEAP_ALIGN - 1);

		if (e->flags != VYRE_BUF_DEVICE && span)
			x[(*n)++] = (struct vyre_heap_extent){.off = e->off, .bytes = span};
	}
	return x;
}

/* The ledger's buffers under their handles; returns how many could not be kept. */
static uint32_t adopt_buffers(struct vyre_daemon *d, struct vyre_domain *dom,
			      const struct vyre_ledger_image *im)
{
	uint32_t lost = 0;

	for (uint32_t i = 0; i < im->n; i++) {
		const struct vyre_ledger_entry *e = &im->e[i];
		struct vyre_buffer_ref ref = {
		    .off = e->off, .bytes = e->bytes, .domain = dom->id, .flags = e->flags};
		char name[VYRE_BUFFER_NAME_MAX + 1];
		uint32_t slot;

		memcpy(name, e->name, e->name_len);
		name[e->name_len] = '\0';
		/* device memory died with the old vyred's context */
		if (e->flags == VYRE_BUF_DEVICE) {
			lost++;
			continue;
		}
		if (vyre_handles_adopt(&d->handles, e->handle, &ref, &slot) != 0) {
			vyre_heap_free(&dom->heap, e->off, e->bytes);
			lost++;
			continue;
		}
		if (vyre_domain_record(d, dom, e->handle, slot, &ref, e->name_len ? name : NULL) !=
		    0) {
			vyre_handles_remove(&d->handles, e->handle, dom->id, &ref);
			vyre_heap_free(&dom->heap, e->off, e->bytes);
			lost++;
			continue;
		}
		if (e->flags & VYRE_BUF_TRANSIENT)
			dom->n_transient++;
		if (e->name_len) {
			vyre_names_add(&d->names, dom->id, name, e->name_len, e->handle, slot);
			dom->n_names++;
		}
	}
	vyre_handles_adopt_done(&d->handles);
	return lost;
}

/* A new domain from the ledger @im and the heap memfd *heap_fd (taken on success). */
static int adopt_new(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		     int *heap_fd, uint64_t heap_bytes, const struct vyre_ledger_image *im,
		     struct vyre_domain **out)
{
	const struct vyre_domain creator = {.creator_uid = im->hdr.creator_uid,
					    .creator_gid = im->hdr.creator_gid};
	struct vyre_domain *dom;
	uint32_t n;

	if (!vyre_domain_may_join(c, &creator))
		return VYRE_E_PERM;
	if (!(dom = vyre_domain_slot(d, c)))
		return VYRE_E_NOMEM;
	struct vyre_heap_extent *used = heap_extents(im, &n);
	int rc = used ? vyre_heap_adopt(*heap_fd, heap_bytes, used, n, &dom->heap) : VYRE_E_NOMEM;

	free(used);
	if (rc != 0)
		return rc == VYRE_E_INVAL ? VYRE_E_PROTO : rc;
	*heap_fd = -1;
	rc = vyre_ledger_create(d->cfg.max_buffers, name, heap_bytes, creator.creator_uid,
				creator.creator_gid, &dom->ledger);
	if (rc != 0) {
		vyre_heap_destroy(&dom->heap);
		return rc;
	}
	rc = vyre_domain_open(d, dom, creator.creator_uid, creator.creator_gid, name, out);
	if (rc != 0)
		return rc;
	uint32_t lost = adopt_buffers(d, dom, im);

	vyre_log("client %u (pid %d uid %u) resumed domain %u%s%s%s: %u buffers (%u named) kept, "
		 "%u lost",
		 c->id, (int)c->pid, (unsigned)c->uid, dom->id, name[0] ? " '" : " (private)", name,
		 name[0] ? "'" : "", im->n - lost, dom->n_names, lost);
	return 0;
}

int vyre_domain_adopt(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		      int *heap_fd, int ledger_fd, struct vyre_domain **out)
{
	struct vyre_ledger_image im;
	struct stat st;
	struct vyre_domain *dom = name[0] ? vyre_domain_find(d, name) : NULL;
	int rc = heap_size(d, *heap_fd, &st);

	if (rc != 0)
		return rc;
	if (dom) {
		/* live already: another of its clients resumed first */
		if (st.st_dev != dom->heap_dev || st.st_ino != dom->heap_ino)
			return VYRE_E_EXIST;
		if (!vyre_domain_may_join(c, dom))
			return VYRE_E_PERM;
		dom->n_clients++;
		*out = dom;
		return 0;
	}
	if (!ledger_ours(ledger_fd))
		return VYRE_E_PROTO;
	rc = vyre_ledger_read(ledger_fd, (uint64_t)st.st_size, d->cfg.max_buffers, &im);
	if (rc != 0)
		return rc;
	if (im.hdr.domain_len != strlen(name) ||
	    memcmp(im.hdr.domain, name, im.hdr.domain_len) != 0)
		rc = VYRE_E_PROTO;
	if (rc == 0)
		rc = adopt_new(d, c, name, heap_fd, (uint64_t)st.st_size, &im, out);
	if (rc == 0)
		(*out)->n_clients++;
	free(im.e);
	return rc;
}
