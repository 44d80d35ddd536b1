package wire_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/internal/wire"
)

// TestAttackArrayCutShortIsNeverReadAsTheNextReply: a master that answers some
// commands with an array one element short (or cut in two writes) must never
// have the next command's reply read as the missing element. The short array is
// never whole, so the next batch is never written behind it: the round waits,
// fails with the node timeout, and the connection is dropped. (An array short in
// the middle of a batch takes the next command's reply as its element: no
// pipelining client can tell it from a long array, as it cannot tell a reply to
// no command from the next command's; the fake master cuts the last reply of a
// batch.)
func TestAttackArrayCutShortIsNeverReadAsTheNextReply(t *testing.T) {
	var n atomic.Int64
	var due atomic.Bool // a short array is owed at the end of a batch
	f := newFakeMaster(t, func(_ int, args []string, last bool) string {
		v := args[1]
		k := n.Add(1) % 5
		if k == 1 {
			due.Store(true)
		}
		switch {
		case last && due.CompareAndSwap(true, false):
			return "*3\r\n" + bulk(v) + ":1\r\n" // one element short
		case k == 2:
			return "*3\r\n" + bulk(v) + split + ":1\r\n*1\r\n-ERR inner\r\n" // whole, in two writes
		}
		return "*3\r\n" + bulk(v) + ":1\r\n*1\r\n-ERR inner\r\n"
	})
	ps := wire.New([]wire.Master{{Addr: f.addr()}}, wire.Config{Timeout: 150 * time.Millisecond})
	t.Cleanup(func() { _ = ps.Close() })
	var answered, failed, misread atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			out := make([]wire.Result, 1)
			for i := range 8 {
				v := fmt.Sprintf("g%d.%d", g, i)
				ps.Round(context.Background(), &wire.Cmd{Args: []string{"ARR", v}, Want: "*"}, out)
				r := out[0]
				switch {
				case r.Err != nil:
					failed.Add(1)
				case len(r.Array) == 3 && r.Array[0].Str == v && r.Array[1].Int == 1 && r.Array[2].Array[0].Err == wire.ErrorReply("ERR inner"):
					answered.Add(1)
				default:
					misread.Add(1)
					first.CompareAndSwap(nil, fmt.Sprintf("%s answered %+v", v, r))
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d answered, %d failed, %d misread", answered.Load(), failed.Load(), misread.Load())
	assert.Zero(t, misread.Load(), "a reply was read as another's: %v", first.Load())
	assert.Positive(t, answered.Load())
	assert.Positive(t, failed.Load(), "the short arrays failed their rounds")
}
