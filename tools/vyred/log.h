/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/log.h - vyred's log: lines on stderr with a "vyred:" prefix.
 */
#ifndef VYRED_LOG_H
#define VYRED_LOG_H

#include <stdint.h>

/* Logging to stderr with a "vyred:" prefix. */
void vyre_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A GPU worker's lines name its first GPU (the supervisor's index). */
void vyre_log_set_gpu(uint32_t first_index);

#endif /* VYRED_LOG_H */
