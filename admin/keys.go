package admin

import (
	"github.com/redlock/redlock/internal/keyspace"
)

// What a key under the key prefix is, from its name and Redis type alone: the
// one description of each kind's keys that every surface uses.

// KeyKind says what a key under the key prefix is, from its name and type alone.
// It is the one description every surface uses; its Bookkeeping method reports
// the kinds that only serve a primitive (an election's record, an exclusive
// waiter's marker, a fence counter, a fair queue or a waiting flag), which a
// surface folds into their primitive (Primitives does) and never counts or
// lists as locks.
type KeyKind = keyspace.KeyKind

// Kinds of keys. KeyLock: a plain lock, or one name of a multi-name hold (a
// string at NAME). KeyShared: the shared holders of NAME (a zset at NAME).
// KeyWriterWaiting: an exclusive waiter's marker at NAME:xwait. KeyPermit:
// permit slot I of semaphore NAME, at NAME:permit:I. KeyLeader: the leadership
// of election NAME, at NAME:leader. KeyTerm: the leader's record of election
// NAME, at NAME:leader:term. KeyFence: a fence or term counter, at X:fence.
// KeyQueue: a fair queue, at X:queue, or a lock's waiting flag, at
// "X waiting:queue". KeyOther: a key of another type at NAME (a Redisson hash,
// say).
const (
	KeyLock          = keyspace.KeyLock
	KeyShared        = keyspace.KeyShared
	KeyWriterWaiting = keyspace.KeyWriterWaiting
	KeyPermit        = keyspace.KeyPermit
	KeyLeader        = keyspace.KeyLeader
	KeyTerm          = keyspace.KeyTerm
	KeyFence         = keyspace.KeyFence
	KeyQueue         = keyspace.KeyQueue
	KeyOther         = keyspace.KeyOther
)

// KeyClass is what ClassifyKey tells about one key: its Kind; its Name, the
// primitive's name (the lock, semaphore or election name the key belongs to;
// for KeyFence and KeyQueue, the key they sit beside, without the prefix); and
// its Permit, the slot index of a KeyPermit (and of its fence counter), else -1.
type KeyClass = keyspace.KeyClass

// ClassifyKey tells what a key is from its name (the key without the prefix) and
// its Redis type ("string", "zset", "hash", ...; "" when unknown, read as
// "string"). It does no I/O and never fails: a key the lock library does not
// write is KeyLock (a string) or KeyOther.
func ClassifyKey(name, redisType string) KeyClass { return keyspace.ClassifyKey(name, redisType) }

// WriterWaitingName is the name (without the key prefix) of the marker an
// exclusive waiter keeps beside name while shared holders hold it
// (KeyWriterWaiting): while it lives, new shared holders of name are
// refused.
func WriterWaitingName(name string) string { return keyspace.WriterWaitingName(name) }

// ValidateKeyName checks the name of an existing lock for an administrative
// action (ForceExpire, ForceExpireSeen, RevokeSeen): any key that a listing
// shows, whitespace, foreign spellings and all, except an empty name and the
// reserved suffixes (the fence counter, the fair queue and the waiting flag are
// not locks). The error matches quorum.ErrInvalidName. Creating a lock keeps
// quorum.ValidateName.
func ValidateKeyName(name string) error { return keyspace.ValidateKeyName(name) }

// Library guesses which client wrote a lock value, from its shape: "redlock"
// for values of the lock library (ParseValue reads them), "redsync"
// (24-char base64 ending "=="), "node-redlock" (32 hex chars),
// "redlock.net/pottery" (36-char UUID), else "unknown". A Redisson lock is a
// hash, recognised by its type, not its value. It is a guess: any client may
// write any value.
func Library(value string) string {
	return keyspace.Library(value, func(v string) bool {
		_, err := ParseValue(v)
		return err == nil
	})
}

// EscapeGlob escapes the glob characters of a literal for Redis MATCH, so that
// Inspect(ctx, EscapeGlob(name)) lists exactly the lock name.
func EscapeGlob(s string) string { return keyspace.EscapeGlob(s) }

// Tombstone returns the tombstone that revoking value leaves in its place: a
// string ("rl1x." and the hex SHA-1 of value, which tells nobody the value)
// that no acquirer takes, kept for the revoked holder's remaining validity
// (RevokeSeen), and that the holder's own release deletes.
func Tombstone(value string) string { return keyspace.Tombstone(value) }

// IsTombstone reports whether s has the shape of a tombstone (any value's). It
// says nothing of whose.
func IsTombstone(s string) bool { return keyspace.IsTombstone(s) }

// What the actions publish on a lock's wake-up channel where they removed its
// key, so that an event stream tells them from a release (which publishes the
// key's name).
const (
	// ForceExpiredMessage: ForceExpire, ForceExpireSeen or ForceExpireListed
	// deleted the key.
	ForceExpiredMessage = "force-expired"
	// RevokedMessage: a revocation wrote the holder's tombstone.
	RevokedMessage = "revoked"
)

// ValueReadCap is the most bytes of one value that a listing (Inspect,
// InspectStream, Describe, a Scanner) reads from a master: a longer value is
// read as its first ValueReadCap bytes and its length (MasterView's
// Truncated and Size say so), so that one hostile value of hundreds of
// megabytes costs a listing no more than any other. Every value the lock
// library writes is shorter (256 bytes at most).
const ValueReadCap = 512
