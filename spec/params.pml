/*
 * The constants every model shares, and what in the code each one mirrors.
 * quorum/model_sync_test.go parses the lines "#define NAME VALUE" of this file and
 * fails when a value no longer follows the code it cites.
 *
 * Time is counted in ticks of real time. A lock's TTL is TTL ticks: the tick is
 * a TTL-th of the lock being modelled, so every duration below is that duration of
 * the code rounded up to whole ticks at DefaultTTL (a tick of 10 s) or, for the
 * quarantine, at DefaultMaxTTL (a tick of 100 s).
 */

/* Masters and the quorum: quorum/manager.go New, quorum: len(nodes)/2 + 1. */
#define NM 3
#define QUORUM 2

/* The lock's TTL in ticks (the scale of the model, not a code value). */
#define TTL 3

/* The drift budget: quorum/options.go config.drift, ttl*DefaultDriftFactor +
 * DefaultDriftExtra, rounded up to whole ticks at DefaultTTL (302 ms -> 1 tick).
 * The budget's factor and extra, as the code has them (the models use DRIFT): */
#define DRIFT_FACTOR_PERMILLE 10
#define DRIFT_EXTRA_MS 2
#define DRIFT 1

/* The node timeout is not a constant of the models: a command reaches a master
 * within DefaultNodeTimeout (50 ms, far below a tick) of its round's start or never
 * (quorum/round.go keysUntil). The models send all of a round's commands at the
 * tick the round starts, the worst case (a key set later lives longer), and let
 * time pass before the round is scored (a slow or paused client). */

/* The restart quarantine window: quorum/options.go validate, quarantine =
 * maxTTL + drift(maxTTL), at DefaultMaxTTL (5 min + 3.002 s, plus the second
 * quorum/manager.go observe adds for uptime's truncation) rounded up: TTL + DRIFT. */
#define QUAR (TTL + DRIFT)
