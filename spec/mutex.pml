/*
 * The Redlock mutex as quorum/ builds it: acquisition round, extension, release,
 * fencing tokens (and the election's terms, the same counter under another key),
 * a resource written by the holder, against masters that expire keys, restart and
 * quarantine (common.pml).
 *
 * Switches besides common.pml's:
 *   FENCING          the acquisition raises the fence counter (quorum/fence.go);
 *   ELECTION         with FENCING: the counter is an election's term, each term is
 *                    handed out at most once (quorum/election_run.go, elect_term.lua);
 *   WRITES           holders write to a resource, which checks the writes come in
 *                    holder order (LATE_WRITE and FENCED_RESOURCE imply it);
 *   FENCED_RESOURCE  the resource refuses a token below the highest it saw;
 *   LATE_WRITE       a holder writes after its Until (it ignores Done: a paused process);
 *   WALL_CLOCK_JUMP  a client measures elapsed time on a wall clock that steps back.
 */
#include "params.pml"

#ifndef NC
#define NC 2
#endif
#ifndef ACQS
#define ACQS 2       /* acquisition rounds per client */
#endif
#ifndef EXTS
#define EXTS 1       /* extension rounds of client 1 (the others do not extend) */
#endif
#if defined(LATE_WRITE) || defined(FENCED_RESOURCE)
#define WRITES
#endif
#define JUMP TTL     /* how far a wall clock steps back */

byte val[NM];        /* the lock key on master m: 0 none, else the client holding it */
byte kttl[NM];       /* its TTL left, in ticks of the master's clock */
byte fence[NM];      /* the fence counter NAME:fence, no TTL (quorum/scripts/fence.lua) */

#define TICK(m)  if :: kttl[m] > 1 -> kttl[m]-- :: kttl[m] == 1 -> kttl[m] = 0; val[m] = 0 :: else fi
#define LOSE(m)  val[m] = 0; kttl[m] = 0; fence[m] = 0
#define EVICT(m) val[m] = 0; kttl[m] = 0   /* the counter has no TTL: volatile-* keeps it */
/* A client's validity left runs down; so does the time a round has taken (el),
 * capped where no validity can be left. */
#define CLIENT_TICK(c) DEC(left[c]); if :: pend[c] && el[c] < TTL - DRIFT + CERR -> el[c]++ :: else fi
#if NC == 2
#define TICK_CLIENTS CLIENT_TICK(1); CLIENT_TICK(2)
#else
#define TICK_CLIENTS CLIENT_TICK(1); CLIENT_TICK(2); CLIENT_TICK(3)
#endif

/* Ghosts: what each client believes and what the checks need. */
bool holding[NC + 1];  /* it holds a Lock it has not released nor been told it lost */
byte left[NC + 1];     /* real ticks until its Done fires (its Until, on its clock) */
bool pend[NC + 1];     /* a round of it is out */
byte el[NC + 1];       /* real ticks since that round started */
byte token[NC + 1];    /* its fence */
byte epoch[NC + 1];    /* the order of its grant among all grants */
byte grants;
byte lastfence;        /* the highest fence handed out */
int terms;             /* the terms handed out (a bit each) */
byte res_fence;        /* the resource: the highest fence it accepted */
byte res_epoch;        /* the epoch of its last accepted write */
bool jumped;

#include "common.pml"

/* Mutual exclusion: at most one client inside its validity. Checked whenever a
 * validity starts or grows (a grant, an extension): only then can two overlap. */
inline check_mutex() {
	for (k : 1 .. NC) {
		if :: holding[k] && left[k] > 0 -> n++ :: else fi
	}
	assert(n <= 1);
	k = 0; n = 0
}

/* A round sends its commands at the tick it starts (params.pml), each reaching its
 * master or not; its replies are scored at any later time (elapsed grows). A
 * command that reaches the master and whose reply is lost is left out: it only
 * withholds a vote, which can make a round fail but never makes one succeed. */

/* release.lua: compare-and-delete on every master it reaches. */
inline release_all() {
	for (m : 0 .. NM - 1) {
		if :: val[m] == me -> val[m] = 0; kttl[m] = 0 :: true fi
	}
	m = 0
}

proctype client(byte me) {
	byte m, e, k, n, got, votes, miss, hi, stale, acqs, exts;
end:	do
	/* Acquisition round (quorum/round.go round, score): SET NX PX on every master.
	 * The round stops waiting for masters that answer nothing once a quorum granted
	 * or refused it (quorum/at_quorum.go): their commands are those that never reach
	 * the master here, or applied ones whose reply is lost, which this model leaves
	 * out as they only withhold a vote (SAFETY.md, what the abstraction leaves out).
	 * A failed round's clean-up of such a master runs in the background in the code;
	 * here it is release_all below, at once: its value is its round's own, which no
	 * later round writes. */
	:: atomic {
		!holding[me] && acqs < ACQS ->
		acqs++; pend[me] = 1; select(e : 0 .. CERR);
		for (m : 0 .. NM - 1) {
			if
			:: val[m] == 0 -> val[m] = me; kttl[m] = TTL; got = got | BIT(m)
			:: true   /* held, or never reaches the master */
			fi
		}
		m = 0
	}
	/* score: validity = TTL - elapsed - DRIFT, elapsed on the client's clock, which
	 * may run slow by e ticks over the validity: Until is e late in real time. */
	atomic {
		count_votes(got, votes);
		if
		:: votes >= QUORUM && el[me] < TTL - DRIFT + e ->
			holding[me] = 1; left[me] = TTL - DRIFT + e - el[me];
			grants++; epoch[me] = grants;
			check_mutex()
		:: else -> release_all()
		fi;
		got = 0; votes = 0; pend[me] = 0; el[me] = 0; e = 0
	}
#ifdef FENCING
	/* quorum/fence.go raiseCounter: read the counter from every master that answers
	 * (fence_read.lua: only the holder's masters vote), then raise it to max+1 where
	 * the lock is ours (fence.lua: stale where it is already at or above). Each round
	 * is checked against the validity when its replies are in (fenceRound). */
	if
	:: holding[me] ->
		atomic {
			for (m : 0 .. NM - 1) {
				if
				:: if :: fence[m] > hi -> hi = fence[m] :: else fi;
				   if :: val[m] == me -> got = got | BIT(m) :: else fi
				:: true
				fi
			}
			m = 0
		}
		atomic {
			count_votes(got, votes); got = 0;
			if
			:: votes >= QUORUM && left[me] > 0 -> hi++
			:: else -> holding[me] = 0; release_all(); hi = 0
			fi;
			votes = 0
		}
		if
		:: holding[me] ->
			atomic {
				for (m : 0 .. NM - 1) {
					if
					:: val[m] == me && fence[m] >= hi -> stale = 1
					:: val[m] == me && fence[m] < hi -> fence[m] = hi; got = got | BIT(m)
					:: true
					fi
				}
				m = 0
			}
			atomic {
				count_votes(got, votes);
				if
				:: votes >= QUORUM && left[me] > 0 && !stale ->
					token[me] = hi;
					assert(hi > lastfence);   /* fences strictly increase across holders */
					lastfence = hi;
#ifdef ELECTION
					assert((terms & (1 << hi)) == 0);   /* one leader per term */
					terms = terms | (1 << hi)
#endif
				:: else -> holding[me] = 0; release_all()
				fi;
				got = 0; votes = 0; stale = 0; hi = 0
			}
		:: else
		fi
	:: else
	fi;
#endif

	/* Extension (quorum/lock_extend.go extendOnce, extend.lua): refused without I/O
	 * once Until passed; never shortens a key; lost when a majority lacks the value. */
	:: atomic {
		holding[me] && left[me] > 0 && exts < EXTS && me == 1 ->
		exts++; pend[me] = 1; select(e : 0 .. CERR);
		for (m : 0 .. NM - 1) {
			if
			:: val[m] == me -> if :: kttl[m] < TTL -> kttl[m] = TTL :: else fi;
				got = got | BIT(m)
			:: val[m] != me -> miss++   /* missing or someone else's */
			:: true                     /* never reaches the master */
			fi
		}
		m = 0
	}
	atomic {
		count_votes(got, votes);
		if
		:: left[me] == 0 -> holding[me] = 0   /* Done fired during the round: lost */
		:: else -> if
			:: votes >= QUORUM && el[me] < TTL - DRIFT + e ->
				left[me] = TTL - DRIFT + e - el[me]; check_mutex()
			:: votes < QUORUM && miss > NM - QUORUM ->
				/* ErrLost (quorum/round.go roundError): no false loss, a quorum no
				 * longer holds the value although the validity lasts. */
				for (k : 0 .. NM - 1) {
					if :: val[k] == me -> n++ :: else fi
				}
				assert(n < QUORUM);
				k = 0; n = 0;
				holding[me] = 0
			:: else   /* too slow or unavailable: the validity stays as it was */
			fi
		fi;
		got = 0; votes = 0; miss = 0; pend[me] = 0; el[me] = 0; e = 0
	}

	/* Release (release.lua): compare-and-delete where it reaches. */
	:: atomic { holding[me] -> release_all(); holding[me] = 0 }

#ifdef WRITES
	/* A write to the resource: inside the validity (the holder stops at Done), or at
	 * any time before it learns it lost (LATE_WRITE). */
	:: atomic {
#ifdef LATE_WRITE
		holding[me] ->
#else
		holding[me] && left[me] > 0 ->
#endif
#ifdef FENCED_RESOURCE
		if
		:: token[me] >= res_fence -> res_fence = token[me];
			assert(epoch[me] >= res_epoch); res_epoch = epoch[me]
		:: else   /* refused: a newer holder wrote */
		fi
#else
		assert(epoch[me] >= res_epoch); res_epoch = epoch[me]   /* writes in holder order */
#endif
	}
#endif

#ifdef WALL_CLOCK_JUMP
	/* The wall clock steps back: elapsed time reads JUMP ticks short, Until is late. */
	:: atomic { holding[me] && !jumped -> jumped = 1; left[me] = left[me] + JUMP }
#endif
	od
}

init {
	atomic {
		byte c = 1;
		do
		:: c <= NC -> run client(c); c++
		:: else -> break
		od
	}
}
