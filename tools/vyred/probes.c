/* SPDX-License-Identifier: MIT */
/*
 * The probe semaphores: one short per probe in the ELF ".probes" section,
 * which is where USDT tools look for them. They must be defined exactly once
 * in the binary that fires the probes.
 */
#include "probes.h"

#if VYRE_PROBES
#define VYRE_PROBE_DEFINE_SEMAPHORE(name)                                                          \
	unsigned short vyre_##name##_semaphore __attribute__((section(".probes")));
VYRE_PROBE_NAMES(VYRE_PROBE_DEFINE_SEMAPHORE)
#else
/* Probes compiled out: nothing to define, but a translation unit may not be empty. */
typedef int vyre_probes_compiled_out;
#endif
