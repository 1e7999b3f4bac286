/* SPDX-License-Identifier: MIT */
/*
 * vyred: the vyre daemon. Parses the command line, sets everything up
 * (backend, plan stage, batch arrays, tables, socket, io_uring) and runs the
 * event loop until SIGTERM/SIGINT.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

static int setup_tables(struct vyre_daemon *d)
{
	struct vyre_plan_stage_config pc = {
	    .max_items = d->cfg.max_batch,
	    .max_domains = d->cfg.max_domains,
	    .max_clients = d->cfg.max_clients,
	    .max_groups = d->cfg.max_groups,
	    .max_stages = d->cfg.max_stages,
	    .budget_bytes = d->cfg.budget_bytes,
	    .resident_bytes = d->cfg.resident_bytes,
	    .arena_bytes = d->cfg.arena_bytes,
	};

	/* Extra slots hold handshakes that are turned away when the client limit is reached. */
	d->n_conn_slots = d->cfg.max_clients + 16;
	d->conns = calloc(d->n_conn_slots, sizeof(*d->conns));
	d->active = calloc(d->n_conn_slots, sizeof(*d->active));
	d->active_snapshot = calloc(d->n_conn_slots, sizeof(*d->active_snapshot));
	d->domains = calloc(d->cfg.max_domains, sizeof(*d->domains));
	if (!d->conns || !d->active || !d->active_snapshot || !d->domains)
		return VYRE_E_NOMEM;
	for (uint32_t s = 0; s < d->n_conn_slots; s++) {
		d->conns[s].slot = s;
		d->conns[s].sock = d->conns[s].event_fd = d->conns[s].sq_efd = -1;
		d->conns[s].region.fd = -1;
	}
	for (uint32_t s = 0; s < d->cfg.max_domains; s++) {
		d->domains[s].slot = s;
		d->domains[s].heap.fd = -1;
	}
	int rc = vyre_handles_init(&d->handles, d->cfg.max_buffers);

	if (rc == 0)
		rc = vyre_pipeline_init(d);
	if (rc == 0)
		rc = vyre_plan_stage_create(&pc, &d->plan_stage);
	return rc;
}

static void teardown(struct vyre_daemon *d)
{
	vyre_server_unlisten(d);
	if (d->ring.ring_fd > 0)
		io_uring_queue_exit(&d->ring);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	if (d->backend)
		d->backend_ops->shutdown(d->backend);
	vyre_plan_stage_destroy(d->plan_stage);
	vyre_pipeline_fini(d);
	vyre_handles_fini(&d->handles);
	free(d->conns);
	free(d->active);
	free(d->active_snapshot);
	free(d->domains);
	if (d->accept_log)
		fclose(d->accept_log);
}

/* --cpu: the calling (loop) thread runs on that CPU alone. */
static int pin_loop(const struct vyre_daemon *d)
{
	cpu_set_t set;

	if (d->cfg.loop_cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(d->cfg.loop_cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		vyre_log("--cpu %d: %s", d->cfg.loop_cpu, strerror(errno));
		return -1;
	}
	vyre_log("event loop pinned to CPU %d", d->cfg.loop_cpu);
	return 0;
}

int main(int argc, char **argv)
{
	static struct vyre_daemon d;
	int rc = vyre_daemon_config_parse(argc, argv, &d.cfg);

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	d.listen_fd = d.signal_fd = d.backend_fd = -1;
	if (vyre_loop_block_signals() != 0) {
		vyre_log("cannot block SIGTERM/SIGINT: %s", strerror(errno));
		return 1;
	}
	if (d.cfg.accept_log && !(d.accept_log = fopen(d.cfg.accept_log, "ae"))) {
		vyre_log("--accept-log %s: %s", d.cfg.accept_log, strerror(errno));
		return 1;
	}
	if (setup_tables(&d) != 0) {
		vyre_log("out of memory setting up (--max-batch %u, --max-clients %u)",
			 d.cfg.max_batch, d.cfg.max_clients);
		teardown(&d);
		return 1;
	}
	/* after the backend made its threads, so that only the loop is pinned */
	if (vyre_backend_select(&d) != 0 || pin_loop(&d) != 0 || vyre_loop_init(&d) != 0 ||
	    vyre_server_listen(&d) != 0) {
		teardown(&d);
		return 1;
	}
	vyre_log("ready (pid %d): max batch %u, %u batches in flight, max clients %u, max "
		 "domains %u",
		 (int)getpid(), d.cfg.max_batch, d.n_slots, d.cfg.max_clients, d.cfg.max_domains);
	rc = vyre_loop_run(&d);
	teardown(&d);
	return rc == 0 && !d.device_lost ? 0 : 1;
}
