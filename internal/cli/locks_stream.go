package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
)

// The output of `locks`, written while the listing is iterated: a listing of
// 100,000 locks is never held as one table or one document in memory
// (admin.Admin.InspectStream keeps the masters' answers; each lock is built, printed
// and dropped).

// tableBlock is how many locks the table buffers before it writes them.
const tableBlock = 500

// writeListingJSON writes the -json document of a listing, byte for byte what
// writeDoc(w, s.listingJSON(...)) writes for the whole listing, one lock at a time.
//
// The primitives' keys are kept aside as they pass (copies: few, against the
// plain locks) and their "primitives" member is written after the locks.
func (s *lockSession) writeListingJSON(w io.Writer, head *admin.Listing, locks iter.Seq[*admin.LockInfo], err error, prims *primitiveKeys) error {
	doc, derr := versioned(s.listingJSON(head, err))
	if derr != nil {
		return derr
	}
	var out bytes.Buffer
	if derr := json.Indent(&out, doc, "", "  "); derr != nil {
		return derr
	}
	// The document with no locks holds `"locks": []` once, at the top level (every
	// string in it is escaped, so no value can hold that text).
	before, after, ok := bytes.Cut(out.Bytes(), []byte("\n  \"locks\": []"))
	if !ok {
		return errors.New("locks: the JSON document has no locks member")
	}
	cw := newChunkWriter(w)
	buf := cw.take()
	buf = append(append(buf, before...), "\n  \"locks\": ["...)
	// Two stages on two cores: this goroutine builds each lock (its quorum view)
	// and encodes it, another writes the encoded chunks, in order.
	enc := lockEncoder{s: s}
	n := 0
	for li := range locks {
		if prims.keep(li) && admin.Bookkeeping(li) {
			continue // folded into its primitive, not a lock of its own
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = enc.appendLock(buf, li)
		n++
		if len(buf) >= jsonChunkBytes {
			if buf = cw.send(buf); buf == nil {
				break // the output failed: the rest would be lost too
			}
		}
	}
	if buf == nil {
		return cw.close(nil)
	}
	if n > 0 {
		buf = append(buf, "\n  "...)
	}
	// Every lock is written before the primitives are read (they may warn on
	// stderr): nothing writes while they are.
	if err := cw.close(append(buf, ']')); err != nil {
		return err
	}
	if after, err = prims.writeJSON(after); err != nil {
		return err
	}
	_, err = w.Write(append(after, '\n'))
	return err
}

// jsonChunkBytes is how much of a -json listing is encoded before it is handed
// to the goroutine that writes it.
const jsonChunkBytes = 256 << 10

// chunkWriter writes chunks of bytes to w on a goroutine of its own, in order,
// while the next chunk is being filled: two buffers go back and forth.
type chunkWriter struct {
	full chan []byte
	free chan []byte
	done chan error
}

func newChunkWriter(w io.Writer) *chunkWriter {
	cw := &chunkWriter{full: make(chan []byte, 1), free: make(chan []byte, 2), done: make(chan error, 1)}
	cw.free <- make([]byte, 0, jsonChunkBytes+64<<10)
	cw.free <- make([]byte, 0, jsonChunkBytes+64<<10)
	go func() {
		var err error
		for b := range cw.full {
			if err == nil {
				_, err = w.Write(b)
			}
			if err != nil {
				b = nil // tells the sender to stop
			}
			cw.free <- b[:0]
		}
		cw.done <- err
	}()
	return cw
}

// take returns an empty buffer to fill.
func (cw *chunkWriter) take() []byte { return <-cw.free }

// send hands b to the writer and returns the next buffer to fill, or nil once
// a write has failed (close then returns the error).
func (cw *chunkWriter) send(b []byte) []byte {
	cw.full <- b
	return cw.take()
}

// close writes last (when not nil), waits for every write and returns the
// first error.
func (cw *chunkWriter) close(last []byte) error {
	if last != nil {
		cw.full <- last
	}
	close(cw.full)
	return <-cw.done
}

// printLockTable writes the listing as a table, with one line per master under
// each lock, tableBlock locks at a time. Columns are aligned as text/tabwriter
// aligns them (two spaces of padding) over everything printed so far: a listing
// of up to tableBlock locks prints exactly as one tabwriter would print it; in a
// longer one, a column widens at the block where a wider cell first appears.
//
// The primitives' keys are left out of the table and kept aside (copies: few,
// against the plain locks); the primitives follow in a table of their own.
func (s *lockSession) printLockTable(w io.Writer, head *admin.Listing, locks iter.Seq[*admin.LockInfo], prims *primitiveKeys) {
	t := &blockTable{w: bufio.NewWriterSize(w, 64<<10)}
	header := func() { t.row("NAME", "STATE", "VOTES", "VALIDITY", "HOLDER") }
	n, plain, inBlock := 0, 0, 0
	for li := range locks {
		if prims.keep(li) {
			n++
			continue
		}
		if plain == 0 { // no header over a table of primitives only
			header()
		}
		plain++
		lockRows(t, li)
		n++
		if inBlock++; inBlock == tableBlock {
			t.flush()
			inBlock = 0
		}
	}
	if n == 0 {
		header()
	}
	t.flush()
	_ = t.w.Flush()
	if plain > 0 && n > plain {
		fmt.Fprintln(w)
	}
	prims.print(w, head)
	switch {
	case head.Answered() == 0:
		fmt.Fprintf(w, "no master answered (0 of %d): nothing can be listed\n", head.Total)
	case n == 0:
		fmt.Fprintf(w, "no locks match %s on the %d of %d masters that answered\n", escape.Text(head.Match), head.Answered(), head.Total)
	}
}

// lockRows adds one lock's line and its masters' lines to the table.
func lockRows(t *blockTable, li *admin.LockInfo) {
	t.row(escape.Line(li.Name, 60), string(li.State), fmt.Sprintf("%d/%d", li.Votes, li.Total), validityText(li), holder(li))
	lead := "" // the leading value redacted, shared by the masters that hold it
	for _, mv := range li.Masters {
		master := escape.Line(mv.Master, 30)
		switch {
		case mv.Err != nil:
			t.row("  "+master, "(no answer)", "", "", "")
		case !mv.Present:
			t.row("  "+master, "-", "", "", "")
		default:
			pttl := "no ttl"
			if mv.PTTL >= 0 {
				pttl = human.Duration(mv.PTTL)
			}
			var val string
			switch {
			case mv.Value != li.Value:
				val = escape.Line(admin.Redact(mv.Value), 60)
			case lead == "":
				lead = escape.Line(li.RedactedValue(), 60)
				fallthrough
			default:
				val = lead
			}
			if mv.Type != "string" {
				val = "(" + escape.Line(mv.Type, 20) + ")"
			}
			if mv.Truncated {
				val += fmt.Sprintf(" (%d bytes, read %d)", mv.Size, admin.ValueReadCap)
			}
			t.row("  "+master, "present", "", pttl, val)
		}
	}
}

// blockTable aligns rows of cells (the last cell of a row is not padded) as
// text/tabwriter with padding 2 does, a block of rows at a time; column widths
// only grow from one block to the next. Widths are terminal cells, not runes: a
// wide character (an emoji, a CJK letter) counts twice, as the terminal shows it.
type blockTable struct {
	w      *bufio.Writer
	widths []int
	rows   [][]string
}

func (t *blockTable) row(cells ...string) { t.rows = append(t.rows, cells) }

// flush writes the buffered rows.
func (t *blockTable) flush() {
	for _, r := range t.rows {
		for i, c := range r[:len(r)-1] {
			if i == len(t.widths) {
				t.widths = append(t.widths, 0)
			}
			t.widths[i] = max(t.widths[i], ansi.StringWidth(c)+2)
		}
	}
	for _, r := range t.rows {
		for i, c := range r[:len(r)-1] {
			t.w.WriteString(c)
			t.w.WriteString(strings.Repeat(" ", t.widths[i]-ansi.StringWidth(c)))
		}
		t.w.WriteString(r[len(r)-1])
		t.w.WriteByte('\n')
	}
	clear(t.rows)
	t.rows = t.rows[:0]
}

// lockSeq yields the locks of a whole listing.
func lockSeq(lst *admin.Listing) iter.Seq[*admin.LockInfo] {
	return func(yield func(*admin.LockInfo) bool) {
		for i := range lst.Locks {
			if !yield(&lst.Locks[i]) {
				return
			}
		}
	}
}
