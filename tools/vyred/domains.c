/* SPDX-License-Identifier: MIT */
/*
 * Domains: a named domain is shared by every client that joins it by name
 * (allowed when it runs as the creator's uid, shares the creator's gid, or
 * is root); a client without a name gets a private one. A domain, its heap
 * and its buffers (device buffers included) live until its last client
 * leaves.
 */
#include <string.h>

#include "daemon.h"

static int may_join(const struct vyre_conn *c, const struct vyre_domain *dom)
{
	if (c->uid == 0 || c->uid == dom->creator_uid || c->gid == dom->creator_gid)
		return 1;
	for (uint32_t i = 0; i < c->n_groups; i++)
		if (c->groups[i] == dom->creator_gid)
			return 1;
	return 0;
}

static struct vyre_domain *find(struct vyre_daemon *d, const char *name)
{
	for (uint32_t s = 0; s < d->cfg.max_domains; s++)
		if (d->domains[s].live && d->domains[s].name[0] &&
		    !strcmp(d->domains[s].name, name))
			return &d->domains[s];
	return NULL;
}

static int create(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		  uint64_t heap_bytes, struct vyre_domain **out)
{
	struct vyre_domain *dom = NULL;

	for (uint32_t s = 0; s < d->cfg.max_domains && !dom; s++)
		if (!d->domains[s].live)
			dom = &d->domains[s];
	if (!dom) {
		vyre_log("client %u: --max-domains %u reached", c->id, d->cfg.max_domains);
		return VYRE_E_NOMEM;
	}
	int rc = vyre_heap_create(heap_bytes, &dom->heap);

	if (rc != 0)
		return rc;
	rc = d->backend_ops->register_heap(d->backend, dom->slot, dom->heap.base, dom->heap.bytes);
	if (rc != 0) {
		vyre_log("backend %s cannot register a %llu-byte heap: %s", d->backend_ops->name,
			 (unsigned long long)dom->heap.bytes, vyre_strerror(rc));
		vyre_heap_destroy(&dom->heap);
		return VYRE_E_NOMEM;
	}
	dom->live = 1;
	/* unique over every loop: loop L numbers L + 1, L + 1 + loops, ... */
	dom->id = d->next_domain_id++ * d->sh->n_loops + d->loop_index + 1;
	strcpy(dom->name, name);
	dom->creator_uid = c->uid;
	dom->creator_gid = c->gid;
	dom->n_clients = 0;
	*out = dom;
	return 0;
}

int vyre_domain_join(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		     uint64_t heap_bytes, struct vyre_domain **out)
{
	struct vyre_domain *dom = name[0] ? find(d, name) : NULL;

	if (dom && !may_join(c, dom))
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
	uint32_t slot = dom->slot;

	memset(dom, 0, sizeof(*dom));
	dom->slot = slot;
	dom->heap.fd = -1;
}
