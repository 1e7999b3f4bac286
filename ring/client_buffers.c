/* SPDX-License-Identifier: MIT */
/*
 * libvyre: buffer alloc/free/ptr and their named forms (create, open,
 * free_name; vyre_buffer_list is in client_list.c). Buffers this connection allocated are
 * cached (open addressing, linear probing, backward-shift deletion); other
 * handles of the domain are looked up at vyred each time, since another
 * client may free them at any moment.
 */
#include <stdlib.h>
#include <string.h>

#include "client.h"

static uint32_t bucket(uint32_t handle, uint32_t cap)
{
	return (handle * 2654435761u) & (cap - 1);
}

static void cache_insert(struct vyre_client_buffer *tab, uint32_t cap,
			 const struct vyre_client_buffer *b)
{
	uint32_t i = bucket(b->handle, cap);

	while (tab[i].handle != 0 && tab[i].handle != b->handle)
		i = (i + 1) & (cap - 1);
	tab[i] = *b;
}

int vyre_client_cache_put(struct vyre_client *c, uint32_t handle, uint64_t off, uint32_t bytes,
			  uint32_t flags)
{
	/* Keep the load under one half so probes stay short. */
	if ((uint64_t)(c->bufs_used + 1) * 2 > c->bufs_cap) {
		uint32_t cap = c->bufs_cap ? c->bufs_cap * 2 : 64;

		if (cap < c->bufs_cap)
			return VYRE_E_NOMEM;
		struct vyre_client_buffer *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return VYRE_E_NOMEM;
		for (uint32_t i = 0; i < c->bufs_cap; i++)
			if (c->bufs[i].handle)
				cache_insert(tab, cap, &c->bufs[i]);
		free(c->bufs);
		c->bufs = tab;
		c->bufs_cap = cap;
	}
	struct vyre_client_buffer b = {
	    .handle = handle, .bytes = bytes, .off = off, .flags = flags};

	cache_insert(c->bufs, c->bufs_cap, &b);
	c->bufs_used++;
	return 0;
}

const struct vyre_client_buffer *vyre_client_cache_get(const struct vyre_client *c, uint32_t handle)
{
	if (!c->bufs_cap || handle == 0)
		return NULL;
	for (uint32_t i = bucket(handle, c->bufs_cap);; i = (i + 1) & (c->bufs_cap - 1)) {
		if (c->bufs[i].handle == handle)
			return &c->bufs[i];
		if (c->bufs[i].handle == 0)
			return NULL;
	}
}

void vyre_client_cache_del(struct vyre_client *c, uint32_t handle)
{
	const struct vyre_client_buffer *hit = vyre_client_cache_get(c, handle);

	if (!hit)
		return;
	uint32_t mask = c->bufs_cap - 1;
	uint32_t hole = (uint32_t)(hit - c->bufs);

	/* Backward shift: pull later entries of the probe run into the hole. */
	for (uint32_t j = (hole + 1) & mask; c->bufs[j].handle; j = (j + 1) & mask) {
		uint32_t home = bucket(c->bufs[j].handle, c->bufs_cap);

		if (((j - home) & mask) >= ((j - hole) & mask)) {
			c->bufs[hole] = c->bufs[j];
			hole = j;
		}
	}
	c->bufs[hole].handle = 0;
	c->bufs_used--;
}

static int range_ok(const struct vyre_client *c, uint64_t off, uint32_t bytes)
{
	return off <= c->heap_bytes && bytes <= c->heap_bytes - off;
}

/*
 * A buffer vyred described: a device buffer has offset 0, any other lies in
 * the heap (a transient one too, though its bytes are not the client's).
 */
static int reply_ok(const struct vyre_client *c, const struct vyre_msg_buffer_reply *r)
{
	if (r->flags & VYRE_BUF_DEVICE)
		return r->flags == VYRE_BUF_DEVICE && r->offset == 0;
	return (r->flags == 0 || r->flags == VYRE_BUF_TRANSIENT) &&
	       range_ok(c, r->offset, r->bytes);
}

/* Bytes a client may map: neither a device buffer's nor a transient one's. */
static void *mapped(const struct vyre_client *c, uint64_t off, uint32_t flags)
{
	return (flags & (VYRE_BUF_DEVICE | VYRE_BUF_TRANSIENT)) ? NULL : c->heap + off;
}

/* A name the caller passed: NUL-terminated within VYRE_BUFFER_NAME_MAX bytes and valid. */
static int name_ok(const char *name)
{
	return name && vyre_msg_name_ok(name, strnlen(name, VYRE_BUFFER_NAME_MAX + 1));
}

/* ALLOC, or CREATE when @name is set: the new buffer goes into the cache. */
static int allocate(struct vyre_client *c, const char *name, uint32_t bytes, uint32_t flags,
		    uint32_t *handle)
{
	struct vyre_msg req, rep;
	const struct vyre_msg_buffer_reply *r = &rep.u.buffer_reply;

	/* at most one flag; vyred decides which it takes */
	if (!c || !handle || (flags & ~(VYRE_BUF_DEVICE | VYRE_BUF_TRANSIENT)) ||
	    flags == (VYRE_BUF_DEVICE | VYRE_BUF_TRANSIENT) || (bytes & 3u))
		return VYRE_E_INVAL;
	memset(&req, 0, sizeof(req));
	if (name) {
		req.type = VYRE_MSG_CREATE;
		req.u.named.bytes = bytes;
		req.u.named.flags = flags;
		strcpy(req.u.named.name, name);
	} else {
		req.type = VYRE_MSG_ALLOC;
		req.u.buffer.bytes = bytes;
		req.u.buffer.flags = flags;
	}
	int rc = vyre_client_call(c, &req, VYRE_MSG_BUFFER_REPLY, &rep);

	if (rc != 0)
		return rc;
	if (r->status != 0)
		return r->status;
	if (r->handle == 0 || r->bytes != bytes || r->flags != flags || !reply_ok(c, r))
		return VYRE_E_PROTO;
	rc = vyre_client_cache_put(c, r->handle, r->offset, bytes, r->flags);
	if (rc != 0) {
		vyre_buffer_free(c, r->handle);
		return rc;
	}
	*handle = r->handle;
	return 0;
}

int vyre_buffer_alloc(struct vyre_client *c, uint32_t bytes, uint32_t flags, uint32_t *handle)
{
	return allocate(c, NULL, bytes, flags, handle);
}

int vyre_buffer_create(struct vyre_client *c, const char *name, uint32_t bytes, uint32_t flags,
		       uint32_t *handle)
{
	return name_ok(name) ? allocate(c, name, bytes, flags, handle) : VYRE_E_INVAL;
}

int vyre_buffer_free(struct vyre_client *c, uint32_t handle)
{
	struct vyre_msg req, rep;

	if (!c || handle == 0)
		return VYRE_E_INVAL;
	memset(&req, 0, sizeof(req));
	req.type = VYRE_MSG_FREE;
	req.u.buffer.handle = handle;
	int rc = vyre_client_call(c, &req, VYRE_MSG_BUFFER_REPLY, &rep);

	if (rc != 0)
		return rc;
	vyre_client_cache_del(c, handle);
	return rep.u.buffer_reply.status;
}

int vyre_buffer_free_name(struct vyre_client *c, const char *name)
{
	struct vyre_msg req, rep;
	const struct vyre_msg_buffer_reply *r = &rep.u.buffer_reply;

	if (!c || !name_ok(name))
		return VYRE_E_INVAL;
	memset(&req, 0, sizeof(req));
	req.type = VYRE_MSG_FREE_NAME;
	strcpy(req.u.named.name, name);
	int rc = vyre_client_call(c, &req, VYRE_MSG_BUFFER_REPLY, &rep);

	if (rc != 0)
		return rc;
	if (r->status == 0 && r->handle == 0)
		return VYRE_E_PROTO;
	/* the reply names the buffer that went, so a cached copy of it goes too */
	if (r->status == 0)
		vyre_client_cache_del(c, r->handle);
	return r->status;
}

/*
 * Not cached, like any handle this connection did not allocate: another
 * client may free it at any moment, so vyre_buffer_ptr asks vyred (LOOKUP).
 */
int vyre_buffer_open(struct vyre_client *c, const char *name, uint32_t *handle, uint32_t *bytes,
		     uint32_t *flags)
{
	struct vyre_msg req, rep;
	const struct vyre_msg_buffer_reply *r = &rep.u.buffer_reply;

	if (!c || !handle || !name_ok(name))
		return VYRE_E_INVAL;
	memset(&req, 0, sizeof(req));
	req.type = VYRE_MSG_OPEN;
	strcpy(req.u.named.name, name);
	int rc = vyre_client_call(c, &req, VYRE_MSG_BUFFER_REPLY, &rep);

	if (rc != 0)
		return rc;
	if (r->status != 0)
		return r->status;
	if (r->handle == 0 || !reply_ok(c, r))
		return VYRE_E_PROTO;
	*handle = r->handle;
	if (bytes)
		*bytes = r->bytes;
	if (flags)
		*flags = r->flags;
	return 0;
}

void *vyre_buffer_ptr(struct vyre_client *c, uint32_t handle, uint32_t *bytes)
{
	const struct vyre_client_buffer *b = c ? vyre_client_cache_get(c, handle) : NULL;
	struct vyre_msg req, rep;
	const struct vyre_msg_buffer_reply *r = &rep.u.buffer_reply;

	if (!c || handle == 0)
		return NULL;
	if (b) {
		if (bytes)
			*bytes = b->bytes;
		return mapped(c, b->off, b->flags);
	}
	memset(&req, 0, sizeof(req));
	req.type = VYRE_MSG_LOOKUP;
	req.u.buffer.handle = handle;
	if (vyre_client_call(c, &req, VYRE_MSG_BUFFER_REPLY, &rep) != 0 || r->status != 0 ||
	    r->handle != handle || !reply_ok(c, r))
		return NULL;
	if (bytes)
		*bytes = r->bytes;
	/* seen only through items (docs/design.md sections 6.2 and 6.3) */
	return mapped(c, r->offset, r->flags);
}
