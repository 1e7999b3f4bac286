/* SPDX-License-Identifier: MIT */
/*
 * A domain's ledger: vyred writes it as buffers come and go; a new vyred
 * reads one a client hands over and trusts none of it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heap.h"
#include "ledger.h"
#include "proto.h"
#include "ring.h"

#define LEDGER_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)

static uint64_t ledger_bytes(uint32_t capacity)
{
	return sizeof(struct vyre_ledger_header) +
	       (uint64_t)capacity * sizeof(struct vyre_ledger_entry);
}

int vyre_ledger_create(uint32_t capacity, const char *domain, uint64_t heap_bytes, uid_t uid,
		       gid_t gid, struct vyre_ledger *out)
{
	size_t len = strlen(domain);
	uint64_t bytes = ledger_bytes(capacity);

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (capacity == 0 || len > VYRE_DOMAIN_NAME_MAX || bytes > SIZE_MAX)
		return VYRE_E_INVAL;
	int fd = memfd_create("vyre-ledger", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return VYRE_E_NOMEM;
	void *p = MAP_FAILED;

	if (ftruncate(fd, (off_t)bytes) == 0)
		p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	/* sealed after mapping: F_SEAL_FUTURE_WRITE leaves this mapping the only writer */
	if (p == MAP_FAILED || fcntl(fd, F_ADD_SEALS, LEDGER_SEALS) != 0) {
		if (p != MAP_FAILED)
			munmap(p, (size_t)bytes);
		close(fd);
		return VYRE_E_NOMEM;
	}
	out->fd = fd;
	out->bytes = bytes;
	out->hdr = p;
	out->e = (struct vyre_ledger_entry *)(void *)((uint8_t *)p + sizeof(*out->hdr));
	out->hdr->magic = VYRE_LEDGER_MAGIC;
	out->hdr->version = VYRE_LEDGER_VERSION;
	out->hdr->capacity = capacity;
	out->hdr->heap_bytes = heap_bytes;
	out->hdr->creator_uid = (uint32_t)uid;
	out->hdr->creator_gid = (uint32_t)gid;
	out->hdr->domain_len = (uint32_t)len;
	memcpy(out->hdr->domain, domain, len);
	return 0;
}

void vyre_ledger_destroy(struct vyre_ledger *l)
{
	/* a created ledger is mapped, and its descriptor may be 0 (stdin closed at start) */
	if (l->hdr) {
		munmap(l->hdr, (size_t)l->bytes);
		close(l->fd);
	}
	free(l->free);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

int vyre_ledger_add(struct vyre_ledger *l, uint32_t handle, uint32_t flags, uint64_t off,
		    uint32_t bytes, const char *name, uint32_t *index)
{
	uint32_t i;

	if (l->n_free)
		i = l->free[--l->n_free];
	else if (l->hdr->high < l->hdr->capacity)
		i = l->hdr->high;
	else
		return VYRE_E_NOMEM;
	struct vyre_ledger_entry *e = &l->e[i];
	size_t len = name ? strlen(name) : 0;

	e->flags = flags;
	e->off = off;
	e->bytes = bytes;
	e->name_len = (uint32_t)len;
	memset(e->name, 0, sizeof(e->name));
	memcpy(e->name, name ? name : "", len);
	__atomic_store_n(&e->handle, handle, __ATOMIC_RELEASE);
	if (i == l->hdr->high)
		__atomic_store_n(&l->hdr->high, i + 1, __ATOMIC_RELEASE);
	*index = i;
	return 0;
}

void vyre_ledger_remove(struct vyre_ledger *l, uint32_t index)
{
	__atomic_store_n(&l->e[index].handle, 0, __ATOMIC_RELEASE);
	if (l->n_free == l->cap_free) {
		uint32_t cap = l->cap_free ? l->cap_free * 2 : 64;
		uint32_t *f = cap > l->cap_free ? realloc(l->free, (size_t)cap * sizeof(*f)) : NULL;

		/* without room to remember it the entry stays empty and unused: harmless */
		if (!f)
			return;
		l->free = f;
		l->cap_free = cap;
	}
	l->free[l->n_free++] = index;
}

static int sealed_memfd_size(int fd, uint64_t *bytes)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW) ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return VYRE_E_PROTO;
	*bytes = (uint64_t)st.st_size;
	return 0;
}

static uint64_t span(const struct vyre_ledger_entry *e)
{
	return ((uint64_t)e->bytes + VYRE_HEAP_ALIGN - 1) & ~(uint64_t)(VYRE_HEAP_ALIGN - 1);
}

static int entry_ok(const struct vyre_ledger_entry *e, uint64_t heap_bytes)
{
	if ((e->bytes & 3u) || (e->name_len && !vyre_msg_name_ok(e->name, e->name_len)))
		return 0;
	for (uint32_t k = e->name_len; k < VYRE_BUFFER_NAME_MAX; k++)
		if (e->name[k])
			return 0;
	if (e->flags == VYRE_BUF_DEVICE)
		return e->off == 0;
	if (e->flags != 0 && e->flags != VYRE_BUF_TRANSIENT)
		return 0;
	return (e->off % VYRE_HEAP_ALIGN) == 0 && e->off <= heap_bytes &&
	       span(e) <= heap_bytes - e->off;
}

static int by_offset(const void *a, const void *b)
{
	const struct vyre_ledger_entry *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

static int by_handle(const void *a, const void *b)
{
	const struct vyre_ledger_entry *x = *(const struct vyre_ledger_entry *const *)a;
	const struct vyre_ledger_entry *y = *(const struct vyre_ledger_entry *const *)b;

	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

static int by_name(const void *a, const void *b)
{
	const struct vyre_ledger_entry *x = *(const struct vyre_ledger_entry *const *)a;
	const struct vyre_ledger_entry *y = *(const struct vyre_ledger_entry *const *)b;

	/* names are zero padded to the same length, so the whole field compares */
	return memcmp(x->name, y->name, sizeof(x->name));
}

/* Whether two of the @n entries at @v are equal by @cmp (sorts @v). */
static int has_twin(const struct vyre_ledger_entry **v, uint32_t n,
		    int (*cmp)(const void *, const void *))
{
	qsort(v, n, sizeof(*v), cmp);
	for (uint32_t i = 1; i < n; i++)
		if (cmp(&v[i - 1], &v[i]) == 0)
			return 1;
	return 0;
}

/* Heap buffers overlap, a handle or a name comes twice: the ledger is not one vyred wrote. */
static int entries_unique(const struct vyre_ledger_image *im)
{
	uint64_t end = 0;
	uint32_t named = 0;
	int rc = 0;
	const struct vyre_ledger_entry **v = malloc(((size_t)im->n + 1) * sizeof(*v));

	if (!v)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < im->n; i++) {
		const struct vyre_ledger_entry *e = &im->e[i];

		v[i] = e;
		if (e->flags == VYRE_BUF_DEVICE || e->bytes == 0)
			continue;
		if (e->off < end)
			rc = VYRE_E_PROTO;
		end = e->off + span(e);
	}
	if (rc == 0 && has_twin(v, im->n, by_handle))
		rc = VYRE_E_PROTO;
	for (uint32_t i = 0; i < im->n; i++)
		if (im->e[i].name_len)
			v[named++] = &im->e[i];
	if (rc == 0 && has_twin(v, named, by_name))
		rc = VYRE_E_PROTO;
	free(v);
	return rc;
}

static int read_entries(const uint8_t *base, uint32_t high, uint64_t heap_bytes,
			struct vyre_ledger_image *out)
{
	const struct vyre_ledger_entry *src =
	    (const struct vyre_ledger_entry *)(const void *)(base + sizeof(out->hdr));

	out->e = malloc(((size_t)high + 1) * sizeof(*out->e));
	if (!out->e)
		return VYRE_E_NOMEM;
	for (uint32_t i = 0; i < high; i++) {
		struct vyre_ledger_entry e;

		/* one copy: a writer racing us cannot change what was checked */
		memcpy(&e, &src[i], sizeof(e));
		if (e.handle == 0)
			continue;
		if (!entry_ok(&e, heap_bytes))
			return VYRE_E_PROTO;
		out->e[out->n++] = e;
	}
	qsort(out->e, out->n, sizeof(*out->e), by_offset);
	return entries_unique(out);
}

int vyre_ledger_read(int fd, uint64_t heap_bytes, uint32_t max_entries,
		     struct vyre_ledger_image *out)
{
	uint64_t bytes;
	int rc = sealed_memfd_size(fd, &bytes);

	memset(out, 0, sizeof(*out));
	if (rc != 0 || bytes < sizeof(out->hdr) || bytes > SIZE_MAX)
		return VYRE_E_PROTO;
	const uint8_t *base = mmap(NULL, (size_t)bytes, PROT_READ, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED)
		return VYRE_E_PROTO;
	memcpy(&out->hdr, base, sizeof(out->hdr));
	const struct vyre_ledger_header *h = &out->hdr;
	uint32_t high = h->high;

	if (h->magic != VYRE_LEDGER_MAGIC || h->version != VYRE_LEDGER_VERSION ||
	    h->capacity == 0 || ledger_bytes(h->capacity) > bytes || high > h->capacity ||
	    high > max_entries || h->heap_bytes != heap_bytes ||
	    h->domain_len > VYRE_DOMAIN_NAME_MAX)
		rc = VYRE_E_PROTO;
	if (rc == 0)
		rc = read_entries(base, high, heap_bytes, out);
	munmap((void *)base, (size_t)bytes);
	if (rc != 0) {
		free(out->e);
		out->e = NULL;
		out->n = 0;
	}
	return rc;
}
