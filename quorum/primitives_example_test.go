package quorum_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redlock/redlock/quorum"
)

// A nightly job limited to 3 at once: each run takes one of 3 permits, kept alive
// while it works.
func ExampleSemaphore() {
	m, _ := quorum.New(exampleNodes(), quorum.WithRestartQuarantine(0))
	defer m.Close()
	ctx := context.Background()

	sem, err := m.Semaphore("nightly-export", 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	var permits []*quorum.Permit
	for range 3 {
		p, err := sem.TryAcquire(ctx, 30*time.Second, quorum.WithKeepAlive(quorum.KeepAlive{}))
		if err != nil {
			fmt.Println(err)
			return
		}
		permits = append(permits, p)
	}
	fmt.Println("slots held:", permits[0].Slot(), permits[1].Slot(), permits[2].Slot())

	_, err = sem.TryAcquire(ctx, 30*time.Second)
	fmt.Println("a fourth run:", errors.Is(err, quorum.ErrHeld))
	for _, p := range permits {
		_ = p.Release(ctx)
	}
	// Output:
	// slots held: 0 1 2
	// a fourth run: true
}

// A permit's fence counts per slot: a storage that takes writes from permit
// holders keeps the highest fence seen for each slot.
func ExamplePermit_Slot() {
	m, _ := quorum.New(exampleNodes(), quorum.WithRestartQuarantine(0))
	defer m.Close()
	ctx := context.Background()

	sem, _ := m.Semaphore("uploads", 2)
	a, _ := sem.TryAcquire(ctx, 10*time.Second, quorum.WithFencing())
	b, _ := sem.TryAcquire(ctx, 10*time.Second, quorum.WithFencing())
	fmt.Println("slots:", a.Slot(), b.Slot())
	_ = a.Release(ctx)
	c, _ := sem.TryAcquire(ctx, 10*time.Second, quorum.WithFencing())
	fmt.Println("slot", c.Slot(), "again, a greater fence:", c.Fence() > a.Fence())
	_ = b.Release(ctx)
	_ = c.Release(ctx)
	// Output:
	// slots: 0 1
	// slot 0 again, a greater fence: true
}

// Move money between two accounts: both locks or none, in any order.
func ExampleMulti() {
	m, _ := quorum.New(exampleNodes(), quorum.WithRestartQuarantine(0))
	defer m.Close()
	ctx := context.Background()

	accounts, err := m.Multi("account/7", "account/42")
	if err != nil {
		fmt.Println(err)
		return
	}
	l, err := accounts.Acquire(ctx, 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Release(ctx)
	fmt.Println("held:", l.Name())

	overlapping, _ := m.Multi("account/7", "account/99")
	_, err = overlapping.TryAcquire(ctx, 10*time.Second)
	fmt.Println("an overlapping set:", errors.Is(err, quorum.ErrHeld))
	// Output:
	// held: account/42 account/7
	// an overlapping set: true
}

// Readers share a name; a writer (the plain lock of the same name) excludes them.
func ExampleShared() {
	m, _ := quorum.New(exampleNodes(), quorum.WithRestartQuarantine(0))
	defer m.Close()
	ctx := context.Background()

	readers, err := m.Shared("catalog")
	if err != nil {
		fmt.Println(err)
		return
	}
	r1, _ := readers.TryAcquire(ctx, 10*time.Second)
	r2, _ := readers.TryAcquire(ctx, 10*time.Second)
	_, err = m.TryAcquire(ctx, "catalog", 10*time.Second)
	fmt.Println("writer while reading:", errors.Is(err, quorum.ErrHeld))
	_ = r1.Release(ctx)
	_ = r2.Release(ctx)

	w, err := m.TryAcquire(ctx, "catalog", 10*time.Second)
	fmt.Println("writer after the readers:", err == nil)
	_ = w.Release(ctx)
	// Output:
	// writer while reading: true
	// writer after the readers: true
}

// A leader-elected scheduler that publishes its address; the term fences its
// writes downstream.
func ExampleElection() {
	m, _ := quorum.New(exampleNodes(), quorum.WithRestartQuarantine(0))
	defer m.Close()
	ctx := context.Background()

	e, _ := m.Election("scheduler")
	lead, err := e.Campaign(ctx, "10.0.0.5:8080", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	li, _ := e.Leader(ctx)
	fmt.Println("leader:", li.Value, "term:", li.Term == lead.Term())

	// Work while leading; stop when Done fires.
	select {
	case <-lead.Done():
		fmt.Println("deposed")
	default:
		fmt.Println("leading")
	}
	_ = lead.Release(ctx)
	_, err = e.Leader(ctx)
	fmt.Println("after resigning:", errors.Is(err, quorum.ErrNoLeader))
	// Output:
	// leader: 10.0.0.5:8080 term: true
	// leading
	// after resigning: true
}
