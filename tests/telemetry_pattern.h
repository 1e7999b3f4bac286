/* SPDX-License-Identifier: MIT */
/*
 * tests/telemetry_pattern.h - a batch of known probe values, fired through
 * tools/vyred/probes.h exactly as vyred fires them, so the BPF program,
 * vyre-top and the bpftrace scripts can be checked against exact numbers.
 *
 * Batch k (counted from 1) has two clients:
 *   client 1 (pid 4101, domain 1): 3 items, SQ 5/64 left, one failed item
 *   client 2 (pid 4102, domain 2): 5 items, SQ 48/64 left, one back-pressure
 * 8 items, 2 deduped, 1 invalid, 5 executed, 3 groups, 2 barriers, 2
 * launches, 1 launch avoided, 1 frontier split, 4096 bytes avoided, 3000 ns
 * planning, 5000 ns dispatch on the CPU backend, arena shrunk when
 * k % 4 == 0; latencies: 4 items in bucket 11,
 * 3 in bucket 15, and one in bucket 25 (20 ms: a slow batch) when k is even,
 * else in bucket 15. Even batches run on GPU 0 (loop 0), odd ones on GPU 1
 * (loop 2), and even ones are of priority class 0, odd ones of class 2.
 * Client 1 connects on GPU 0 in class 0, client 2 on GPU 1 in class 2.
 * ops splits each batch's 8 CQEs over two ops: ADD 5 items (the failed
 * one, both deduplicated ones, the 4 of bucket 11 at 1500 ns and the
 * batch's slowest), TM_MOD_OP 3 items at 20000 ns; drain -> complete
 * TM_DRAIN_NS each.
 *
 * tm_fire_gpu_state fires one gpu_state per loop of two GPUs:
 *   loop 0, GPU 0 (ordinal 3, "Fixture GPU A", CUDA persistent): 4 slots,
 *           2 running, 1 domain, 1 client, 100 batches, 800 items,
 *           1 MiB of 1 GiB device memory
 *   loop 1, GPU 0: 4 slots, 1 running, 2 domains, 3 clients, 50 batches,
 *           400 items, the same device memory (a GPU-wide figure)
 *   loop 2, GPU 1 (ordinal 5, "Fixture GPU B"), lost: 8 slots, 0 running,
 *           0 domains, 0 clients, 7 batches, 56 items, 0 of 2 GiB
 * and op_info for ADD ("add") and TM_MOD_OP ("crc32c" of module
 * "checksums", pure).
 */
#ifndef VYRE_TESTS_TELEMETRY_PATTERN_H
#define VYRE_TESTS_TELEMETRY_PATTERN_H

#include <stdint.h>

#define TM_PID1		 4101u
#define TM_PID2		 4102u
#define TM_CLASS2	 2u
#define TM_ITEMS1	 3u
#define TM_ITEMS2	 5u
#define TM_DEPTH1	 5u
#define TM_DEPTH2	 48u
#define TM_SQ_ENTRIES	 64u
#define TM_DEDUPED	 2u
#define TM_INVALID	 1u
#define TM_EXECUTED	 5u
#define TM_GROUPS	 3u
#define TM_BARRIERS	 2u
#define TM_LAUNCHES	 2u
#define TM_AVOIDED	 1u
#define TM_SPLITS	 1u
#define TM_BYTES_AVOIDED 4096u
#define TM_READBACK	 2048u
#define TM_PLAN_NS	 3000u
#define TM_DISPATCH_NS	 5000u
#define TM_SLOW_NS	 20000000u /* the even batches' slowest item */
#define TM_FAST_MAX_NS	 20000u
#define TM_ARENA_CAP	 (4u << 20)
#define TM_ARENA_HIGH	 (2u << 20)
#define TM_GPU0_ORDINAL	 3u
#define TM_GPU1_ORDINAL	 5u
#define TM_GPU0_NAME	 "Fixture GPU A"
#define TM_GPU1_NAME	 "Fixture GPU B"
#define TM_GPU0_DEV_USED (1ull << 20)
#define TM_GPU0_DEV_MAX	 (1ull << 30)
#define TM_GPU1_DEV_MAX	 (2ull << 30)
#define TM_MOD_OP	 0x8000abcdu
#define TM_ADD_ITEMS	 5u
#define TM_MOD_ITEMS	 3u
#define TM_MOD_NS	 20000u
#define TM_DRAIN_NS	 700u

/* Fire client_connect for both clients. */
void tm_fire_connect(void);
/* Fire every in-batch probe for batch @k (>= 1), plus one back-pressure. */
void tm_fire_batch(uint64_t k);
/* Fire client_disconnect for both clients. */
void tm_fire_disconnect(void);
/* Fire gpu_state for the three loops above. */
void tm_fire_gpu_state(void);
/* Fire plan, arena, complete, gpu_state, ops and op_info with a size field not theirs. */
void tm_fire_bad_layout(void);

#endif /* VYRE_TESTS_TELEMETRY_PATTERN_H */
