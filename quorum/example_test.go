package quorum_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// exampleNodes returns three local masters, as you would declare yours:
//
//	[]quorum.Node{{Name: "a", Addr: "10.0.0.11:6379"}, {Name: "b", Addr: "10.0.0.12:6379"}, ...}
func exampleNodes() []quorum.Node {
	var nodes []quorum.Node
	for i, addr := range redistest.ExampleAddrs() {
		nodes = append(nodes, quorum.Node{Name: string(rune('a' + i)), Addr: addr})
	}
	return nodes
}

// Take a lock, do the work, release it.
func Example() {
	m, err := quorum.New(exampleNodes(),
		quorum.WithDrift(0.01, 2*time.Millisecond),
		quorum.WithNodeTimeout(50*time.Millisecond),
		quorum.WithRestartQuarantine(0), // brand-new local masters: see SAFETY.md before copying this
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()

	ctx := context.Background()
	lock, err := m.Acquire(ctx, "billing/42", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lock.Release(context.Background())

	fmt.Println("held:", lock.Key(), "votes:", lock.Votes().Votes, "of", len(m.Nodes()))
	fmt.Println("valid for more than 9s:", time.Until(lock.Until()) > 9*time.Second)
	// Output:
	// held: lock:billing/42 votes: 3 of 3
	// valid for more than 9s: true
}

// Tell "held by somebody else" from "Redis is down" from "cancelled".
func ExampleManager_TryAcquire() {
	m, _ := quorum.New(exampleNodes(), quorum.WithRestartQuarantine(0))
	defer m.Close()
	ctx := context.Background()

	first, _ := m.TryAcquire(ctx, "report", 5*time.Second)
	defer first.Release(ctx)

	_, err := m.TryAcquire(ctx, "report", 5*time.Second)
	switch {
	case errors.Is(err, quorum.ErrHeld):
		fmt.Println("held by another owner")
	case errors.Is(err, quorum.ErrUnavailable):
		fmt.Println("not enough masters answered")
	case errors.Is(err, context.Canceled):
		fmt.Println("cancelled")
	}
	var re *quorum.RoundError
	if errors.As(err, &re) {
		fmt.Printf("votes %d, quorum %d\n", re.Votes, re.Quorum)
	}
	// Output:
	// held by another owner
	// votes 0, quorum 2
}

// Keep a lock alive while working, and stop the work when it is lost.
func ExampleWithKeepAlive() {
	m, _ := quorum.New(exampleNodes(), quorum.WithRestartQuarantine(0))
	defer m.Close()

	lock, err := m.Acquire(context.Background(), "reindex", 200*time.Millisecond,
		quorum.WithKeepAlive(quorum.KeepAlive{Fraction: 0.3, MaxExtensions: 2}))
	if err != nil {
		fmt.Println(err)
		return
	}
	// lock.Context() is cancelled when the lock is lost: pass it to the work.
	<-lock.Done()
	fmt.Println(errors.Is(lock.Err(), quorum.ErrLost), errors.Is(lock.Err(), quorum.ErrExtensionCap))
	_ = lock.Release(context.Background())
	// Output:
	// true true
}
