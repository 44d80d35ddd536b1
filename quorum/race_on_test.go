//go:build race

package quorum

// raceOn: the race detector is on (its bookkeeping allocates).
const raceOn = true
