/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/daemon.h - vyred's state, shared by its source files.
 *
 * One struct per event loop (loops.h: --loops N, each on its own thread
 * with its own clients, domains and backend). A loop's thread does all of
 * its work: the io_uring event loop (accept and signals in loop 0, control
 * messages, doorbell waits, the backend's completion eventfd, its inbox) and
 * the pipeline drain -> resolve -> plan -> dispatch, then complete when the
 * backend reports the batch (pipeline.h); several batches are in flight at
 * once. A buffer is never freed, and a heap never unmapped, while an
 * in-flight item uses it: control.c and conns.c wait for the batch.
 */
#ifndef VYRED_DAEMON_H
#define VYRED_DAEMON_H

#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../../gpu/backend.h"
#include "../../ring/handles.h"
#include "../../ring/heap.h"
#include "../../ring/ledger.h"
#include "../../ring/proto.h"
#include "../../ring/ring.h"
#include "config.h"
#include "devbufs.h"
#include "gpus.h"
#include "disjoint.h"
#include "hazards.h"
#include "loops.h"
#include "names.h"
#include "pipeline.h"
#include "plan_stage.h"
#include "priority.h"
#include "transient.h"
#include "worker_link.h"

struct vyre_domain {
	int live;
	uint32_t id;   /* unique for the daemon's lifetime; what handles are tagged with */
	uint32_t slot; /* index in the domain table = the backend's heap index (devbufs.h) */
	char name[VYRE_DOMAIN_NAME_MAX + 1]; /* "" for a private domain */
	uid_t creator_uid;
	gid_t creator_gid;
	uint32_t n_clients;
	uint32_t n_transient; /* live VYRE_BUF_TRANSIENT buffers: resolve checks their rules */
	uint32_t n_names;     /* its named buffers (names.h) */
	struct vyre_heap heap;
	struct vyre_ledger ledger; /* what a new vyred needs to adopt it (docs/design.md 3) */
	dev_t heap_dev;		   /* the heap memfd's identity: a resuming client must name it */
	ino_t heap_ino;
};

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

struct vyre_daemon {
	struct vyre_daemon_config cfg;
	struct vyre_shared *sh; /* what the loops share (loops.h) */
	uint32_t loop_index;
	uint32_t gpu; /* the GPU this loop serves: its index in sh->gpus */
	/* clients handed over by loop 0 (under sh->lock), and its eventfd */
	struct vyre_handoff *inbox;
	struct vyre_handoff *inbox_work; /* the loop's copy while it adopts them */
	uint32_t n_inbox;
	uint32_t inbox_cap;
	int inbox_fd;
	int inbox_armed;
	uint64_t inbox_buf;
	struct io_uring ring;
	int listen_fd;
	int listen_passed;	     /* by systemd (sd.h): its path is not ours to unlink */
	int listen_link;	     /* a GPU worker: listen_fd is its channel (worker_link.h) */
	struct vyre_link_rx link_rx; /* the CONN being received on it */
	int signal_fd;
	int accept_armed;
	int signal_armed;
	int tick_armed; /* the handshake-timeout tick is in the ring */
	struct __kernel_timespec tick;
	int watchdog_armed; /* loop 0: the systemd watchdog's timeout is in the ring */
	struct __kernel_timespec watchdog;
	int stopping;
	int use_futex; /* doorbell waits: 1 io_uring FUTEX_WAIT, 0 eventfd reads */
	uint8_t signal_buf[128];

	struct vyre_conn *conns;
	uint32_t n_conn_slots;
	uint32_t n_active;
	/* slots of the ACTIVE connections, in no order: drain walks only these */
	uint32_t *active;
	uint32_t *active_snapshot; /* drain's copy of @active */
	uint32_t next_client_id;
	uint32_t *ready;	     /* drain's ready clients, fewest batches in flight first */
	uint32_t rr_cursor;	     /* where the next drain starts, for fairness */
	struct vyre_classes classes; /* the ACTIVE connections per priority class */

	struct vyre_domain *domains;
	uint32_t next_domain_id;
	struct vyre_handle_table handles;
	struct vyre_names names; /* the buffers' names, per domain */
	struct vyre_devbufs devbufs;

	const struct vyre_backend_ops *backend_ops;
	struct vyre_backend *backend;

	struct vyre_batch *slots; /* one batch per backend slot */
	uint32_t n_slots;	  /* --inflight, or fewer if memory ran short */
	uint32_t client_batches;  /* --client-batches, at most n_slots */
	uint32_t n_running;
	struct vyre_slot_done *done; /* n_slots entries, for the backend's reap */
	struct vyre_hazards hazards;
	struct vyre_disjoint disjoint; /* plan: batches whose items share no written buffer */
	uint64_t disjoint_plans;       /* batches planned so, past VYRE_SMALL_PLAN_ITEMS items */
	struct vyre_transients transients; /* resolve: transient writes of the current chain */
	int backend_fd;			   /* the backend's completion eventfd, or -1 */
	int backend_read_armed;
	uint64_t backend_efd_buf;
	uint64_t batch_seq;    /* ids given to batches as they are drained */
	uint32_t most_running; /* the most batches in flight at once */
	uint32_t most_client;  /* the most batches of one client in flight at once */
	uint64_t hazard_holds; /* times a client's items waited for an in-flight hazard */
	/* left by the stages for the loop: connection slots to wake, and to drop */
	uint32_t *wake;
	uint32_t n_wake;
	uint32_t *drop;
	uint32_t n_drop;
	uint32_t n_deferred;		       /* connections with a deferred control message */
	uint32_t n_resumable;		       /* active connections with c->resumable */
	uint32_t running_class[VYRED_CLASSES]; /* batches in flight of each priority class */
	/* per connection slot, under sh->lock: its region memfd's identity, 0 when none */
	struct vyre_region_id {
		dev_t dev;
		ino_t ino;
		int state; /* VYRE_REGION_* */
	} * region_ids;
	struct vyre_plan_stage *plan_stage;
	FILE *accept_log;

	uint32_t spin_ns; /* adaptive spin before sleeping */
	uint64_t batches; /* completed */
	uint64_t items_total;
	uint64_t bytes_avoided; /* the plans' on-chip handoff bytes (7.6), every batch */
	struct vyre_plan_totals plan_totals; /* what the planner did, for the exit log */
	int gpu_down;		 /* its GPU is lost: no new batch, clients go (gpus.h) */
	uint32_t inflight_items; /* atomic: accepted items of running batches, for placement */
	/*
	 * largest transient an on-chip handoff keeps (7.6): the CPU backend's
	 * scratch, the CUDA backend's VYRE_CUDA_HANDOFF_BYTES; 0: none. The links
	 * it keeps: bit op of writer and reader (0: every op).
	 */
	uint64_t handoff_bytes;
	uint32_t handoff_writers, handoff_readers;
	/* spread ready clients over free slots; 0 where each batch costs a launch */
	int spread;
	uint64_t submit_ns; /* summed over batches: the dispatch stage alone (part of in flight) */
	/* per stage (drain, resolve, plan, in flight, complete): ns summed over batches */
	uint64_t stage_ns[5];
};

/* Logging to stderr with a "vyred:" prefix. */
void vyre_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A GPU worker's lines name its first GPU (the supervisor's index). */
void vyre_log_set_gpu(uint32_t first_index);

/* server.c: the listening socket and peer credentials. */
int vyre_server_listen(struct vyre_daemon *d);
void vyre_server_unlisten(struct vyre_daemon *d);
void vyre_server_accepted(struct vyre_daemon *d, int fd, uint32_t link_route, uint32_t link_id);

/* conns.c: connection lifecycle. */
int vyre_conn_activate(struct vyre_daemon *d, struct vyre_conn *c, uint32_t sq, uint32_t cq,
		       struct vyre_domain *dom, int event_fd);
/*
 * resume.c: a RESUME hello: adopt the client's region (@region_fd) in @dom
 * and complete or rerun what the dead vyred accepted; *restarted says how
 * many. On success the connection owns @region_fd and @event_fd.
 */
int vyre_conn_resume(struct vyre_daemon *d, struct vyre_conn *c, int region_fd,
		     struct vyre_domain *dom, int event_fd, uint32_t *restarted);
/* Who holds a region: nobody, a live connection, one being closed (its batch may still run). */
enum { VYRE_REGION_FREE, VYRE_REGION_LIVE, VYRE_REGION_CLOSING };
/* Which VYRE_REGION_* connection of any loop has the region memfd @fd (LIVE when unsure). */
int vyre_conn_region_live(const struct vyre_daemon *d, int fd);
/* Enter @c's region in what vyre_conn_region_live sees as @state, or take it out (FREE). */
void vyre_region_id_set(struct vyre_daemon *d, const struct vyre_conn *c, int state);
/* The rest of activating @c once c->region is mapped; unmaps nothing on failure. */
int vyre_conn_start(struct vyre_daemon *d, struct vyre_conn *c, struct vyre_domain *dom,
		    int event_fd);
void vyre_conn_close(struct vyre_daemon *d, struct vyre_conn *c, int reason);
void vyre_conn_op_done(struct vyre_daemon *d, struct vyre_conn *c);
/* @c went to another loop (vyre_handoff): its slot is freed, nothing closed. */
void vyre_conn_handed_off(struct vyre_daemon *d, struct vyre_conn *c);
int vyre_conn_has_work(struct vyre_daemon *d, struct vyre_conn *c);
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

/* domains.c: named and private domains and their heaps. */
int vyre_domain_join(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		     uint64_t heap_bytes, struct vyre_domain **out);
/* The live named domain @name of this loop, or NULL. */
struct vyre_domain *vyre_domain_find(struct vyre_daemon *d, const char *name);
/* Whether @c may join @dom (its creator's uid or gid, or root). */
int vyre_domain_may_join(const struct vyre_conn *c, const struct vyre_domain *dom);
/* A free domain slot, or NULL (logged). */
struct vyre_domain *vyre_domain_slot(struct vyre_daemon *d, const struct vyre_conn *c);
/*
 * The domain at @dom, whose heap and ledger are set, goes live: its heap
 * registered with the backend, a fresh id. On failure both are destroyed.
 */
int vyre_domain_open(struct vyre_daemon *d, struct vyre_domain *dom, uid_t uid, gid_t gid,
		     const char *name, struct vyre_domain **out);
/* domain_adopt.c: a domain a resuming client hands over (docs/design.md 3). */
int vyre_domain_adopt(struct vyre_daemon *d, const struct vyre_conn *c, const char *name,
		      int *heap_fd, int ledger_fd, struct vyre_domain **out);
/* Record a new buffer in its domain's ledger (@slot: its handle-table slot). */
int vyre_domain_record(struct vyre_daemon *d, struct vyre_domain *dom, uint32_t handle,
		       uint32_t slot, const struct vyre_buffer_ref *ref, const char *name);
void vyre_domain_leave(struct vyre_daemon *d, struct vyre_domain *dom);

/* control.c: control messages of one connection (readable socket). */
void vyre_control_readable(struct vyre_daemon *d, struct vyre_conn *c);
/* A client handed to this loop: answer the HELLO loop 0 read from it. */
void vyre_control_adopt(struct vyre_daemon *d, struct vyre_conn *c, const struct vyre_msg *m,
			int *fds, unsigned nfds);
/* After batches completed: handle the deferred messages whose buffer is no longer in flight. */
void vyre_control_retry(struct vyre_daemon *d);

/* loop.c: io_uring submissions and the event loop. */
/* Block SIGTERM/SIGINT before any thread exists, so only the signalfd sees them. */
int vyre_loop_block_signals(void);
int vyre_loop_init(struct vyre_daemon *d);
int vyre_loop_run(struct vyre_daemon *d);
void vyre_loop_arm_poll(struct vyre_daemon *d, struct vyre_conn *c);
/* A connection is in its handshake: make sure a tick will check its age. */
void vyre_loop_arm_tick(struct vyre_daemon *d);
void vyre_loop_cancel(struct vyre_daemon *d, struct vyre_conn *c);
void vyre_loop_write_eventfd(struct vyre_daemon *d, struct vyre_conn *c);

/* backend_select.c: --backend auto|cpu|cuda. */
int vyre_backend_select(struct vyre_daemon *d);

/* pipeline.c: the batch slots and one step of the pipeline. */
int vyre_pipeline_init(struct vyre_daemon *d);
void vyre_pipeline_fini(struct vyre_daemon *d);
/*
 * Completes the batches the backend reports (waiting up to @timeout_ns for
 * one when some run and none is done), then dispatches new batches while a
 * slot is free and clients have work. Returns items completed plus items
 * accepted (0: nothing happened).
 */
int vyre_pipeline_step(struct vyre_daemon *d, int64_t timeout_ns);

#endif /* VYRED_DAEMON_H */
