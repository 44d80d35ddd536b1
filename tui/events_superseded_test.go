package tui

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drainingSource reports each event once, as the cluster source does: an event
// goes to the first poll that answers after it was seen.
type drainingSource struct {
	base    *fakeSource
	mu      sync.Mutex
	pending []Event
}

func (s *drainingSource) Poll(ctx context.Context, visible []string) Snapshot {
	snap := s.base.Poll(ctx, visible)
	s.mu.Lock()
	defer s.mu.Unlock()
	snap.EventSource = EventsKeyspace
	snap.Events, s.pending = s.pending, nil
	return snap
}

// TestAttackEventsLostWhenPollSuperseded: a poll is in flight when an action ends
// (here a release) and starts another poll; the first answer is then stale and
// dropped. The events it carried were drained from the source, so they must not
// be lost with it: the history must show the lock taken and released meanwhile.
func TestAttackEventsLostWhenPollSuperseded(t *testing.T) {
	m, fsrc, _, _ := fixture(t, 140, 50, false)
	src := &drainingSource{base: fsrc}
	m.poll.src = src
	started(t, m)

	src.mu.Lock()
	src.pending = []Event{{At: t0, Kind: EventAcquired, Name: "blink"}, {At: t0, Kind: EventReleased, Name: "blink"}}
	src.mu.Unlock()
	first := m.startPoll() // in flight: its command reads (and drains) the source
	msg1 := first()
	_, second := m.Update(releasedMsg{name: "job"}) // an action ends: a new poll
	require.NotNil(t, second)
	msg2 := second()
	m.Update(msg1) // stale: dropped
	m.Update(msg2)

	var names []string
	for _, e := range m.poll.history {
		names = append(names, e.kind+" "+e.name)
	}
	assert.Contains(t, names, EventAcquired+" blink", "events of a dropped answer are lost")
	assert.Contains(t, names, EventReleased+" blink")
}
