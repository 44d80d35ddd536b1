package keyspace

import "errors"

// ErrBadValue says a string is not a lock value written by package quorum. It
// is admin.ErrBadValue; package quorum wraps it in every error its parser of
// values returns.
var ErrBadValue = errors.New("not a redlock value")
