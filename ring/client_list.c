/* SPDX-License-Identifier: MIT */
/*
 * libvyre: vyre_buffer_list. vyred answers each LIST with at most one named
 * buffer of the domain and the cursor past it (ring/proto.h), so no reply
 * has to hold a whole domain and no request makes vyred walk its whole
 * table; the entries are gathered here and put in name order.
 */
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "handles.h"

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct vyre_buffer_info *)a)->name,
		      ((const struct vyre_buffer_info *)b)->name);
}

static int push(struct vyre_buffer_info **all, uint32_t *n, uint32_t *cap,
		const struct vyre_msg_list_reply *r)
{
	if (*n == *cap) {
		uint32_t cap2 = *cap ? *cap * 2 : 64;
		struct vyre_buffer_info *a = realloc(*all, (size_t)cap2 * sizeof(*a));

		if (!a)
			return VYRE_E_NOMEM;
		*all = a;
		*cap = cap2;
	}
	struct vyre_buffer_info *e = &(*all)[(*n)++];

	memcpy(e->name, r->name, sizeof(e->name));
	e->handle = r->handle;
	e->bytes = r->bytes;
	e->flags = r->flags;
	return 0;
}

/* Every entry vyred has for the domain, in its order; 0 or a negative error. */
static int gather(struct vyre_client *c, struct vyre_buffer_info **all, uint32_t *n)
{
	struct vyre_msg req, rep;
	const struct vyre_msg_list_reply *r = &rep.u.list_reply;
	uint32_t cursor = 0, cap = 0;

	for (;;) {
		memset(&req, 0, sizeof(req));
		req.type = VYRE_MSG_LIST;
		req.u.list_cursor = cursor;
		int rc = vyre_client_call(c, &req, VYRE_MSG_LIST_REPLY, &rep);

		if (rc != 0)
			return rc;
		if (r->status != 0)
			return r->status;
		if (r->handle == 0 && r->next == 0)
			return 0;
		/* cursors only move forward and stay within the handle slots: the loop ends */
		if (r->next <= cursor || r->next > VYRE_HANDLES_MAX + 1)
			return VYRE_E_PROTO;
		rc = r->handle ? push(all, n, &cap, r) : 0;
		if (rc != 0)
			return rc;
		cursor = r->next;
	}
}

int vyre_buffer_list(struct vyre_client *c, struct vyre_buffer_info *out, uint32_t max)
{
	struct vyre_buffer_info *all = NULL;
	uint32_t n = 0, kept = 0;

	if (!c || (max && !out))
		return VYRE_E_INVAL;
	int rc = gather(c, &all, &n);

	if (rc == 0 && n) {
		qsort(all, n, sizeof(*all), by_name);
		/* a name freed and made again while the list was taken shows once */
		for (uint32_t i = 0; i < n; i++)
			if (kept == 0 || strcmp(all[i].name, all[kept - 1].name) != 0)
				all[kept++] = all[i];
		if (max)
			memcpy(out, all, (size_t)(kept < max ? kept : max) * sizeof(*all));
	}
	free(all);
	return rc != 0 ? rc : (int)kept;
}
