/* SPDX-License-Identifier: MIT */
/*
 * bench/plot_label.c - names this machine for the figures' titles without
 * loading the CUDA driver (vyre-bench never does; suites fork for it): the
 * GPU model from the NVIDIA kernel driver's /proc files, the CPU model from
 * /proc/cpuinfo and the online CPU count.
 */
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plot_label.h"

/* The value of the first "@key<spaces>: value" line of @path into @out; 0 or -1. */
static int proc_field(const char *path, const char *key, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int rc = -1;

	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, key, strlen(key)) != 0 || !colon)
			continue;
		colon += 1 + strspn(colon + 1, " \t");
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(out, cap, "%s", colon);
		rc = 0;
	}
	fclose(f);
	return rc;
}

void vyre_plot_machine(char *out, size_t cap)
{
	char gpu[128] = "", cpu[128] = "a CPU";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	glob_t g;

	if (glob("/proc/driver/nvidia/gpus/*/information", 0, NULL, &g) == 0) {
		if (proc_field(g.gl_pathv[0], "Model", gpu, sizeof(gpu)) == 0 && g.gl_pathc > 1) {
			size_t n = strlen(gpu);

			snprintf(gpu + n, sizeof(gpu) - n, " x%zu", g.gl_pathc);
		}
		globfree(&g);
	}
	proc_field("/proc/cpuinfo", "model name", cpu, sizeof(cpu));
	snprintf(out, cap, "%s%s%s, %ld CPUs", gpu, gpu[0] ? " host: " : "", cpu,
		 cpus > 0 ? cpus : 1L);
}
