package events

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/internal/redistest"
)

// The value read after a set is that set's value, or unknown when the key changed
// before the GET: never the next holder's value.
func TestReaderValueAfterSet(t *testing.T) {
	s := redistest.StartOne(t, "a", redistest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := s.Client()
	require.NoError(t, c.ConfigSet(ctx, "notify-keyspace-events", "Kg$x").Err())
	ps := c.PSubscribe(ctx, "__keyspace@0__:lock:*")
	defer ps.Close()
	_, err := ps.Receive(ctx) // the subscription
	require.NoError(t, err)
	rd := NewReader(ps)
	get := func(ctx context.Context) (string, error) { return c.Get(ctx, "lock:x").Result() }
	const ch = "__keyspace@0__:lock:x"

	require.NoError(t, c.Set(ctx, "lock:x", "first", time.Minute).Err())
	msg, err := rd.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "set", msg.Payload)
	assert.Equal(t, "first", rd.ValueAfterSet(ctx, ch, get), "nothing changed the key: the value is the set's")
	msg, err = rd.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "expire", msg.Payload, "its own expire, kept in order")

	// Released and taken again before the GET: the value read is the next holder's.
	require.NoError(t, c.Del(ctx, "lock:x").Err())
	require.NoError(t, c.Set(ctx, "lock:x", "second", time.Minute).Err())
	require.NoError(t, c.Del(ctx, "lock:x").Err())
	require.NoError(t, c.Set(ctx, "lock:x", "third", time.Minute).Err())
	msg, err = rd.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "del", msg.Payload)
	msg, err = rd.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "set", msg.Payload)
	assert.Equal(t, "", rd.ValueAfterSet(ctx, ch, get), "the key changed since: unknown, not \"third\"")
	var rest []string
	for i := 0; i < 4; i++ {
		msg, err = rd.Next(ctx)
		require.NoError(t, err)
		rest = append(rest, msg.Payload)
	}
	assert.Equal(t, []string{"expire", "del", "set", "expire"}, rest, "every message is still delivered, in order")
}
