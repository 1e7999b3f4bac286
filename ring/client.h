/* SPDX-License-Identifier: MIT */
/*
 * ring/client.h - libvyre's connection object, shared by its source files,
 * and the library-internal calls they make to each other (each marked with
 * the file that defines it).
 */
#ifndef VYRE_RING_CLIENT_H
#define VYRE_RING_CLIENT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"
#include "ring.h"

/* A buffer this connection allocated: cached so vyre_buffer_ptr needs no round trip. */
struct vyre_client_buffer {
	uint32_t handle; /* 0: empty slot */
	uint32_t bytes;
	uint64_t off;
	uint32_t flags; /* VYRE_BUF_*: device and transient buffers are not the client's to map */
};

struct vyre_client {
	int sock;
	int event_fd;	/* ours: vyred writes it when CQEs are ready and it is armed */
	int sq_wake_fd; /* vyred's: we write it when vyred sleeps in eventfd mode */
	struct vyre_region region;
	struct vyre_sq_producer sq;
	struct vyre_cq_consumer cq;
	uint8_t *heap;
	uint64_t heap_bytes;
	uint32_t client_id;
	uint32_t domain_id;
	uint32_t next_id;     /* control request ids */
	uint32_t spin_ns;     /* adaptive spin of vyre_wait before it sleeps */
	uint32_t empty_reaps; /* vyre_reap calls that found nothing, for its liveness check */
	int event_armed;
	int hung_up;	   /* set by the watcher (atomically) when vyred's socket hangs up */
	int watch_stop_fd; /* -1 until vyre_event_fd() starts the watcher; vyre_close writes it */
	pid_t watch_pid;   /* the process whose thread the watcher is */
	pthread_t watcher;
	struct vyre_client_buffer *bufs; /* open addressing, linear probing */
	uint32_t bufs_cap;		 /* a power of two */
	uint32_t bufs_used;
	/* what a resume needs (client_resume.c, docs/design.md section 3) */
	uint32_t flags;	   /* VYRE_CONNECT_* */
	uint32_t priority; /* its class, asked for again on a resume */
	int heap_fd;	   /* -1 unless resumable */
	int ledger_fd;	   /* -1 unless resumable */
	char *socket_path;
	char domain[VYRE_DOMAIN_NAME_MAX + 1];
};

/*
 * The control socket (client_socket.c): a connected one (timeouts set), or
 * VYRE_E_DISCONNECTED / PERM / INVAL.
 */
int vyre_client_connect_socket(const char *path, int *out);
/* Why vyred closed @sock at once after a HELLO: the queued ERROR's code, else DISCONNECTED. */
int vyre_client_refusal(int sock);

/* The HELLO flags of this connection (proto.h): its class, resumable, rerun. */
static inline uint32_t vyre_client_hello_flags(const struct vyre_client *c)
{
	uint32_t f = c->priority << VYRE_HELLO_PRIORITY_SHIFT;

	if (c->flags & VYRE_CONNECT_RESUMABLE)
		f |= VYRE_HELLO_RESUMABLE;
	if (c->flags & VYRE_CONNECT_RERUN)
		f |= VYRE_HELLO_RERUN;
	return f;
}

/*
 * With VYRE_CONNECT_RECONNECT, one vyre_reconnect() try (@timeout_ns) for a
 * call that found vyred gone: 1 when the connection lives again, else 0
 * (client_resume.c).
 */
int vyre_client_reconnect_auto(struct vyre_client *c, int64_t timeout_ns);

/* One request/reply exchange on the control socket (client_call.c). */
int vyre_client_call(struct vyre_client *c, struct vyre_msg *req, uint16_t reply_type,
		     struct vyre_msg *reply);

/* Non-zero when vyred marked the region closed or the socket hung up (client_socket.c). */
int vyre_client_gone(struct vyre_client *c);

/* Non-zero once vyred closed us or the watcher saw it die; no system call. */
static inline int vyre_client_closed(const struct vyre_client *c)
{
	return __atomic_load_n(&c->region.hdr->closed, __ATOMIC_ACQUIRE) != 0 ||
	       __atomic_load_n(&c->hung_up, __ATOMIC_ACQUIRE) != 0;
}

/*
 * The hang-up watcher (client_watch.c): a thread that writes the eventfd
 * when vyred dies. Started by vyre_event_fd(), stopped and joined by
 * vyre_close().
 */
int vyre_client_watch_start(struct vyre_client *c);
void vyre_client_watch_stop(struct vyre_client *c);

/* The buffer cache of this connection's own allocations (client_buffers.c). */
int vyre_client_cache_put(struct vyre_client *c, uint32_t handle, uint64_t off, uint32_t bytes,
			  uint32_t flags);
const struct vyre_client_buffer *vyre_client_cache_get(const struct vyre_client *c,
						       uint32_t handle);
void vyre_client_cache_del(struct vyre_client *c, uint32_t handle);

#endif /* VYRE_RING_CLIENT_H */
