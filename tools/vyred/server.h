/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/server.h - the listening socket, accepting clients (or a GPU worker's
 * channel), peer credentials and the handshake timeout.
 */
#ifndef VYRED_SERVER_H
#define VYRED_SERVER_H

#include <stdint.h>

struct vyre_daemon;

int vyre_server_listen(struct vyre_daemon *d);
void vyre_server_unlisten(struct vyre_daemon *d);
void vyre_server_accepted(struct vyre_daemon *d, int fd, uint32_t link_route, uint32_t link_id);
/* Arm the accept (or the channel's receive) unless it is in the ring. */
void vyre_server_arm_accept(struct vyre_daemon *d);
/* The accept (or the channel's receive) completed with @res. */
void vyre_server_on_accept(struct vyre_daemon *d, int res);
/* A connection is in its handshake: make sure a tick will check its age. */
void vyre_server_arm_tick(struct vyre_daemon *d);
/* The tick: close handshakes older than --hello-timeout-ms. */
void vyre_server_on_tick(struct vyre_daemon *d);

#endif /* VYRED_SERVER_H */
