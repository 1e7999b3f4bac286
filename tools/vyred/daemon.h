/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/daemon.h - the container of one event loop's state.
 *
 * One struct per event loop (loops.h: --loops N, each on its own thread
 * with its own clients, domains and backend). A loop's thread does all of
 * its work: the io_uring event loop (accept and signals in loop 0, control
 * messages, doorbell waits, the backend's completion eventfd, its inbox) and
 * the pipeline drain -> resolve -> plan -> dispatch, then complete when the
 * backend reports the batch (pipeline.h); several batches are in flight at
 * once. A buffer is never freed, and a heap never unmapped, while an
 * in-flight item uses it: control.c and conns.c wait for the batch.
 *
 * Each part's type lives with its owner (conn.h, domain.h, batch.h,
 * shared.h, devbuf_table.h, ...); this header only gathers them and declares
 * no function. docs/vyred.md says which file owns which field.
 */
#ifndef VYRED_DAEMON_H
#define VYRED_DAEMON_H

#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../../gpu/backend.h"
#include "../../ring/handles.h"
#include "../../ring/proto.h"
#include "batch.h"
#include "conn.h"
#include "daemon_config.h"
#include "devbuf_table.h"
#include "disjoint.h"
#include "domain.h"
#include "hazards.h"
#include "names.h"
#include "plan_stage.h"
#include "priority.h"
#include "shared.h"
#include "transient.h"
#include "worker_link.h"

struct vyre_handoff; /* inbox.h */

struct vyre_daemon {
	struct vyre_daemon_config cfg;
	struct vyre_shared *sh; /* what the loops share (loops.h) */
	uint32_t loop_index;
	uint32_t gpu; /* the GPU this loop serves: its index in sh->gpus */
	/* clients handed over by loop 0 (under sh->lock), and its eventfd (inbox.h) */
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
	/* per connection slot, under sh->lock (regions.h): its region memfd's identity, or 0 */
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

#endif /* VYRED_DAEMON_H */
