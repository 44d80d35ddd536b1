package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// No file needed: -masters (or REDLOCK_MASTERS) with host:port and redis:// URLs.
func TestMastersWithoutAFile(t *testing.T) {
	c := redistest.Start(t, 3, redistest.Options{})
	const pw = "s3cret-Pass-9d1"
	require.NoError(t, c.Servers[2].Client().ConfigSet(context.Background(), "requirepass", pw).Err())
	list := c.Servers[0].Addr() + ",redis://" + c.Servers[1].Addr() + "/0,redis://:" + pw + "@" + c.Servers[2].Addr()
	run := func(env []string, args ...string) result {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		return finish(t, cmd)
	}
	r := run(nil, "acquire", "nofile", "-masters", list, "-ttl", "5s")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "3 of 3 masters")
	r = run([]string{"REDLOCK_MASTERS=" + list}, "locks", "-json")
	require.Equal(t, 0, r.code, r.stderr)
	checkDoc(t, "locks", r.stdout)
	assert.Contains(t, r.stdout, `"name": "nofile"`)

	// A wrong password: the master is named, the password is not.
	bad := strings.Replace(list, pw, "Wrong-Pass-77", 1)
	r = run(nil, "locks", "-masters", bad)
	assert.Equal(t, 0, r.code, "2 of 3 answered: a quorum")
	assert.Contains(t, r.stderr, c.Servers[2].Addr())
	for _, secret := range []string{pw, "Wrong-Pass-77"} {
		assert.NotContains(t, r.stdout+r.stderr, secret)
	}
	r = run(nil, "locks", "-masters", "http://"+c.Servers[0].Addr())
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `scheme "http"`)
	r = run(nil, "locks", "-masters", list, "-config", "x.hcl")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "-masters and -config are exclusive")
	assert.NotContains(t, r.stderr, pw)
	r = run([]string{"REDLOCK_TIMEOUT=soon"}, "locks", "-masters", list)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "REDLOCK_TIMEOUT")
}
