/*
 * A semaphore of PERMITS permits as quorum/semaphore.go builds it: PERMITS slots,
 * each a Redlock mutex; sem_acquire.lua takes the first free slot in slot order on
 * each master; the round keeps the slot most masters gave (the lowest on a tie:
 * permitAcquirer.tally), scores it as a plain round (quarantined votes dropped,
 * validity = TTL - elapsed - DRIFT) and releases every other slot it took.
 * Property: at most PERMITS clients inside their validity at once.
 */
#include "params.pml"

#define NC 3
#define PERMITS 2
#define SLOT(m, k) ((m) * PERMITS + (k))

byte slotv[NM * PERMITS];    /* slot k on master m: 0 free, else its holder */
byte sttl[NM * PERMITS];  /* its TTL left */
bool holding[NC + 1];
byte left[NC + 1];
bool pend[NC + 1];
byte el[NC + 1];

#define SLOT_TICK(i) if :: sttl[i] > 1 -> sttl[i]-- :: sttl[i] == 1 -> sttl[i] = 0; slotv[i] = 0 :: else fi
#define TICK(m) SLOT_TICK(SLOT(m, 0)); SLOT_TICK(SLOT(m, 1))
#define LOSE(m) slotv[SLOT(m, 0)] = 0; sttl[SLOT(m, 0)] = 0; slotv[SLOT(m, 1)] = 0; sttl[SLOT(m, 1)] = 0
#define EVICT(m) LOSE(m)
#define CLIENT_TICK(c) DEC(left[c]); if :: pend[c] && el[c] < TTL - DRIFT + CERR -> el[c]++ :: else fi
#define TICK_CLIENTS CLIENT_TICK(1); CLIENT_TICK(2); CLIENT_TICK(3)
#include "common.pml"

/* multi_release.lua on every slot but keep, on every master it reaches. */
inline release_slots(keep) {
	for (i : 0 .. NM * PERMITS - 1) {
		if :: slotv[i] == me && i % PERMITS != keep -> slotv[i] = 0; sttl[i] = 0 :: true fi
	}
	i = 0
}

proctype client(byte me) {
	byte i, m, e, n, best, votes, got, acqs;
	byte gave[NM];   /* the slot master m gave, +1; 0 none */
end:	do
	:: atomic {
		!holding[me] && acqs < 1 ->
		acqs++; pend[me] = 1; select(e : 0 .. CERR);
		for (m : 0 .. NM - 1) {
			if
			:: slotv[SLOT(m, 0)] == 0 -> slotv[SLOT(m, 0)] = me; sttl[SLOT(m, 0)] = TTL; gave[m] = 1
			:: slotv[SLOT(m, 0)] != 0 && slotv[SLOT(m, 1)] == 0 -> slotv[SLOT(m, 1)] = me; sttl[SLOT(m, 1)] = TTL; gave[m] = 2
			:: true   /* every slot held, or never reaches the master */
			fi
		}
		m = 0
	}
	atomic {
		/* tally: the slot most masters gave, the lowest on a tie */
		n = 0; votes = 0;
		for (m : 0 .. NM - 1) {
			if :: gave[m] == 1 -> n++ :: gave[m] == 2 -> votes++ :: else fi
		}
		if :: n >= votes && n > 0 -> best = 1 :: votes > n -> best = 2 :: else -> best = 0 fi;
		for (m : 0 .. NM - 1) {
			if :: best > 0 && gave[m] == best -> got = got | BIT(m) :: else fi;
			gave[m] = 0
		}
		m = 0; n = 0;
		count_votes(got, votes);
		if
		:: votes >= QUORUM && el[me] < TTL - DRIFT + e ->
			holding[me] = 1; left[me] = TTL - DRIFT + e - el[me];
			release_slots(best - 1);
			for (i : 1 .. NC) {
				if :: holding[i] && left[i] > 0 -> n++ :: else fi
			}
			assert(n <= PERMITS);
			i = 0; n = 0
		:: else -> release_slots(PERMITS)
		fi;
		got = 0; votes = 0; best = 0; pend[me] = 0; el[me] = 0; e = 0
	}
	:: atomic {
		holding[me] -> holding[me] = 0;
		release_slots(PERMITS)
	}
	od
}

init {
	atomic { run client(1); run client(2); run client(3) }
}
