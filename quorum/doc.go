// Package quorum takes distributed locks on N independent Redis masters with the
// Redlock algorithm.
//
// A Lock returned by Acquire or TryAcquire (or moved forward by a successful
// Extend) is held by no other client of the same name before its Until, provided
// that the masters fail independently and a quorum (N/2+1) of them keeps every key
// it granted until its TTL ends (a restart without persistence forgets: the restart
// quarantine covers it), that client and master clocks drift less than the drift
// budget (ttl*factor + extra), and that the holder stops acting when Done fires.
// Until is never later than the start of the successful round plus ttl minus the
// drift budget; Done fires no later than Until unless an extension completed
// before it. A failed round releases what it set on every master; release and
// extend compare the whole value, so a foreign token never touches another
// owner's key. Nothing here guards a holder that pauses past Until and then acts:
// use fencing tokens (WithFencing) for that.
//
// SAFETY.md in the repository states these guarantees in full, with the hazards,
// the scenarios and attack tests that check them, and the mutants that prove the
// checks bite.
package quorum
