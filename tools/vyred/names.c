/* SPDX-License-Identifier: MIT */
/* Buffer names per (domain, name), one entry per handle slot (names.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../ring/handles.h"
#include "names.h"

int vyre_names_init(struct vyre_names *t, uint32_t max_buffers)
{
	struct timespec ts;
	uint32_t chains = 16;

	memset(t, 0, sizeof(*t));
	t->n_slots = max_buffers > VYRE_HANDLES_MAX ? VYRE_HANDLES_MAX + 1 : max_buffers + 1;
	while (chains < t->n_slots)
		chains *= 2;
	t->slot = calloc(t->n_slots, sizeof(*t->slot));
	t->chain = calloc(chains, sizeof(*t->chain));
	if (!t->slot || !t->chain) {
		vyre_names_fini(t);
		return VYRE_E_NOMEM;
	}
	t->mask = chains - 1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t->seed = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^ (uint32_t)getpid();
	return 0;
}

void vyre_names_fini(struct vyre_names *t)
{
	free(t->slot);
	free(t->chain);
	memset(t, 0, sizeof(*t));
}

static uint32_t hash(const struct vyre_names *t, uint32_t domain, const char *name, uint32_t len)
{
	uint32_t h = (2166136261u ^ t->seed) * 16777619u;

	for (int i = 0; i < 4; i++)
		h = (h ^ ((domain >> (8 * i)) & 0xffu)) * 16777619u;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return (h ^ (h >> 15)) & t->mask;
}

static int same(const struct vyre_name_entry *e, uint32_t domain, const char *name, uint32_t len)
{
	return e->domain == domain && e->len == len && memcmp(e->name, name, len) == 0;
}

uint32_t vyre_names_find(const struct vyre_names *t, uint32_t domain, const char *name,
			 uint32_t len)
{
	for (uint32_t s = t->chain[hash(t, domain, name, len)]; s; s = t->slot[s].next)
		if (same(&t->slot[s], domain, name, len))
			return t->slot[s].handle;
	return 0;
}

void vyre_names_add(struct vyre_names *t, uint32_t domain, const char *name, uint32_t len,
		    uint32_t handle, uint32_t s)
{
	uint32_t *head = &t->chain[hash(t, domain, name, len)];
	struct vyre_name_entry *e = &t->slot[s];

	e->domain = domain;
	e->handle = handle;
	e->len = (uint8_t)len;
	memcpy(e->name, name, len);
	e->next = *head;
	*head = s;
}

int vyre_names_remove(struct vyre_names *t, uint32_t s)
{
	if (s == 0 || s >= t->n_slots || t->slot[s].domain == 0)
		return 0;
	struct vyre_name_entry *e = &t->slot[s];
	uint32_t *link = &t->chain[hash(t, e->domain, e->name, e->len)];

	while (*link != s)
		link = &t->slot[*link].next;
	*link = e->next;
	memset(e, 0, sizeof(*e));
	return 1;
}

const struct vyre_name_entry *vyre_names_next(const struct vyre_names *t, uint32_t domain,
					      uint32_t cursor, uint32_t limit, uint32_t budget,
					      uint32_t *next)
{
	uint32_t s = cursor ? cursor : 1;

	if (limit > t->n_slots)
		limit = t->n_slots;
	for (; s < limit && budget; s++, budget--)
		if (t->slot[s].domain == domain) {
			*next = s + 1;
			return &t->slot[s];
		}
	*next = s < limit ? s : 0;
	return NULL;
}

uint32_t vyre_names_drop_domain(struct vyre_names *t, uint32_t domain, uint32_t limit)
{
	uint32_t dropped = 0;

	if (limit > t->n_slots)
		limit = t->n_slots;
	for (uint32_t s = 1; s < limit; s++)
		if (t->slot[s].domain == domain)
			dropped += (uint32_t)vyre_names_remove(t, s);
	return dropped;
}
