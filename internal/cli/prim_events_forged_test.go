package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/events"
	"github.com/redlock/redlock/quorum"
)

// TestBugEventsForgedPermitSlot: an event of a permit key whose semaphore value
// declares fewer permits than its slot (sem:permit:7 holding a value of a
// semaphore of 2) was reported as "permit 7 of semaphore sem". It is no permit
// of it: the event names the key as a lock of its own. A slot below the limit
// its value declares is still a permit.
func TestBugEventsForgedPermitSlot(t *testing.T) {
	sem2 := &quorum.Owner{Kind: "sem", Count: 2}
	tests := []struct {
		name   string
		owner  *quorum.Owner
		kind   admin.PrimitiveKind
		permit int
	}{
		{"sem:permit:7", sem2, admin.KindLock, -1},
		{"sem:permit:2", sem2, admin.KindLock, -1},
		{"sem:permit:1", sem2, admin.KindSemaphore, 1},
		{"sem:permit:5", nil, admin.KindSemaphore, 5}, // a foreign value: no limit to compare with
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, _, permit, skip := primitiveOfEvent(events.Event{Name: tt.name, Owner: tt.owner})
			assert.False(t, skip)
			assert.Equal(t, tt.kind, kind)
			assert.Equal(t, tt.permit, permit)
		})
	}
}
