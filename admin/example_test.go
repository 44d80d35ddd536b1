package admin_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/redistest"
	"github.com/redlock/redlock/quorum"
)

// exampleNodes returns the three local masters TestMain started.
func exampleNodes() (nodes []quorum.Node) {
	for i, addr := range redistest.ExampleAddrs() {
		nodes = append(nodes, quorum.Node{Name: string(rune('a' + i)), Addr: addr})
	}
	return nodes
}

// List a large key space a batch at a time, and read the rows you show afresh.
func ExampleAdmin_NewScanner() {
	m, _ := quorum.New(exampleNodes(), quorum.WithRestartQuarantine(0))
	defer m.Close()
	ctx := context.Background()
	lock, err := m.TryAcquire(ctx, "inventory/7", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lock.Release(ctx)

	s := admin.New(m).NewScanner("inventory/*")
	for !s.Progress().Complete { // one SCAN batch per master per step
		if err := s.Step(ctx); err != nil {
			fmt.Println(err)
			return
		}
	}
	lst, _ := s.Listing()
	for _, li := range lst.Locks {
		fmt.Println(li.Name, li.State, li.Votes)
	}
	// A listing is as old as its pass: read the names on screen afresh.
	fresh, _ := admin.New(m).Describe(ctx, []string{"inventory/7", "inventory/8"})
	fmt.Println(len(fresh.Locks), fresh.Lock("inventory/7").State)
	// Output:
	// inventory/7 held 3
	// 1 held
}
