/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/worker_link.h - the channel between vyred's supervisor and one
 * of its GPU workers (docs/design.md 8.8, "One process a device").
 *
 * A SOCK_SEQPACKET socketpair made by the supervisor (front.c); the worker
 * has its end as --gpu-worker FD:ORDINAL. Down the channel go accepted
 * client connections, one a message: the descriptor (SCM_RIGHTS) and a
 * struct vyre_link_msg whose route names the domain route the supervisor
 * counted it in. Up the channel go struct vyre_link_msg events: READY once
 * the worker serves, LOST when its device faulted (it then finishes what it
 * holds and exits 1), REGION with the identity of each connection's region
 * once it is live, GONE with the route and client of each connection it
 * closed, exactly once for each connection it was given, and only once no
 * batch holds the connection's items: until then a RESUME of that region
 * goes to this worker, which refuses it while the batch runs.
 */
#ifndef VYRED_WORKER_LINK_H
#define VYRED_WORKER_LINK_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

enum vyre_link_type {
	VYRE_LINK_CONN = 1,   /* supervisor -> worker: a connection, with its descriptor */
	VYRE_LINK_READY = 2,  /* worker -> supervisor: serving */
	VYRE_LINK_LOST = 3,   /* worker -> supervisor: its device is lost */
	VYRE_LINK_GONE = 4,   /* worker -> supervisor: a connection given to it is closed */
	VYRE_LINK_REGION = 5, /* worker -> supervisor: a connection's region memfd, once live */
};

struct vyre_link_msg {
	uint32_t type;
	uint32_t route;	    /* CONN and GONE: the supervisor's route; 0 for a private domain */
	uint32_t client_id; /* CONN, GONE, REGION: the client's number, unique among the workers */
	uint32_t pad;
	uint64_t dev, ino; /* REGION: the region memfd's identity (fstat) */
};

/* Where one received CONN lands: what io_uring's recvmsg fills. */
struct vyre_link_rx {
	struct vyre_link_msg msg;
	struct iovec iov;
	struct msghdr hdr;
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
};

/* This process is a GPU worker whose channel is @fd (once, at start). */
void vyre_link_init(int fd);
/* 1 in a GPU worker. */
int vyre_link_active(void);
/* Events to the supervisor; nothing outside a worker. Never blocks for long: a send that
 * cannot be made is logged (the supervisor then sees the worker's exit instead). */
void vyre_link_ready(void);
void vyre_link_lost(void);
void vyre_link_gone(uint32_t route, uint32_t client_id);
void vyre_link_region(uint32_t client_id, uint64_t dev, uint64_t ino);

/* Prepare @rx for a recvmsg of one CONN. */
void vyre_link_rx_prepare(struct vyre_link_rx *rx);
/*
 * After a recvmsg of @bytes into @rx: the connection's descriptor (>= 0) and
 * its route and client number, or -1 when the message is not a CONN with one descriptor (any
 * descriptor that came is closed).
 */
int vyre_link_rx_take(struct vyre_link_rx *rx, int bytes, uint32_t *route, uint32_t *client_id);

#endif /* VYRED_WORKER_LINK_H */
