/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backends of one process that share a device (vyred runs one per
 * event loop). They share its primary context, and some driver calls wait
 * until nothing runs anywhere in that context: cuMemHostRegister and
 * cuMemHostUnregister among them. A resident grid never ends by itself, so
 * one backend's heap (un)registration would wait for every other backend's
 * grid for ever. Such calls therefore run "exclusive": every member's
 * operation lock is taken (so no member is inside submit or reap), every
 * resident grid of the device is stopped (each drains the doorbells posted
 * before it stops, so in-flight batches finish), the call is made, and the
 * locks are released; each member's next submit starts its grid again.
 *
 * The members live in a process-wide list because the context they share
 * is process-wide. Lock order: the list's lock, then members' operation
 * locks in list order; submit and reap take only their own.
 */
#include "cuda_group.h"

#include <pthread.h>

static pthread_mutex_t group_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vyre_backend *members;

void vyre_cuda_group_join(struct vyre_backend *b)
{
	pthread_mutex_lock(&group_lock);
	b->group_next = members;
	members = b;
	b->in_group = 1;
	pthread_mutex_unlock(&group_lock);
}

static void leave_locked(struct vyre_backend *b)
{
	for (struct vyre_backend **p = &members; *p; p = &(*p)->group_next) {
		if (*p == b) {
			*p = b->group_next;
			break;
		}
	}
	b->in_group = 0;
}

static int same_device(const struct vyre_backend *a, const struct vyre_backend *b)
{
	return a == b || (a->dv.ordinal == b->dv.ordinal && a->dv.ctx == b->dv.ctx);
}

int vyre_cuda_group_exclusive(struct vyre_backend *b, int (*fn)(struct vyre_backend *, void *),
			      void *arg, int leave)
{
	int err;

	pthread_mutex_lock(&group_lock);
	for (struct vyre_backend *m = members; m; m = m->group_next)
		if (m != b && same_device(m, b))
			pthread_mutex_lock(&m->op_lock);
	pthread_mutex_lock(&b->op_lock);
	for (struct vyre_backend *m = members; m; m = m->group_next)
		if (m != b && same_device(m, b) && !m->dead)
			vyre_cuda_quiesce(m);
	err = fn(b, arg);
	pthread_mutex_unlock(&b->op_lock);
	for (struct vyre_backend *m = members; m; m = m->group_next)
		if (m != b && same_device(m, b))
			pthread_mutex_unlock(&m->op_lock);
	if (leave && b->in_group)
		leave_locked(b);
	pthread_mutex_unlock(&group_lock);
	return err;
}
