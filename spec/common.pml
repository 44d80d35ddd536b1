/*
 * What every model shares: real time, the masters' faults (restart with or without
 * persistence, the restart quarantine, eviction), a client's clock error, and the
 * helpers that count votes. A model defines, before including this file:
 *   TICK(m)    one tick on master m: its keys' TTLs run down, expired keys go;
 *   TICK_CLIENTS  one tick on the clients' timers;
 *   LOSE(m)    what a restart without persistence forgets on m;
 *   EVICT(m)   what an eviction removes from m (only with -DEVICTION).
 *
 * Switches (cc -D, through spin -D):
 *   PERSIST        restarts keep the data (appendfsync always): LOSE is not applied;
 *   NO_QUARANTINE  a restarted master votes at once (WithRestartQuarantine(0));
 *   RESTARTS=n     at most n restarts in a run (default 1);
 *   EVICTION       a master may evict a lock key with a TTL (volatile-* policies);
 *   CERR=n         the bound on a client clock's error over one validity, in ticks
 *                  (default DRIFT: the rate error the drift budget covers).
 */
#ifndef PARAMS
#define PARAMS
#include "params.pml"
#endif

#ifndef CERR
#define CERR DRIFT
#endif
#ifndef RESTARTS
#define RESTARTS 1
#endif

/* Time is relative: every clock in the models is a count of ticks left (or gone),
 * so that states a whole tick apart are the same state and the search needs no
 * horizon. TICK(m) is the model's own part of a tick for master m; TICK_CLIENTS
 * the clients' part. */
byte quar[NM];     /* ticks left of master m's restart quarantine, 0 none */
byte restarted;    /* restarts so far */

#define DEC(x) if :: x > 0 -> x-- :: else fi

/* A tick passes; masters drop what expired by their clocks (exact here: the whole
 * rate error is put on the clients, which is what the drift budget covers: only
 * the client's clock relative to the masters' matters). */
active proctype clock() {
end:	do
	:: atomic {
		TICK(0); TICK(1); TICK(2);
		DEC(quar[0]); DEC(quar[1]); DEC(quar[2]);
		TICK_CLIENTS
	}
	od
}

/* A master restarts (at once: the worst case) or evicts a key. A restart without
 * persistence forgets everything; every client reconnects, reads uptime and run_id
 * (quorum/manager.go observe) and quarantines the master until its start plus the
 * window, measured on the client's clock (early by up to CERR in real time). */
active proctype faults() {
	byte m, e;
end:	do
	:: atomic {
		restarted < RESTARTS ->
		restarted++;
		select(m : 0 .. NM - 1);
#ifndef PERSIST
		LOSE(m);
#endif
#ifndef NO_QUARANTINE
		select(e : 0 .. CERR);
		quar[m] = QUAR - e;
#endif
		m = 0; e = 0
	}
#ifdef EVICTION
	:: atomic { select(m : 0 .. NM - 1); EVICT(m); m = 0 }
#endif
	od
}

/* votes counts the masters in the bit set got that are not quarantined now: the
 * quarantined ones' votes do not count (quorum/round.go unquarantinedVotes).
 * Written out for NM = 3, as TICK and the clock are. */
#define BIT(m) (1 << (m))
inline count_votes(got, votes) {
	votes = 0;
	if :: (got & BIT(0)) && quar[0] == 0 -> votes++ :: else fi;
	if :: (got & BIT(1)) && quar[1] == 0 -> votes++ :: else fi;
	if :: (got & BIT(2)) && quar[2] == 0 -> votes++ :: else fi
}
