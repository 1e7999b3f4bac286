/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/route.h - which loop a new client goes to (a named domain to
 * the loop that holds it, a new one where placement puts it, gpus.h), and
 * the per-loop counts that --max-clients and placement read.
 */
#ifndef VYRED_ROUTE_H
#define VYRED_ROUTE_H

#include <stdint.h>

struct vyre_daemon;
struct vyre_conn;
struct vyre_shared;

/*
 * The loop @c (in its HELLO, naming @domain) goes to. Counts it against
 * --max-clients over all loops. Returns 0 or VYRE_E_NOMEM.
 */
int vyre_route_client(struct vyre_daemon *d, struct vyre_conn *c, const char *domain,
		      uint32_t *loop);
/* @c is going away: it no longer counts where it was routed. */
void vyre_route_release(struct vyre_daemon *d, struct vyre_conn *c);

/*
 * A client counted against loop @routed - 1 (0: none) and named route
 * @route (0: none), of class @cls, is gone.
 */
void vyre_route_drop(struct vyre_shared *sh, uint32_t routed, uint32_t route, uint32_t cls);

#endif /* VYRED_ROUTE_H */
