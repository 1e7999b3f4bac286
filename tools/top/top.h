/* SPDX-License-Identifier: MIT */
/*
 * tools/top/top.h - the parts of vyre-top.
 *
 *   session.c    load bpf/vyre.bpf.c's skeleton, attach it to one vyred (and
 *                to each GPU worker of a supervisor, followed at every
 *                sample), and read its maps into a struct top_sample
 *   privilege.c  say which capability or kernel feature is missing
 *   findpid.c    find the vyred that listens on a unix socket path, and the
 *                GPU worker processes of a supervisor
 *   gpus.c       one struct top_gpu per GPU from the loops' gpu_state
 *                records and the per-GPU counters: pure, unit-tested
 *   ops.c        one struct top_op per op from the ops and op_names maps,
 *                and the per-op rows of a view: pure
 *   stats.c      turn two samples into a struct top_view (rates, ratios,
 *                percentiles, sorted client and GPU rows): pure, unit-tested
 *   refresh.c    the two samples a view is built from
 *   print.c      a view as plain text (-b) or one JSON object (--json)
 *   metrics.c    a view as one Prometheus/OpenMetrics text exposition
 *   http.c       the loopback scrape endpoint of --listen
 *   ui.c         the interactive ncurses screen
 */
#ifndef VYRE_TOP_H
#define VYRE_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "../../bpf/vyre_bpf.h"

/* Slow-batch events kept per refresh; more are counted, not kept. */
#define TOP_SLOW_KEEP 32u

struct top_client {
	uint32_t id;
	uint32_t pid;
	uint32_t uid;
	uint32_t domain_id;
	uint32_t flags; /* VYRE_BPF_CLIENT_*, ORed over CPUs */
	uint32_t sq_depth;
	uint32_t sq_entries;
	uint32_t cq_free;
	uint64_t items;
	uint64_t drains;
	uint64_t errors;
	uint64_t backpressure;
	uint32_t gpu;	   /* client_connect's GPU index, valid when flags has CONNECTED */
	uint32_t priority; /* client_connect's priority class, valid likewise */
};

/*
 * One GPU: the latest gpu_state of each of its loops summed (slots, running,
 * domains, clients, batches and items since vyred started), the GPU-wide
 * figures of its newest record, and its batches since attach.
 */
struct top_gpu {
	uint32_t gpu;
	uint32_t loops; /* loops that sent a gpu_state; 0: only counters seen */
	uint32_t loops_per_gpu;
	uint32_t ordinal;
	uint32_t backend; /* VYRE_TM_BACKEND_* */
	uint32_t mode;	  /* VYRE_TM_MODE_* */
	uint32_t lost;	  /* any of its loops says so */
	uint32_t slots, running, domains, clients;
	uint64_t batches_total, items_total;
	uint64_t device_bytes_used, device_bytes_max;
	uint64_t updated_ns; /* of its newest record */
	char name[VYRE_TM_GPU_NAME_MAX];
	struct vyre_bpf_gpu c; /* since attach, summed over CPUs */
};

/* Ops kept per sample (the busiest are not chosen: the first met in the map). */
#define TOP_OPS_MAX 128u

/* One op since attach: its counters over CPUs and, once op_info named it, its names. */
struct top_op {
	uint32_t op;	/* VYRE_OP_*, VYRE_OP_MODULE_BIT | hash, or VYRE_TM_OP_UNKNOWN */
	uint32_t named; /* an op_info record for it was seen */
	uint32_t flags; /* VYRE_TM_OP_F_* of that record */
	uint32_t pad;
	struct vyre_bpf_op c;
	char name[VYRE_TM_OP_NAME_MAX];
	char module[VYRE_TM_OP_NAME_MAX]; /* "" for a built-in op */
};

struct top_sample {
	uint64_t t_ns; /* CLOCK_MONOTONIC when taken */
	struct vyre_bpf_counters c;
	struct vyre_bpf_hist h[VYRE_BPF_HIST_COUNT];
	struct vyre_bpf_gauges g;
	struct top_client *clients; /* sorted by id */
	uint32_t n_clients;
	uint32_t cap_clients;
	struct vyre_bpf_slow_batch slow[TOP_SLOW_KEEP]; /* events since the previous sample */
	uint32_t n_slow;
	uint64_t slow_events;			/* events since the previous sample, kept or not */
	struct top_gpu gpus[VYRE_BPF_MAX_GPUS]; /* by index */
	uint32_t n_gpus;
	struct vyre_bpf_class classes[VYRE_BPF_CLASSES]; /* by class, summed over CPUs */
	pid_t workers[VYRE_BPF_MAX_GPUS]; /* the GPU workers attached to, a supervisor's */
	uint32_t n_workers;
	struct top_op ops[TOP_OPS_MAX]; /* by op number */
	uint32_t n_ops;
	uint32_t ops_dropped; /* ops in the map beyond TOP_OPS_MAX */
};

/* Release a sample's client array. */
void top_sample_free(struct top_sample *s);

/* ---- session.c ---- */

struct top_session;

/*
 * Load the BPF program with @slow_ns as the slow-batch threshold and attach
 * every vyre probe found in process @pid's executable, in @pid and, where
 * @pid is a supervisor, in each of its GPU workers (top_find_workers).
 * Returns 0, or a negative errno with a sentence in @why.
 */
int top_session_open(struct top_session **out, pid_t pid, uint64_t slow_ns, char *why,
		     size_t why_len);
/* Probes attached, out of the probes the program has. */
uint32_t top_session_probes(const struct top_session *s, uint32_t *total);
/* The target's executable, as /proc/PID/exe points to it. */
const char *top_session_exe(const struct top_session *s);
/*
 * Follow the supervisor's workers (detach from those that exited, whose
 * clients are then shown as gone; attach to new ones, such as a worker
 * started again), then read every map and drain the slow-batch ring into
 * @out. Returns 0 or -errno.
 */
int top_session_sample(struct top_session *s, struct top_sample *out);
void top_session_close(struct top_session *s);
/*
 * Load (and unload) the BPF program without attaching it: 0 when this
 * process can run vyre-top, else a negative errno and the reason in @why.
 */
int top_bpf_usable(char *why, size_t why_len);

/* ---- privilege.c ---- */

/*
 * 0 when this process may load BPF and attach uprobes; otherwise -EPERM (or
 * -ENOTSUP for a missing kernel feature) and what is missing in @why.
 */
int top_check_privilege(char *why, size_t why_len);

/* ---- findpid.c ---- */

/*
 * Scan /proc/net/unix text for the listening socket bound to @path and
 * return its inode. Returns 0, or -ENOENT.
 */
int top_unix_listener_inode(FILE *net_unix, const char *path, unsigned long *inode);
/* A process holding the listening socket. */
#define TOP_OWNERS_MAX 64u
struct top_owner {
	pid_t pid;
	char comm[16]; /* /proc/PID/comm */
};
/*
 * The one to watch among @n holders: never PID 1 (systemd holds a
 * socket-activated vyred's socket too), a process named vyred before any
 * other, then the lowest pid. Returns its index, or -1 when none is left.
 */
int top_pick_owner(const struct top_owner *o, size_t n);
/* The process holding the listening socket at @path. Returns 0 or -errno with @why. */
int top_find_socket_owner(const char *path, pid_t *pid, char *why, size_t why_len);
/*
 * From a vyred command line (@len bytes of NUL-terminated words, as
 * /proc/PID/cmdline holds them), the GPUs of a GPU worker: its last
 * --gpus list and its --gpu-worker FD:ORDINAL give @w, each GPU of the
 * worker (numbered from 0) with its index in the list. Returns 1 for a
 * worker, 0 for a vyred without --gpu-worker, -1 when they cannot be read.
 */
int top_worker_gpus(const char *argv, size_t len, struct vyre_bpf_worker *w);
/*
 * The parent and start time (field 22) of /proc/PID/stat. Returns 0, or
 * -errno (-ESRCH for a process that exited and is not reaped yet).
 */
int top_proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start);
/* Up to @cap bytes of /proc/PID/cmdline into @buf, their count in @len. Returns 0 or -errno. */
int top_proc_cmdline(pid_t pid, char *buf, size_t cap, size_t *len);
struct top_worker_proc {
	pid_t pid;
	unsigned long long start; /* tells a new process that got an old pid */
	struct vyre_bpf_worker gpus;
};
/*
 * The GPU workers of a supervisor @parent: its children that run the same
 * executable (/proc/PID/exe) with a --gpu-worker command line. Returns how
 * many were put in @out (at most @max).
 */
size_t top_find_workers(pid_t parent, struct top_worker_proc *out, size_t max);

/* ---- gpus.c ---- */

/*
 * Fill @s->gpus from @n_loops entries of the loops map and the
 * VYRE_BPF_MAX_GPUS per-GPU counters (already summed over CPUs): a GPU is
 * listed once a loop of it sent a gpu_state or a batch of it completed.
 */
void top_gpus_merge(struct top_sample *s, const struct vyre_bpf_loop *loops, uint32_t n_loops,
		    const struct vyre_bpf_gpu *per_gpu);
/* Add @src into @dst field by field (one CPU's share of a per-GPU counter). */
void top_gpu_counters_add(struct vyre_bpf_gpu *dst, const struct vyre_bpf_gpu *src);

/* ---- ops.c ---- */

/* Add one CPU's share @src of an op's counters into @dst (sums, and the larger max). */
void top_op_counters_add(struct vyre_bpf_op *dst, const struct vyre_bpf_op *src);
/*
 * Put op @op's counters (already over CPUs) and its op_info record (NULL
 * when none was seen) into @s, keeping s->ops sorted by number.
 */
void top_ops_put(struct top_sample *s, uint32_t op, const struct vyre_bpf_op *c,
		 const struct vyre_tm_op_info *info);
/*
 * How @o is named: its op_info name; "unknown" for VYRE_TM_OP_UNKNOWN;
 * "op_0x%08x" for an op not named yet.
 */
const char *top_op_name(const struct top_op *o, char *buf, size_t len);

/* ---- stats.c ---- */

enum top_sort {
	TOP_SORT_RATE = 0, /* items/s, highest first */
	TOP_SORT_ITEMS,	   /* items since attach */
	TOP_SORT_QUEUE,	   /* SQ depth */
	TOP_SORT_ERRORS,
	TOP_SORT_PID,
	TOP_SORT_COUNT,
};
const char *top_sort_name(enum top_sort s);

/* The counters of struct vyre_bpf_counters by name, in struct order. */
#define TOP_N_COUNTERS (sizeof(struct vyre_bpf_counters) / sizeof(uint64_t))
extern const char *const top_counter_names[TOP_N_COUNTERS];
uint64_t top_counter(const struct vyre_bpf_counters *c, size_t i);

struct top_percentiles {
	uint64_t count;
	uint64_t p50, p99, p999; /* the largest value of the log2 bucket holding each */
};

/*
 * Quantile @q (0 < q <= 1) of @h as the largest value of the bucket that
 * holds it: 2^b - 1 for the smallest b with at least ceil(q * count) values
 * in buckets 0..b (so at least that share of the values is <= it);
 * UINT64_MAX for the open last bucket, 0 for an empty histogram.
 */
uint64_t top_hist_quantile(const struct vyre_bpf_hist *h, double q);
void top_hist_percentiles(const struct vyre_bpf_hist *h, struct top_percentiles *out);

struct top_client_row {
	struct top_client c;
	double items_per_s;
	double errors_per_s;
	int connected; /* 0 once client_disconnect was seen */
};

struct top_gpu_row {
	struct top_gpu g;
	double items_per_s;		/* completed, over the interval */
	struct top_percentiles latency; /* this interval */
};

/* A priority class that completed items since attach or has a connected client. */
struct top_class_row {
	uint32_t cls;
	uint32_t clients;		/* connected, as client_connect said */
	uint64_t items;			/* since attach */
	double items_per_s;		/* this interval */
	struct top_percentiles latency; /* this interval */
};

/* An op that completed items since attach. */
struct top_op_row {
	struct top_op o;	/* since attach */
	double items_per_s;	/* this interval */
	double failed_per_s;	/* this interval */
	uint64_t mean_ns;	/* submit -> complete, this interval; 0 without items */
	uint64_t mean_all_ns;	/* since attach */
	uint64_t drain_mean_ns; /* drain -> complete (vyred's clock), since attach */
};

struct top_view {
	pid_t pid;
	const char *exe;
	uint32_t probes, probes_total;
	double interval_s;		/* between the two samples */
	struct vyre_bpf_counters total; /* since attach */
	double rate[TOP_N_COUNTERS];	/* per second over the interval */
	double dedupe_ratio;		/* deduped / items since attach, 0 when no items */
	double fusion_ratio;		/* launches avoided / (launches + avoided) */
	struct top_percentiles latency, batch, plan, dispatch;		       /* this interval */
	struct top_percentiles latency_all, batch_all, plan_all, dispatch_all; /* since attach */
	struct vyre_bpf_gauges gauges;
	uint32_t queue_depth;	 /* SQEs waiting over connected clients */
	uint32_t queue_max_fill; /* worst connected client's SQ fill, percent */
	uint32_t queue_max_client;
	struct top_client_row *rows; /* connected clients first, then by sort */
	uint32_t n_rows;
	enum top_sort sort;
	const struct vyre_bpf_slow_batch *slow; /* this interval's events */
	uint32_t n_slow;
	uint64_t slow_events;
	struct top_gpu_row gpus[VYRE_BPF_MAX_GPUS]; /* by index */
	uint32_t n_gpus;
	struct top_class_row classes[VYRE_BPF_CLASSES]; /* by class, highest first */
	const pid_t *workers; /* the current sample's GPU workers: none for a one-process vyred */
	uint32_t n_workers;
	uint32_t n_classes;
	int classes_used; /* a class above 0 has items or a client: worth showing */
	const struct vyre_bpf_class *class_totals; /* the current sample's, since attach */
	const struct vyre_bpf_hist *hists;	   /* the current sample's, since attach */
	struct top_op_row ops[TOP_OPS_MAX];	   /* most items since attach first */
	uint32_t n_ops;
	uint32_t ops_dropped;
};

/*
 * Build @v from the previous and the current sample (a zeroed @prev with
 * t_ns = attach time for the first refresh). @rows must hold cur->n_clients
 * entries. Pure: no I/O.
 */
void top_view_build(struct top_view *v, const struct top_sample *prev, const struct top_sample *cur,
		    struct top_client_row *rows, enum top_sort sort);
/* @v's op rows from the two samples (top_view_build calls it). */
void top_ops_build(struct top_view *v, const struct top_sample *prev, const struct top_sample *cur);
const char *top_backend_name(const struct vyre_bpf_gauges *g);
const char *top_mode_name(const struct vyre_bpf_gauges *g);
/* VYRE_TM_BACKEND_* and VYRE_TM_MODE_* as words. */
const char *top_backend_word(uint32_t backend);
const char *top_mode_word(uint32_t mode);

/* ---- print.c ---- */

/* "12.3k", "4.50M": @v scaled with SI suffixes into @buf. */
const char *top_fmt_count(char *buf, size_t len, double v);
/* "850ns", "12.0us", "3.20ms", "1.50s". */
const char *top_fmt_ns(char *buf, size_t len, uint64_t ns);
/* "512B", "1.5MiB". */
const char *top_fmt_bytes(char *buf, size_t len, uint64_t bytes);

void top_print_text(FILE *f, const struct top_view *v);
/* One JSON object on one line. */
void top_print_json(FILE *f, const struct top_view *v, uint64_t wall_ns);

/* ---- metrics.c ---- */

/*
 * @v as one exposition: the OpenMetrics 1.0 text format (ending in # EOF)
 * when @openmetrics, else the Prometheus 0.0.4 text format.
 */
void top_print_metrics(FILE *f, const struct top_view *v, int openmetrics);

/* ---- http.c ---- */

struct top_http;

/* 1 for an IPv4 127/8 address, ::1 or an IPv4-mapped 127/8 one. */
int top_is_loopback(const struct sockaddr *sa);
/*
 * Listen on @hostport ("127.0.0.1:9470", "[::1]:0", "localhost:9470"),
 * loopback addresses only. Returns 0, or a negative errno with @why.
 */
int top_http_open(struct top_http **out, const char *hostport, char *why, size_t why_len);
/* The address bound, with the port the kernel chose for port 0. */
const char *top_http_address(const struct top_http *h);
/*
 * Answer scrapes of /metrics from @v until CLOCK_MONOTONIC reaches
 * @until_ns or *@stop is set. Returns 0, or a negative errno from poll.
 */
int top_http_serve(struct top_http *h, uint64_t until_ns, const struct top_view *v,
		   volatile sig_atomic_t *stop);
void top_http_close(struct top_http *h);

/* ---- refresh.c ---- */

/* The previous and the current sample and the view built from them. */
struct top_state {
	struct top_session *session;
	struct top_sample sample[2];
	int cur; /* index of the current sample */
	struct top_client_row *rows;
	uint32_t cap_rows;
	struct top_view view;
};

/* Take the baseline sample (right after attaching, so every counter is 0). */
int top_state_init(struct top_state *st, struct top_session *s, pid_t pid);
/* Take a new sample and build the view against the previous one. */
int top_state_refresh(struct top_state *st, enum top_sort sort);
/* Rebuild the view of the last refresh with another sort order. */
void top_state_resort(struct top_state *st, enum top_sort sort);
void top_state_free(struct top_state *st);

/* ---- ui.c ---- */

struct top_options {
	pid_t pid;
	double delay_s;
	long iterations; /* refreshes before exiting; 0: until quit */
	uint64_t slow_ns;
	enum top_sort sort;
};

/* The interactive screen over an initialised @st. Returns the process exit status. */
int top_ui_run(struct top_state *st, const struct top_options *o);

#endif /* VYRE_TOP_H */
