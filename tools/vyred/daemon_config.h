/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/daemon_config.h - what vyred's command line sets: the limits
 * and struct vyre_daemon_config. Types and constants only, so that every
 * file may read the configuration without depending on its parser.
 */
#ifndef VYRED_DAEMON_CONFIG_H
#define VYRED_DAEMON_CONFIG_H

#include <stdint.h>
#include <sys/types.h>

#include "vyre/vyre.h"

#include "../../gpu/backend.h"

#define VYRED_MAX_LOOPS		     64u /* in all; --loops N is per GPU, at most 16 */
#define VYRED_MAX_GROUPS	     64u
#define VYRED_MAX_GPUS		     16u
#define VYRED_GPU_NAME_MAX	     48u
#define VYRED_MAX_PRIORITY_RULES     32u
#define VYRED_DEFAULT_PRIORITY_BATCH 64u

/* --priority uid:U=N or gid:G=N */
struct vyre_priority_rule {
	uint32_t is_gid;
	uint32_t id;
	uint32_t max;
};

#define VYRED_MAX_ALLOW	       32u
#define VYRED_MAX_INFLIGHT     64u
#define VYRED_DEFAULT_INFLIGHT 8u
/* batches of one client in flight at once (docs/design.md 8.6) */
#define VYRED_DEFAULT_CLIENT_BATCHES 4u
#define VYRED_DEFAULT_MIN_SHARE	     64u
/* The CPU backend's per-worker scratch for on-chip handoffs (docs/design.md 7.6). */
#define VYRED_HANDOFF_BYTES (1u << 20)
/* device buffers per loop: each is a backend heap index after the domains' */
#define VYRED_DEFAULT_DEVICE_BUFFERS 4096u
#define VYRED_MAX_DEVICE_BUFFERS     65536u
#define VYRED_MAX_LOOPS_PER_GPU	     16u
#define VYRED_MAX_PINS		     64u

/* --domain-gpu NAME=INDEX */
struct vyre_domain_pin {
	char name[VYRE_DOMAIN_NAME_MAX + 1];
	uint32_t gpu; /* index in --gpus */
};

enum vyre_backend_choice {
	VYRE_BACKEND_CHOICE_AUTO,
	VYRE_BACKEND_CHOICE_CPU,
	VYRE_BACKEND_CHOICE_CUDA,
};

enum vyre_doorbell_choice {
	VYRE_DOORBELL_AUTO,    /* io_uring futex waits when the kernel has them */
	VYRE_DOORBELL_FUTEX,   /* futex waits or fail */
	VYRE_DOORBELL_EVENTFD, /* eventfd reads, the fallback */
};

struct vyre_daemon_config {
	const char *socket_path;
	uid_t allow_uid[VYRED_MAX_ALLOW];
	uint32_t n_allow_uid;
	gid_t allow_gid[VYRED_MAX_ALLOW];
	uint32_t n_allow_gid;
	enum vyre_backend_choice backend;
	enum vyre_cuda_mode mode;
	enum vyre_doorbell_choice doorbell;
	uint32_t max_batch;
	uint32_t inflight;	       /* batch slots per loop */
	uint32_t client_batches;       /* batches of one client in flight, 1 to inflight */
	int client_batches_set;	       /* --client-batches given: more than inflight is an error */
	uint32_t loops;		       /* event loops per GPU (loops.h); 0: auto */
	uint32_t gpus[VYRED_MAX_GPUS]; /* --gpus: device ordinals */
	uint32_t n_gpus;	       /* 0: all */
	/* a GPU worker (--gpu-worker FD:ORDINAL, made by front.c): its channel, else -1 */
	int worker_fd;
	uint32_t worker_ordinal;
	uint32_t worker_first; /* the index in the supervisor's --gpus of its first GPU */
	uint32_t gpus_total;   /* the supervisor's GPUs, for the loops' share of the CPUs */
	struct vyre_domain_pin pins[VYRED_MAX_PINS];
	uint32_t n_pins;
	uint32_t min_share;	 /* fewest items a client's share of a batch may be */
	uint32_t priority_max;	 /* the class every client may ask for (docs/design.md 8.9) */
	uint32_t priority_batch; /* longest lower-class batch beside a higher class */
	struct vyre_priority_rule priority_rules[VYRED_MAX_PRIORITY_RULES];
	uint32_t n_priority_rules;
	uint32_t max_clients;
	uint32_t max_domains;
	uint32_t max_buffers;
	uint32_t sq_entries_max;
	uint32_t cq_entries_max;
	uint64_t heap_bytes_max;
	uint64_t device_bytes_max;   /* each GPU's device buffers together */
	int device_bytes_set;	     /* --device-bytes-max given; else the backend's default */
	uint32_t max_device_buffers; /* per loop */
	uint32_t spin_max_us;
	uint32_t cpu_threads;
	int loop_cpu;		   /* --cpu: the event loop's CPU, or -1 */
	uint32_t hello_timeout_ms; /* a connection without HELLO is closed after this */
	const char *accept_log;
	const char *ops_dir; /* --ops-dir: op modules loaded at start (ops_dir.h), or NULL */
	/* The planner (planner/planner.h); 0 picks its default. */
	uint32_t max_groups;
	uint32_t max_stages;
	uint64_t budget_bytes;
	uint64_t resident_bytes;
	uint64_t arena_bytes;
};

#endif /* VYRED_DAEMON_CONFIG_H */
