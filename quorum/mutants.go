package quorum

import "time"

// mutants are deliberately broken behaviours that only this package's tests switch
// on, to prove the safety checker catches each bug class. The zero value is the
// correct algorithm; no exported API can set them.
type mutants struct {
	halfQuorum           bool // votes >= N/2 instead of N/2+1
	validityFromReply    bool // elapsed time measured from the last reply, not the first send
	noDrift              bool // no drift term in the validity
	plainDelRelease      bool // release with DEL, not compare-and-delete
	extendRecreates      bool // extend SETs the key when it is missing
	noReleaseOnFail      bool // a failed round leaves its partial keys behind
	defaultClientOptions bool // go-redis defaults: retries, no context timeouts
	unvalidatedExtendTTL bool // extend sends any TTL, including 0 and negative
	// skipAbandoned drops an abandoned command from its connection's queue and
	// reads its late reply as the next command's, as a pipeline that forgets
	// abandoned commands would.
	skipAbandoned bool
	// lateCancel delays the cancellation of a lock whose validity ended, as a mutex
	// held across an extension's I/O once did.
	lateCancel time.Duration
}

// withMutants switches on broken behaviours. Tests only.
func withMutants(m mutants) Option { return func(c *config) { c.mut = m } }
