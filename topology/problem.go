package topology

import (
	"fmt"
	"slices"
	"strings"
)

// Block kinds a Field may point into. BlockCluster is the cluster block itself.
const (
	BlockCluster  = "cluster"
	BlockDrift    = "drift"
	BlockRetry    = "retry"
	BlockSettings = "settings"
	BlockMaster   = "master"
	BlockLock     = "lock"
	BlockDefaults = "defaults"
	BlockIgnore   = "ignore"
)

// Field locates a problem in the declared cluster, in the terms of the topology
// file, so that a decoder can point at the offending attribute or block.
type Field struct {
	// Block is one of the Block* constants.
	Block string
	// Index is the position in Masters (BlockMaster) or Locks (BlockLock); 0 otherwise.
	Index int
	// Attr is the attribute name as written in the file ("ttl", "address",
	// "tls.ca_file", or a settings name with '_'); empty for the block itself.
	Attr string
}

// String renders the field for messages without a file position, e.g.
// `master[2].address` or `drift.factor`.
func (f Field) String() string {
	var b strings.Builder
	b.WriteString(f.Block)
	if f.Block == BlockMaster || f.Block == BlockLock {
		fmt.Fprintf(&b, "[%d]", f.Index)
	}
	if f.Attr != "" {
		b.WriteString(".")
		b.WriteString(f.Attr)
	}
	return b.String()
}

// Severity of a Problem: SeverityError makes a cluster invalid, SeverityWarning
// does not (Severity is shared with the health model).

// Problem is one finding of Validate. Summary and Detail never contain a password.
type Problem struct {
	Severity Severity
	Summary  string
	Detail   string
	// Fields are the places the problem is about, most specific first. A decoder
	// points at the first one that was written in the file, or else at the block of
	// the first one. Never empty.
	Fields []Field
	// Code is the finding code (Code* constants) of a warning that plan reports as
	// that finding too, "" otherwise: an ignore block of that code acknowledges it.
	Code string
}

// AcknowledgedProblem returns the ignore block that covers p on every master (a warning
// with a finding code), or nil. An acknowledged problem is not shown.
func (c *Cluster) AcknowledgedProblem(p Problem) *Ignore {
	if p.Code == "" || p.Severity == SeverityError {
		return nil
	}
	for i := range c.Ignores {
		ig := &c.Ignores[i]
		if ig.Code != p.Code {
			continue
		}
		all := true
		for _, m := range c.Masters {
			if len(ig.Masters) > 0 && !slices.Contains(ig.Masters, m.Name) {
				all = false
			}
		}
		if all {
			return ig
		}
	}
	return nil
}

// Error renders the problem as "field: summary: detail".
func (p Problem) Error() string {
	s := p.Fields[0].String() + ": " + p.Summary
	if p.Detail != "" {
		s += ": " + p.Detail
	}
	return s
}

// Problems is the result of Validate.
type Problems []Problem

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool {
	for _, p := range ps {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}
