package quorum

import (
	"context"
	_ "embed"

	"github.com/redlock/redlock/internal/wire"
)

// One master's command over the transport, for the administrative actions that
// decide master by master what to send next (fanout: a force-expire that finds a
// shared key where it expected a string, a revocation, a permit's
// announcement). Each command is a round of the pipelined path to that master
// alone (wire.Cmd.Only), so it shares the master's connection, its handshake
// (AUTH, TLS, the run_id that the quarantine watches) and its node timeout with
// the locks' own rounds, and a cancellation of ctx ends it at once.

var (
	//go:embed scripts/delete_announce.lua
	deleteAnnounceLua string
	// deleteAnnounceW deletes a key whatever it holds and announces it
	// (force-expire without a token).
	deleteAnnounceW = wire.NewScript(deleteAnnounceLua)
)

// onMaster runs cmd on the master n alone and returns its reply. The error is
// the master's failure: no reply within the node timeout (or before ctx ended),
// an error reply (fanout's explain makes a WRONGTYPE one match ErrWrongType), or
// a reply of a type cmd.Want does not take (the transport then drops the
// connection).
func (m *Manager) onMaster(ctx context.Context, n *node, cmd wire.Cmd) (wire.Result, error) {
	i := m.nodeIndex(n)
	only := make([]bool, len(m.nodes))
	only[i] = true
	cmd.Only = only
	res := make([]wire.Result, len(m.nodes))
	m.tr.Round(ctx, &cmd, res)
	return res[i], replyFailure(&res[i], cmd.Want)
}

// evalOn runs script over keys and args on the master n alone (EVALSHA, EVAL
// after NOSCRIPT) and returns its integer reply.
func (m *Manager) evalOn(ctx context.Context, n *node, script *wire.Script, keys []string, args ...string) (int64, error) {
	r, err := m.onMaster(ctx, n, wire.Cmd{Script: script, Keys: keys, Args: args, Want: ":"})
	return r.Int, err
}

// doOn sends the command args to the master n alone and returns its reply;
// want lists the reply types it takes besides an error reply.
func (m *Manager) doOn(ctx context.Context, n *node, want string, args ...string) (wire.Result, error) {
	return m.onMaster(ctx, n, wire.Cmd{Args: args, Want: want})
}
