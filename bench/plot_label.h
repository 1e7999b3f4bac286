/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_label.h - the machine named in the figures' titles
 * (bench/plot_label.c).
 */
#ifndef VYRE_BENCH_PLOT_LABEL_H
#define VYRE_BENCH_PLOT_LABEL_H

#include <stddef.h>

/* This machine: "GPU model (xN), CPU model, N CPUs" into @out. */
void vyre_plot_machine(char *out, size_t cap);

#endif /* VYRE_BENCH_PLOT_LABEL_H */
