/* SPDX-License-Identifier: MIT */
/*
 * vyred's event loops (loops.h): the shared state's set-up, the loops'
 * threads and their exit figures.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon.h"
#include "gpus.h"
#include "inbox.h"
#include "log.h"
#include "loop.h"
#include "loops.h"

int vyre_loops_init(struct vyre_shared *sh, struct vyre_daemon *loops,
		    const struct vyre_backend_ops *ops)
{
	sh->loops = loops;
	sh->backend_ops = ops;
	vyre_gpus_assign(sh, vyre_gpus_loops_per_gpu(&loops[0].cfg, ops, sh->n_gpus));
	const uint32_t n = sh->n_made = sh->n_loops;

	if (pthread_mutex_init(&sh->lock, NULL) != 0)
		return -1;
	for (uint32_t l = 0; l < n; l++) {
		struct vyre_daemon *d = &loops[l];

		if (l > 0)
			d->cfg = loops[0].cfg;
		d->sh = sh;
		d->loop_index = l;
		d->listen_fd = d->signal_fd = d->backend_fd = d->inbox_fd = -1;
	}
	if (n == 1)
		return 0;
	/* a named domain per domain slot of every loop, at most */
	sh->n_routes = loops[0].cfg.max_domains * n;
	sh->routes = calloc(sh->n_routes, sizeof(*sh->routes));
	for (uint32_t l = 0; l < n && sh->routes; l++) {
		struct vyre_daemon *d = &loops[l];

		d->inbox_cap = d->cfg.max_clients + 16;
		d->inbox = calloc(d->inbox_cap, sizeof(*d->inbox));
		d->inbox_work = calloc(d->inbox_cap, sizeof(*d->inbox_work));
		d->inbox_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (!d->inbox || !d->inbox_work || d->inbox_fd < 0)
			return -1;
	}
	return sh->routes ? 0 : -1;
}

void vyre_loops_fini(struct vyre_shared *sh)
{
	for (uint32_t l = 0; l < sh->n_made; l++) {
		struct vyre_daemon *d = &sh->loops[l];

		/* a client still in the inbox when its loop stopped */
		for (uint32_t k = 0; k < d->n_inbox; k++) {
			close(d->inbox[k].conn.sock);
			for (unsigned i = 0; i < d->inbox[k].nfds; i++)
				close(d->inbox[k].fds[i]);
		}
		if (d->inbox_fd >= 0)
			close(d->inbox_fd);
		free(d->inbox);
		free(d->inbox_work);
	}
	free(sh->routes);
	pthread_mutex_destroy(&sh->lock);
}

/* --cpu N: loop L runs on CPU N + L alone. */
static int pin(const struct vyre_daemon *d)
{
	cpu_set_t set;
	/* a GPU worker's loops follow those of the GPUs before it */
	const int cpu = d->cfg.loop_cpu + (int)(d->cfg.worker_first * d->sh->loops_per_gpu) +
			(int)d->loop_index;

	if (d->cfg.loop_cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		vyre_log("--cpu %d: loop %u on CPU %d: %s", d->cfg.loop_cpu, d->loop_index, cpu,
			 strerror(errno));
		return -1;
	}
	vyre_log("event loop %u pinned to CPU %d", d->loop_index, cpu);
	return 0;
}

static void *loop_main(void *arg)
{
	struct vyre_daemon *d = arg;

	if (pin(d) != 0)
		vyre_loops_stop(d);
	vyre_loop_run(d);
	return NULL;
}

/*
 * What the planner did for the whole run (vyre-demo prints it): items it
 * did not run, launches against one per item executed, bytes it kept off
 * the host-device link.
 */
static void log_plan_totals(const struct vyre_shared *sh)
{
	struct vyre_plan_totals t = {0};
	uint64_t avoided = 0;

	for (uint32_t l = 0; l < sh->n_loops; l++) {
		const struct vyre_plan_totals *p = &sh->loops[l].plan_totals;

		t.items += p->items;
		t.invalid += p->invalid;
		t.executed += p->executed;
		t.deduped += p->deduped;
		t.groups += p->groups;
		t.barriers += p->barriers;
		t.launches += p->launches;
		t.bytes_deduped += p->bytes_deduped;
		avoided += sh->loops[l].bytes_avoided;
	}
	if (!t.items)
		return;
	vyre_log("planner: %llu items: %llu deduplicated, %llu invalid, %llu executed in %llu "
		 "launches (%llu fewer than one per item), %llu groups, %llu barriers; %llu bytes "
		 "kept off PCIe (%llu by dedupe, %llu by on-chip handoffs)",
		 (unsigned long long)t.items, (unsigned long long)t.deduped,
		 (unsigned long long)t.invalid, (unsigned long long)t.executed,
		 (unsigned long long)t.launches,
		 (unsigned long long)(t.executed > t.launches ? t.executed - t.launches : 0),
		 (unsigned long long)t.groups, (unsigned long long)t.barriers,
		 (unsigned long long)(t.bytes_deduped + avoided),
		 (unsigned long long)t.bytes_deduped, (unsigned long long)avoided);
}

static void log_figures(const struct vyre_shared *sh)
{
	uint64_t batches = 0, items = 0, holds = 0, submit = 0, stage[5] = {0};
	uint64_t dev_allocs = 0, dev_trusted = 0, avoided = 0, disjoint = 0;
	uint32_t most = 0, most_client = 0;

	for (uint32_t l = 0; l < sh->n_loops; l++) {
		const struct vyre_daemon *d = &sh->loops[l];

		batches += d->batches;
		items += d->items_total;
		holds += d->hazard_holds;
		submit += d->submit_ns;
		for (int s = 0; s < 5; s++)
			stage[s] += d->stage_ns[s];
		if (d->most_running > most)
			most = d->most_running;
		if (d->most_client > most_client)
			most_client = d->most_client;
		dev_allocs += d->devbufs.allocs;
		dev_trusted += d->devbufs.trusted;
		avoided += d->bytes_avoided;
		disjoint += d->disjoint_plans;
	}
	vyre_log("stopped after %llu batches, %llu items; at most %u batches in flight at once%s, "
		 "%u of one client, %llu holds for hazards against them",
		 (unsigned long long)batches, (unsigned long long)items, most,
		 sh->n_loops > 1 ? " in a loop" : "", most_client, (unsigned long long)holds);
	struct rusage ru;

	/* every thread's CPU; a GPU worker logs its own (vyre-bench has "vyred cpu" rows) */
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		const double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		const double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		char per[48] = "no items";

		if (items)
			snprintf(per, sizeof(per), "%.0f ns an item",
				 (user + sys) * 1e9 / (double)items);
		vyre_log("CPU: user %.3f s, system %.3f s, %s", user, sys, per);
	}
	if (batches) {
		const double n = (double)batches;

		vyre_log("mean ns per batch: drain %.0f, resolve %.0f, plan %.0f, in flight %.0f "
			 "(dispatch %.0f), complete %.0f",
			 (double)stage[0] / n, (double)stage[1] / n, (double)stage[2] / n,
			 (double)stage[3] / n, (double)submit / n, (double)stage[4] / n);
	}
	log_plan_totals(sh);
	if (disjoint)
		vyre_log("%llu batches of more than %u items planned without the planner: their "
			 "items share no written buffer",
			 (unsigned long long)disjoint, VYRE_SMALL_PLAN_ITEMS);
	if (dev_allocs)
		vyre_log("device buffers: %llu allocated; %llu DFA scans trusted a device table "
			 "checked at its last write",
			 (unsigned long long)dev_allocs, (unsigned long long)dev_trusted);
	if (avoided)
		vyre_log("on-chip handoffs kept %llu transient bytes off the heap (bytes_avoided)",
			 (unsigned long long)avoided);
	for (uint32_t l = 0; sh->n_loops > 1 && l < sh->n_loops; l++)
		vyre_log("loop %u: %llu batches, %llu items", l,
			 (unsigned long long)sh->loops[l].batches,
			 (unsigned long long)sh->loops[l].items_total);
}

int vyre_loops_run(struct vyre_shared *sh)
{
	pthread_t threads[VYRED_MAX_LOOPS];
	uint32_t started = 1;
	int rc = 0;

	for (; started < sh->n_loops; started++) {
		int err = pthread_create(&threads[started], NULL, loop_main, &sh->loops[started]);

		if (err) {
			vyre_log("cannot start event loop %u: %s", started, strerror(err));
			vyre_loops_stop(&sh->loops[0]);
			rc = -1;
			break;
		}
	}
	if (pin(&sh->loops[0]) != 0) {
		vyre_loops_stop(&sh->loops[0]);
		rc = -1;
	}
	if (vyre_loop_run(&sh->loops[0]) != 0)
		rc = -1;
	for (uint32_t l = 1; l < started; l++)
		pthread_join(threads[l], NULL);
	log_figures(sh);
	return rc;
}
