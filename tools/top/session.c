/* SPDX-License-Identifier: MIT */
/*
 * Loading bpf/vyre.bpf.c, attaching it to one vyred, reading its maps.
 *
 * Where that vyred is the supervisor of GPU workers (docs/design.md 8.8),
 * the workers fire the probes: the program is attached to each of them
 * too, with its GPU numbering in the workers map, and every sample first
 * follows them, so that a worker started again after a fault (a new pid)
 * is counted into the same totals and one that exited is let go.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "vyre.skel.h"

#include "top.h"

#define PROGRAM_PREFIX "vyre_"
#define MAX_PROBES     16u
#define MAX_TARGETS    (1u + 2u * VYRE_BPF_MAX_GPUS) /* the process asked for, its workers */
#define GONE_KEEP      64u			     /* workers remembered after they exited */
#define GRAVES	       8u			     /* exited workers whose probes stay attached */

/* One process the probes are attached in. */
struct top_target {
	pid_t pid;
	unsigned long long start; /* /proc/PID/stat: a new process with an old pid differs */
	int worker;		  /* it has an entry in the workers map */
	struct bpf_link *links[MAX_PROBES];
	uint32_t n_links;
};

struct top_session {
	struct vyre_bpf *skel;
	struct ring_buffer *ring;
	struct top_target targets[MAX_TARGETS]; /* [0]: the process asked for */
	uint32_t n_targets;
	uint32_t n_programs;
	pid_t gone[GONE_KEEP]; /* workers that exited: their clients went with them */
	uint32_t n_gone;
	/*
	 * Exited workers' links, destroyed when the session closes: the kernel
	 * takes a second or more to detach them (it waits for a grace period
	 * per uprobe), which a refresh should not wait for. They never fire.
	 */
	struct top_target graves[GRAVES];
	uint32_t n_graves;
	int ncpus;
	void *percpu;		    /* ncpus values of the largest per-CPU map value */
	char exe[64];		    /* /proc/PID/exe: attaches even if the file was replaced */
	char exe_path[512];	    /* where it points, for people */
	struct top_sample *filling; /* where the ring callback writes */
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* libbpf prints its own diagnostics; keep only warnings and errors. */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || level == LIBBPF_INFO)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int on_slow_batch(void *ctx, void *data, size_t size)
{
	struct top_session *s = ctx;
	struct top_sample *out = s->filling;
	if (!out || size < sizeof(struct vyre_bpf_slow_batch))
		return 0;
	out->slow_events++;
	if (out->n_slow < TOP_SLOW_KEEP)
		memcpy(&out->slow[out->n_slow++], data, sizeof(struct vyre_bpf_slow_batch));
	return 0;
}

static int attach_probes(struct top_session *s, struct top_target *t, char *why, size_t why_len)
{
	struct bpf_program *prog;
	char missing[256] = "", exe[64];
	const int first = t == &s->targets[0];
	const pid_t pid = t->pid;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	/*
	 * Last program first: bpf/vyre.bpf.c defines them in a batch's probe
	 * order, so complete is live before plan, and a batch whose plan is
	 * counted is counted to its complete (which adds its executed items).
	 */
	for (prog = bpf_object__prev_program(s->skel->obj, NULL); prog;
	     prog = bpf_object__prev_program(s->skel->obj, prog)) {
		const char *name = bpf_program__name(prog);
		if (strncmp(name, PROGRAM_PREFIX, strlen(PROGRAM_PREFIX)) != 0 ||
		    t->n_links >= MAX_PROBES || (first && s->n_programs >= MAX_PROBES))
			continue;
		s->n_programs += first;
		const char *probe = name + strlen(PROGRAM_PREFIX);
		struct bpf_link *l =
		    bpf_program__attach_usdt(prog, pid, exe, VYRE_TM_PROVIDER, probe, NULL);
		if (!l) {
			size_t used = strlen(missing);
			snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? " " : "",
				 probe);
			continue;
		}
		t->links[t->n_links++] = l;
	}
	if (t->n_links == 0) {
		snprintf(why, why_len,
			 "no vyre probe could be attached in pid %d (%s): is it vyred, built with "
			 "VYRE_PROBES=1?",
			 (int)pid, exe);
		return -ENOENT;
	}
	/* a worker is vyred's own binary again: its probes are those of the first */
	if (missing[0] && first)
		fprintf(stderr, "vyre-top: probes not found in pid %d: %s\n", (int)pid, missing);
	return 0;
}

static void detach(struct top_target *t)
{
	for (uint32_t i = 0; i < t->n_links; i++)
		bpf_link__destroy(t->links[i]);
	t->n_links = 0;
}

/* Give the BPF program @pid's GPU numbering when it is a GPU worker. */
static int set_worker(struct top_session *s, pid_t pid, const struct vyre_bpf_worker *w)
{
	uint32_t key = (uint32_t)pid;
	return bpf_map_update_elem(bpf_map__fd(s->skel->maps.workers), &key, w, BPF_ANY) ? -errno
											 : 0;
}

/* Batches of @pid that never completed (it was killed): their entries would stay. */
static void forget_batches(struct top_session *s, pid_t pid)
{
	int fd = bpf_map__fd(s->skel->maps.inflight);
	struct vyre_bpf_batch_key key, next, *prev = NULL;
	struct vyre_bpf_batch_key *drop = calloc(VYRE_BPF_MAX_INFLIGHT, sizeof(*drop));
	uint32_t n = 0;
	if (!drop)
		return;
	while (n < VYRE_BPF_MAX_INFLIGHT && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (key.tgid == (uint32_t)pid)
			drop[n++] = key;
	}
	for (uint32_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &drop[i]);
	free(drop);
}

static void let_go(struct top_session *s, struct top_target *t)
{
	uint32_t key = (uint32_t)t->pid;
	if (t->worker)
		bpf_map_delete_elem(bpf_map__fd(s->skel->maps.workers), &key);
	forget_batches(s, t->pid);
	s->gone[s->n_gone++ % GONE_KEEP] = t->pid;
	if (s->n_graves == GRAVES) {
		detach(&s->graves[0]);
		memmove(&s->graves[0], &s->graves[1], (GRAVES - 1) * sizeof(s->graves[0]));
		s->n_graves--;
	}
	s->graves[s->n_graves++] = *t;
	t->n_links = 0;
}

static int is_gone(const struct top_session *s, uint32_t worker)
{
	uint32_t n = s->n_gone < GONE_KEEP ? s->n_gone : GONE_KEEP;
	for (uint32_t i = 0; worker && i < n; i++)
		if ((uint32_t)s->gone[i] == worker)
			return 1;
	return 0;
}

/* @t is a worker of @root still (not a new process that got its pid). */
static int still_there(const struct top_target *t, pid_t root)
{
	pid_t ppid;
	unsigned long long start;
	return top_proc_stat(t->pid, &ppid, &start) == 0 && ppid == root && start == t->start;
}

/*
 * The first process's GPU workers as they are now: attach to new ones, and
 * let go of those that exited (or are dead and not yet reaped).
 */
static void follow_workers(struct top_session *s)
{
	const pid_t root = s->targets[0].pid;
	struct top_worker_proc found[VYRE_BPF_MAX_GPUS];
	char why[256];
	size_t n = top_find_workers(root, found, VYRE_BPF_MAX_GPUS);

	for (size_t k = 0; k < n && s->n_targets < MAX_TARGETS; k++) {
		int known = 0;
		for (uint32_t i = 1; i < s->n_targets && !known; i++)
			known = s->targets[i].pid == found[k].pid &&
				s->targets[i].start == found[k].start;
		if (known || set_worker(s, found[k].pid, &found[k].gpus) != 0)
			continue;
		struct top_target *t = &s->targets[s->n_targets];
		memset(t, 0, sizeof(*t));
		t->pid = found[k].pid;
		t->start = found[k].start;
		t->worker = 1;
		if (attach_probes(s, t, why, sizeof(why)) != 0) {
			/* exited meanwhile: the next sample looks again */
			uint32_t key = (uint32_t)t->pid;
			detach(t);
			bpf_map_delete_elem(bpf_map__fd(s->skel->maps.workers), &key);
			continue;
		}
		s->n_targets++;
		/* a pid used again: its clients are this worker's */
		for (uint32_t i = 0; i < GONE_KEEP; i++)
			if (s->gone[i] == t->pid)
				s->gone[i] = 0;
	}
	for (uint32_t i = 1; i < s->n_targets;) {
		struct top_target *t = &s->targets[i];
		if (still_there(t, root)) {
			i++;
			continue;
		}
		let_go(s, t);
		*t = s->targets[--s->n_targets];
	}
}

int top_session_open(struct top_session **out, pid_t pid, uint64_t slow_ns, char *why,
		     size_t why_len)
{
	struct top_session *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	snprintf(s->exe, sizeof(s->exe), "/proc/%d/exe", (int)pid);
	if (access(s->exe, R_OK) != 0) {
		int err = errno;
		snprintf(why, why_len, "cannot read %s: %s", s->exe, strerror(err));
		free(s);
		return -err;
	}
	ssize_t n = readlink(s->exe, s->exe_path, sizeof(s->exe_path) - 1);
	if (n <= 0)
		snprintf(s->exe_path, sizeof(s->exe_path), "%s", s->exe);
	else
		s->exe_path[n] = '\0';
	s->ncpus = libbpf_num_possible_cpus();
	_Static_assert(sizeof(struct vyre_bpf_class) <= sizeof(struct vyre_bpf_gpu),
		       "per-CPU buffer holds a class");
	_Static_assert(sizeof(struct vyre_bpf_op) <= sizeof(struct vyre_bpf_gpu),
		       "per-CPU buffer holds an op");
	size_t biggest = sizeof(struct vyre_bpf_gpu) > sizeof(struct vyre_bpf_hist)
			     ? sizeof(struct vyre_bpf_gpu)
			     : sizeof(struct vyre_bpf_hist);
	if (s->ncpus <= 0 || (s->percpu = calloc((size_t)s->ncpus, biggest)) == NULL) {
		snprintf(why, why_len, "cannot size per-CPU buffers");
		free(s);
		return -ENOMEM;
	}
	libbpf_set_print(libbpf_quiet);
	s->skel = vyre_bpf__open();
	if (!s->skel) {
		int err = errno;
		snprintf(why, why_len, "cannot open the BPF program: %s", strerror(err));
		top_session_close(s);
		return -err;
	}
	s->skel->rodata->slow_batch_ns = slow_ns;
	int err = vyre_bpf__load(s->skel);
	if (err) {
		snprintf(why, why_len, "cannot load the BPF program: %s", strerror(-err));
		top_session_close(s);
		return err;
	}
	/* a worker named with -p: its own GPU numbering, and no workers of its own */
	char cmdline[8192];
	size_t len;
	struct vyre_bpf_worker w;
	struct top_target *t = &s->targets[0];
	t->pid = pid;
	if (top_proc_stat(pid, NULL, &t->start) != 0)
		t->start = 0;
	s->n_targets = 1;
	if (top_proc_cmdline(pid, cmdline, sizeof(cmdline), &len) == 0 &&
	    top_worker_gpus(cmdline, len, &w) == 1 && set_worker(s, pid, &w) == 0)
		t->worker = 1;
	err = attach_probes(s, t, why, why_len);
	if (err) {
		top_session_close(s);
		return err;
	}
	follow_workers(s);
	s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.slow), on_slow_batch, s, NULL);
	if (!s->ring) {
		err = -errno;
		snprintf(why, why_len, "cannot open the slow-batch ring buffer: %s",
			 strerror(-err));
		top_session_close(s);
		return err;
	}
	*out = s;
	return 0;
}

uint32_t top_session_probes(const struct top_session *s, uint32_t *total)
{
	if (total)
		*total = s->n_programs;
	return s->targets[0].n_links;
}

const char *top_session_exe(const struct top_session *s)
{
	return s->exe_path;
}

static int read_counters(struct top_session *s, struct vyre_bpf_counters *out)
{
	uint32_t key = 0;
	const struct vyre_bpf_counters *v = s->percpu;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.counters), &key, s->percpu) != 0)
		return -errno;
	memset(out, 0, sizeof(*out));
	for (int cpu = 0; cpu < s->ncpus; cpu++)
		for (size_t i = 0; i < TOP_N_COUNTERS; i++)
			((uint64_t *)(void *)out)[i] += top_counter(&v[cpu], i);
	return 0;
}

static int read_hists(struct top_session *s, struct vyre_bpf_hist *out)
{
	const struct vyre_bpf_hist *v = s->percpu;
	for (uint32_t id = 0; id < VYRE_BPF_HIST_COUNT; id++) {
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.hists), &id, s->percpu) != 0)
			return -errno;
		memset(&out[id], 0, sizeof(out[id]));
		for (int cpu = 0; cpu < s->ncpus; cpu++)
			for (uint32_t b = 0; b < VYRE_BPF_HIST_BUCKETS; b++)
				out[id].bucket[b] += v[cpu].bucket[b];
	}
	return 0;
}

static void merge_client(struct top_client *c, uint32_t id, const struct vyre_bpf_client *v,
			 int ncpus, const struct top_session *s)
{
	uint64_t newest = 0;
	uint32_t worker = 0;
	memset(c, 0, sizeof(*c));
	c->id = id;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		const struct vyre_bpf_client *p = &v[cpu];
		c->items += p->items;
		c->drains += p->drains;
		c->errors += p->errors;
		c->backpressure += p->backpressure;
		c->flags |= p->flags;
		if (p->pid && (!c->pid || p->updated_ns >= newest))
			c->pid = p->pid;
		if (p->uid)
			c->uid = p->uid;
		if (p->flags & VYRE_BPF_CLIENT_CONNECTED) {
			c->gpu = p->gpu;
			c->priority = p->priority;
		}
		if (p->domain_id)
			c->domain_id = p->domain_id;
		if (p->worker)
			worker = p->worker;
		if (p->updated_ns && p->updated_ns >= newest) {
			newest = p->updated_ns;
			c->sq_depth = p->sq_depth;
			c->sq_entries = p->sq_entries;
			c->cq_free = p->cq_free;
		}
	}
	/* its worker was killed: no client_disconnect came, but the client is gone */
	if (is_gone(s, worker))
		c->flags |= VYRE_BPF_CLIENT_DISCONNECTED;
}

static int client_cmp(const void *a, const void *b)
{
	const struct top_client *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static int read_clients(struct top_session *s, struct top_sample *out)
{
	int fd = bpf_map__fd(s->skel->maps.clients);
	uint32_t key, next;
	uint32_t *prev = NULL;
	struct vyre_bpf_client *v = calloc((size_t)s->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	out->n_clients = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, v) != 0)
			continue; /* evicted between the two calls */
		if (out->n_clients == out->cap_clients) {
			uint32_t cap = out->cap_clients ? out->cap_clients * 2 : 16;
			if (cap > VYRE_BPF_MAX_CLIENTS || cap < out->cap_clients)
				break;
			struct top_client *grown = realloc(out->clients, cap * sizeof(*grown));
			if (!grown) {
				free(v);
				return -ENOMEM;
			}
			out->clients = grown;
			out->cap_clients = cap;
		}
		merge_client(&out->clients[out->n_clients++], key, v, s->ncpus, s);
	}
	free(v);
	if (out->n_clients > 1)
		qsort(out->clients, out->n_clients, sizeof(*out->clients), client_cmp);
	return 0;
}

/* Both GPU maps: every loop's latest gpu_state and each GPU's counters over CPUs. */
static int read_gpus(struct top_session *s, struct top_sample *out)
{
	struct vyre_bpf_loop loops[VYRE_BPF_MAX_LOOPS];
	struct vyre_bpf_gpu per_gpu[VYRE_BPF_MAX_GPUS];
	const struct vyre_bpf_gpu *v = s->percpu;
	int loops_fd = bpf_map__fd(s->skel->maps.loops), gpus_fd = bpf_map__fd(s->skel->maps.gpus);

	for (uint32_t l = 0; l < VYRE_BPF_MAX_LOOPS; l++)
		if (bpf_map_lookup_elem(loops_fd, &l, &loops[l]) != 0)
			return -errno;
	memset(per_gpu, 0, sizeof(per_gpu));
	for (uint32_t g = 0; g < VYRE_BPF_MAX_GPUS; g++) {
		if (bpf_map_lookup_elem(gpus_fd, &g, s->percpu) != 0)
			return -errno;
		for (int cpu = 0; cpu < s->ncpus; cpu++)
			top_gpu_counters_add(&per_gpu[g], &v[cpu]);
	}
	top_gpus_merge(out, loops, VYRE_BPF_MAX_LOOPS, per_gpu);
	return 0;
}

static int read_classes(struct top_session *s, struct top_sample *out)
{
	const struct vyre_bpf_class *v = s->percpu;
	int fd = bpf_map__fd(s->skel->maps.classes);

	memset(out->classes, 0, sizeof(out->classes));
	for (uint32_t k = 0; k < VYRE_BPF_CLASSES; k++) {
		struct vyre_bpf_class *o = &out->classes[k];

		if (bpf_map_lookup_elem(fd, &k, s->percpu) != 0)
			return -errno;
		for (int cpu = 0; cpu < s->ncpus; cpu++) {
			o->batches += v[cpu].batches;
			o->items += v[cpu].items;
			o->latency_ns += v[cpu].latency_ns;
			for (uint32_t b = 0; b < VYRE_BPF_HIST_BUCKETS; b++)
				o->latency.bucket[b] += v[cpu].latency.bucket[b];
		}
	}
	return 0;
}

/* Every op in the ops map, over CPUs, with its op_info record where one came. */
static int read_ops(struct top_session *s, struct top_sample *out)
{
	int fd = bpf_map__fd(s->skel->maps.ops), names = bpf_map__fd(s->skel->maps.op_names);
	const struct vyre_bpf_op *v = s->percpu;
	uint32_t key, next, *prev = NULL;

	out->n_ops = 0;
	out->ops_dropped = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct vyre_bpf_op sum;
		struct vyre_tm_op_info info;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, s->percpu) != 0)
			continue;
		memset(&sum, 0, sizeof(sum));
		for (int cpu = 0; cpu < s->ncpus; cpu++)
			top_op_counters_add(&sum, &v[cpu]);
		int named = bpf_map_lookup_elem(names, &key, &info) == 0;
		top_ops_put(out, key, &sum, named ? &info : NULL);
	}
	return 0;
}

int top_session_sample(struct top_session *s, struct top_sample *out)
{
	uint32_t key = 0;
	follow_workers(s);
	out->n_workers = 0;
	for (uint32_t i = 1; i < s->n_targets && out->n_workers < VYRE_BPF_MAX_GPUS; i++)
		out->workers[out->n_workers++] = s->targets[i].pid;
	out->n_slow = 0;
	out->slow_events = 0;
	s->filling = out;
	int err = ring_buffer__consume(s->ring);
	s->filling = NULL;
	if (err < 0)
		return err;
	out->t_ns = monotonic_ns();
	if ((err = read_counters(s, &out->c)) != 0 || (err = read_hists(s, out->h)) != 0)
		return err;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.gauges), &key, &out->g) != 0)
		return -errno;
	if ((err = read_gpus(s, out)) != 0 || (err = read_classes(s, out)) != 0 ||
	    (err = read_ops(s, out)) != 0)
		return err;
	return read_clients(s, out);
}

void top_session_close(struct top_session *s)
{
	if (!s)
		return;
	ring_buffer__free(s->ring);
	for (uint32_t i = 0; i < s->n_targets; i++)
		detach(&s->targets[i]);
	for (uint32_t i = 0; i < s->n_graves; i++)
		detach(&s->graves[i]);
	vyre_bpf__destroy(s->skel);
	free(s->percpu);
	free(s);
}

int top_bpf_usable(char *why, size_t why_len)
{
	int err = top_check_privilege(why, why_len);
	if (err)
		return err;
	libbpf_set_print(libbpf_quiet);
	struct vyre_bpf *skel = vyre_bpf__open();
	if (!skel) {
		err = -errno;
		snprintf(why, why_len, "cannot open the BPF program: %s", strerror(-err));
		return err;
	}
	err = vyre_bpf__load(skel);
	if (err)
		snprintf(why, why_len, "cannot load the BPF program: %s", strerror(-err));
	vyre_bpf__destroy(skel);
	return err;
}
