/* SPDX-License-Identifier: MIT */
/* Loading bpf/vyre.bpf.c, attaching it to one vyred, reading its maps. */
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

struct top_session {
	struct vyre_bpf *skel;
	struct ring_buffer *ring;
	struct bpf_link *links[MAX_PROBES];
	uint32_t n_links;
	uint32_t n_programs;
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

static int attach_probes(struct top_session *s, pid_t pid, char *why, size_t why_len)
{
	struct bpf_program *prog;
	char missing[256] = "";
	/*
	 * Last program first: bpf/vyre.bpf.c defines them in a batch's probe
	 * order, so complete is live before plan, and a batch whose plan is
	 * counted is counted to its complete (which adds its executed items).
	 */
	for (prog = bpf_object__prev_program(s->skel->obj, NULL); prog;
	     prog = bpf_object__prev_program(s->skel->obj, prog)) {
		const char *name = bpf_program__name(prog);
		if (strncmp(name, PROGRAM_PREFIX, strlen(PROGRAM_PREFIX)) != 0 ||
		    s->n_programs >= MAX_PROBES)
			continue;
		s->n_programs++;
		const char *probe = name + strlen(PROGRAM_PREFIX);
		struct bpf_link *l =
		    bpf_program__attach_usdt(prog, pid, s->exe, VYRE_TM_PROVIDER, probe, NULL);
		if (!l) {
			size_t used = strlen(missing);
			snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? " " : "",
				 probe);
			continue;
		}
		s->links[s->n_links++] = l;
	}
	if (s->n_links == 0) {
		snprintf(why, why_len,
			 "no vyre probe could be attached in pid %d (%s): is it vyred, built with "
			 "VYRE_PROBES=1?",
			 (int)pid, s->exe);
		return -ENOENT;
	}
	if (missing[0])
		fprintf(stderr, "vyre-top: probes not found in pid %d: %s\n", (int)pid, missing);
	return 0;
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
	err = attach_probes(s, pid, why, why_len);
	if (err) {
		top_session_close(s);
		return err;
	}
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
	return s->n_links;
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
			 int ncpus)
{
	uint64_t newest = 0;
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
		if (p->updated_ns && p->updated_ns >= newest) {
			newest = p->updated_ns;
			c->sq_depth = p->sq_depth;
			c->sq_entries = p->sq_entries;
			c->cq_free = p->cq_free;
		}
	}
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
		merge_client(&out->clients[out->n_clients++], key, v, s->ncpus);
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

int top_session_sample(struct top_session *s, struct top_sample *out)
{
	uint32_t key = 0;
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
	if ((err = read_gpus(s, out)) != 0 || (err = read_classes(s, out)) != 0)
		return err;
	return read_clients(s, out);
}

void top_session_close(struct top_session *s)
{
	if (!s)
		return;
	ring_buffer__free(s->ring);
	for (uint32_t i = 0; i < s->n_links; i++)
		bpf_link__destroy(s->links[i]);
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
