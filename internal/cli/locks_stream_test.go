package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock/redlock/admin"
)

// streamListing is a listing with the shapes the output must survive: several
// masters, one not answering, a truncated value, names that look like JSON.
func streamListing(locks int) *admin.Listing {
	at := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	lst := &admin.Listing{ObservedAt: at, Match: `*"locks": []<&>`, Quorum: 2, Total: 3, Masters: []admin.MasterAnswer{
		{Master: "a", Answered: true, Keys: locks, Latency: time.Millisecond},
		{Master: "b", Answered: true, Keys: locks, Latency: 2 * time.Millisecond},
		{Master: "c", Err: errors.New("no reply"), Error: "no reply"},
	}}
	for i := range locks {
		name := fmt.Sprintf("job/%d", i)
		if i%7 == 3 {
			name += strings.Repeat("x", i%40) + `"locks": [] <b>`
		}
		li := admin.LockInfo{Name: name, Key: "lock:" + name, State: admin.StateHeld, Votes: 2, Quorum: 2, Total: 3,
			Value: "dGhpcyBpcyByZWRzeW5jIQ==", Library: "redsync", Validity: time.Duration(i) * time.Millisecond, ObservedAt: at}
		li.Masters = []admin.MasterView{
			{Master: "a", Present: true, Type: "string", Value: li.Value, Size: 24, PTTL: time.Second},
			{Master: "b", Present: i%5 != 0, Type: "string", Value: li.Value, Size: 24, PTTL: -1},
			{Master: "c", Err: errors.New("no reply")},
		}
		if i%11 == 0 {
			li.Masters[1].Value, li.Masters[1].Size, li.Masters[1].Truncated = strings.Repeat("v", admin.ValueReadCap), 500<<20, true
		}
		lst.Locks = append(lst.Locks, li)
	}
	return lst
}

// The streamed document is the one writeDoc writes for the whole listing, with
// and without locks, with and without an error.
func TestWriteListingJSONMatchesWholeDocument(t *testing.T) {
	s := &lockSession{redact: func(s string) string { return s }}
	for _, n := range []int{0, 1, 3, 40, 700} {
		for _, lerr := range []error{nil, errors.New("inspect: masters unavailable")} {
			t.Run(fmt.Sprintf("%d locks, error %v", n, lerr != nil), func(t *testing.T) {
				lst := streamListing(n)
				var want, got bytes.Buffer
				require.NoError(t, writeDoc(&want, s.listingJSON(lst, lerr)))
				head := *lst
				head.Locks = nil
				require.NoError(t, s.writeListingJSON(&got, &head, lockSeq(lst), lerr, nil))
				assert.Equal(t, want.String(), got.String())
			})
		}
	}
}

// A listing that fits one block is aligned exactly as text/tabwriter aligns it;
// a longer one keeps every column at least as wide as any cell above it.
func TestBlockTableAlignsAsTabwriter(t *testing.T) {
	rows := [][]string{{"NAME", "STATE", "VOTES", "VALIDITY", "HOLDER"}}
	for i := range 30 {
		rows = append(rows, []string{strings.Repeat("n", i%9) + "é", "held", "", fmt.Sprint(i * 1000), "h"},
			[]string{"  a", "(no answer)", "", "", ""})
	}
	var want, got bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	require.NoError(t, tw.Flush())
	bt := &blockTable{w: bufioWriter(&got)}
	for _, r := range rows {
		bt.row(r...)
	}
	bt.flush()
	require.NoError(t, bt.w.Flush())
	assert.Equal(t, want.String(), got.String())

	// Two blocks: the second block's narrow names are padded to the first's width.
	got.Reset()
	bt = &blockTable{w: bufioWriter(&got)}
	bt.row("a-long-name", "held", "h")
	bt.flush()
	bt.row("b", "held", "h")
	bt.flush()
	require.NoError(t, bt.w.Flush())
	assert.Equal(t, "a-long-name  held  h\nb            held  h\n", got.String())
}

// The human table marks a value read truncated with its length, and prints a
// listing of many blocks whole.
func TestPrintLockTableMarksTruncatedValues(t *testing.T) {
	s := &lockSession{redact: func(s string) string { return s }}
	lst := streamListing(2*tableBlock + 7)
	var out bytes.Buffer
	s.printLockTable(&out, lst, lockSeq(lst), nil)
	text := out.String()
	assert.Contains(t, text, fmt.Sprintf("vvvvvv… (%d bytes, read %d)", 500<<20, admin.ValueReadCap))
	assert.NotContains(t, text, strings.Repeat("v", 7), "never more than Redact's prefix")
	assert.Equal(t, 1+len(lst.Locks)*4, strings.Count(text, "\n"), "a line per lock and per master, and the header")
	assert.True(t, strings.Contains(text, "\njob/1006 "), "the last lock is printed")
}

func bufioWriter(w io.Writer) *bufio.Writer { return bufio.NewWriter(w) }
