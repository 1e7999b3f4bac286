/* SPDX-License-Identifier: MIT */
/*
 * Domains: a named domain is shared by every client that joins it by name
 * (allowed when it runs as the creator's uid, shares the creator's gid, or
 * is root); a client without a name gets a private one. A domain, its heap
 * and its buffers (device buffers included) live until its last client
 * leaves.
 */
#include <string.h>
#include <sys/stat.h>

#include "daemon.h"
#include "devbufs.h"
#include "domains.h"
#include "log.h"
#include "names.h"

int vyre_domain_may_join(const struct vyre_conn *c, const struct vyre_domain *dom)
{
	if (c->uid == 0 || c->uid == dom->creator_uid || c->gid == dom->creator_gid)
		return 1;
	for (uint32_t i = 0; i < c->n_groups; i++)
		if (c->groups[i] == dom->creator_gid)
			return 1;
	return 0;
}

struct vyre_domain *vyre_domain_find(struct vyre_daemon *d, const char *name)
{
	for (uint32_t s = 0; s < d->cfg.max_domains; s++)
		if (d->domains[s].live && d->domains[s].name[0] &&
		    !strcmp(d->domains[s].name, name))
			return &d->domains[s];
	return NULL;
}

struct vyre_domain *vyre_domain_slot(struct vyre_daemon *d, const struct vyre_conn *c)
{
	for (uint32_t s = 0; s < d->cfg.max_domains; s++)
		if (!d->domains[s].live)
			return &d->domains[s];
	vyre_log("client %u: --max-domains %u reached", c->id, d->cfg.max_domains);
	return NULL;
}

static int create(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		  uint64_t heap_bytes, struct vyre_domain **out)
{
	struct vyre_domain *dom = vyre_domain_slot(d, c);

	if (!dom)
		return VYRE_E_NOMEM;
	int rc = vyre_heap_create(heap_bytes, &dom->heap);

	if (rc == 0)
		rc = vyre_ledger_create(d->cfg.max_buffers, name, dom->heap.bytes, c->uid, c->gid,
					&dom->ledger);
	if (rc != 0) {
		vyre_heap_destroy(&dom->heap);
		return rc;
	}
	return vyre_domain_open(d, dom, c->uid, c->gid, name, out);
}

int vyre_domain_open(struct vyre_daemon *d, struct vyre_domain *dom, uid_t uid, gid_t gid,
		     const char *name, struct vyre_domain **out)
{
	struct stat st;
	int rc =
	    d->backend_ops->register_heap(d->backend, dom->slot, dom->heap.base, dom->heap.bytes);

	if (rc != 0 || fstat(dom->heap.fd, &st) != 0) {
		vyre_log("backend %s cannot register a %llu-byte heap: %s", d->backend_ops->name,
			 (unsigned long long)dom->heap.bytes, vyre_strerror(rc));
		if (rc == 0)
			d->backend_ops->unregister_heap(d->backend, dom->slot);
		vyre_heap_destroy(&dom->heap);
		vyre_ledger_destroy(&dom->ledger);
		return VYRE_E_NOMEM;
	}
	dom->heap_dev = st.st_dev;
	dom->heap_ino = st.st_ino;
	dom->live = 1;
	/* unique over every loop: loop L numbers L + 1, L + 1 + loops, ... */
	dom->id = d->next_domain_id++ * d->sh->n_loops + d->loop_index + 1;
	strcpy(dom->name, name);
	dom->creator_uid = uid;
	dom->creator_gid = gid;
	dom->n_clients = 0;
	*out = dom;
	return 0;
}

int vyre_domain_record(struct vyre_daemon *d, struct vyre_domain *dom, uint32_t handle,
		       uint32_t slot, const struct vyre_buffer_ref *ref, const char *name)
{
	/* a device buffer's offset is its backend heap's: the ledger says 0 */
	uint64_t off = (ref->flags & VYRE_BUF_DEVICE) ? 0 : ref->off;

	return vyre_ledger_add(&dom->ledger, handle, ref->flags, off, ref->bytes, name,
			       &d->handles.slots[slot].ledger);
}

int vyre_domain_join(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		     uint64_t heap_bytes, struct vyre_domain **out)
{
	struct vyre_domain *dom = name[0] ? vyre_domain_find(d, name) : NULL;

	if (dom && !vyre_domain_may_join(c, dom))
		return VYRE_E_PERM;
	if (!dom) {
		int rc = create(d, c, name, heap_bytes, &dom);

		if (rc != 0)
			return rc;
	}
	dom->n_clients++;
	*out = dom;
	return 0;
}

/* A buffer of a closing domain: a device buffer gives its memory back. */
static void drop_buffer(void *arg, const struct vyre_buffer_ref *ref)
{
	if (ref->flags & VYRE_BUF_DEVICE)
		vyre_devbuf_free(arg, ref);
}

void vyre_domain_leave(struct vyre_daemon *d, struct vyre_domain *dom)
{
	if (--dom->n_clients > 0)
		return;
	const uint32_t named =
	    dom->n_names ? vyre_names_drop_domain(&d->names, dom->id, d->handles.n_slots) : 0;
	uint32_t dropped = vyre_handles_drop_domain(&d->handles, dom->id, drop_buffer, d);

	if (dropped)
		vyre_log("domain %u '%s' closed with its last client: %u buffers (%u named) freed",
			 dom->id, dom->name, dropped, named);
	d->backend_ops->unregister_heap(d->backend, dom->slot);
	vyre_heap_destroy(&dom->heap);
	vyre_ledger_destroy(&dom->ledger);
	uint32_t slot = dom->slot;

	memset(dom, 0, sizeof(*dom));
	dom->slot = slot;
	dom->heap.fd = -1;
}
