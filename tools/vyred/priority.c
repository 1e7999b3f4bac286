/* SPDX-License-Identifier: MIT */
/* Priority classes: a client's bound under the --priority rules, the per-loop counts (priority.h).
 */
#include "priority.h"

static int member(gid_t gid, const gid_t *groups, uint32_t n_groups, uint32_t want)
{
	if (gid == want)
		return 1;
	for (uint32_t g = 0; g < n_groups; g++)
		if (groups[g] == want)
			return 1;
	return 0;
}

uint32_t vyre_priority_bound(const struct vyre_daemon_config *cfg, uid_t uid, gid_t gid,
			     const gid_t *groups, uint32_t n_groups)
{
	uint32_t bound = cfg->priority_max;

	for (uint32_t i = 0; i < cfg->n_priority_rules; i++) {
		const struct vyre_priority_rule *r = &cfg->priority_rules[i];

		if (r->max > bound &&
		    (r->is_gid ? member(gid, groups, n_groups, r->id) : uid == r->id))
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
