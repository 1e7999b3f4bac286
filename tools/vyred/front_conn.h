/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/front_conn.h - what the supervisor (front.h) does with one
 * connection it has not handed over yet: peek at its first message, refuse
 * it, or pass its socket to a GPU worker.
 */
#ifndef VYRED_FRONT_CONN_H
#define VYRED_FRONT_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * The first message of @fd, peeked (@flags MSG_PEEK) or taken: its length,
 * or -1; and the identity of the region memfd it passed, if any (@region).
 */
ssize_t vyre_front_first_message(int fd, uint8_t *buf, size_t len, int flags, struct stat *region);
/*
 * Tell a client why it was not placed, as a worker would, and drop it. Its
 * HELLO is taken first: a socket closed with unread data resets the peer,
 * which would then not read the reply.
 */
void vyre_front_refuse(int fd, uint64_t hello_id, int rc);
/* Pass @fd, counted in domain route @route, down a worker's channel @chan: 0 or -1. */
int vyre_front_hand_over(int chan, int fd, uint32_t route, uint32_t client_id);

#endif /* VYRED_FRONT_CONN_H */
