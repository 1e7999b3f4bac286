/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/config.h - vyred's command line: its parser (config.c).
 */
#ifndef VYRED_CONFIG_H
#define VYRED_CONFIG_H

#include <sys/types.h>

#include "daemon_config.h"

/*
 * vyre_daemon_config_parse - fill @cfg from argv. Returns 0 to run, 1 when
 * --help was printed, -1 after printing a usage error to stderr.
 */
int vyre_daemon_config_parse(int argc, char **argv, struct vyre_daemon_config *cfg);

/* A uid or gid as a number or a name; 0 or -1. */
int vyre_config_uid(const char *s, uid_t *out);
int vyre_config_gid(const char *s, gid_t *out);

/* --priority's argument into @cfg; 0, or -1 after saying why on stderr. */
int vyre_config_priority(const char *arg, struct vyre_daemon_config *cfg);

#endif /* VYRED_CONFIG_H */
