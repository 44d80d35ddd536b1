package wire_test

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/wire"
)

// TestBadReplyAmongBufferedReplies: the pump reads every reply already buffered
// before it gives them to their commands. A master that answers a batch in one
// write with a reply of no RESP type among them: the replies before it reach their
// commands, the connection is dropped there, and nothing after it is read as a
// command's reply.
func TestBadReplyAmongBufferedReplies(t *testing.T) {
	var mu sync.Mutex
	pending := map[int][]string{}
	batches := 0
	f := newFakeMaster(t, func(conn int, args []string, last bool) string {
		mu.Lock()
		defer mu.Unlock()
		if len(args) < 2 {
			return "-ERR args\r\n"
		}
		replies := append(pending[conn], bulk(args[1]))
		if !last {
			pending[conn] = replies // answered with the batch's last command
			return ""
		}
		delete(pending, conn)
		if batches++; batches%3 == 0 && len(replies) > 1 {
			replies = slices.Insert(replies, 1, "!no such type\r\n")
		}
		return strings.Join(replies, "")
	})
	var dropped atomic.Int64
	ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: time.Second, Observe: func(e wire.Event) {
		if e.Kind == wire.EventDropped {
			dropped.Add(1)
		}
	}})
	t.Cleanup(func() { _ = ps.Close() })
	answered, misread, first := echoRounds(ps, 1, 8, 40, func() {}, time.Second)
	t.Logf("%d answered, %d misread, %d connections dropped", answered, misread, dropped.Load())
	assert.Zero(t, misread, "a reply after the bad one was taken: %s", first)
	assert.Positive(t, answered)
	assert.Positive(t, dropped.Load())
}
