/* SPDX-License-Identifier: MIT */
/*
 * vyred: the vyre daemon. Parses the command line, sets every event loop up
 * (backend, plan stage, batch arrays, tables, io_uring), listens (or takes
 * the socket systemd passed), tells systemd it is ready, and runs the loops
 * until SIGTERM/SIGINT.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_select.h"
#include "config.h"
#include "daemon.h"
#include "devbufs.h"
#include "front.h"
#include "gpus.h"
#include "log.h"
#include "loop.h"
#include "loops.h"
#include "names.h"
#include "ops_dir.h"
#include "pipeline.h"
#include "plan_stage.h"
#include "sd.h"
#include "server.h"
#include "worker_link.h"

static int setup_tables(struct vyre_daemon *d)
{
	/* Extra slots hold handshakes that are turned away when the client limit is reached. */
	d->n_conn_slots = d->cfg.max_clients + 16;
	d->conns = calloc(d->n_conn_slots, sizeof(*d->conns));
	d->active = calloc(d->n_conn_slots, sizeof(*d->active));
	d->active_snapshot = calloc(d->n_conn_slots, sizeof(*d->active_snapshot));
	d->domains = calloc(d->cfg.max_domains, sizeof(*d->domains));
	d->region_ids = calloc(d->n_conn_slots, sizeof(*d->region_ids));
	if (!d->conns || !d->active || !d->active_snapshot || !d->domains || !d->region_ids)
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
		rc = vyre_names_init(&d->names, d->cfg.max_buffers);
	if (rc == 0)
		rc = vyre_devbufs_init(&d->devbufs, d->cfg.max_domains, d->cfg.max_device_buffers);

	if (rc == 0)
		rc = vyre_pipeline_init(d);
	return rc;
}

/* After the backend: the planner marks on-chip handoffs only for one that keeps them. */
static int setup_plan_stage(struct vyre_daemon *d)
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
	    .handoff_bytes = d->handoff_bytes,
	    .handoff_writers = d->handoff_writers,
	    .handoff_readers = d->handoff_readers,
	    /* handles are slots 1 .. --max-buffers of the loop's table (ring/handles.h) */
	    .direct_handles = d->cfg.max_buffers + 1,
	};

	int rc = vyre_plan_stage_create(&pc, &d->plan_stage);

	if (rc != 0)
		vyre_log("cannot set up the planner (--max-batch %u): %s", d->cfg.max_batch,
			 vyre_strerror(rc));
	return rc != 0 ? -1 : 0;
}

/* The ready line, in the log and as systemd's READY=1 with STATUS= (sd.h). */
static void announce_ready(const struct vyre_shared *sh, const struct vyre_daemon *d)
{
	char status[256], msg[320];

	snprintf(status, sizeof(status),
		 "%u GPU%s, %u event loop%s, max batch %u, %u batches in flight per loop, max "
		 "clients %u, max domains %u per loop",
		 sh->n_gpus, sh->n_gpus > 1 ? "s" : "", sh->n_loops, sh->n_loops > 1 ? "s" : "",
		 d->cfg.max_batch, d->n_slots, d->cfg.max_clients, d->cfg.max_domains);
	vyre_log("ready (pid %d): %s", (int)getpid(), status);
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=serving: %s", status);
	vyre_sd_notify(msg);
}

static void teardown(struct vyre_daemon *d)
{
	vyre_server_unlisten(d);
	if (d->ring.ring_fd > 0)
		io_uring_queue_exit(&d->ring);
	if (d->signal_fd >= 0)
		close(d->signal_fd);
	if (d->backend) {
		const uint64_t t0 = vyre_now_ns();

		d->backend_ops->shutdown(d->backend);
		/* a device that does not answer: bounded by the backend, worth a line */
		if (vyre_now_ns() - t0 > 1000000000ull)
			vyre_log("loop %u: the backend took %.1f s to shut down", d->loop_index,
				 (double)(vyre_now_ns() - t0) / 1e9);
	}
	vyre_plan_stage_destroy(d->plan_stage);
	vyre_pipeline_fini(d);
	vyre_handles_fini(&d->handles);
	vyre_names_fini(&d->names);
	vyre_devbufs_fini(&d->devbufs);
	free(d->conns);
	free(d->active);
	free(d->active_snapshot);
	free(d->domains);
	free(d->region_ids);
}

/* Tables, backend and io_uring of one loop; 0 or -1 (logged). */
static int setup_loop(struct vyre_daemon *d)
{
	if (setup_tables(d) != 0) {
		vyre_log("out of memory setting up (--max-batch %u, --max-clients %u)",
			 d->cfg.max_batch, d->cfg.max_clients);
		return -1;
	}
	return vyre_backend_select(d) != 0 || setup_plan_stage(d) != 0 || vyre_loop_init(d) != 0
		   ? -1
		   : 0;
}

int main(int argc, char **argv)
{
	static struct vyre_daemon loops[VYRED_MAX_LOOPS];
	static struct vyre_shared sh;
	static struct vyre_opmods opmods;
	FILE *accept_log = NULL;
	uint32_t n = 0;
	int rc = vyre_daemon_config_parse(argc, argv, &loops[0].cfg);

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (loops[0].cfg.worker_fd >= 0) {
		vyre_link_init(loops[0].cfg.worker_fd);
		vyre_log_set_gpu(loops[0].cfg.worker_first);
	}
	/* before any thread: it unsets what systemd passed */
	if (vyre_sd_init() != 0)
		return 1;
	if (vyre_loop_block_signals() != 0) {
		vyre_log("cannot block SIGTERM/SIGINT: %s", strerror(errno));
		return 1;
	}
	if (loops[0].cfg.accept_log && !(accept_log = fopen(loops[0].cfg.accept_log, "ae"))) {
		vyre_log("--accept-log %s: %s", loops[0].cfg.accept_log, strerror(errno));
		vyre_sd_fini();
		return 1;
	}
	const struct vyre_backend_ops *ops;

	/* before any backend opens: the CUDA backend links what the registry holds */
	if ((loops[0].cfg.ops_dir && vyre_ops_dir_open(loops[0].cfg.ops_dir, &opmods) != 0) ||
	    vyre_gpus_choose(&sh, &loops[0].cfg, &ops) != 0) {
		vyre_ops_dir_close(&opmods);
		if (accept_log)
			fclose(accept_log);
		vyre_sd_fini();
		return 1;
	}
	if (vyre_front_wanted(&loops[0].cfg, &sh)) {
		/* several devices: a process each, under this one (front.h); each loads the modules
		 */
		rc = vyre_front_run(&loops[0].cfg, &sh, argc, argv);
		vyre_ops_dir_close(&opmods);
		if (accept_log)
			fclose(accept_log);
		vyre_sd_fini();
		return rc;
	}
	/* this process drives the devices: leave out optional modules that do not link */
	uint32_t ordinals[VYRED_MAX_GPUS];

	for (uint32_t g = 0; g < sh.n_gpus && g < VYRED_MAX_GPUS; g++)
		ordinals[g] = sh.gpus[g].ordinal;
	if (loops[0].cfg.ops_dir &&
	    vyre_ops_dir_link(loops[0].cfg.ops_dir, &opmods, ops, ordinals, sh.n_gpus) != 0) {
		vyre_ops_dir_close(&opmods);
		if (accept_log)
			fclose(accept_log);
		vyre_sd_fini();
		return 1;
	}
	rc = vyre_loops_init(&sh, loops, ops);
	if (rc != 0)
		vyre_log("out of memory setting up %u event loops", sh.n_made);
	/* backend threads are made here, before any loop thread is pinned (--cpu) */
	for (; rc == 0 && n < sh.n_loops; n++) {
		loops[n].accept_log = accept_log;
		rc = setup_loop(&loops[n]);
	}
	if (rc == 0)
		rc = vyre_server_listen(&loops[0]);
	if (rc == 0) {
		announce_ready(&sh, &loops[0]);
		vyre_link_ready();
		rc = vyre_loops_run(&sh);
	}
	const int none_left = sh.n_gpus && vyre_gpus_none_left(&sh);

	for (uint32_t l = 0; l < n; l++)
		teardown(&loops[l]);
	vyre_loops_fini(&sh);
	vyre_ops_dir_close(&opmods);
	if (accept_log)
		fclose(accept_log);
	vyre_sd_fini();
	return rc == 0 && !none_left ? 0 : 1;
}
