/* SPDX-License-Identifier: MIT */
/*
 * The backends' fault test hooks (docs/design.md 8.8): an environment
 * variable asks for a fault, and VYRE_INJECT_DEVICE, when set, keeps it to
 * the instances of one device ordinal, so a test can fault one GPU of
 * several in a vyred it cannot call into.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

int vyre_backend_inject_here(int device)
{
	const char *s = getenv("VYRE_INJECT_DEVICE");
	char *end = NULL;
	long want;

	if (!s || !*s)
		return 1;
	want = strtol(s, &end, 10);
	return *end == '\0' && want == device;
}

int vyre_backend_inject_fault(const char *var, int device)
{
	const char *s = getenv(var);

	return s && strcmp(s, "fault") == 0 && vyre_backend_inject_here(device);
}

uint32_t vyre_backend_inject_after(void)
{
	const char *s = getenv("VYRE_INJECT_AFTER");
	char *end = NULL;
	unsigned long n;

	if (!s || !*s)
		return 0;
	n = strtoul(s, &end, 10);
	return *end == '\0' && n < UINT32_MAX ? (uint32_t)n : 0;
}
