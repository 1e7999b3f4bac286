/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/inbox.h - a loop's inbox: clients loop 0 hands over, and the
 * wake-up that tells every loop to stop. Loop 0 pushes under sh->lock and
 * writes the loop's eventfd; the loop pops them all and acts on each
 * (control.c adopts it).
 */
#ifndef VYRED_INBOX_H
#define VYRED_INBOX_H

#include <stdint.h>

#include "../../ring/proto.h"
#include "conn.h"

struct vyre_daemon;

/*
 * A client on its way from loop 0 to the loop it was routed to: its
 * connection as loop 0 had it in its handshake (socket, credentials, route),
 * and its HELLO.
 */
struct vyre_handoff {
	struct vyre_conn conn;
	struct vyre_msg hello;
	int fds[VYRE_MSG_MAX_FDS];
	unsigned nfds;
};

/*
 * Hand @c and its HELLO (@m, @fds) to loop @loop: the descriptors travel.
 * Returns 0, after which the caller frees @c's slot (vyre_conn_handed_off),
 * or VYRE_E_NOMEM when that loop's inbox is full (nothing moved).
 */
int vyre_handoff(struct vyre_daemon *d, struct vyre_conn *c, uint32_t loop,
		 const struct vyre_msg *m, const int *fds, unsigned nfds);
/*
 * The loop's inbox was signalled: move every client waiting in it to
 * d->inbox_work and return how many; the caller adopts each.
 */
uint32_t vyre_inbox_take(struct vyre_daemon *d);

/* Every loop drains and exits (a signal, or a device that is gone). */
void vyre_loops_stop(struct vyre_daemon *d);

#endif /* VYRED_INBOX_H */
