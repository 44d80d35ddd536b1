package health

import (
	"fmt"
	"strings"

	"github.com/redlock/redlock/quorum"
)

// MissedVotes names the masters that did not vote in a successful round (an
// acquisition or extension that reached the quorum without every master), each
// with why: "e (NOAUTH Authentication required.: the master refused the
// credentials; check its username and password in the topology file)". It is ""
// when every master voted. Server answers are quoted as they came: escape them
// before printing.
func MissedVotes(rep *quorum.Report) string {
	if rep == nil {
		return ""
	}
	var missed []string
	for _, n := range rep.Nodes {
		var why string
		switch n.Outcome {
		case quorum.OutcomeOK:
			continue
		case quorum.OutcomeForeign:
			why = "holds another owner's value"
		case quorum.OutcomeMissing:
			why = "the key is not there"
		case quorum.OutcomeQuarantined:
			why = "in restart quarantine: it may not vote yet"
		default:
			why = "no answer"
			if n.Err != nil {
				why = n.Err.Error()
			}
			why += Advice(why)
		}
		missed = append(missed, fmt.Sprintf("%s (%s)", n.Node, why))
	}
	return strings.Join(missed, "; ")
}

// Advice returns what an error text from a master asks the operator to do, as a
// clause to append ("" when the text is not one it recognises): refused
// credentials (NOAUTH, WRONGPASS), a missing ACL permission (NOPERM), a peer that
// does not speak the Redis protocol.
func Advice(msg string) string {
	switch {
	case strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "WRONGPASS"):
		return ": the master refused the credentials; check its username and password in the topology file"
	case strings.Contains(msg, "NOPERM"):
		return ": the user lacks an ACL permission on this master"
	case notRedis(msg):
		return ": the address answers, but not in the Redis protocol (an HTTP server or a proxy?); check the address and port"
	}
	return ""
}

// notRedis reports whether an error text says the peer answered something that
// is not a Redis reply (go-redis's and the quorum wire path's parse errors).
func notRedis(msg string) bool {
	for _, s := range []string{"redis: can't parse", "redis: invalid reply", "unexpected reply"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
