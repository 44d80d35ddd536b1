// Package keyspace is the one description of the keys the lock library writes
// under the key prefix, which package quorum and package admin both need
// without quorum exporting it: the suffixes that name a primitive's keys, what a
// key is from its name and Redis type (ClassifyKey), a revocation's tombstones,
// what the administrative actions publish, and what an operator saw. Package
// admin re-exports what its users need.
//
// Key layout. Every key starts with the key prefix (default "lock:"); NAME is the
// name the caller gave:
//
//	key                       type    what
//	NAME                      string  a plain lock, or one name of a multi-name hold
//	NAME                      zset    shared holders: member = holder's value, score = its expiry
//	NAME:xwait                string  an exclusive waiter's marker behind shared holders
//	NAME:permit:I             string  permit slot I of semaphore NAME
//	NAME:permit:I:fence       string  the fence counter of permit slot I
//	NAME:permit:queue         zset    the FIFO queue of the semaphore's waiters
//	NAME:leader               string  the leadership of election NAME
//	NAME:leader:fence         string  the term counter (no TTL)
//	NAME:leader:term          hash    the leader's record: token, term, since, value
//	NAME:fence                string  a plain lock's fence counter (no TTL)
//	NAME:queue                zset    a plain lock's FIFO queue and its waiters' markers
//	"NAME waiting:queue"      string  the waiting flag of NAME's waiters
//
// Package quorum's primitives.go says which call writes each key and why.
package keyspace

import (
	"strconv"
	"strings"
)

// Suffixes of the primitives' keys (see the key layout above).
const (
	// FenceSuffix names the fence counter key beside a lock key.
	FenceSuffix = ":fence"
	// QueueSuffix is the reserved suffix of a lock's queue key.
	QueueSuffix = ":queue"
	// WaitingSuffix is the suffix of a lock's waiting flag: it ends like a
	// queue key, and what comes before it holds a space, which no lock name
	// holds (quorum's fair.go says why).
	WaitingSuffix = " waiting" + QueueSuffix
	// PermitInfix sits between a semaphore's name and a slot's index.
	PermitInfix = ":permit:"
	// PermitBase is a semaphore's name's suffix on its queue and channel.
	PermitBase = ":permit"
	// XwaitSuffix names an exclusive waiter's marker.
	XwaitSuffix = ":xwait"
	// LeaderSuffix names an election's leadership key.
	LeaderSuffix = ":leader"
	// TermSuffix, after LeaderSuffix, names the leader's record.
	TermSuffix = ":term"
)

// KeyKind says what a key under the key prefix is, from its name and type alone.
type KeyKind string

// Kinds of keys (see the key layout in the package documentation).
const (
	// KeyLock: a plain lock, or one name of a multi-name hold (a string at NAME).
	KeyLock KeyKind = "lock"
	// KeyShared: the shared holders of NAME (a zset at NAME).
	KeyShared KeyKind = "shared"
	// KeyWriterWaiting: an exclusive waiter's marker at NAME:xwait.
	KeyWriterWaiting KeyKind = "writer-waiting"
	// KeyPermit: permit slot I of semaphore NAME, at NAME:permit:I.
	KeyPermit KeyKind = "permit"
	// KeyLeader: the leadership of election NAME, at NAME:leader.
	KeyLeader KeyKind = "leader"
	// KeyTerm: the leader's record of election NAME, at NAME:leader:term.
	KeyTerm KeyKind = "term"
	// KeyFence: a fence or term counter, at X:fence.
	KeyFence KeyKind = "fence"
	// KeyQueue: a fair queue, at X:queue, or a lock's waiting flag, at
	// "X waiting:queue".
	KeyQueue KeyKind = "queue"
	// KeyOther: a key of another type at NAME (a Redisson hash, say).
	KeyOther KeyKind = "other"
)

// KeyClass is what ClassifyKey tells about one key.
type KeyClass struct {
	Kind KeyKind
	// Name is the primitive's name: the lock, semaphore or election name the key
	// belongs to (for KeyFence and KeyQueue, the key they sit beside, without
	// the prefix).
	Name string
	// Permit is the slot index of a KeyPermit (and of its fence counter), else -1.
	Permit int
}

// ClassifyKey tells what a key is from its name (the key without the prefix) and
// its Redis type ("string", "zset", "hash", ...; "" when unknown, read as
// "string"). It does no I/O and never fails: a key this package does not write
// is KeyLock (a string) or KeyOther.
func ClassifyKey(name, redisType string) KeyClass {
	kc := KeyClass{Name: name, Permit: -1}
	switch {
	case strings.HasSuffix(name, FenceSuffix):
		kc.Kind, kc.Name = KeyFence, strings.TrimSuffix(name, FenceSuffix)
		if base, i, ok := CutPermit(kc.Name); ok {
			kc.Name, kc.Permit = base, i
		} else if b, ok := strings.CutSuffix(kc.Name, LeaderSuffix); ok {
			kc.Name = b
		}
	case strings.HasSuffix(name, WaitingSuffix): // before QueueSuffix, which it ends with
		kc.Kind, kc.Name = KeyQueue, strings.TrimSuffix(name, WaitingSuffix)
	case strings.HasSuffix(name, QueueSuffix):
		kc.Kind, kc.Name = KeyQueue, strings.TrimSuffix(name, QueueSuffix)
		if b, ok := strings.CutSuffix(kc.Name, PermitBase); ok {
			kc.Name = b
		}
	case strings.HasSuffix(name, LeaderSuffix+TermSuffix):
		kc.Kind, kc.Name = KeyTerm, strings.TrimSuffix(name, LeaderSuffix+TermSuffix)
	case strings.HasSuffix(name, LeaderSuffix):
		kc.Kind, kc.Name = KeyLeader, strings.TrimSuffix(name, LeaderSuffix)
	case strings.HasSuffix(name, XwaitSuffix):
		kc.Kind, kc.Name = KeyWriterWaiting, strings.TrimSuffix(name, XwaitSuffix)
	default:
		if base, i, ok := CutPermit(name); ok {
			kc.Kind, kc.Name, kc.Permit = KeyPermit, base, i
			break
		}
		switch redisType {
		case "", "string":
			kc.Kind = KeyLock
		case "zset":
			kc.Kind = KeyShared
		default:
			kc.Kind = KeyOther
		}
	}
	return kc
}

// CutPermit splits "NAME:permit:I" into NAME and I; ok is false when s is no
// permit slot's name.
func CutPermit(s string) (base string, slot int, ok bool) {
	i := strings.LastIndex(s, PermitInfix)
	if i < 0 {
		return "", 0, false
	}
	digits := s[i+len(PermitInfix):]
	// Only the slot's own spelling (strconv.Itoa): "01" is not slot 1, which
	// would be counted twice.
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" || len(digits) > 9 || len(digits) > 1 && digits[0] == '0' {
		return "", 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return "", 0, false
	}
	return s[:i], n, true
}

// Bookkeeping reports whether keys of kind k only serve a primitive: an
// election's record, an exclusive waiter's marker, a fence counter, a fair queue
// or a waiting flag. They are not locks: a surface folds them into their
// primitive and never counts or lists them as locks.
func (k KeyKind) Bookkeeping() bool {
	switch k {
	case KeyTerm, KeyWriterWaiting, KeyFence, KeyQueue:
		return true
	}
	return false
}

// WriterWaitingName is the name (without the key prefix) of the marker an
// exclusive waiter keeps beside name while shared holders hold it
// (KeyWriterWaiting): while it lives, new shared holders of name are refused.
func WriterWaitingName(name string) string { return name + XwaitSuffix }

// EscapeGlob escapes the glob characters of a literal for Redis MATCH, so that
// a listing of EscapeGlob(name) lists exactly the lock name.
func EscapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
