package wire_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/internal/wire"
)

// TestCommandsJoiningALoneCommandAreWritten: a round that finds a pipe idle writes
// its command alone, after looking at the idle connection (a system call, with
// the pipe's lock released); commands queued meanwhile join its batch and must be
// written with it. (They were once encoded without the lone command, which then
// never got a reply: a 250 ms stall and a dropped connection.) Bursts of rounds
// after idle pauses, every one answered.
func TestCommandsJoiningALoneCommandAreWritten(t *testing.T) {
	c := redistest.Start(t, 1, redistest.Options{})
	ps := wire.New([]wire.Master{{Addr: c.Servers[0].Addr()}}, wire.Config{Timeout: 2 * time.Second})
	t.Cleanup(func() { _ = ps.Close() })
	ctx := context.Background()
	for burst := range 60 {
		time.Sleep(12 * time.Millisecond) // idle past the idle check's threshold
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for g := range 8 {
			wg.Go(func() {
				v := fmt.Sprintf("b%d.g%d", burst, g)
				out := make([]wire.Result, 1)
				<-start
				ps.Round(ctx, &wire.Cmd{Args: []string{"ECHO", v}, Want: "$"}, out)
				switch {
				case out[0].Err != nil:
					errs[g] = out[0].Err
				case out[0].Str != v:
					errs[g] = fmt.Errorf("ECHO %s answered %q", v, out[0].Str)
				}
			})
		}
		close(start)
		wg.Wait()
		for g, err := range errs {
			require.NoError(t, err, "burst %d, round %d", burst, g)
		}
	}
}
