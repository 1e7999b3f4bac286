/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/conns.h - a connection's lifecycle: activate, close in two phases, the
 * io_uring operations that name it, and the lists a stage leaves for the
 * loop (drop, wake).
 */
#ifndef VYRED_CONNS_H
#define VYRED_CONNS_H

#include <stdint.h>

struct vyre_daemon;
struct vyre_conn;
struct vyre_domain;

int vyre_conn_activate(struct vyre_daemon *d, struct vyre_conn *c, uint32_t sq, uint32_t cq,
		       struct vyre_domain *dom, int event_fd);
/* The rest of activating @c once c->region is mapped; unmaps nothing on failure. */
int vyre_conn_start(struct vyre_daemon *d, struct vyre_conn *c, struct vyre_domain *dom,
		    int event_fd);
void vyre_conn_close(struct vyre_daemon *d, struct vyre_conn *c, int reason);
void vyre_conn_op_done(struct vyre_daemon *d, struct vyre_conn *c);
/* @c went to another loop (vyre_handoff): its slot is freed, nothing closed. */
void vyre_conn_handed_off(struct vyre_daemon *d, struct vyre_conn *c);
/* A batch of a closed connection completed: after its last, it leaves its domain. */
void vyre_conn_batch_done(struct vyre_daemon *d, struct vyre_conn *c);
/*
 * For stages: the loop closes @c with @reason after this pipeline step. @why
 * (a static string, or NULL for vyre_strerror(@reason)) is what vyred logs.
 */
void vyre_conn_drop_later(struct vyre_daemon *d, struct vyre_conn *c, int reason, const char *why);
/* What vyred logs for a client whose ring indexes no honest client can write. */
extern const char vyre_bad_ring_index[];
/* For stages: the loop writes @c's eventfd after this pipeline step. */
void vyre_conn_wake_later(struct vyre_daemon *d, struct vyre_conn *c);
/* Poll @c's socket for a control message, unless a poll is in the ring. */
void vyre_conn_arm_poll(struct vyre_daemon *d, struct vyre_conn *c);
/* Write @c's eventfd (the client armed it): at most one write in flight. */
void vyre_conn_write_eventfd(struct vyre_daemon *d, struct vyre_conn *c);

#endif /* VYRED_CONNS_H */
