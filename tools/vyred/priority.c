/* SPDX-License-Identifier: MIT */
/* Priority classes: --priority rules, a client's bound, the per-loop counts (priority.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "priority.h"

static int bad(const char *arg, const char *why)
{
	fprintf(stderr, "vyred: invalid value for --priority: '%s': %s (see --help)\n", arg, why);
	return -1;
}

int vyre_config_priority(const char *arg, struct vyre_daemon_config *cfg)
{
	const char *eq = strrchr(arg, '=');
	char who[256];
	struct vyre_priority_rule r = {0};

	if (!eq || eq[1] < '0' || eq[1] > '0' + (int)VYRE_PRIORITY_MAX || eq[2] != '\0')
		return bad(arg, "want uid:U=N or gid:G=N, N 0-3");
	r.max = (uint32_t)(eq[1] - '0');
	if (!strncmp(arg, "gid:", 4))
		r.is_gid = 1;
	else if (strncmp(arg, "uid:", 4))
		return bad(arg, "want uid:U=N or gid:G=N, N 0-3");
	if (eq - arg - 4 <= 0 || (size_t)(eq - arg - 4) >= sizeof(who))
		return bad(arg, "no user or group");
	memcpy(who, arg + 4, (size_t)(eq - arg - 4));
	who[eq - arg - 4] = '\0';
	uid_t uid;
	gid_t gid;

	if (r.is_gid ? vyre_config_gid(who, &gid) : vyre_config_uid(who, &uid))
		return bad(arg, r.is_gid ? "no such group" : "no such user");
	r.id = r.is_gid ? (uint32_t)gid : (uint32_t)uid;
	if (cfg->n_priority_rules == VYRED_MAX_PRIORITY_RULES)
		return bad(arg, "at most 32 rules");
	cfg->priority_rules[cfg->n_priority_rules++] = r;
	return 0;
}

static int member(const struct vyre_conn *c, uint32_t gid)
{
	if (c->gid == gid)
		return 1;
	for (uint32_t g = 0; g < c->n_groups; g++)
		if (c->groups[g] == gid)
			return 1;
	return 0;
}

uint32_t vyre_priority_bound(const struct vyre_daemon_config *cfg, const struct vyre_conn *c)
{
	uint32_t bound = cfg->priority_max;

	for (uint32_t i = 0; i < cfg->n_priority_rules; i++) {
		const struct vyre_priority_rule *r = &cfg->priority_rules[i];

		if (r->max > bound && (r->is_gid ? member(c, r->id) : c->uid == r->id))
			bound = r->max;
	}
	return bound;
}

int vyre_priority_allowed(const struct vyre_daemon_config *cfg)
{
	for (uint32_t i = 0; i < cfg->n_priority_rules; i++)
		if (cfg->priority_rules[i].max > 0)
			return 1;
	return cfg->priority_max > 0;
}

static void classes_update(struct vyre_classes *k)
{
	uint32_t n = 0;

	k->top = 0;
	k->low = VYRE_PRIORITY_MAX;
	for (uint32_t cls = 0; cls < VYRED_CLASSES; cls++) {
		if (!k->clients[cls])
			continue;
		n++;
		k->top = cls;
		if (cls < k->low)
			k->low = cls;
	}
	if (n == 0)
		k->low = 0;
	k->mixed = n > 1;
}

void vyre_classes_join(struct vyre_classes *k, uint32_t cls)
{
	k->clients[cls]++;
	classes_update(k);
}

void vyre_classes_leave(struct vyre_classes *k, uint32_t cls)
{
	k->clients[cls]--;
	classes_update(k);
}
