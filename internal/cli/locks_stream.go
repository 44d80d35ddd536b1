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
	"unicode/utf8"

	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// The output of `locks`, written while the listing is iterated: a listing of
// 100,000 locks is never held as one table or one document in memory
// (quorum.InspectStream keeps the masters' answers; each lock is built, printed
// and dropped).

// tableBlock is how many locks the table buffers before it writes them.
const tableBlock = 500

// jsonChunk is how many locks of a -json listing go from the stage that builds
// them to the stage that encodes them at a time.
const jsonChunk = 256

// writeListingJSON writes the -json document of a listing, byte for byte what
// writeDoc(w, s.listingJSON(...)) writes for the whole listing, one lock at a time.
//
// The primitives' keys are kept aside as they pass (copies: few, against the
// plain locks) and their "primitives" member is written after the locks.
func (s *lockSession) writeListingJSON(w io.Writer, head *quorum.Listing, locks iter.Seq[*quorum.LockInfo], err error, prims *primitiveKeys) error {
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
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(before)
	bw.WriteString("\n  \"locks\": [")
	// Two stages on two cores: this goroutine builds the locks (the quorum view of
	// each, then its document), another encodes and writes them, in order.
	chunks := make(chan []lockJSON, 2)
	written := make(chan int, 1)
	var encErr error
	go func() {
		n := 0
		var one bytes.Buffer
		enc := json.NewEncoder(&one) // escapes as json.Marshal does
		var ind []byte
		for c := range chunks {
			for i := range c {
				if encErr != nil {
					break // drain the channel
				}
				one.Reset()
				if encErr = enc.Encode(&c[i]); encErr != nil {
					break
				}
				ind = appendIndented(ind[:0], bytes.TrimSuffix(one.Bytes(), []byte("\n")), "    ")
				if n > 0 {
					bw.WriteByte(',')
				}
				bw.WriteString("\n    ")
				bw.Write(ind)
				n++
			}
		}
		written <- n
	}()
	batch := make([]lockJSON, 0, jsonChunk)
	for li := range locks {
		prims.keep(li)
		if batch = append(batch, s.lockJSON(li)); len(batch) == jsonChunk {
			chunks <- batch
			batch = make([]lockJSON, 0, jsonChunk)
		}
	}
	if len(batch) > 0 {
		chunks <- batch
	}
	close(chunks)
	n := <-written // encErr is the writer's, read after it is done
	if encErr != nil {
		return encErr
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteByte(']')
	if after, err = prims.writeJSON(after); err != nil {
		return err
	}
	bw.Write(after)
	bw.WriteByte('\n')
	return bw.Flush()
}

// printLockTable writes the listing as a table, with one line per master under
// each lock, tableBlock locks at a time. Columns are aligned as text/tabwriter
// aligns them (two spaces of padding) over everything printed so far: a listing
// of up to tableBlock locks prints exactly as one tabwriter would print it; in a
// longer one, a column widens at the block where a wider cell first appears.
//
// The primitives' keys are left out of the table and kept aside (copies: few,
// against the plain locks); the primitives follow in a table of their own.
func (s *lockSession) printLockTable(w io.Writer, head *quorum.Listing, locks iter.Seq[*quorum.LockInfo], prims *primitiveKeys) {
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
func lockRows(t *blockTable, li *quorum.LockInfo) {
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
				val = escape.Line(quorum.Redact(mv.Value), 60)
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
				val += fmt.Sprintf(" (%d bytes, read %d)", mv.Size, quorum.ValueReadCap)
			}
			t.row("  "+master, "present", "", pttl, val)
		}
	}
}

// blockTable aligns rows of cells (the last cell of a row is not padded) as
// text/tabwriter with padding 2 does, a block of rows at a time; column widths
// only grow from one block to the next.
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
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c)+2)
		}
	}
	for _, r := range t.rows {
		for i, c := range r[:len(r)-1] {
			t.w.WriteString(c)
			t.w.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c)))
		}
		t.w.WriteString(r[len(r)-1])
		t.w.WriteByte('\n')
	}
	clear(t.rows)
	t.rows = t.rows[:0]
}

// lockSeq yields the locks of a whole listing.
func lockSeq(lst *quorum.Listing) iter.Seq[*quorum.LockInfo] {
	return func(yield func(*quorum.LockInfo) bool) {
		for i := range lst.Locks {
			if !yield(&lst.Locks[i]) {
				return
			}
		}
	}
}

// appendIndented appends the compact JSON src (as json.Marshal writes it: no
// space outside strings) indented as json.Indent(dst, src, prefix, "  ") indents
// it, in one pass without json.Indent's validating scanner.
func appendIndented(dst, src []byte, prefix string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, "  "...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
