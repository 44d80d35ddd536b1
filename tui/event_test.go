package tui

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/events"
)

// TestEventKindsAreTheEventsKinds: the console's kinds are the strings the
// event sources write (a kind spelt otherwise would lose its colour).
func TestEventKindsAreTheEventsKinds(t *testing.T) {
	assert.Equal(t,
		[]string{events.Acquired, events.Extended, events.Released, events.Expired, events.ChangedHands, events.ForceExpired, events.Revoked},
		[]string{EventAcquired, EventExtended, EventReleased, EventExpired, EventChangedHands, EventForceExpired, EventRevoked})
}
