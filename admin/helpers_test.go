package admin_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// testCluster starts n masters and returns them with a Manager over them and
// its Admin, closed when the test ends.
func testCluster(t *testing.T, n int, opts ...quorum.Option) (*redistest.Cluster, *quorum.Manager, *admin.Admin) {
	t.Helper()
	c := redistest.Start(t, n, redistest.Options{})
	m := managerFor(t, c, opts...)
	return c, m, admin.New(m)
}

func managerFor(t *testing.T, c *redistest.Cluster, opts ...quorum.Option) *quorum.Manager {
	t.Helper()
	nodes := make([]quorum.Node, len(c.Servers))
	for i, s := range c.Servers {
		nodes[i] = quorum.Node{Name: s.Name, Addr: s.Addr()}
	}
	base := []quorum.Option{quorum.WithRestartQuarantine(0), quorum.WithNodeTimeout(200 * time.Millisecond), quorum.WithRetry(3, 20*time.Millisecond, 10*time.Millisecond)}
	m, err := quorum.New(nodes, append(base, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}
