/* SPDX-License-Identifier: MIT */
/*
 * The CPU backend with several batches in flight: seeded random batches over
 * disjoint parts of two heaps, busy in several slots at once (wide groups
 * shared between workers, long batches beside short ones), reaped with
 * timeouts 0, positive and negative, each result and heap byte equal to
 * vyre_exec_sequential's; the completion eventfd; FIFO queueing when slots
 * outnumber workers; refused submits; shutdown while slots are busy.
 */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../gpu/backend.h"
#include "test_rand.h"

#define HEAPS 2u
#define SLOTS 8u
/* Small buffers per slot, buffer j in heap j % HEAPS; wide batches only read those below SRC. */
#define NBUF	  40u
#define SRC	  8u
#define BUF_MAX	  512u
#define TABLE_MAX 4096u
/* Per slot and heap: two halves that long batches work on. */
#define BULK	   (64u * 1024u)
#define REGION	   (NBUF / HEAPS * BUF_MAX + TABLE_MAX + BULK)
#define HEAP_BYTES ((uint64_t)SLOTS * REGION)
#define MAX_ITEMS  256u
#define DFA_STATES 3u
#define POISON	   0x7eadbeef

/* Hazard keys: the small buffers, then each heap's table, then each heap's bulk halves. */
#define KEY_TABLE(h)   (NBUF + (h))
#define KEY_BULK(h, i) (NBUF + HEAPS + 2 * (h) + (i))
#define KEYS	       (NBUF + 3 * HEAPS)

enum mix {
	MIX_RANDOM, /* few items, any buffers: chains and in-place updates */
	MIX_WIDE,   /* many items with distinct outputs: wide groups */
	MIX_BULK,   /* a few items over the bulk halves: a batch that takes a while */
};

struct world {
	uint8_t *run[HEAPS];
	uint8_t *oracle[HEAPS];
	uint32_t bytes[NBUF];
	uint32_t table_bytes;
	struct vyre_heap_view oracle_view[HEAPS];
};

struct slot_batch {
	uint32_t n;
	uint32_t n_groups;
	uint64_t seq; /* submit order */
	int busy;
	struct vyre_exec_item items[MAX_ITEMS];
	uint32_t order[MAX_ITEMS];
	uint32_t group_end[MAX_ITEMS];
	uint32_t group[MAX_ITEMS];
	uint32_t launch_end[1];
	struct vyre_exec_result results[MAX_ITEMS];
	struct vyre_exec_result expect[MAX_ITEMS];
	struct vyre_exec_batch eb;
};

static struct world w;
static struct slot_batch sb[SLOTS];

static uint32_t pick(uint64_t *rng, uint32_t n)
{
	return (uint32_t)(splitmix64(rng) % n);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t region(uint32_t slot)
{
	return (uint64_t)slot * REGION;
}

static uint64_t buf_off(uint32_t slot, uint32_t j)
{
	return region(slot) + (uint64_t)(j / HEAPS) * BUF_MAX;
}

static uint64_t table_off(uint32_t slot)
{
	return region(slot) + NBUF / HEAPS * BUF_MAX;
}

static uint64_t bulk_off(uint32_t slot, uint32_t half)
{
	return table_off(slot) + TABLE_MAX + (uint64_t)half * (BULK / 2);
}

/* Both copies of the heaps start equal; every slot's table is a valid DFA. */
static void world_init(uint64_t seed)
{
	uint64_t rng = seed;
	uint32_t words[2 + 1 + 256 * DFA_STATES];

	memset(&w, 0, sizeof(w));
	memset(sb, 0, sizeof(sb));
	w.table_bytes = (uint32_t)vyre_dfa_table_bytes(DFA_STATES);
	assert_true(w.table_bytes <= TABLE_MAX && w.table_bytes == sizeof(words));
	for (uint32_t j = 0; j < NBUF; j++)
		w.bytes[j] = 4 * (1 + pick(&rng, BUF_MAX / 4));
	for (uint32_t h = 0; h < HEAPS; h++) {
		w.run[h] = malloc(HEAP_BYTES);
		w.oracle[h] = malloc(HEAP_BYTES);
		assert_non_null(w.run[h]);
		assert_non_null(w.oracle[h]);
		for (uint64_t i = 0; i < HEAP_BYTES; i += 8) {
			uint64_t v = splitmix64(&rng);

			memcpy(w.run[h] + i, &v, 8);
		}
		for (uint32_t s = 0; s < SLOTS; s++) {
			words[0] = DFA_STATES;
			words[1] = pick(&rng, DFA_STATES);
			words[2] = (uint32_t)splitmix64(&rng) & ((1u << DFA_STATES) - 1);
			for (uint32_t i = 3; i < 2 + 1 + 256 * DFA_STATES; i++)
				words[i] = pick(&rng, DFA_STATES);
			memcpy(w.run[h] + table_off(s), words, sizeof(words));
		}
		memcpy(w.oracle[h], w.run[h], HEAP_BYTES);
		w.oracle_view[h] = (struct vyre_heap_view){w.oracle[h], HEAP_BYTES};
	}
}

static void world_fini(void)
{
	for (uint32_t h = 0; h < HEAPS; h++) {
		free(w.run[h]);
		free(w.oracle[h]);
	}
}

static const struct vyre_backend_ops *const ops = &vyre_cpu_backend;

/* Tests of the worker hand-off set this: small batches would run inside submit. */
static int handoff_all;

static struct vyre_backend *backend_up(uint32_t threads, uint32_t slots, uint32_t min_bytes)
{
	struct vyre_backend_config cfg = {
	    .max_heaps = HEAPS,
	    .max_items = MAX_ITEMS,
	    .cpu_threads = threads,
	    .cpu_parallel_min_bytes = min_bytes,
	    .cpu_handoff_all = (uint32_t)handoff_all,
	    .max_inflight = slots,
	};
	struct vyre_backend *b;
	char why[128] = "";

	if (ops->init(&b, &cfg, why, sizeof(why)))
		fail_msg("init: %s", why);
	for (uint32_t h = 0; h < HEAPS; h++)
		assert_int_equal(ops->register_heap(b, h, w.run[h], HEAP_BYTES), 0);
	return b;
}

/* ------------------------------------------------------------ batches */

struct access {
	uint32_t reads[2];
	uint32_t n_reads;
	uint32_t write; /* KEYS: none */
};

static uint32_t small_in_heap(uint64_t *rng, uint32_t h, uint32_t below)
{
	return h + HEAPS * pick(rng, below / HEAPS);
}

static void set_in(struct vyre_exec_item *x, uint32_t slot, uint32_t j, struct access *a)
{
	x->in_off = buf_off(slot, j);
	x->in_bytes = w.bytes[j];
	a->reads[a->n_reads++] = j;
}

static void set_out(struct vyre_exec_item *x, uint32_t slot, uint32_t j, struct access *a)
{
	x->out_off = buf_off(slot, j);
	x->out_bytes = w.bytes[j];
	a->write = j;
}

static void set_table(struct vyre_exec_item *x, uint32_t slot, struct access *a)
{
	x->table_off = table_off(slot);
	x->table_bytes = w.table_bytes;
	a->reads[a->n_reads++] = KEY_TABLE(x->table_heap);
}

static const uint32_t data_ops[] = {VYRE_OP_COPY, VYRE_OP_ADD, VYRE_OP_XOR,
				    VYRE_OP_MUL,  VYRE_OP_SUM, VYRE_OP_MAX};

static struct vyre_exec_item random_item(uint64_t *rng, uint32_t slot, uint32_t k, enum mix mix,
					 struct access *a)
{
	struct vyre_exec_item x = {.param = (uint32_t)splitmix64(rng)};
	uint32_t roll = pick(rng, 100), h = pick(rng, HEAPS);

	*a = (struct access){.write = KEYS};
	x.in_heap = x.out_heap = x.table_heap = h;
	if (mix == MIX_BULK) {
		uint32_t half = pick(rng, 2);

		x.in_off = bulk_off(slot, half);
		x.in_bytes = BULK / 2;
		a->reads[a->n_reads++] = KEY_BULK(h, half);
		if (roll < 50) {
			x.op = VYRE_OP_DFA_SCAN;
			x.param = 0;
			set_table(&x, slot, a);
			set_out(&x, slot, small_in_heap(rng, h, NBUF), a);
		} else {
			x.op = roll < 75 ? VYRE_OP_ADD : VYRE_OP_COPY;
			x.out_off = bulk_off(slot, 1 - half);
			x.out_bytes = BULK / 2;
			a->write = KEY_BULK(h, 1 - half);
		}
		return x;
	}
	if (mix == MIX_WIDE) {
		/* Distinct outputs, read-only inputs: only the output reuse orders these. */
		uint32_t out = SRC + k % (NBUF - SRC);

		h = out % HEAPS;
		x.in_heap = x.out_heap = x.table_heap = h;
		set_in(&x, slot, small_in_heap(rng, h, SRC), a);
		set_out(&x, slot, out, a);
		if (roll < 20) {
			x.op = VYRE_OP_DFA_SCAN;
			x.param = 0;
			set_table(&x, slot, a);
		} else {
			x.op = data_ops[pick(rng, 6)];
		}
		return x;
	}
	if (roll < 4) {
		x.op = VYRE_OP_NOP;
		x.param = 0;
		return x;
	}
	if (roll < 20) {
		x.op = VYRE_OP_FILL;
		set_out(&x, slot, small_in_heap(rng, h, NBUF), a);
		return x;
	}
	uint32_t in = small_in_heap(rng, h, NBUF);

	set_in(&x, slot, in, a);
	set_out(&x, slot, pick(rng, 6) == 0 ? in : small_in_heap(rng, h, NBUF), a);
	if (roll < 35) {
		x.op = VYRE_OP_DFA_SCAN;
		x.param = 0;
		set_table(&x, slot, a);
	} else {
		x.op = data_ops[pick(rng, 6)];
	}
	return x;
}

/*
 * @n items of @mix for @slot, in groups as a planner would layer them (an
 * item runs after the last writer of what it reads or writes and after the
 * last reader of what it writes), each group's order shuffled; the oracle
 * runs them in item order on its copy of the heaps.
 */
static void make_batch(struct slot_batch *b, uint32_t slot, uint64_t *rng, enum mix mix, uint32_t n)
{
	int32_t last_write[KEYS], last_read[KEYS];
	uint32_t count[MAX_ITEMS] = {0}, fill[MAX_ITEMS];

	for (uint32_t i = 0; i < KEYS; i++)
		last_write[i] = last_read[i] = -1;
	b->n = n;
	b->n_groups = 0;
	for (uint32_t k = 0; k < n; k++) {
		struct access a;
		int32_t g = 0;

		b->items[k] = random_item(rng, slot, k, mix, &a);
		for (uint32_t i = 0; i < a.n_reads; i++)
			if (last_write[a.reads[i]] + 1 > g)
				g = last_write[a.reads[i]] + 1;
		if (a.write < KEYS) {
			if (last_write[a.write] + 1 > g)
				g = last_write[a.write] + 1;
			if (last_read[a.write] + 1 > g)
				g = last_read[a.write] + 1;
		}
		for (uint32_t i = 0; i < a.n_reads; i++)
			if (g > last_read[a.reads[i]])
				last_read[a.reads[i]] = g;
		if (a.write < KEYS)
			last_write[a.write] = g;
		b->group[k] = (uint32_t)g;
		count[g]++;
		if ((uint32_t)g + 1 > b->n_groups)
			b->n_groups = (uint32_t)g + 1;
	}
	for (uint32_t g = 0, end = 0; g < b->n_groups; g++) {
		fill[g] = end;
		end += count[g];
		b->group_end[g] = end;
	}
	for (uint32_t k = 0; k < n; k++)
		b->order[fill[b->group[k]]++] = k;
	for (uint32_t g = 0, from = 0; g < b->n_groups; from = b->group_end[g++])
		for (uint32_t pos = b->group_end[g] - 1; pos > from; pos--) {
			uint32_t other = from + pick(rng, pos - from + 1), t = b->order[pos];

			b->order[pos] = b->order[other];
			b->order[other] = t;
		}
	b->launch_end[0] = b->n_groups;
	for (uint32_t k = 0; k < n; k++)
		b->results[k] = (struct vyre_exec_result){.status = POISON, .reserved = 1};
	vyre_exec_sequential(w.oracle_view, b->items, n, b->expect);
	b->eb = (struct vyre_exec_batch){
	    .items = b->items,
	    .n_items = n,
	    .plan = {b->order, n, b->group_end, b->n_groups, b->launch_end, 1},
	    .results = b->results,
	};
}

static void random_batch(struct slot_batch *b, uint32_t slot, uint64_t *rng)
{
	uint32_t roll = pick(rng, 10);

	if (roll < 6)
		make_batch(b, slot, rng, MIX_RANDOM, 1 + pick(rng, 40));
	else if (roll < 9)
		make_batch(b, slot, rng, MIX_WIDE, 32 + pick(rng, MAX_ITEMS - 32 + 1));
	else
		make_batch(b, slot, rng, MIX_BULK, 1 + pick(rng, 6));
}

static void submit(struct vyre_backend *be, uint32_t slot, uint64_t *seq)
{
	assert_int_equal(ops->submit(be, slot, &sb[slot].eb), 0);
	sb[slot].busy = 1;
	sb[slot].seq = (*seq)++;
}

/* The slot's results and its part of both heaps equal the oracle's. */
static void check_slot(uint32_t slot)
{
	const struct slot_batch *b = &sb[slot];

	for (uint32_t k = 0; k < b->n; k++)
		if (memcmp(&b->results[k], &b->expect[k], sizeof(b->expect[k])))
			fail_msg("slot %u item %u (op %u): status %d result %llu, oracle %d %llu",
				 slot, k, b->items[k].op, b->results[k].status,
				 (unsigned long long)b->results[k].result, b->expect[k].status,
				 (unsigned long long)b->expect[k].result);
	for (uint32_t h = 0; h < HEAPS; h++)
		if (memcmp(w.run[h] + region(slot), w.oracle[h] + region(slot), REGION))
			fail_msg("slot %u: heap %u differs from the oracle's", slot, h);
}

static void check_heaps(void)
{
	for (uint32_t h = 0; h < HEAPS; h++)
		assert_memory_equal(w.run[h], w.oracle[h], HEAP_BYTES);
}

/*
 * Reap and check what comes back; returns how many slots were reported
 * ahead of a slot submitted before them that is still busy.
 */
static uint32_t reap_check(struct vyre_backend *be, uint32_t slots, uint32_t max,
			   int64_t timeout_ns, uint32_t *busy, int *got)
{
	struct vyre_slot_done done[SLOTS];
	uint32_t overtakes = 0;
	int n = ops->reap(be, done, max, timeout_ns);

	assert_in_range(n, 0, max);
	for (int i = 0; i < n; i++) {
		uint32_t s = done[i].slot;

		assert_true(s < slots);
		assert_true(sb[s].busy);
		assert_int_equal(done[i].status, 0);
		sb[s].busy = 0;
		(*busy)--;
		check_slot(s);
		for (uint32_t o = 0; o < slots; o++)
			overtakes += sb[o].busy && sb[o].seq < sb[s].seq;
	}
	*got = n;
	return overtakes;
}

static void drain(struct vyre_backend *be, uint32_t slots, uint32_t *busy)
{
	while (*busy) {
		int got;

		reap_check(be, slots, SLOTS, -1, busy, &got);
		assert_true(got >= 1);
	}
}

/* ------------------------------------------------------------ tests */

struct random_config {
	uint32_t threads, slots, min_bytes, steps;
};

static void test_random_inflight(void **state)
{
	static const struct random_config configs[] = {
	    {1, 3, 1, 150}, {2, 4, 1, 300}, {3, 8, 4096, 300}, {4, 2, 0, 150}, {2, 8, 2048, 300},
	};
	(void)state;

	for (uint32_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		const struct random_config *cf = &configs[c];
		uint64_t rng = 1000 + c, seq = 0;
		uint32_t busy = 0, overtakes = 0, reaps[3] = {0};
		struct vyre_backend *be;

		world_init(rng);
		be = backend_up(cf->threads, cf->slots, cf->min_bytes);
		for (uint32_t step = 0; step < cf->steps; step++) {
			uint32_t idle = cf->slots - busy;

			if (idle && (busy == 0 || pick(&rng, 3))) {
				uint32_t slot, nth = pick(&rng, idle);

				for (slot = 0; sb[slot].busy || nth--; slot++)
					;
				random_batch(&sb[slot], slot, &rng);
				submit(be, slot, &seq);
				busy++;
			} else {
				static const int64_t timeouts[] = {0, 100000, -1};
				uint32_t t = pick(&rng, 3);
				int got;

				overtakes += reap_check(be, cf->slots, 1 + pick(&rng, SLOTS),
							timeouts[t], &busy, &got);
				/* Without a limit, reap waits for a busy slot. */
				assert_true(timeouts[t] >= 0 || got >= 1);
				reaps[t] += got > 0;
			}
			if (busy && pick(&rng, 10) == 0) {
				uint32_t slot = pick(&rng, cf->slots);

				if (sb[slot].busy)
					assert_int_equal(ops->submit(be, slot, &sb[slot].eb),
							 VYRE_E_INVAL);
			}
		}
		drain(be, cf->slots, &busy);
		check_heaps();
		print_message("%u threads, %u slots: %llu batches, %u reported ahead of older "
			      "ones; reaps that found slots with timeout 0 / positive / "
			      "negative: %u / %u / %u\n",
			      cf->threads, cf->slots, (unsigned long long)seq, overtakes, reaps[0],
			      reaps[1], reaps[2]);
		ops->shutdown(be);
		world_fini();
	}
}

/* A short batch submitted after a long one, in another slot, finishes first. */
static void test_completion_order(void **state)
{
	uint64_t rng = 77, seq = 0;
	struct vyre_backend *be;
	int overtaken = 0;
	(void)state;

	world_init(rng);
	be = backend_up(2, 2, 0);
	/*
	 * Timing decides: the long batch lasts milliseconds, longer than a
	 * worker takes to wake unless the machine is very busy; hence a few tries.
	 */
	for (int attempt = 0; attempt < 8 && !overtaken; attempt++) {
		struct vyre_slot_done done[2];
		int n;

		make_batch(&sb[0], 0, &rng, MIX_BULK, MAX_ITEMS);
		make_batch(&sb[1], 1, &rng, MIX_RANDOM, 1);
		submit(be, 0, &seq);
		submit(be, 1, &seq);
		n = ops->reap(be, done, 2, -1);
		assert_in_range(n, 1, 2);
		overtaken = done[0].slot == 1;
		if (n == 1) {
			assert_int_equal(ops->reap(be, &done[1], 1, -1), 1);
			assert_int_equal(done[1].slot, 1 - done[0].slot);
		}
		check_slot(0);
		check_slot(1);
		sb[0].busy = sb[1].busy = 0;
	}
	assert_true(overtaken);
	ops->shutdown(be);
	world_fini();
}

/* One worker, four slots: slots run in the order they were submitted. */
static void test_fifo_queue(void **state)
{
	static const uint32_t order[] = {2, 0, 3, 1};
	uint64_t rng = 5, seq = 0;
	struct vyre_backend *be;
	(void)state;

	world_init(rng);
	handoff_all = 1;
	be = backend_up(1, 4, 0);
	handoff_all = 0;
	for (int round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < 4; i++) {
			random_batch(&sb[order[i]], order[i], &rng);
			submit(be, order[i], &seq);
		}
		for (uint32_t i = 0; i < 4; i++) {
			struct vyre_slot_done done;

			assert_int_equal(ops->reap(be, &done, 1, -1), 1);
			assert_int_equal(done.slot, order[i]);
			sb[done.slot].busy = 0;
			check_slot(done.slot);
		}
	}
	ops->shutdown(be);
	world_fini();
}

/* Read the eventfd until it has counted @want finishes. */
static void wait_eventfd(int fd, uint64_t want)
{
	uint64_t total = 0, v;

	while (total < want) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		assert_int_equal(poll(&p, 1, 10000), 1);
		assert_int_equal(read(fd, &v, sizeof(v)), sizeof(v));
		total += v;
	}
	assert_int_equal(total, want);
}

static void test_eventfd(void **state)
{
	uint64_t rng = 9, seq = 0, v;
	struct vyre_backend *be;
	struct vyre_slot_done done[4];
	struct pollfd p;
	int fd;
	(void)state;

	world_init(rng);
	handoff_all = 1;
	be = backend_up(2, 4, 1);
	handoff_all = 0;
	fd = ops->completion_fd(be);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 0), 0);

	/* The event loop's way: sleep on the descriptor, read it, reap with timeout 0. */
	make_batch(&sb[1], 1, &rng, MIX_BULK, 4);
	submit(be, 1, &seq);
	wait_eventfd(fd, 1);
	assert_int_equal(ops->reap(be, done, 4, 0), 1);
	assert_int_equal(done[0].slot, 1);
	check_slot(1);
	sb[1].busy = 0;
	assert_int_equal(ops->reap(be, done, 4, 0), 0);
	assert_int_equal(read(fd, &v, sizeof(v)), -1);

	/* Nobody reads the descriptor: reap still finds the slots, which the count then shows. */
	for (uint32_t s = 0; s < 3; s++) {
		random_batch(&sb[s], s, &rng);
		submit(be, s, &seq);
	}
	for (uint32_t got = 0; got < 3;) {
		int n = ops->reap(be, done, 4, -1);

		assert_in_range(n, 1, 3 - got);
		for (int i = 0; i < n; i++) {
			check_slot(done[i].slot);
			sb[done[i].slot].busy = 0;
		}
		got += (uint32_t)n;
	}
	wait_eventfd(fd, 3);

	/* Finished slots wait on the done queue; max limits each reap. */
	for (uint32_t s = 0; s < 3; s++) {
		make_batch(&sb[s], s, &rng, MIX_RANDOM, 3);
		submit(be, s, &seq);
	}
	wait_eventfd(fd, 3);
	assert_int_equal(ops->reap(be, done, 2, 0), 2);
	assert_int_equal(ops->reap(be, &done[2], 2, 0), 1);
	for (uint32_t i = 0; i < 3; i++) {
		check_slot(done[i].slot);
		sb[done[i].slot].busy = 0;
	}

	/* An empty plan finishes at once, and says so like any other. */
	sb[3].eb = (struct vyre_exec_batch){.results = sb[3].results};
	assert_int_equal(ops->submit(be, 3, &sb[3].eb), 0);
	wait_eventfd(fd, 1);
	assert_int_equal(ops->reap(be, done, 4, 0), 1);
	assert_int_equal(done[0].slot, 3);
	ops->shutdown(be);
	world_fini();
}

static void test_reap_timeouts(void **state)
{
	uint64_t rng = 11, seq = 0, t0;
	struct vyre_backend *be;
	struct vyre_slot_done done[2];
	(void)state;

	world_init(rng);
	be = backend_up(2, 2, 0);
	/* Nothing busy: nothing can finish, so no timeout makes reap wait. */
	t0 = now_ns();
	assert_int_equal(ops->reap(be, done, 2, -1), 0);
	assert_int_equal(ops->reap(be, done, 2, 5000000000), 0);
	assert_true(now_ns() - t0 < 1000000000u);
	assert_int_equal(ops->reap(be, NULL, 2, 0), VYRE_E_INVAL);
	assert_int_equal(ops->reap(be, NULL, 0, 0), 0);

	for (int round = 0; round < 4; round++) {
		make_batch(&sb[0], 0, &rng, MIX_BULK, 16);
		submit(be, 0, &seq);
		int n = ops->reap(be, done, 2, 0);

		assert_in_range(n, 0, 1);
		if (n == 0) {
			/* A reap that finds nothing waited out its whole timeout. */
			t0 = now_ns();
			n = ops->reap(be, done, 2, 200000);
			assert_in_range(n, 0, 1);
			if (n == 0)
				assert_true(now_ns() - t0 >= 200000);
		}
		if (n == 0)
			n = ops->reap(be, done, 2, -1);
		assert_int_equal(n, 1);
		assert_int_equal(done[0].slot, 0);
		check_slot(0);
		sb[0].busy = 0;
	}
	ops->shutdown(be);
	world_fini();
}

static void test_refused_submits(void **state)
{
	uint64_t rng = 13, seq = 0;
	struct vyre_backend *be;
	struct vyre_backend_config cfg = {.max_heaps = 1, .max_inflight = 65537};
	struct vyre_slot_done done[3];
	uint32_t bad_group_end[1];
	char why[128] = "";
	(void)state;

	assert_int_equal(ops->init(&be, &cfg, why, sizeof(why)), VYRE_E_INVAL);
	assert_non_null(strstr(why, "max_inflight"));

	world_init(rng);
	be = backend_up(2, 3, 0);
	make_batch(&sb[0], 0, &rng, MIX_BULK, 8);
	make_batch(&sb[1], 1, &rng, MIX_RANDOM, 5);
	assert_int_equal(ops->submit(be, 3, &sb[0].eb), VYRE_E_INVAL);
	assert_int_equal(ops->submit(be, UINT32_MAX, &sb[0].eb), VYRE_E_INVAL);
	assert_int_equal(ops->submit(be, 0, NULL), VYRE_E_INVAL);
	/* A malformed plan starts nothing and leaves the slot idle. */
	bad_group_end[0] = sb[1].n + 1;
	sb[2].eb = sb[1].eb;
	sb[2].eb.plan.group_end = bad_group_end;
	sb[2].eb.plan.n_groups = 1;
	assert_int_equal(ops->submit(be, 1, &sb[2].eb), VYRE_E_INVAL);
	assert_int_equal(ops->reap(be, done, 3, 0), 0);
	assert_int_equal(sb[1].results[0].status, POISON);

	submit(be, 0, &seq);
	/* Busy until reaped, finished or not. */
	assert_int_equal(ops->submit(be, 0, &sb[1].eb), VYRE_E_INVAL);
	submit(be, 1, &seq);
	assert_int_equal(ops->submit(be, 1, &sb[1].eb), VYRE_E_INVAL);
	for (uint32_t got = 0; got < 2;) {
		int n = ops->reap(be, done, 3, -1);

		assert_in_range(n, 1, 2 - got);
		for (int i = 0; i < n; i++) {
			sb[done[i].slot].busy = 0;
			check_slot(done[i].slot);
		}
		got += (uint32_t)n;
	}
	/* Reaped: the slot takes a batch again. */
	make_batch(&sb[0], 0, &rng, MIX_RANDOM, 5);
	submit(be, 0, &seq);
	assert_int_equal(ops->reap(be, done, 3, -1), 1);
	check_slot(0);
	ops->shutdown(be);
	world_fini();
}

/* Shutdown waits for running and queued slots, reaped or not, then stops the workers. */
static void test_shutdown_busy(void **state)
{
	static const uint32_t threads[] = {1, 2, 3};
	(void)state;

	for (uint32_t c = 0; c < 3; c++) {
		uint64_t rng = 21 + c, seq = 0;
		struct vyre_backend *be;

		world_init(rng);
		be = backend_up(threads[c], 6, 1);
		for (uint32_t s = 0; s < 6; s++) {
			if (s % 2)
				make_batch(&sb[s], s, &rng, MIX_WIDE, MAX_ITEMS);
			else
				make_batch(&sb[s], s, &rng, MIX_BULK, 6);
			submit(be, s, &seq);
		}
		ops->shutdown(be);
		for (uint32_t s = 0; s < 6; s++)
			check_slot(s);
		check_heaps();
		world_fini();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_inflight), cmocka_unit_test(test_completion_order),
	    cmocka_unit_test(test_fifo_queue),	    cmocka_unit_test(test_eventfd),
	    cmocka_unit_test(test_reap_timeouts),   cmocka_unit_test(test_refused_submits),
	    cmocka_unit_test(test_shutdown_busy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
