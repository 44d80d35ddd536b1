package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/redlock/redlock/admin"
)

// primitiveKeys keeps the keys of a streamed listing that belong to a primitive
// other than a plain lock (copies: the stream reuses what it yields), to show
// them grouped once the stream has passed. They are few against the plain locks.
type primitiveKeys struct {
	s      *lockSession
	ctx    context.Context
	env    *Env
	prog   string
	head   *admin.Listing
	keys   []admin.LockInfo
	prims  []admin.Primitive
	groupd bool
}

func (s *lockSession) primitiveKeys(ctx context.Context, env *Env, prog string, head *admin.Listing) *primitiveKeys {
	return &primitiveKeys{s: s, ctx: ctx, env: env, prog: prog, head: head}
}

// isPrimitiveKey reports whether li belongs to a primitive other than a plain
// lock (admin.LockInfo.PrimitiveOf): a permit, a leadership, a shared key, a
// name of a multi-name hold, or a primitive's bookkeeping (a leader's record, an
// exclusive waiter's marker).
func isPrimitiveKey(li *admin.LockInfo) bool {
	kind, _, ok := admin.PrimitiveOf(li)
	return !ok || kind != admin.KindLock
}

// copyLockInfo returns a copy of li that shares nothing that a streamed
// listing reuses (its Masters and Owner).
func copyLockInfo(li *admin.LockInfo) admin.LockInfo {
	c := *li
	c.Masters = slices.Clone(li.Masters)
	if li.Owner != nil {
		o := *li.Owner
		c.Owner = &o
	}
	return c
}

// keep reports whether li is a primitive's key, and keeps a copy of it then.
func (p *primitiveKeys) keep(li *admin.LockInfo) bool {
	if p == nil || !isPrimitiveKey(li) {
		return false
	}
	p.keys = append(p.keys, copyLockInfo(li))
	return true
}

// group returns the kept keys as primitives (read once: shared holders and
// leaders are quorum reads).
func (p *primitiveKeys) group() []admin.Primitive {
	if !p.groupd {
		p.groupd = true
		lst := &admin.Listing{ObservedAt: p.head.ObservedAt, Match: p.head.Match, Quorum: p.head.Quorum, Total: p.head.Total,
			Masters: p.head.Masters, Locks: p.keys}
		p.prims = p.s.primitives(p.ctx, p.env, p.prog, lst)
	}
	return p.prims
}

// writeJSON puts the primitives into the rest of a listing document, in place
// of its empty "primitives" member.
func (p *primitiveKeys) writeJSON(after []byte) ([]byte, error) {
	if p == nil || len(p.keys) == 0 {
		return after, nil
	}
	b, err := json.Marshal(p.s.primitivesJSON(p.group()))
	if err != nil {
		return nil, err
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, b, "  ", "  "); err != nil {
		return nil, err
	}
	before, rest, ok := bytes.Cut(after, []byte(`"primitives": []`))
	if !ok {
		return nil, errors.New("locks: the JSON document has no primitives member")
	}
	return slices.Concat(before, []byte(`"primitives": `), ind.Bytes(), rest), nil
}

// print writes the primitives' table under the locks' one, when there are any.
func (p *primitiveKeys) print(w io.Writer, head *admin.Listing) {
	if p == nil || len(p.keys) == 0 {
		return
	}
	p.s.printPrimitives(w, head, p.group())
}
