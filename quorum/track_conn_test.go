package quorum

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/wire"
)

// scriptedMaster answers each command it reads (a RESP array of bulk strings)
// with the reply replies gives for its words, and records the commands.
type scriptedMaster struct {
	ln      net.Listener
	replies map[string]string
	hangUp  bool // close the connection after the first reply
	mu      sync.Mutex
	got     []string
}

func newScriptedMaster(t *testing.T, replies map[string]string, hangUp bool) *scriptedMaster {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sm := &scriptedMaster{ln: ln, replies: replies, hangUp: hangUp}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go sm.serve(c)
		}
	}()
	return sm
}

func (sm *scriptedMaster) serve(c net.Conn) {
	defer func() { _ = c.Close() }()
	rd := bufio.NewReader(c)
	for {
		head, err := rd.ReadString('\n')
		if err != nil || !strings.HasPrefix(head, "*") {
			return
		}
		var words []string
		for i := 0; i < 2*int(head[1]-'0'); i++ { // commands of fewer than 10 words
			l, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			if i%2 == 1 {
				words = append(words, strings.TrimSuffix(l, "\r\n"))
			}
		}
		cmd := strings.Join(words, " ")
		sm.mu.Lock()
		sm.got = append(sm.got, cmd)
		sm.mu.Unlock()
		reply, ok := sm.replies[cmd]
		if !ok {
			reply = "-ERR unknown command\r\n"
		}
		if _, err := c.Write([]byte(reply)); err != nil || sm.hangUp {
			return
		}
	}
}

func (sm *scriptedMaster) commands() []string {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return append([]string(nil), sm.got...)
}

// The tracking connection's handshake: a master that takes HELLO 3 and CLIENT
// TRACKING ON is tracked; one that refuses either for good is polled through
// the connection; a busy or loading master, or one whose reply does not parse,
// is an error (dialled again). Whatever the handshake read, the connection is
// in step after it: the next command's reply is its own.
func TestTrackConnHandshake(t *testing.T) {
	hello := "%2\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n"
	for _, tc := range []struct {
		name            string
		hello, tracking string
		wantTracking    bool
		wantErr         string
		wantCommands    []string
		hangUp          bool
	}{
		{"tracked", hello, "+OK\r\n", true, "", []string{"HELLO 3", "CLIENT TRACKING ON", "PING"}, false},
		{"an attribute before the reply", "|1\r\n+a\r\n+b\r\n" + hello, "+OK\r\n", true, "", []string{"HELLO 3", "CLIENT TRACKING ON", "PING"}, false},
		{"no RESP3", "-NOPROTO sorry, this protocol version is not supported\r\n", "", false, "", []string{"HELLO 3", "PING"}, false},
		{"tracking refused", hello, "-NOPERM this user has no permissions\r\n", false, "", []string{"HELLO 3", "CLIENT TRACKING ON", "PING"}, false},
		{"busy", "-BUSY Redis is busy running a script\r\n", "", false, "BUSY", nil, false},
		{"loading", hello, "-LOADING Redis is loading the dataset in memory\r\n", false, "LOADING", nil, false},
		{"garbage", "HTTP/1.1 400 Bad Request\r\n\r\n", "", false, wire.ErrProtocol.Error(), nil, false},
		{"a reply cut short", "%2\r\n$6\r\nserver\r\n", "", false, "EOF", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replies := map[string]string{"HELLO 3": tc.hello, "CLIENT TRACKING ON": tc.tracking, "PING": "+PONG\r\n"}
			sm := newScriptedMaster(t, replies, tc.hangUp)
			n := &node{name: "m1", master: wire.Master{Addr: sm.ln.Addr().String()}}
			lc, tracking, err := dialTracker(context.Background(), n, 5*time.Second)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = lc.wc.Close() })
			assert.Equal(t, tc.wantTracking, tracking)
			lc.out = wire.AppendCommand(lc.out, "PING")
			require.NoError(t, lc.send(1, time.Now().Add(5*time.Second)))
			v, err := lc.wc.Value(trackValueCap)
			require.NoError(t, err)
			assert.Equal(t, wire.Value{Type: '+', Str: "PONG"}, v)
			assert.Equal(t, tc.wantCommands, sm.commands())
		})
	}
}
