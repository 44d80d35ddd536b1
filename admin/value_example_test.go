package admin_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/quorum"
)

// ExampleParseValue decodes the value of a lock key, as a listing or a
// monitoring script reads it with GET: who took the lock, and its token.
func ExampleParseValue() {
	stored := admin.Value{
		Token: "3vS4OZxQ0Jb1m2n3o4p5q6r7s8t",
		Owner: quorum.Owner{Host: "build-7", PID: 4242, Label: "nightly-backup", At: time.UnixMilli(1_790_000_000_000).UTC()},
	}.String()

	v, err := admin.ParseValue(stored)
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Owner.Label, "on", v.Owner.Host, "pid", v.Owner.PID, "since", v.Owner.At.UTC().Format(time.RFC3339))
	fmt.Println(admin.Redact(stored))

	_, err = admin.ParseValue("dGhpcyBpcyByZWRzeW5jIQ==") // a redsync lock
	fmt.Println(errors.Is(err, admin.ErrBadValue), admin.Library("dGhpcyBpcyByZWRzeW5jIQ=="))
	// Output:
	// nightly-backup on build-7 pid 4242 since 2026-09-21T14:13:20Z
	// rl1.3vS4OZ…
	// true redsync
}
