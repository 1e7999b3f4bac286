/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/conn.h - a connection's state: its socket, credentials,
 * region and rings, the io_uring operations that name it, and what the
 * pipeline keeps per client. Types only; conns.c owns the lifecycle.
 */
#ifndef VYRED_CONN_H
#define VYRED_CONN_H

#include <stdint.h>
#include <sys/types.h>

#include "../../ring/proto.h"
#include "../../ring/ring.h"
#include "daemon_config.h"

struct vyre_domain;

enum vyre_conn_state {
	VYRE_CONN_FREE = 0,
	VYRE_CONN_HANDSHAKE, /* accepted, waiting for HELLO */
	VYRE_CONN_ACTIVE,    /* region and domain set up */
	VYRE_CONN_CLOSING,   /* waiting for its io_uring operations to finish */
};

/* struct vyre_conn.limits_logged */
#define LIMIT_HEAP	     (1u << 0)
#define LIMIT_BUFFERS	     (1u << 1)
#define LIMIT_DEVICE_BYTES   (1u << 2)
#define LIMIT_DEVICE_BUFFERS (1u << 3)

struct vyre_conn {
	enum vyre_conn_state state;
	uint32_t slot;
	uint32_t id;
	int sock;
	uint32_t link_route; /* a GPU worker: the supervisor's route of this connection */
	int allowed;	     /* peer credentials passed the allow list */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	gid_t groups[VYRED_MAX_GROUPS];
	uint32_t n_groups;
	struct vyre_domain *domain;
	struct vyre_region region;
	struct vyre_sq_consumer sq;
	struct vyre_cq_producer cq;
	int event_fd; /* the client's, written when it armed vyre_event_fd */
	int sq_efd;   /* ours, read in eventfd doorbell mode */
	uint64_t efd_buf;
	uint32_t pending_ops; /* io_uring operations that still name this conn */
	int poll_armed;
	int waiter_armed;
	int efd_write_armed;
	int efd_write_again; /* a wake-up came while a write was in flight */
	uint32_t inflight;   /* accepted items whose CQE is not published yet */
	uint32_t batches;    /* its batches dispatched whose CQEs are not all published */
	/*
	 * Its batches that finished before an earlier one of it: their CQEs are
	 * written at CQ positions [pos, pos + n), past the tail, which moves
	 * over them once the earlier batches' are written (complete.c).
	 */
	struct vyre_held {
		uint32_t pos;
		uint32_t n;
	} held[VYRED_MAX_INFLIGHT];
	uint32_t n_held;
	int drop_reason;      /* a stage found it broken: the loop closes it with this */
	const char *drop_why; /* what it broke, for the log (a static string), or NULL */
	int wake_listed;      /* in d->wake: the loop writes its eventfd */
	int has_deferred;     /* @deferred waits for an in-flight batch; its socket is not read */
	struct vyre_msg deferred;
	uint64_t items_done;
	uint32_t limits_logged; /* LIMIT_* already logged for this client */
	uint64_t accepted_ns;	/* when the socket was accepted (handshake timeout) */
	uint32_t active_pos;	/* index in d->active while ACTIVE */
	int cq_garbage;	      /* release stage: cq_head failed its check once; complete drops it */
	int chain_cancel;     /* the rest of an oversize chain is still in its SQ (drain.c) */
	int chain_cancel_was; /* chain_cancel before its take: back to it if none is accepted */
	uint32_t routed;      /* 1 + the loop it counts against (loops.h), 0: none */
	uint32_t route;	      /* 1 + its named domain's route, 0: none */
	int resumable;	      /* sq_accepted and a late sq_head (docs/design.md 3) */
	int rerun;	      /* a resume runs accepted, uncompleted items again */
	uint32_t priority;    /* its class (priority.h), from its HELLO */
};

#endif /* VYRED_CONN_H */
