/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/config_gpus.h - the GPU options of vyred's command line
 * (config_gpus.c), called by the parser (config.c).
 */
#ifndef VYRED_CONFIG_GPUS_H
#define VYRED_CONFIG_GPUS_H

#include "daemon_config.h"

/* --gpus all|LIST and --domain-gpu NAME=INDEX; 0 or -1 (said on stderr). */
int vyre_config_gpus(const char *arg, struct vyre_daemon_config *cfg);
int vyre_config_domain_gpu(const char *arg, struct vyre_daemon_config *cfg);
/*
 * A GPU worker's --gpu-worker FD:ORDINAL; after parsing, vyre_config_worker
 * keeps of the supervisor's --gpus list (which it passes in full) the GPUs
 * of ORDINAL and of --domain-gpu the pins to them, renumbered; 0 or -1.
 */
int vyre_config_gpu_worker(const char *arg, struct vyre_daemon_config *cfg);
int vyre_config_worker(struct vyre_daemon_config *cfg);
/* After parsing: every pin names a GPU of an explicit --gpus list; 0 or -1. */
int vyre_config_check_pins(const struct vyre_daemon_config *cfg);

#endif /* VYRED_CONFIG_GPUS_H */
