/* SPDX-License-Identifier: MIT */
/*
 * libvyre: the control request/reply exchange, sent again once after an
 * automatic reconnect when vyred never had it.
 */
#include "client.h"

/* *sent: whether vyred may have the request (it was handed to the socket). */
static int call_once(struct vyre_client *c, struct vyre_msg *req, uint16_t reply_type,
		     struct vyre_msg *reply, int *sent)
{
	int fds[VYRE_MSG_MAX_FDS];
	unsigned nfds;

	*sent = 0;
	if (vyre_client_closed(c))
		return VYRE_E_DISCONNECTED;
	req->id = ++c->next_id;
	int rc = vyre_msg_send(c->sock, req, NULL, 0);

	if (rc != 0)
		return rc == VYRE_E_AGAIN ? VYRE_E_DISCONNECTED : rc;
	*sent = 1;
	rc = vyre_msg_recv(c->sock, reply, fds, 0, &nfds, 0);
	if (rc != 0)
		return rc;
	if (reply->type == VYRE_MSG_ERROR)
		return reply->u.error < 0 ? reply->u.error : VYRE_E_PROTO;
	if (reply->type != reply_type || reply->id != req->id ||
	    reply->abi_version != VYRE_ABI_VERSION)
		return VYRE_E_PROTO;
	return 0;
}

int vyre_client_call(struct vyre_client *c, struct vyre_msg *req, uint16_t reply_type,
		     struct vyre_msg *reply)
{
	int sent;
	int rc = call_once(c, req, reply_type, reply, &sent);

	/*
	 * Only a request vyred never had is sent again: one in flight when it
	 * died may have been served (design.md 3), and a second ALLOC would
	 * leak a buffer, a second FREE fail. Its caller gets DISCONNECTED.
	 */
	if (rc == VYRE_E_DISCONNECTED && !sent && vyre_client_reconnect_auto(c, 0))
		rc = call_once(c, req, reply_type, reply, &sent);
	return rc;
}
