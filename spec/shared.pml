/*
 * Shared and exclusive holds as quorum/shared.go builds them: the shared holders
 * are a sorted set at the lock key (shared_acquire.lua: refused where the key holds
 * a string; the key's TTL is the latest member's expiry, never shortened), the
 * exclusive holder is a plain lock (SET NX: refused while the sorted set exists).
 * Client 1 takes exclusive holds, clients 2 and 3 shared ones. Property: never a
 * shared holder and an exclusive holder inside their validity at once.
 */
#include "params.pml"

#define NC 3
#define MEM(m, c) ((m) * 2 + (c) - 2)   /* the member of shared client c (2, 3) on master m */

byte xv[NM];       /* the string at the key: the exclusive holder, 0 none */
byte xttl[NM];
byte mttl[NM * 2]; /* a shared client's member: ticks left, 0 absent. The sorted set
                    * lives while a member does (its TTL is the latest expiry). */
bool holding[NC + 1];
byte left[NC + 1];
bool pend[NC + 1];
byte el[NC + 1];

#define TICK(m) if :: xttl[m] > 1 -> xttl[m]-- :: xttl[m] == 1 -> xttl[m] = 0; xv[m] = 0 :: else fi; \
	DEC(mttl[MEM(m, 2)]); DEC(mttl[MEM(m, 3)])
#define LOSE(m) xv[m] = 0; xttl[m] = 0; mttl[MEM(m, 2)] = 0; mttl[MEM(m, 3)] = 0
#define EVICT(m) LOSE(m)
#define CLIENT_TICK(c) DEC(left[c]); if :: pend[c] && el[c] < TTL - DRIFT + CERR -> el[c]++ :: else fi
#define TICK_CLIENTS CLIENT_TICK(1); CLIENT_TICK(2); CLIENT_TICK(3)
#define ZSET(m) (mttl[MEM(m, 2)] > 0 || mttl[MEM(m, 3)] > 0)
#include "common.pml"

inline release_all() {
	for (m : 0 .. NM - 1) {
		if
		:: me == 1 && xv[m] == 1 -> xv[m] = 0; xttl[m] = 0   /* release.lua */
		:: me > 1 -> mttl[MEM(m, me)] = 0                      /* shared_release.lua */
		:: true
		fi
	}
	m = 0
}

proctype client(byte me) {
	byte m, e, k, n, got, votes, acqs;
end:	do
	:: atomic {
		!holding[me] && acqs < 1 ->
		acqs++; pend[me] = 1; select(e : 0 .. CERR);
		for (m : 0 .. NM - 1) {
			if
			:: me == 1 && xv[m] == 0 && !ZSET(m) -> xv[m] = 1; xttl[m] = TTL; got = got | BIT(m)
			:: me > 1 && xv[m] == 0 -> mttl[MEM(m, me)] = TTL; got = got | BIT(m)
			:: true   /* refused, or never reaches the master */
			fi
		}
		m = 0
	}
	atomic {
		count_votes(got, votes);
		if
		:: votes >= QUORUM && el[me] < TTL - DRIFT + e ->
			holding[me] = 1; left[me] = TTL - DRIFT + e - el[me];
			for (k : 2 .. NC) {
				if :: holding[k] && left[k] > 0 -> n++ :: else fi
			}
			assert(!(holding[1] && left[1] > 0 && n > 0));
			k = 0; n = 0
		:: else -> release_all()
		fi;
		got = 0; votes = 0; pend[me] = 0; el[me] = 0; e = 0
	}
	:: atomic { holding[me] -> holding[me] = 0; release_all() }
	od
}

init {
	atomic { run client(1); run client(2); run client(3) }
}
