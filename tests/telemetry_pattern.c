/* SPDX-License-Identifier: MIT */
/* The known batch of telemetry_pattern.h, fired through vyred's probe macros. */
#include <string.h>

#include "../tools/vyred/probes.h"
#include "telemetry_pattern.h"

void tm_fire_connect(void)
{
	if (VYRE_PROBE_ENABLED(client_connect)) {
		VYRE_PROBE_CLIENT_CONNECT(1, TM_PID1, 1000, 1, 0, 0);
		VYRE_PROBE_CLIENT_CONNECT(2, TM_PID2, 1000, 2, 1, TM_CLASS2);
	}
}

void tm_fire_disconnect(void)
{
	if (VYRE_PROBE_ENABLED(client_disconnect)) {
		VYRE_PROBE_CLIENT_DISCONNECT(1, TM_PID1, 0);
		VYRE_PROBE_CLIENT_DISCONNECT(2, TM_PID2, VYRE_E_DISCONNECTED);
	}
}

static void fire_drains(uint64_t k)
{
	struct vyre_tm_drain d = {.bytes = sizeof(d),
				  .client_id = 1,
				  .pid = TM_PID1,
				  .domain_id = 1,
				  .batch_id = k,
				  .items = TM_ITEMS1,
				  .sq_depth = TM_DEPTH1,
				  .sq_entries = TM_SQ_ENTRIES,
				  .cq_free = 100};
	VYRE_PROBE_BATCH_DRAINED(&d);
	d.client_id = 2;
	d.pid = TM_PID2;
	d.domain_id = 2;
	d.items = TM_ITEMS2;
	d.sq_depth = TM_DEPTH2;
	d.cq_free = 90;
	VYRE_PROBE_BATCH_DRAINED(&d);
}

static void fire_complete(uint64_t k)
{
	struct vyre_tm_complete c;
	memset(&c, 0, sizeof(c));
	c.bytes = sizeof(c);
	c.batch_id = k;
	c.items = TM_ITEMS1 + TM_ITEMS2;
	c.errors = 1;
	c.deduped = TM_DEDUPED;
	c.lat[11] = 4;
	c.lat[15] = 3;
	c.lat[k % 2 == 0 ? 25 : 15] += 1;
	c.max_ns = k % 2 == 0 ? TM_SLOW_NS : TM_FAST_MAX_NS;
	c.sum_ns = 4 * 1500 + 3 * 20000 + c.max_ns;
	c.gpu = (uint32_t)(k % 2);
	c.loop = k % 2 ? 2 : 0;
	c.priority = k % 2 ? TM_CLASS2 : 0;
	VYRE_PROBE_COMPLETE(&c);
}

static void fire_ops(uint64_t k)
{
	struct vyre_tm_ops o;
	memset(&o, 0, sizeof(o));
	o.bytes = sizeof(o);
	o.n_ops = 2;
	o.batch_id = k;
	o.gpu = (uint32_t)(k % 2);
	o.loop = k % 2 ? 2 : 0;
	o.op[0].op = VYRE_OP_ADD;
	o.op[0].items = TM_ADD_ITEMS;
	o.op[0].failed = 1;
	o.op[0].deduped = TM_DEDUPED;
	o.op[0].max_ns = k % 2 == 0 ? TM_SLOW_NS : TM_FAST_MAX_NS;
	o.op[0].sum_ns = 4 * 1500 + o.op[0].max_ns;
	o.op[0].drain_sum_ns = TM_ADD_ITEMS * TM_DRAIN_NS;
	o.op[1].op = TM_MOD_OP;
	o.op[1].items = TM_MOD_ITEMS;
	o.op[1].max_ns = TM_MOD_NS;
	o.op[1].sum_ns = TM_MOD_ITEMS * TM_MOD_NS;
	o.op[1].drain_sum_ns = TM_MOD_ITEMS * TM_DRAIN_NS;
	VYRE_PROBE_OPS(&o);
}

static void fire_op_info(void)
{
	struct vyre_tm_op_info r;
	memset(&r, 0, sizeof(r));
	r.bytes = sizeof(r);
	r.op = VYRE_OP_ADD;
	r.index = VYRE_OP_ADD;
	r.count = VYRE_OP_COUNT + 1;
	r.flags = VYRE_TM_OP_F_PURE;
	strcpy(r.name, "add");
	VYRE_PROBE_OP_INFO(&r);
	r.op = TM_MOD_OP;
	r.index = VYRE_OP_COUNT;
	r.flags = VYRE_TM_OP_F_MODULE | VYRE_TM_OP_F_PURE;
	strcpy(r.name, "crc32c");
	strcpy(r.module, "checksums");
	VYRE_PROBE_OP_INFO(&r);
}

void tm_fire_batch(uint64_t k)
{
	if (VYRE_PROBE_ENABLED(batch_drained))
		fire_drains(k);
	if (VYRE_PROBE_ENABLED(dedupe))
		VYRE_PROBE_DEDUPE(k, TM_ITEMS1 + TM_ITEMS2, TM_DEDUPED);
	if (VYRE_PROBE_ENABLED(plan)) {
		struct vyre_tm_plan p = {.bytes = sizeof(p),
					 .items = TM_ITEMS1 + TM_ITEMS2,
					 .batch_id = k,
					 .executed = TM_EXECUTED,
					 .deduped = TM_DEDUPED,
					 .invalid = TM_INVALID,
					 .groups = TM_GROUPS,
					 .barriers = TM_BARRIERS,
					 .launches = TM_LAUNCHES,
					 .launches_avoided = TM_AVOIDED,
					 .frontier_splits = TM_SPLITS,
					 .bytes_avoided = TM_BYTES_AVOIDED,
					 .plan_ns = TM_PLAN_NS,
					 .readback_bytes = TM_READBACK};
		VYRE_PROBE_PLAN(&p);
	}
	if (VYRE_PROBE_ENABLED(arena)) {
		struct vyre_tm_arena a = {.bytes = sizeof(a),
					  .shrunk = k % 4 == 0,
					  .batch_id = k,
					  .used = (1u << 20) + k,
					  .capacity = TM_ARENA_CAP,
					  .high_water = TM_ARENA_HIGH};
		VYRE_PROBE_ARENA(&a);
	}
	if (VYRE_PROBE_ENABLED(dispatch_begin))
		VYRE_PROBE_DISPATCH_BEGIN(k, TM_LAUNCHES, VYRE_TM_BACKEND_CPU, VYRE_TM_MODE_NONE,
					  k % 2);
	if (VYRE_PROBE_ENABLED(dispatch_end))
		VYRE_PROBE_DISPATCH_END(k, 0, TM_EXECUTED, TM_DISPATCH_NS, VYRE_TM_BACKEND_CPU,
					VYRE_TM_MODE_NONE, k % 2);
	if (VYRE_PROBE_ENABLED(complete))
		fire_complete(k);
	if (VYRE_PROBE_ENABLED(ops))
		fire_ops(k);
	if (VYRE_PROBE_ENABLED(error))
		VYRE_PROBE_ERROR(1, TM_PID1, VYRE_E_INVAL, 1);
	if (VYRE_PROBE_ENABLED(backpressure))
		VYRE_PROBE_BACKPRESSURE(2, TM_PID2, VYRE_TM_BP_SQ_FULL, TM_SQ_ENTRIES);
}

static void gpu_record(struct vyre_tm_gpu *g, uint32_t gpu, uint32_t loop)
{
	memset(g, 0, sizeof(*g));
	g->bytes = sizeof(*g);
	g->gpu = gpu;
	g->loop = loop;
	g->ordinal = gpu ? TM_GPU1_ORDINAL : TM_GPU0_ORDINAL;
	g->loops_per_gpu = 2;
	g->backend = VYRE_TM_BACKEND_CUDA;
	g->mode = VYRE_TM_MODE_PERSISTENT;
	g->time_ns = 1000000000ull + loop;
	strcpy(g->name, gpu ? TM_GPU1_NAME : TM_GPU0_NAME);
}

void tm_fire_gpu_state(void)
{
	struct vyre_tm_gpu g;
	if (VYRE_PROBE_ENABLED(op_info))
		fire_op_info();
	if (!VYRE_PROBE_ENABLED(gpu_state))
		return;
	gpu_record(&g, 0, 0);
	g.slots = 4;
	g.running = 2;
	g.domains = 1;
	g.clients = 1;
	g.batches = 100;
	g.items = 800;
	g.device_bytes_used = TM_GPU0_DEV_USED;
	g.device_bytes_max = TM_GPU0_DEV_MAX;
	VYRE_PROBE_GPU_STATE(&g);
	g.loop = 1;
	g.running = 1;
	g.domains = 2;
	g.clients = 3;
	g.batches = 50;
	g.items = 400;
	VYRE_PROBE_GPU_STATE(&g);
	gpu_record(&g, 1, 2);
	g.loops_per_gpu = 1;
	g.lost = 1;
	g.slots = 8;
	g.batches = 7;
	g.items = 56;
	g.device_bytes_max = TM_GPU1_DEV_MAX;
	VYRE_PROBE_GPU_STATE(&g);
}

void tm_fire_bad_layout(void)
{
	struct vyre_tm_complete c;
	memset(&c, 0, sizeof(c));
	c.bytes = 8;
	c.items = 1000;
	struct vyre_tm_plan p = {.bytes = sizeof(p) + 8, .items = 1000, .launches = 1000};
	struct vyre_tm_arena a = {.bytes = 0, .shrunk = 1};
	if (VYRE_PROBE_ENABLED(plan))
		VYRE_PROBE_PLAN(&p);
	if (VYRE_PROBE_ENABLED(arena))
		VYRE_PROBE_ARENA(&a);
	if (VYRE_PROBE_ENABLED(complete))
		VYRE_PROBE_COMPLETE(&c);
	struct vyre_tm_gpu g;
	gpu_record(&g, 0, 0);
	g.bytes = sizeof(g) - 8;
	g.items = 1000;
	if (VYRE_PROBE_ENABLED(gpu_state))
		VYRE_PROBE_GPU_STATE(&g);
	/* the ops layout before op[] grew, and an op_info one name longer */
	struct vyre_tm_ops o;
	memset(&o, 0, sizeof(o));
	o.bytes = sizeof(o) - 40;
	o.n_ops = 1;
	o.op[0].op = VYRE_OP_ADD;
	o.op[0].items = 1000;
	if (VYRE_PROBE_ENABLED(ops))
		VYRE_PROBE_OPS(&o);
	struct vyre_tm_op_info r;
	memset(&r, 0, sizeof(r));
	r.bytes = sizeof(r) + 32;
	strcpy(r.name, "wrong");
	if (VYRE_PROBE_ENABLED(op_info))
		VYRE_PROBE_OP_INFO(&r);
}
