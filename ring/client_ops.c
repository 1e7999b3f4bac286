/* SPDX-License-Identifier: MIT */
/*
 * libvyre: vyre_op_lookup and vyre_op_list (docs/design.md 6.7). Op
 * numbers of modules belong to the vyred that loaded them, so a client
 * asks for them by name; vyred answers each OP_LIST with one op and the
 * cursor past it, as it does LIST for buffers (client_list.c).
 */
#include <stdlib.h>
#include <string.h>

#include "client.h"

/* Cursors past this are a vyred's error: it runs far fewer ops (64 modules of 64). */
#define OP_CURSOR_MAX (1u << 20)

int vyre_op_lookup(struct vyre_client *c, const char *name, uint32_t *op)
{
	struct vyre_msg req, rep;
	size_t n;

	if (!c || !name || !op)
		return VYRE_E_INVAL;
	n = strnlen(name, VYRE_OP_NAME_MAX + 1);
	if (!vyre_msg_op_name_ok(name, n))
		return VYRE_E_INVAL;
	memset(&req, 0, sizeof(req));
	req.type = VYRE_MSG_OP_LOOKUP;
	memcpy(req.u.op_name, name, n);
	int rc = vyre_client_call(c, &req, VYRE_MSG_OP_REPLY, &rep);

	if (rc != 0)
		return rc;
	if (rep.u.op_reply.status != 0)
		return rep.u.op_reply.status;
	/* the op answered must be the one asked for */
	if (strcmp(rep.u.op_reply.name, name) != 0)
		return VYRE_E_PROTO;
	*op = rep.u.op_reply.op;
	return 0;
}

static int push(struct vyre_op_info **all, uint32_t *n, uint32_t *cap,
		const struct vyre_msg_op_reply *r)
{
	if (*n == *cap) {
		uint32_t cap2 = *cap ? *cap * 2 : 32;
		struct vyre_op_info *a = realloc(*all, (size_t)cap2 * sizeof(*a));

		if (!a)
			return VYRE_E_NOMEM;
		*all = a;
		*cap = cap2;
	}
	struct vyre_op_info *e = &(*all)[(*n)++];

	memcpy(e->name, r->name, sizeof(e->name));
	memcpy(e->module, r->module, sizeof(e->module));
	e->op = r->op;
	e->flags = r->flags;
	return 0;
}

int vyre_op_list(struct vyre_client *c, struct vyre_op_info *out, uint32_t max)
{
	struct vyre_msg req, rep;
	const struct vyre_msg_op_reply *r = &rep.u.op_reply;
	struct vyre_op_info *all = NULL;
	uint32_t cursor = 0, n = 0, cap = 0;
	int rc;

	if (!c || (max && !out))
		return VYRE_E_INVAL;
	for (;;) {
		memset(&req, 0, sizeof(req));
		req.type = VYRE_MSG_OP_LIST;
		req.u.list_cursor = cursor;
		rc = vyre_client_call(c, &req, VYRE_MSG_OP_REPLY, &rep);
		if (rc == 0 && r->status != 0)
			rc = r->status;
		if (rc == 0 && r->name[0])
			rc = push(&all, &n, &cap, r);
		if (rc != 0 || r->next == 0)
			break;
		/* cursors only move forward and stay bounded: the loop ends */
		if (r->next <= cursor || r->next > OP_CURSOR_MAX || !r->name[0]) {
			rc = VYRE_E_PROTO;
			break;
		}
		cursor = r->next;
	}
	if (rc == 0 && max)
		memcpy(out, all, (size_t)(n < max ? n : max) * sizeof(*all));
	free(all);
	return rc != 0 ? rc : (int)n;
}
