package checker

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TB is the part of testing.TB the checker needs.
type TB interface {
	Helper()
	Name() string
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	TempDir() string
}

// History is the JSON form of a recorder.
type History struct {
	Test       string      `json:"test"`
	Seed       int64       `json:"seed"`
	Holds      []*Hold     `json:"holds"`
	Events     []Event     `json:"events"`
	Violations []Violation `json:"violations"`
}

// Write writes the history as JSON into dir and returns the file's path.
func (r *Recorder) Write(dir, test string) (string, error) {
	v := r.Violations()
	r.mu.Lock()
	h := History{Test: test, Seed: r.Seed, Holds: r.holds, Events: r.events, Violations: v}
	b, err := json.MarshalIndent(h, "", "  ")
	r.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("encode history: %w", err)
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(test) + ".json"
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("write history: %w", err)
	}
	return path, nil
}

// reportEvents is how many of the last events Report prints.
const reportEvents = 20

// Report fails t when there are violations: it prints each one and the seed, and
// writes the history as JSON to REDLOCK_HISTORY_DIR (or t.TempDir(), removed
// with the test), and prints the last reportEvents events. It returns the
// violations.
func (r *Recorder) Report(t TB) []Violation {
	t.Helper()
	v := r.Violations()
	if len(v) == 0 {
		return nil
	}
	dir := os.Getenv("REDLOCK_HISTORY_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	path, err := r.Write(dir, t.Name())
	if err != nil {
		t.Logf("%v", err)
	}
	r.mu.Lock()
	tail := r.events[max(0, len(r.events)-reportEvents):]
	for _, e := range tail { // the history file may be gone with the test's directory
		t.Logf("event at %.1fms: %s", e.At, e.What)
	}
	r.mu.Unlock()
	for _, x := range v {
		t.Errorf("%s: %s", x.Kind, x.Detail)
	}
	t.Errorf("%d safety violations; replay with REDLOCK_SEED=%d; history in %s", len(v), r.Seed, path)
	return v
}
