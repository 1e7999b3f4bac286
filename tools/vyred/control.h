/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/control.h - control messages of one connection: HELLO, buffers, op lookup, adopting
 * a client handed over by loop 0.
 */
#ifndef VYRED_CONTROL_H
#define VYRED_CONTROL_H

struct vyre_daemon;
struct vyre_conn;
struct vyre_handoff;

/* A readable socket: its control messages. */
void vyre_control_readable(struct vyre_daemon *d, struct vyre_conn *c);
/*
 * A client loop 0 handed to this loop (inbox.h): it takes a free slot and
 * its HELLO is answered, or, with no slot free, it is refused.
 */
void vyre_control_adopt(struct vyre_daemon *d, struct vyre_handoff *h);
/* After batches completed: handle the deferred messages whose buffer is no longer in flight. */
void vyre_control_retry(struct vyre_daemon *d);

#endif /* VYRED_CONTROL_H */
