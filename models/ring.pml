/*
 * models/ring.pml - the vyre client region protocol: include/vyre/abi.h,
 * ring/ring.c, ring/doorbell.c, ring/client_submit.c, ring/client_wait.c,
 * tools/vyred/{drain,complete,conns,loop}.c.
 *
 * Processes and the code each one stands for:
 *   producer(i)  a client thread in vyre_submit: vyre_sq_reserve (CAS on
 *                sq_tail), fill the slot, vyre_sq_publish (seq = pos + 1,
 *                release), vyre_sq_kick (full fence, vyre_wake).
 *   vyred()      one client's share of vyred's loop: vyre_stage_drain
 *                (vyre_cq_space, then vyre_sq_peek copies published SQEs at
 *                the private head, never more than the CQ has room for),
 *                vyre_stage_complete (vyre_cq_post, vyre_sq_release stores
 *                sq_head, vyre_cq_flush stores cq_tail, fences, vyre_wake).
 *                Idle, sleep_on_doorbells: vyre_sleep_prepare, re-check with
 *                vyre_conn_has_work (a published SQE and CQ room), arm an
 *                io_uring FUTEX_WAIT on sq_doorbell with the value read
 *                (arm_waiter; a waiter still armed from an earlier sleep is
 *                kept, with its older value), io_uring_submit_and_wait,
 *                vyre_sleep_finish. Other events (another client, a control
 *                message) may wake vyred with its waiter still armed.
 *   reaper()     the client's reaping thread in vyre_wait: vyre_cq_reap
 *                (stores cq_head, then vyre_sq_kick so a vyred idle on a full
 *                CQ drains again); when the CQ is empty it sleeps on the CQ
 *                doorbell: vyre_sleep_prepare, re-check with vyre_cq_ready,
 *                futex(FUTEX_WAIT), vyre_sleep_finish.
 *
 * Need-wakeup bits (vyre_wake): the first waker that sees the bit takes it
 * (fetch_and), bumps the doorbell and futex-wakes; the sleeper sets it again
 * before it next sleeps, and vyre_sleep_prepare reports a bit taken between
 * its set and its doorbell read, so the sleeper stays up.
 *
 * Promela is sequentially consistent, so a full fence is the natural order of
 * statements; a missing fence is modelled as the store moving after the
 * loads it should precede (store buffering: the one reordering x86-TSO and
 * every weaker model allow). Waits have no timeout here: vyre_wait's 50 ms
 * liveness slice would only hide a lost wake-up.
 *
 * Checked properties:
 *   - no lost or duplicated item: each ring's consumer asserts that every
 *     payload it takes was published and is taken once;
 *   - no lost wake-up and no deadlock: every process must reach its end (all
 *     items reaped); a sleeper blocked forever is an invalid end state;
 *   - LTL no_lost_wakeup (-DCHECK_LTL): under weak fairness every sleeper is
 *     woken eventually.
 *
 * Deliberately broken variants, each of which spin must reject (check.sh):
 *   BUG_NO_RECHECK    sleepers wait without re-checking their ring
 *   BUG_NO_FENCE      sleepers' need_wakeup store becomes visible after the
 *                     doorbell and ring loads (a plain store, no fence)
 *   BUG_LATE_SEEN     sleepers read the doorbell after re-checking, without
 *                     the taken-bit check (which would make the order safe)
 *   BUG_WAKE_FIRST    producers test need_wakeup before publishing
 *   BUG_NO_REAP_KICK  the reaper frees CQ space without kicking vyred
 *   BUG_SEQ_FIRST     producers store the seq marker before the payload
 *   BUG_EARLY_HEAD    vyred releases the SQ slot before copying it out
 *   BUG_PLAIN_RESERVE producers reserve with load + store instead of CAS
 *   BUG_TAKEN_UNCHECKED sleepers ignore that a waker took their need-wakeup
 *                     bit between setting it and reading the doorbell (ring/
 *                     doorbell.c before the fix: a reaper's kick for CQ space
 *                     takes vyred's bit while vyred goes to sleep, the next
 *                     producer sees no bit and never wakes it)
 */

#ifndef NPROD
#define NPROD 2
#endif
#ifndef NITEMS
#define NITEMS 2 /* items per producer */
#endif
#ifndef SQCAP
#define SQCAP 2
#endif
#ifndef CQCAP
#define CQCAP 2
#endif
#ifndef OTHER_EVENTS
#define OTHER_EVENTS 1 /* times vyred is woken by something else */
#endif
#define TOTAL (NPROD * NITEMS)

typedef sqe_t {
	byte seq;  /* publish marker: position + 1 */
	byte data; /* payload: a unique item id, 1..TOTAL */
};

sqe_t sq[SQCAP];
byte sq_tail;
byte sq_head;
byte sq_doorbell;
bit sq_need_wakeup;
bit waiter_armed; /* vyred's io_uring FUTEX_WAIT on sq_doorbell is pending */
bit waiter_done;  /* ... and has completed (its CQE is ready) */

byte cq[CQCAP];
byte cq_tail;
byte cq_head;
byte cq_doorbell;
bit cq_need_wakeup;
bit cq_sleeping; /* the reaper blocked in futex(FUTEX_WAIT) on cq_doorbell */

bit vyred_sleeping; /* vyred blocked in io_uring_submit_and_wait */

bit drained[TOTAL + 1]; /* ghost: ids vyred drained from the SQ */
bit reaped[TOTAL + 1];  /* ghost: ids the reaper took from the CQ */

/*
 * vyre_wake, after the caller's publish and full fence: a waker that sees
 * need_wakeup takes the futex bit (fetch_and), bumps the doorbell, and
 * futex-wakes only if it took the bit itself, so later producers need no
 * syscall until the sleeper sets the bit again. A futex wake completes
 * vyred's armed io_uring FUTEX_WAIT.
 */
inline kick_vyred(taken)
{
	if
	:: sq_need_wakeup ->
		d_step {
			taken = sq_need_wakeup;
			sq_need_wakeup = 0
		};
		sq_doorbell++;
		if
		:: taken && waiter_armed -> waiter_done = 1
		:: else -> skip
		fi;
		taken = 0
	:: else -> skip
	fi
}

/* vyre_wake for the CQ doorbell (vyre_cq_flush). */
inline wake_reaper(taken)
{
	if
	:: cq_need_wakeup ->
		d_step {
			taken = cq_need_wakeup;
			cq_need_wakeup = 0
		};
		cq_doorbell++;
		if
		:: taken -> cq_sleeping = 0
		:: else -> skip
		fi;
		taken = 0
	:: else -> skip
	fi
}

/*
 * vyre_sleep_prepare: set need_wakeup (seq_cst RMW + fence), read the
 * doorbell, then re-read need_wakeup: if a waker already took the bit, report
 * it in @gone and stay up (the waker's bump may already be in @seen, and the
 * bit it took is what later wakers would need).
 */
inline sleep_prepare(need, doorbell, seen, gone)
{
#if defined(BUG_NO_FENCE)
	/* the store sits in the store buffer: others see it later, we read it back */
	seen = doorbell
#elif defined(BUG_LATE_SEEN)
	need = 1
#elif defined(BUG_TAKEN_UNCHECKED)
	need = 1;
	seen = doorbell
#else
	need = 1;
	seen = doorbell;
	gone = (need == 0)
#endif
}

/* Between the re-check and the wait: where the broken variants do their late part. */
inline sleep_late(need, doorbell, seen, gone)
{
#if defined(BUG_NO_FENCE)
	need = 1
#elif defined(BUG_LATE_SEEN)
	seen = doorbell
#else
	skip
#endif
}

/* vyre_submit: vyre_sq_reserve, fill, vyre_sq_publish, vyre_sq_kick. */
proctype producer(byte id)
{
	byte i = 0;
	byte pos;
	bit took;
	do
	:: i < NITEMS ->
reserve:
		pos = sq_tail;
		/* a full SQ is VYRE_E_AGAIN: the client retries once vyred frees a slot */
		(pos - sq_head < SQCAP);
#ifdef BUG_PLAIN_RESERVE
		sq_tail = pos + 1;
#else
		atomic {
			if
			:: sq_tail == pos -> sq_tail = pos + 1
			:: else -> goto reserve
			fi
		};
#endif
#ifdef BUG_WAKE_FIRST
		kick_vyred(took);
#endif
#ifdef BUG_SEQ_FIRST
		sq[pos % SQCAP].seq = pos + 1;
		sq[pos % SQCAP].data = id * NITEMS + i + 1;
#else
		sq[pos % SQCAP].data = id * NITEMS + i + 1;
		sq[pos % SQCAP].seq = pos + 1;
#endif
#ifndef BUG_WAKE_FIRST
		kick_vyred(took);
#endif
		pos = 0;
		i++
	:: else -> break
	od
}

/* vyred's drain/complete for one client, and sleep_on_doorbells when idle. */
proctype vyred()
{
	byte h = 0;
	byte got = 0;
	byte seen;
	byte d;
	byte other = 0;
	bit published;
	bit room;
	bit took;
	bit gone;
	do
	:: got == TOTAL -> break
	:: else ->
		/* vyre_stage_drain: CQ space first, then the SQE at the private head */
		room = (cq_tail - cq_head < CQCAP);
		published = (sq[h % SQCAP].seq == h + 1);
		if
		:: published && room ->
#ifdef BUG_EARLY_HEAD
			sq_head = h + 1;
#endif
			d = sq[h % SQCAP].data;
			d_step {
				assert(d >= 1 && d <= TOTAL);
				assert(!drained[d]);
				drained[d] = 1
			};
			/* vyre_stage_complete: post, release the SQ slot, flush the CQ */
			cq[cq_tail % CQCAP] = d;
#ifndef BUG_EARLY_HEAD
			sq_head = h + 1;
#endif
			d_step {
				cq_tail++;
				d = 0
			};
			wake_reaper(took);
			d_step {
				h++;
				got++;
				published = 0;
				room = 0
			}
		:: else ->
			d_step {
				published = 0;
				room = 0
			};
			sleep_prepare(sq_need_wakeup, sq_doorbell, seen, gone);
#ifndef BUG_NO_RECHECK
			/* vyre_conn_has_work: vyre_sq_pending, then vyre_cq_space */
			published = (sq[h % SQCAP].seq == h + 1);
			room = (cq_tail - cq_head < CQCAP);
#endif
			sleep_late(sq_need_wakeup, sq_doorbell, seen, gone);
			if
			:: (published && room) || gone -> skip
			:: else ->
				/* arm_waiter: the kernel compares the word when it is submitted */
				atomic {
					if
					:: !waiter_armed ->
						waiter_armed = 1;
						waiter_done = (sq_doorbell != seen)
					:: else -> skip
					fi
				};
				/* io_uring_submit_and_wait, then reap_cqes */
				vyred_sleeping = 1;
				if
				:: waiter_done ->
					d_step {
						waiter_armed = 0;
						waiter_done = 0;
						vyred_sleeping = 0
					}
				:: other < OTHER_EVENTS ->
					d_step {
						other++;
						vyred_sleeping = 0
					}
				fi
			fi;
			/* vyre_sleep_finish */
			d_step {
				sq_need_wakeup = 0;
				seen = 0;
				published = 0;
				room = 0;
				gone = 0
			}
		fi
	od
}

/* vyre_wait: vyre_cq_reap (then vyre_sq_kick), else sleep on the CQ doorbell. */
proctype reaper()
{
	byte h = 0;
	byte seen;
	byte d;
	bit ready;
	bit took;
	bit gone;
	do
	:: h == TOTAL -> break
	:: else ->
		if
		:: cq_tail != h ->
			d = cq[h % CQCAP];
			cq_head = h + 1;
			d_step {
				h++;
				assert(d >= 1 && d <= TOTAL);
				assert(drained[d] && !reaped[d]);
				reaped[d] = 1;
				d = 0
			}
#ifndef BUG_NO_REAP_KICK
			;
			kick_vyred(took)
#endif
		:: else ->
			sleep_prepare(cq_need_wakeup, cq_doorbell, seen, gone);
#ifndef BUG_NO_RECHECK
			/* vyre_cq_ready */
			ready = (cq_tail != h);
#endif
			sleep_late(cq_need_wakeup, cq_doorbell, seen, gone);
			if
			:: ready || gone -> skip
			:: else ->
				/* futex(FUTEX_WAIT): compare and block atomically */
				atomic {
					if
					:: cq_doorbell == seen -> cq_sleeping = 1
					:: else -> skip
					fi
				};
				cq_sleeping == 0
			fi;
			/* vyre_sleep_finish */
			d_step {
				cq_need_wakeup = 0;
				seen = 0;
				ready = 0;
				gone = 0
			}
		fi
	od
}

init
{
	byte p = 0;
	atomic {
		do
		:: p < NPROD ->
			run producer(p);
			p++
		:: else -> break
		od;
		run vyred();
		run reaper()
	}
}

#ifdef CHECK_LTL
ltl no_lost_wakeup { [] ((vyred_sleeping -> <> !vyred_sleeping) && (cq_sleeping -> <> !cq_sleeping)) }
#endif
