/* SPDX-License-Identifier: MIT */
/*
 * tools/vyred/probes.h - vyred's USDT probes (provider "vyre").
 *
 * The probes, their arguments and the order a batch fires them in are
 * documented in include/vyre/telemetry.h. Each probe has a semaphore that the
 * kernel raises while a tracer is attached, so building a probe's arguments
 * is guarded:
 *
 *	if (VYRE_PROBE_ENABLED(plan)) {
 *		struct vyre_tm_plan p = {.bytes = sizeof(p), ...};
 *		VYRE_PROBE_PLAN(&p);
 *	}
 *
 * Untraced, that is one load and a predicted-not-taken branch per batch.
 * Building with VYRE_PROBES=0 (make VYRE_PROBES=0) compiles every probe out,
 * for the overhead benchmark; the guarded code then folds away.
 *
 * Arguments are constrained to registers and constants ("nr") rather than
 * sys/sdt.h's default "nor": a memory operand such as a[i] would be described
 * with a scaled index, which libbpf 1.1 cannot decode.
 */
#ifndef VYRE_VYRED_PROBES_H
#define VYRE_VYRED_PROBES_H

#include <stdint.h>

#include "vyre/telemetry.h"

#ifndef VYRE_PROBES
#define VYRE_PROBES 1
#endif

/* Every probe of provider "vyre", for X-macros. */
#define VYRE_PROBE_NAMES(X)                                                                        \
	X(batch_drained)                                                                           \
	X(dedupe)                                                                                  \
	X(plan)                                                                                    \
	X(arena)                                                                                   \
	X(dispatch_begin)                                                                          \
	X(dispatch_end)                                                                            \
	X(complete)                                                                                \
	X(error)                                                                                   \
	X(backpressure)                                                                            \
	X(client_connect)                                                                          \
	X(client_disconnect)                                                                       \
	X(gpu_state)                                                                               \
	X(ops)                                                                                     \
	X(op_info)

#if VYRE_PROBES

#define _SDT_HAS_SEMAPHORES	1
#define STAP_SDT_ARG_CONSTRAINT nr
#include <sys/sdt.h>

#define VYRE_PROBE_DECLARE_SEMAPHORE(name) extern unsigned short vyre_##name##_semaphore;
VYRE_PROBE_NAMES(VYRE_PROBE_DECLARE_SEMAPHORE)
#undef VYRE_PROBE_DECLARE_SEMAPHORE

/* The kernel changes a semaphore behind the compiler's back: always reload it. */
#define VYRE_PROBE_ENABLED(name)                                                                   \
	__builtin_expect(*(volatile unsigned short *)&vyre_##name##_semaphore != 0, 0)

/* Identity functions that give each struct probe a type check. */
static inline const struct vyre_tm_drain *vyre_probe_drain_arg(const struct vyre_tm_drain *d)
{
	return d;
}
static inline const struct vyre_tm_plan *vyre_probe_plan_arg(const struct vyre_tm_plan *p)
{
	return p;
}
static inline const struct vyre_tm_arena *vyre_probe_arena_arg(const struct vyre_tm_arena *a)
{
	return a;
}
static inline const struct vyre_tm_complete *
vyre_probe_complete_arg(const struct vyre_tm_complete *c)
{
	return c;
}
static inline const struct vyre_tm_gpu *vyre_probe_gpu_arg(const struct vyre_tm_gpu *g)
{
	return g;
}
static inline const struct vyre_tm_ops *vyre_probe_ops_arg(const struct vyre_tm_ops *o)
{
	return o;
}
static inline const struct vyre_tm_op_info *vyre_probe_op_info_arg(const struct vyre_tm_op_info *o)
{
	return o;
}

#define VYRE_PROBE_BATCH_DRAINED(arg) STAP_PROBE1(vyre, batch_drained, vyre_probe_drain_arg(arg))
#define VYRE_PROBE_DEDUPE(batch_id, items, deduped)                                                \
	STAP_PROBE3(vyre, dedupe, (uint64_t)(batch_id), (uint32_t)(items), (uint32_t)(deduped))
#define VYRE_PROBE_PLAN(arg)  STAP_PROBE1(vyre, plan, vyre_probe_plan_arg(arg))
#define VYRE_PROBE_ARENA(arg) STAP_PROBE1(vyre, arena, vyre_probe_arena_arg(arg))
#define VYRE_PROBE_DISPATCH_BEGIN(batch_id, launches, backend, mode, gpu)                          \
	STAP_PROBE5(vyre, dispatch_begin, (uint64_t)(batch_id), (uint32_t)(launches),              \
		    (uint32_t)(backend), (uint32_t)(mode), (uint32_t)(gpu))
#define VYRE_PROBE_DISPATCH_END(batch_id, status, executed, dispatch_ns, backend, mode, gpu)       \
	STAP_PROBE7(vyre, dispatch_end, (uint64_t)(batch_id), (int32_t)(status),                   \
		    (uint32_t)(executed), (uint64_t)(dispatch_ns), (uint32_t)(backend),            \
		    (uint32_t)(mode), (uint32_t)(gpu))
#define VYRE_PROBE_COMPLETE(arg) STAP_PROBE1(vyre, complete, vyre_probe_complete_arg(arg))
#define VYRE_PROBE_ERROR(client_id, pid, code, count)                                              \
	STAP_PROBE4(vyre, error, (uint32_t)(client_id), (uint32_t)(pid), (int32_t)(code),          \
		    (uint32_t)(count))
#define VYRE_PROBE_BACKPRESSURE(client_id, pid, reason, depth)                                     \
	STAP_PROBE4(vyre, backpressure, (uint32_t)(client_id), (uint32_t)(pid),                    \
		    (uint32_t)(reason), (uint32_t)(depth))
#define VYRE_PROBE_CLIENT_CONNECT(client_id, pid, uid, domain_id, gpu, priority)                   \
	STAP_PROBE6(vyre, client_connect, (uint32_t)(client_id), (uint32_t)(pid), (uint32_t)(uid), \
		    (uint32_t)(domain_id), (uint32_t)(gpu), (uint32_t)(priority))
#define VYRE_PROBE_CLIENT_DISCONNECT(client_id, pid, reason)                                       \
	STAP_PROBE3(vyre, client_disconnect, (uint32_t)(client_id), (uint32_t)(pid),               \
		    (int32_t)(reason))
#define VYRE_PROBE_GPU_STATE(arg) STAP_PROBE1(vyre, gpu_state, vyre_probe_gpu_arg(arg))
#define VYRE_PROBE_OPS(arg)	  STAP_PROBE1(vyre, ops, vyre_probe_ops_arg(arg))
#define VYRE_PROBE_OP_INFO(arg)	  STAP_PROBE1(vyre, op_info, vyre_probe_op_info_arg(arg))

#else /* !VYRE_PROBES */

/* Swallows a probe's arguments so guarded code still compiles, then folds away. */
static inline void vyre_probe_discard(int unused, ...)
{
	(void)unused;
}

#define VYRE_PROBE_ENABLED(name)		    0
#define VYRE_PROBE_BATCH_DRAINED(arg)		    vyre_probe_discard(0, arg)
#define VYRE_PROBE_DEDUPE(batch_id, items, deduped) vyre_probe_discard(0, batch_id, items, deduped)
#define VYRE_PROBE_PLAN(arg)			    vyre_probe_discard(0, arg)
#define VYRE_PROBE_ARENA(arg)			    vyre_probe_discard(0, arg)
#define VYRE_PROBE_DISPATCH_BEGIN(batch_id, launches, backend, mode, gpu)                          \
	vyre_probe_discard(0, batch_id, launches, backend, mode, gpu)
#define VYRE_PROBE_DISPATCH_END(batch_id, status, executed, dispatch_ns, backend, mode, gpu)       \
	vyre_probe_discard(0, batch_id, status, executed, dispatch_ns, backend, mode, gpu)
#define VYRE_PROBE_COMPLETE(arg) vyre_probe_discard(0, arg)
#define VYRE_PROBE_ERROR(client_id, pid, code, count)                                              \
	vyre_probe_discard(0, client_id, pid, code, count)
#define VYRE_PROBE_BACKPRESSURE(client_id, pid, reason, depth)                                     \
	vyre_probe_discard(0, client_id, pid, reason, depth)
#define VYRE_PROBE_CLIENT_CONNECT(client_id, pid, uid, domain_id, gpu, priority)                   \
	vyre_probe_discard(0, client_id, pid, uid, domain_id, gpu, priority)
#define VYRE_PROBE_CLIENT_DISCONNECT(client_id, pid, reason)                                       \
	vyre_probe_discard(0, client_id, pid, reason)
#define VYRE_PROBE_GPU_STATE(arg) vyre_probe_discard(0, arg)
#define VYRE_PROBE_OPS(arg)	  vyre_probe_discard(0, arg)
#define VYRE_PROBE_OP_INFO(arg)	  vyre_probe_discard(0, arg)

#endif /* VYRE_PROBES */

#endif /* VYRE_VYRED_PROBES_H */
