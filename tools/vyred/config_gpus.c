/* SPDX-License-Identifier: MIT */
/* vyred's --gpus and --domain-gpu (docs/design.md 8.8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_gpus.h"

static int bad(const char *flag, const char *arg, const char *why)
{
	fprintf(stderr, "vyred: invalid value for --%s: '%s': %s (see --help)\n", flag, arg, why);
	return -1;
}

/* A decimal number below @limit, all of [s, end); -1 if not. */
static long number(const char *s, const char *end, long limit)
{
	long v = 0;

	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v >= limit)
			return -1;
	}
	return v;
}

int vyre_config_gpus(const char *arg, struct vyre_daemon_config *cfg)
{
	uint32_t n = 0;

	if (!strcmp(arg, "all")) {
		cfg->n_gpus = 0;
		return 0;
	}
	for (const char *s = arg;;) {
		const char *comma = strchr(s, ',');
		const char *end = comma ? comma : s + strlen(s);
		long ordinal = number(s, end, 1024);

		if (ordinal < 0)
			return bad("gpus", arg,
				   "want all, or device ordinals 0-1023 separated by commas");
		if (n == VYRED_MAX_GPUS)
			return bad("gpus", arg, "at most 16 GPUs");
		cfg->gpus[n++] = (uint32_t)ordinal;
		if (!comma)
			break;
		s = comma + 1;
	}
	cfg->n_gpus = n;
	return 0;
}

int vyre_config_domain_gpu(const char *arg, struct vyre_daemon_config *cfg)
{
	const char *eq = strrchr(arg, '=');
	long gpu;

	if (!eq || eq == arg || (size_t)(eq - arg) > VYRE_DOMAIN_NAME_MAX)
		return bad("domain-gpu", arg, "want NAME=INDEX, NAME 1-64 bytes");
	gpu = number(eq + 1, eq + strlen(eq), VYRED_MAX_GPUS);
	if (gpu < 0)
		return bad("domain-gpu", arg, "INDEX is a position in --gpus, 0-15");
	for (uint32_t p = 0; p < cfg->n_pins; p++)
		if (strlen(cfg->pins[p].name) == (size_t)(eq - arg) &&
		    !memcmp(cfg->pins[p].name, arg, (size_t)(eq - arg)))
			return bad("domain-gpu", arg, "that domain is pinned already");
	if (cfg->n_pins == VYRED_MAX_PINS)
		return bad("domain-gpu", arg, "at most 64 pins");
	struct vyre_domain_pin *pin = &cfg->pins[cfg->n_pins++];

	memcpy(pin->name, arg, (size_t)(eq - arg));
	pin->name[eq - arg] = '\0';
	pin->gpu = (uint32_t)gpu;
	return 0;
}

int vyre_config_check_pins(const struct vyre_daemon_config *cfg)
{
	for (uint32_t p = 0; cfg->n_gpus && p < cfg->n_pins; p++) {
		if (cfg->pins[p].gpu >= cfg->n_gpus) {
			fprintf(
			    stderr,
			    "vyred: --domain-gpu %s=%u: --gpus names %u GPU%s (indexes from 0)\n",
			    cfg->pins[p].name, cfg->pins[p].gpu, cfg->n_gpus,
			    cfg->n_gpus > 1 ? "s" : "");
			return -1;
		}
	}
	return 0;
}

int vyre_config_gpu_worker(const char *arg, struct vyre_daemon_config *cfg)
{
	const char *colon = strchr(arg, ':');
	const long fd = colon ? number(arg, colon, 1L << 20) : -1;
	const long ordinal = colon ? number(colon + 1, colon + strlen(colon), 1024) : -1;

	if (fd < 0 || ordinal < 0)
		return bad("gpu-worker", arg, "want FD:ORDINAL (made by vyred itself)");
	cfg->worker_fd = (int)fd;
	cfg->worker_ordinal = (uint32_t)ordinal;
	return 0;
}

int vyre_config_worker(struct vyre_daemon_config *cfg)
{
	uint32_t local[VYRED_MAX_GPUS], n = 0;
	uint32_t kept = 0;

	if (cfg->n_gpus == 0) {
		fprintf(stderr, "vyred: --gpu-worker needs the supervisor's --gpus list\n");
		return -1;
	}
	for (uint32_t g = 0; g < cfg->n_gpus; g++) {
		local[g] = VYRED_MAX_GPUS;
		if (cfg->gpus[g] != cfg->worker_ordinal)
			continue;
		if (n == 0)
			cfg->worker_first = g;
		local[g] = n++;
	}
	if (n == 0) {
		fprintf(stderr, "vyred: --gpu-worker: ordinal %u is not in --gpus\n",
			cfg->worker_ordinal);
		return -1;
	}
	for (uint32_t p = 0; p < cfg->n_pins; p++) {
		if (local[cfg->pins[p].gpu] == VYRED_MAX_GPUS)
			continue;
		cfg->pins[kept] = cfg->pins[p];
		cfg->pins[kept++].gpu = local[cfg->pins[p].gpu];
	}
	cfg->n_pins = kept;
	cfg->gpus_total = cfg->n_gpus;
	for (uint32_t g = 0; g < n; g++)
		cfg->gpus[g] = cfg->worker_ordinal;
	cfg->n_gpus = n;
	return 0;
}
