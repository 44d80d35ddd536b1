package wire_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/wire"
)

// TestAttackExtraReplyOnOneOfSeveralMasters: the idle check of a round over
// several idle masters is one poll of all their sockets (precheck). A master that
// sends a reply to no command after its reply (in a later segment, so that it is
// in the socket, not the read buffer, when the next round starts) has its
// connection dropped before the next command is written on it, whichever master
// it is and however many misbehave together: no reply is read as another
// command's.
func TestAttackExtraReplyOnOneOfSeveralMasters(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  []bool // which of the masters send extra replies
	}{
		{"first of three", []bool{true, false, false}},
		{"last of three", []bool{false, false, true}},
		{"two of five", []bool{false, true, false, true, false}},
		{"all of three", []bool{true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var masters []wire.Master
			var wrote []chan struct{}
			var extras atomic.Int64
			for _, bad := range tc.bad {
				var echoes atomic.Int64
				f := newFakeMaster(t, func(_ int, args []string, last bool) string {
					if args[0] != "ECHO" {
						return "-ERR unknown\r\n"
					}
					out := bulk(args[1])
					if bad && echoes.Add(1)%3 == 1 && last {
						extras.Add(1)
						out += split + bulk("extra") // unasked, a millisecond later
					}
					return out
				})
				if bad {
					f.wrote = make(chan struct{}, 1000)
					wrote = append(wrote, f.wrote)
				}
				masters = append(masters, wire.Master{Addr: f.addr()})
			}
			// The next round starts once every misbehaving master has written all
			// it had to say for this one (the extra reply included).
			between := func() {
				for _, w := range wrote {
					select {
					case <-w:
					case <-time.After(time.Second):
					}
				}
				time.Sleep(time.Millisecond)
			}
			ps := wire.New(masters, wire.Config{Timeout: time.Second})
			t.Cleanup(func() { _ = ps.Close() })
			answered, misread, first := echoRounds(ps, len(masters), 1, 60, between, time.Second)
			t.Logf("%d answered, %d misread, %d extra replies", answered, misread, extras.Load())
			assert.Zero(t, misread, "a reply to no command was read as a command's: %s", first)
			assert.Positive(t, extras.Load())
			assert.Greater(t, answered, int64(len(masters)*60/2))
		})
	}
}
