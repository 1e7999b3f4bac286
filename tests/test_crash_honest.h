/* SPDX-License-Identifier: MIT */
/*
 * tests/test_crash_honest.h - an honest producer that checks everything it
 * gets back against the sequential oracle (gpu/ops.h).
 *
 * It connects, allocates a few buffers and a DFA table, and submits a seeded
 * random stream of items over them (every op, in-place items, exact repeats
 * for dedupe, FENCE and NODEDUPE flags, items naming unknown handles). Each
 * item is also run on a private shadow copy of its buffers; every CQE must
 * carry the shadow's status and result, a FENCE item's CQE must come after
 * all earlier ones, and at the end every buffer must equal its shadow. The
 * reliability tests run it beside crashing, hostile and flooding clients to
 * show that those make no difference to others.
 */
#ifndef VYRE_TEST_CRASH_HONEST_H
#define VYRE_TEST_CRASH_HONEST_H

#include <stdint.h>
#include <sys/types.h>

struct rel_honest_opts {
	const char *socket;
	const char *domain; /* NULL: a private domain */
	uint64_t seed;
	uint64_t items;		  /* stop after this many; 0: run until *stop */
	const volatile int *stop; /* set by another process through shared memory */
	int64_t wait_timeout_ns;  /* a completion must come within this: else a hang */
};

struct rel_honest_result {
	uint64_t submitted;
	uint64_t completed;
	uint64_t deduped;
	uint64_t again; /* VYRE_E_AGAIN back-pressure seen */
	char why[256];	/* the first difference from the oracle, or "" */
};

/* Returns 0 when everything matched the oracle, else -1 with r->why set. */
int rel_honest_run(const struct rel_honest_opts *o, struct rel_honest_result *r);

/*
 * Forks a producer that runs rel_honest_run on @socket until *@stop (a 20 s
 * bound on each completion), prints its verdict and exits 0 when it matched
 * the oracle, 1 otherwise. Returns its pid.
 */
pid_t rel_honest_spawn(const char *socket, uint64_t seed, const volatile int *stop);

#endif /* VYRE_TEST_CRASH_HONEST_H */
