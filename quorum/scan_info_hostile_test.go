package quorum

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// infoConn is a connection to a real master whose reply to INFO, the first
// command a listing connection sends, is replaced by another's.
type infoConn struct {
	net.Conn
	fake    func() []byte
	r       *bufio.Reader
	mu      sync.Mutex
	asked   bool   // INFO was written and its reply not yet replaced
	pending []byte // the fake reply, still to be read
}

func (c *infoConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	if strings.Contains(string(b), "INFO") {
		c.asked = true
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *infoConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asked {
		c.asked = false
		// Read the master's own reply past: a bulk string.
		line, err := c.r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		if _, err := io.CopyN(io.Discard, c.r, int64(n)+2); err != nil {
			return 0, err
		}
		c.pending = c.fake()
	}
	if len(c.pending) > 0 {
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.r.Read(b)
}

func bulkReply(s string) []byte { return fmt.Appendf(nil, "$%d\r\n%s\r\n", len(s), s) }

// TestAttackScannerHostileInfo: a master whose INFO replies are hostile (a
// run_id of control characters, one that changes with every connection, an
// INFO of 2 MiB, several run_id lines, an error or a reply of another type)
// while Inspect runs beside the Scanner: no Step fails for the masters that
// answer INFO with a bulk string or an error, and after a pass without restart
// the listing is what the masters hold.
func TestAttackScannerHostileInfo(t *testing.T) {
	var seq atomic.Int64
	defer func() { t.Logf("%d connections given a run_id of their own", seq.Load()) }()
	for _, tc := range []struct {
		name string
		fake func() []byte
	}{
		{"control characters", func() []byte { return bulkReply("# Server\r\nrun_id:\x1b[2J\x00\r\n") }},
		{"a run_id per connection", func() []byte { return bulkReply(fmt.Sprintf("run_id:%040d\r\n", seq.Add(1))) }},
		{"2 MiB", func() []byte { return bulkReply("run_id:x\r\n" + strings.Repeat("y", 2<<20)) }},
		{"run_id twice", func() []byte { return bulkReply("run_id:a\r\nrun_id:b\r\n") }},
		{"no run_id", func() []byte { return bulkReply("") }},
		{"an error", func() []byte { return []byte("-ERR unknown command 'INFO'\r\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c := redistest.Start(t, 3, redistest.Options{})
			for _, s := range c.Servers {
				fillBulk(t, s, 2500)
			}
			m := managerVia(t, c, func(i int, nd *Node) {
				if i != 0 {
					return
				}
				nd.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
					var d net.Dialer
					cn, err := d.DialContext(ctx, network, addr)
					if err != nil {
						return nil, err
					}
					return &infoConn{Conn: cn, fake: tc.fake, r: bufio.NewReader(cn)}, nil
				}
			})
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, _ = m.inspect(ctx, "")
				}
			})
			s := m.newScanner("")
			for steps := 0; s.Progress().Passes < 2; steps++ {
				require.Less(t, steps, 100, "two passes never ended")
				require.NoError(t, s.Step(ctx))
				require.NoError(t, s.nodes[0].err, "the master of hostile INFO replies")
			}
			close(stop)
			wg.Wait()
			got, err := s.Listing()
			require.NoError(t, err)
			want, err := m.inspect(ctx, "")
			require.NoError(t, err)
			assert.Equal(t, summary(want), summary(got))
			t.Logf("run_id %q", s.nodes[0].runID)
		})
	}
}
