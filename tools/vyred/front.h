/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/front.h - vyred as the supervisor of one GPU worker process
 * per device (docs/design.md 8.8, "One process a device").
 *
 * A device fault is sticky for the whole process that saw it (measured on
 * the H100 hosts: every other device's context of that process fails too,
 * gpu/probe/fault_scope.cu), so where --gpus names more than one device
 * vyred runs each device's GPUs in a process of their own: itself again,
 * with --gpu-worker. The supervisor listens, reads (without taking) each
 * connection's HELLO to learn its domain, places the domain on a worker and
 * hands the connection over; it restarts a worker that exits, and routes no
 * client to one that reported its device lost.
 */
#ifndef VYRED_FRONT_H
#define VYRED_FRONT_H

#include "config.h"

struct vyre_shared;

/* 1 when @sh's GPUs (vyre_gpus_choose) span more than one device ordinal. */
int vyre_front_wanted(const struct vyre_daemon_config *cfg, const struct vyre_shared *sh);

/*
 * Supervise until SIGTERM/SIGINT or until no GPU can serve. @argv is
 * vyred's own command line, which each worker is started with. Returns
 * the exit status: 0, or 1 when vyred could not start or no GPU is left.
 */
int vyre_front_run(const struct vyre_daemon_config *cfg, const struct vyre_shared *sh, int argc,
		   char **argv);

#endif /* VYRED_FRONT_H */
