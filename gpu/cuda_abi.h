/* SPDX-License-Identifier: MIT */
/*
 * gpu/cuda_abi.h - the layouts shared by the host side of the CUDA backend
 * (C) and gpu/megakernel.cu (CUDA C++). Everything here lives in pinned,
 * device-mapped host memory or in kernel parameters, so sizes are pinned.
 *
 * A batch is lowered into units (gpu/cuda_lower.h): a unit is an item, or a
 * chunk of an elementwise item, with device addresses already resolved. A
 * stage (one plan group) lists its block units (run by a whole thread block)
 * then its warp units (run by one warp); stages of a launch are separated by
 * a device-wide barrier.
 */
#ifndef VYRE_GPU_CUDA_ABI_H
#define VYRE_GPU_CUDA_ABI_H

#include <stdint.h>

#define VYRE_MK_THREADS		  1024u /* threads per block, every kernel */
#define VYRE_MK_WARPS		  (VYRE_MK_THREADS / 32u)
#define VYRE_MK_PREFETCH	  32u /* units and stages a launch reads in its first round trip */
#define VYRE_MK_CHUNK_WORDS	  2048u /* elementwise items are split into units of this many words */
#define VYRE_MK_WARP_REDUCE_WORDS 8192u /* SUM/MAX over more words run on a whole block */

/*
 * DFA_SCAN (gpu/mk_dfa.cuh): an item's bytes are cut into chunks, one a
 * thread; each chunk guesses its start state by walking up to
 * VYRE_MK_DFA_WARMUP bytes before it from the table's start state, and the
 * guesses are then checked in order and wrong chunks walked again. Items of
 * at most VYRE_MK_DFA_WARP_BYTES run on one warp, up to
 * VYRE_MK_DFA_BLOCK_BYTES on one block, larger ones are split into parts
 * (one block each, at most VYRE_MK_DFA_MAX_PARTS) and a join.
 */
#define VYRE_MK_DFA_WARMUP	32u
#define VYRE_MK_DFA_WARP_BYTES	(16u << 10)
#define VYRE_MK_DFA_BLOCK_BYTES (512u << 10)
#define VYRE_MK_DFA_PART_MIN	(256u << 10) /* a part scans at least this much */
#define VYRE_MK_DFA_PART_MAX	(8u << 20)   /* parts beyond one per block when larger */
#define VYRE_MK_DFA_MAX_PARTS	1024u
/*
 * Dynamic shared memory a block asks for (DFA tables of up to 144 states):
 * with the static 27 KiB the SM keeps its 100 KiB shared-memory carveout,
 * so 156 KiB of L1 still cache the tables read from global memory (H100,
 * 2026-11-24: a 96 KiB ask, carveout 132 KiB, scanned 1000 literals at 341
 * GB/s against 368 with none; all 200 KiB of it, 131 GB/s).
 */
#define VYRE_MK_DFA_SHARED_BYTES (72u << 10)

/* vyre_mk_unit.op: the operation in the low byte, flags above it. */
#define VYRE_MK_OP_MASK 0xffu
#define VYRE_MK_SEQUENTIAL                                                                         \
	(1u << 8) /* one thread, byte loads: unaligned or partially overlapping */
/*
 * DFA_SCAN and DFA_SCAN_COUNTED: the table is a device buffer validated since
 * it was last written, so the unit skips the validation pass (every lookup is
 * still clamped, so a table rewritten behind its back cannot fault).
 */
#define VYRE_MK_TABLE_TRUSTED (1u << 9)
/*
 * A split DFA item: part `param` (a block unit) scans its segment of
 * `reserved` bytes and leaves {guessed start, end state, count, flags} in
 * result record slot + 1 + param; the join (a block unit of the next stage,
 * `param` = the number of parts) checks the parts in order, walks again
 * those whose guess was wrong, and writes the item's result (record slot).
 */
#define VYRE_MK_DFA_PART (1u << 10)
/*
 * DFA_REPORT and DFA_REPORT_COUNTED (the bit DFA_PART is on DFA_SCAN units):
 * the table's report section was found valid since the table was last
 * written (VYRE_EXEC_REPORT_TRUSTED), so the unit skips its whole-section
 * check; every out_first value is still clamped to n_out.
 */
#define VYRE_MK_REPORT_TRUSTED (1u << 10)
/*
 * DFA_REPORT and DFA_REPORT_COUNTED: the item continues a stream, whose
 * address is in its result record until it writes its outcome there; without
 * the flag the unit never reads the record (host memory: a round trip over
 * PCIe an item). The bit is VYRE_MK_MODULE_TABLE's, which only module units
 * carry.
 */
#define VYRE_MK_REPORT_STREAM (1u << 16)
#define VYRE_MK_DFA_JOIN      (1u << 11)
/*
 * DFA_SCAN and DFA_SCAN_COUNTED (and a DFA_REPORT* warp unit, which stages
 * it the same way): the input is host memory, read over PCIe.
 * The unit stages it through shared memory in tiles that whole warps load
 * in address order (full 128-byte lines a request), and walks each tile
 * from there; without the flag every thread reads its own chunk directly.
 */
#define VYRE_MK_DFA_HOST_IN (1u << 15)
/* Host-input staging: a block's tile (what the table leaves of the dynamic
 * shared memory, in whole KiB) is used only from this size; a warp's is its
 * 32nd of the dynamic shared memory in multiples of 512 bytes. A tile's
 * chunks are at least VYRE_MK_DFA_STAGE_CHUNK bytes. */
#define VYRE_MK_DFA_STAGE_MIN	(16u << 10)
#define VYRE_MK_DFA_STAGE_CHUNK 64u
/*
 * The item continues a chain (VYRE_EXEC_AFTER_PREV) after one whose outcome
 * is known only on the device: result record `reserved` (written in an
 * earlier stage) says whether it failed. Then the unit does nothing; a unit
 * with a result record writes VYRE_E_CANCELED there. Never on a DFA part
 * (its join checks).
 */
#define VYRE_MK_AFTER_PREV (1u << 12)
/*
 * On-chip handoff (docs/design.md 7.6, gpu/mk_fuse.cuh): a run of block
 * units (warp units when it ends in a DFA_SCAN_COUNTED of at most
 * VYRE_MK_DFA_WARP_BYTES), consecutive in their stage, that one block (warp)
 * runs as one: the first
 * carries HANDOFF_OUT, each later one HANDOFF_IN (and HANDOFF_OUT when it
 * hands on too). The block that picks the first runs them all, each handed
 * off output streamed through shared memory, never written to memory; a
 * block that picks a HANDOFF_IN unit skips it. Members: a decoder or
 * BYTEMAP first, BYTEMAPs, then BYTEMAP or DFA_SCAN_COUNTED, at most
 * VYRE_MK_FUSE_MAX, each with the unit it would have alone.
 */
#define VYRE_MK_HANDOFF_OUT (1u << 13)
#define VYRE_MK_HANDOFF_IN  (1u << 14)
#define VYRE_MK_FUSE_MAX    8u

/*
 * A module op's unit (docs/design.md 6.7, gpu/cuda_modules.h): a block runs
 * it through vyre_module_dispatch. Its index in vyre_op_modules_all() is the
 * op word from VYRE_MK_MODULE_SHIFT up; count: the input's bytes (a counted
 * input: the buffer's, length word included), aux: the output's; param: the
 * table's bytes with VYRE_MK_MODULE_TABLE, else the item's param.
 */
#define VYRE_MK_OP_MODULE      0x80u
#define VYRE_MK_MODULE_TABLE   (1u << 16)
#define VYRE_MK_MODULE_COUNTED (1u << 17)
#define VYRE_MK_MODULE_SHIFT   18u
/* Scratch words a stream module op gets past a fused run's tile (VYRE_OP_DEV_SCRATCH_MIN). */
#define VYRE_MK_MODULE_SCRATCH_WORDS (8192u / 4u)
/*
 * Dynamic shared memory a backend with module ops needs: a module unit's
 * scratch, and a fused run's tile (16 KiB), its run and control words and
 * a stream module's scratch past it.
 */
#define VYRE_MK_MODULE_SMEM_MIN (32u << 10)

struct vyre_mk_unit {
	uint32_t op;	/* enum vyre_op | VYRE_MK_* flags */
	uint32_t param; /* the immediate; the byte ops (gpu/mk_decode.cuh): table bytes */
	uint32_t count; /* words (FILL: out words; COPY..MUL: min words; SUM/MAX: in words), DFA and
			   the byte ops: in bytes */
	uint32_t aux;	/* DFA: table bytes; the byte ops: out bytes; else 0 */
	uint32_t slot;	/* result record index (SUM, MAX, DFA, the byte ops), else 0 */
	uint32_t reserved; /* DFA part: the bytes of a part; VYRE_MK_AFTER_PREV: the record to
			      check; else 0 */
	uint64_t in;	   /* device addresses */
	uint64_t out;
	uint64_t table;
};

struct vyre_mk_stage {
	uint32_t first_unit; /* relative to the launch's first unit */
	uint32_t n_block_units;
	uint32_t n_warp_units;
	uint32_t reserved;
};

/*
 * One result record per SUM/MAX/DFA/byte-op item, and one more per part of a
 * split DFA item; the host fills every other item's.
 */
struct vyre_mk_result {
	int32_t status;
	uint32_t reserved;
	uint64_t result;
};

/* vyre_mk_launch_args.flags */
#define VYRE_MK_LAUNCH_EXIT   (1u << 0) /* persistent kernel: leave the loop */
#define VYRE_MK_LAUNCH_FAULT  (1u << 1) /* test hook: store to an unmapped address */
#define VYRE_MK_LAUNCH_STALL  (1u << 2) /* test hook: block 1 never reaches the barrier */
#define VYRE_MK_LAUNCH_INLINE (1u << 3) /* persistent: one stage, its units in the doorbell */
#define VYRE_MK_LAUNCH_IMMEDIATE                                                                   \
	(1u << 4) /* persistent: small items, their data in the doorbell and the completion */
#define VYRE_MK_LAUNCH_ORDERED                                                                     \
	(1u << 5) /* pool: starts once every earlier launch of the lane finished */
/*
 * Pool with VYRE_MK_POOL_SELF: an INLINE launch of module units alone
 * whose outcomes go to the completion slot, not to result records (see
 * the doorbell below); the poller's own block runs it once nothing else
 * of its lane is in flight, never a team.
 */
#define VYRE_MK_LAUNCH_CPL (1u << 6)

/* A launch: what one cuLaunchKernel, or one persistent-mode doorbell, runs. */
struct vyre_mk_launch_args {
	uint64_t units;	  /* device address of this launch's first unit */
	uint64_t stages;  /* device address of this launch's first stage */
	uint64_t results; /* device address of the batch's result records */
	uint32_t n_stages;
	uint32_t n_units;
	uint32_t n_blocks; /* blocks that take part; 1 = one block, no device-wide barrier */
	uint32_t flags;
};

/*
 * Persistent-mode doorbell: one 512-byte slot per launch in a ring of
 * VYRE_MK_RING_SLOTS, read by one warp in one round trip (two words a lane,
 * both loads in flight). Each 8-byte word is (seq << 32 | data): PCIe
 * promises 8-byte atomicity only, so every word says by itself whether it is
 * current (the NCCL "LL" idea) and the host never needs the device to see
 * its stores in order.
 *
 * Header data: [0..1] slab address, [2] units offset, [3] stages offset (an
 * INLINE launch: its block units), [4] results offset (an IMMEDIATE launch:
 * its data words), [5] n_stages, [6] n_blocks | flags << 16, [7] n_units
 * (an IMMEDIATE launch: its items).
 *
 * An INLINE launch (one stage, one block, at most VYRE_MK_INLINE_UNITS
 * units) carries its units in the data of words 8.. (12 words a unit), which
 * saves the round trip that fetches descriptors.
 *
 * An IMMEDIATE launch is a batch of k small, independent items (one plan
 * group) and no device address at all: header word [4] holds the data words
 * that follow the header and [7] holds k. Words 8.. hold the k descriptors,
 * VYRE_MK_IMM_DESC_WORDS each: VYRE_MK_IMM_DESC(op, count, in_at, cpl_at)
 * (count: words written, or read by SUM/MAX) and param; after them come the
 * items' input words, which the host copied out of the heap, item after
 * item: item j's input word i is slot word in_at + i. Warp 0 of block 0 runs
 * the items while polling (any order: they are independent) and posts their
 * outcome to the completion slot of the same index, again one
 * self-validating word each: item j's [cpl_at] status, [cpl_at + 1] result,
 * [cpl_at + 2..] its output words (none for SUM/MAX), which the host then
 * stores into the heap. The host packs the completion words from word 0
 * without gaps. Neither direction waits for a heap round trip or a
 * system-scope fence, which is most of a small item's latency over PCIe.
 *
 * A module batch (VYRE_MK_LAUNCH_CPL: INLINE, one stage of at most
 * VYRE_MK_INLINE_UNITS block units, each a module item) keeps its operands
 * in the heap; only its units ride in the doorbell, as any INLINE launch's.
 * The poller's block runs them with unit i's result record in shared
 * memory (the slot field is ignored), fences at system scope (the module's
 * heap writes before the outcome) and posts unit i's outcome to the
 * completion slot: [3i] status, [3i + 1] and [3i + 2] the result's low and
 * high halves. The host takes the outcome there, without `done` or the
 * slab; the header still names the slab, which the device does not read.
 */
#define VYRE_MK_RING_SLOTS	 256u
#define VYRE_MK_SLOT_WORDS	 64u
#define VYRE_MK_HEADER_WORDS	 8u
#define VYRE_MK_UNIT_WORDS	 12u
#define VYRE_MK_INLINE_UNITS	 4u
#define VYRE_MK_IMM_DESC_WORDS	 2u
#define VYRE_MK_CPL_HEADER_WORDS 2u /* per item: status, result */
/* IMMEDIATE: the slot's words after the header (descriptors and inputs) */
#define VYRE_MK_IMM_DATA_WORDS (VYRE_MK_SLOT_WORDS - VYRE_MK_HEADER_WORDS)
/* IMMEDIATE: the most items, input words and output words of one launch */
#define VYRE_MK_IMM_MAX_ITEMS (VYRE_MK_IMM_DATA_WORDS / VYRE_MK_IMM_DESC_WORDS)
#define VYRE_MK_IMM_IN_WORDS  (VYRE_MK_IMM_DATA_WORDS - VYRE_MK_IMM_DESC_WORDS)
#define VYRE_MK_IMM_OUT_WORDS (VYRE_MK_SLOT_WORDS - VYRE_MK_CPL_HEADER_WORDS)
/* VYRE_MK_LAUNCH_CPL: completion words a module unit's outcome takes */
#define VYRE_MK_CPL_MODULE_WORDS 3u
/* IMMEDIATE descriptor word 0: op, count (<= 62) and slot word indices (< 64), a byte each */
#define VYRE_MK_IMM_DESC(op, count, in_at, cpl_at)                                                 \
	((op) | (count) << 8 | (in_at) << 16 | (uint32_t)(cpl_at) << 24)
#define VYRE_MK_IMM_OP(d)     ((d)&0xffu)
#define VYRE_MK_IMM_COUNT(d)  (((d) >> 8) & 0xffu)
#define VYRE_MK_IMM_IN_AT(d)  (((d) >> 16) & 0xffu)
#define VYRE_MK_IMM_CPL_AT(d) ((d) >> 24)

/* vyre_mk_ctrl.state: why the persistent kernel stopped (0 while it runs). */
#define VYRE_MK_STATE_RUNNING	0u
#define VYRE_MK_STATE_EXITED	1u /* told to by an EXIT launch */
#define VYRE_MK_STATE_HEARTBEAT 2u /* the host heartbeat stopped moving */
#define VYRE_MK_STATE_WATCHDOG	3u /* a device-wide barrier made no progress */
#define VYRE_MK_STATE_HALTED	4u /* another lane's watchdog fired: the host restarts the grid */

/* Control page, pinned and device-mapped. Host-written and device-written words on own lines. */
struct vyre_mk_ctrl {
	uint32_t heartbeat; /* host: bumped by the heartbeat thread */
	uint32_t pad0[15];
	uint32_t done;	 /* device: launches completed (seq of the last one + 1) */
	uint32_t state;	 /* device: VYRE_MK_STATE_* */
	uint32_t detail; /* device: the block that tripped the watchdog */
	/* with the pool, after a watchdog trip: the launch that tripped, and which
	 * launches done + 1 + i (bit i) finished anyway (docs/cuda.md, "The pool") */
	uint32_t trip_seq;
	uint32_t after_done[2];
	/* pool, written when the poller stops: its launches handed to teams and
	 * their summed ns from handed to begun, begun to ended, ended to done */
	uint64_t pool_ns[3];
	uint32_t pool_launches;
	uint32_t pool_self; /* and its one-block launches its own block ran (VYRE_MK_POOL_SELF) */
	uint32_t pad1[2];
};

/* Device-memory state of the kernels; zeroed before each (re)start. */
struct vyre_mk_devstate {
	uint32_t bar_count;
	uint32_t bar_gen;
	uint32_t abort;
	uint32_t progress;
	uint32_t go_seq; /* persistent: launches published to blocks other than 0 */
	uint32_t pad[3];
	struct vyre_mk_launch_args go;
};

/*
 * The persistent grid is split into up to VYRE_MK_MAX_LANES lanes: lane l is
 * blocks [lane_first[l], lane_first[l + 1]) (the last one runs to the end of
 * the grid) and has its own control page, doorbell ring, completion ring and
 * device state, each the l-th of an array at the address given here.
 */
#define VYRE_MK_MAX_LANES 16u

/*
 * The pool (docs/cuda.md "The pool"): each lane's first block only reads
 * doorbells and hands each launch to a team of the grid's idle blocks, so
 * launches of every slot run side by side on the whole grid. Device memory,
 * zeroed at every kernel start: VYRE_MK_POOL_TEAMS teams a lane, then a
 * mailbox a block, then the idle bits, then the count of pollers stopped.
 */
#define VYRE_MK_POOL_TEAMS	64u /* launches of one lane in flight at once */
#define VYRE_MK_POOL_MAX_BLOCKS 1024u
#define VYRE_MK_POOL_SPREAD	4u /* default of vyre_mk_persist_args.pool_spread */
/* vyre_mk_persist_args.pool_flags: a one-block launch that finds nothing of its
 * lane in flight runs on the poller's own block, not on a team */
#define VYRE_MK_POOL_SELF (1u << 0)

#define VYRE_MK_TEAM_IDLE     0u
#define VYRE_MK_TEAM_RUNNING  1u
#define VYRE_MK_TEAM_FINISHED 2u
#define VYRE_MK_TEAM_ABORTED  3u

struct vyre_mk_team {
	struct vyre_mk_unit
	    units[VYRE_MK_INLINE_UNITS]; /* an inline launch's units (16-byte loads) */
	struct vyre_mk_stage stage;	 /* and its stage */
	struct vyre_mk_devstate ds; /* the team's barrier, abort and progress; go = the launch */
	uint32_t n_blocks;
	uint32_t seq;
	uint32_t state; /* VYRE_MK_TEAM_* */
	uint32_t pad;
	/* %globaltimer (ns) when the poller handed it out, rank 0 began, rank 0 ended */
	uint64_t t_handed, t_began, t_ended;
};

#define VYRE_MK_POOL_MAIL_OFF                                                                      \
	((uint64_t)VYRE_MK_POOL_TEAMS * VYRE_MK_MAX_LANES * sizeof(struct vyre_mk_team))
#define VYRE_MK_POOL_BITS_OFF (VYRE_MK_POOL_MAIL_OFF + 8ull * VYRE_MK_POOL_MAX_BLOCKS)
#define VYRE_MK_POOL_EXIT_OFF (VYRE_MK_POOL_BITS_OFF + VYRE_MK_POOL_MAX_BLOCKS / 8)
#define VYRE_MK_POOL_BYTES    (VYRE_MK_POOL_EXIT_OFF + 64)

struct vyre_mk_persist_args {
	uint64_t ctrl;		   /* n_lanes x struct vyre_mk_ctrl */
	uint64_t ring;		   /* n_lanes doorbell rings */
	uint64_t cpl;		   /* n_lanes completion rings (IMMEDIATE launches) */
	uint64_t devstate;	   /* n_lanes x struct vyre_mk_devstate */
	uint64_t heartbeat_cycles; /* exit when the heartbeat is still this long */
	uint64_t watchdog_cycles;  /* abort when a barrier sees no progress this long */
	uint32_t n_lanes;
	uint32_t lane_first[VYRE_MK_MAX_LANES];
	uint32_t start_seq[VYRE_MK_MAX_LANES]; /* each lane's next launch */
	uint32_t pool_spread; /* a team takes up to this many times the blocks it asked for */
	uint64_t
	    pool; /* the pool (VYRE_MK_POOL_BYTES), or 0: each lane runs one launch at a time */
	uint32_t pool_flags; /* VYRE_MK_POOL_SELF */
	uint32_t pad;
};

struct vyre_mk_launch_kargs {
	struct vyre_mk_launch_args launch;
	uint64_t ctrl;
	uint64_t devstate;
	uint64_t watchdog_cycles;
};

#ifdef __cplusplus
static_assert(sizeof(struct vyre_mk_unit) == 48, "unit is 48 bytes");
static_assert(sizeof(struct vyre_mk_stage) == 16, "stage is 16 bytes");
static_assert(sizeof(struct vyre_mk_result) == 16, "result is 16 bytes");
static_assert(sizeof(struct vyre_mk_launch_args) == 40, "launch args are 40 bytes");
static_assert(sizeof(struct vyre_mk_ctrl) == 128, "ctrl is two lines");
static_assert(sizeof(struct vyre_mk_team) % 16 == 0, "teams stay aligned");
static_assert(VYRE_MK_HEADER_WORDS + VYRE_MK_UNIT_WORDS * VYRE_MK_INLINE_UNITS <=
		  VYRE_MK_SLOT_WORDS,
	      "inline units fit a slot");
static_assert(VYRE_MK_SLOT_WORDS <= 256, "IMMEDIATE counts and indices fit a byte");
static_assert(VYRE_MK_INLINE_UNITS <= 32 / VYRE_MK_CPL_MODULE_WORDS,
	      "a module batch's outcome is one store of the poller warp");
#else
_Static_assert(sizeof(struct vyre_mk_unit) == 48, "unit is 48 bytes");
_Static_assert(sizeof(struct vyre_mk_stage) == 16, "stage is 16 bytes");
_Static_assert(sizeof(struct vyre_mk_result) == 16, "result is 16 bytes");
_Static_assert(sizeof(struct vyre_mk_launch_args) == 40, "launch args are 40 bytes");
_Static_assert(sizeof(struct vyre_mk_ctrl) == 128, "ctrl is two lines");
_Static_assert(sizeof(struct vyre_mk_team) % 16 == 0, "teams stay aligned");
_Static_assert(VYRE_MK_HEADER_WORDS + VYRE_MK_UNIT_WORDS * VYRE_MK_INLINE_UNITS <=
		   VYRE_MK_SLOT_WORDS,
	       "inline units fit a slot");
_Static_assert(VYRE_MK_SLOT_WORDS <= 256, "IMMEDIATE counts and indices fit a byte");
_Static_assert(VYRE_MK_INLINE_UNITS <= 32 / VYRE_MK_CPL_MODULE_WORDS,
	       "a module batch's outcome is one store of the poller warp");
#endif

#endif /* VYRE_GPU_CUDA_ABI_H */
