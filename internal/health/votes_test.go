package health

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/quorum"
	"github.com/redlock/redlock/topology"
)

func TestMissedVotes(t *testing.T) {
	rep := &quorum.Report{Nodes: []quorum.NodeResult{
		{Node: "a", Outcome: quorum.OutcomeOK},
		{Node: "b", Outcome: quorum.OutcomeError, Err: errors.New("WRONGPASS invalid username-password pair")},
		{Node: "c", Outcome: quorum.OutcomeQuarantined},
		{Node: "d", Outcome: quorum.OutcomeError, Err: errors.New("not a Redis server: INFO server: unexpected reply 'H'")},
		{Node: "e", Outcome: quorum.OutcomeError, Err: errors.New("i/o timeout")},
	}}
	assert.Equal(t, "b (WRONGPASS invalid username-password pair: the master refused the credentials; check its username and password in the topology file); "+
		"c (in restart quarantine: it may not vote yet); "+
		"d (not a Redis server: INFO server: unexpected reply 'H': the address answers, but not in the Redis protocol (an HTTP server or a proxy?); check the address and port); "+
		"e (i/o timeout)", MissedVotes(rep))
	assert.Equal(t, "", MissedVotes(&quorum.Report{Nodes: []quorum.NodeResult{{Node: "a"}}}))
	assert.Equal(t, "", MissedVotes(nil))
}

// Only a NOPERM reply means permissions; a server that does not know the command is
// said to, and a peer that is not Redis is a not-redis error.
func TestRefusalAdvice(t *testing.T) {
	c := topology.NewCluster("x")
	now := time.Now()
	finding := func(h topology.NodeHealth, code string) *topology.Finding {
		Assess(c, &h, now)
		for i := range h.Findings {
			if h.Findings[i].Code == code {
				return &h.Findings[i]
			}
		}
		return nil
	}
	up := topology.NodeHealth{Master: "a", Address: "127.0.0.1:1", Reachable: true}

	h := up
	h.ConfigError = "NOPERM this user has no permissions to run the 'config|get' command"
	f := finding(h, topology.CodeConfigDenied)
	if assert.NotNil(t, f) {
		assert.Equal(t, "CONFIG GET refused: settings not checked", f.Summary)
		assert.Contains(t, f.Detail, "+config|get")
	}
	h = up
	h.ConfigError = "ERR unknown command `config`, with args beginning with: `get`"
	f = finding(h, topology.CodeConfigDenied)
	if assert.NotNil(t, f) {
		assert.Equal(t, "CONFIG GET not implemented by this server: settings not checked", f.Summary)
		assert.NotContains(t, f.Detail, "admin user")
	}
	h = up
	h.InfoError = "i/o timeout"
	f = finding(h, topology.CodeInfoDenied)
	if assert.NotNil(t, f) {
		assert.NotContains(t, f.Detail, "+info", "a timeout is no permission problem")
	}
	h = topology.NodeHealth{Master: "a", Address: "127.0.0.1:1", Error: `redis: can't parse map reply: "HTTP/1.1 400 Bad Request"`}
	f = finding(h, topology.CodeNotRedis)
	if assert.NotNil(t, f) {
		assert.Equal(t, topology.SeverityError, f.Severity)
		assert.Contains(t, f.Detail, "check the address and port")
	}
	assert.Nil(t, finding(h, topology.CodeUnreachable))
}
