package checker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCrowds(t *testing.T) {
	tests := []struct {
		name string
		iv   []Interval
		want int
	}{
		{"two of two", []Interval{{"a", "s", 0, 10}, {"b", "s", 5, 20}}, 0},
		{"three of two", []Interval{{"a", "s", 0, 10}, {"b", "s", 5, 20}, {"c", "s", 9, 30}}, 1},
		{"end meets start", []Interval{{"a", "s", 0, 10}, {"b", "s", 5, 20}, {"c", "s", 10, 30}}, 0},
		{"two episodes", []Interval{{"a", "s", 0, 10}, {"b", "s", 0, 10}, {"c", "s", 5, 6}, {"d", "s", 8, 9}}, 2},
		{"same owner twice counts twice", []Interval{{"a", "s", 0, 10}, {"a", "s", 0, 10}, {"a", "s", 0, 10}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Len(t, Crowds(tt.iv, map[string]int{"s": 2}), tt.want)
		})
	}
}

func TestSharedOverlaps(t *testing.T) {
	shared := []Interval{{"r1", "x", 0, 10}, {"r2", "x", 5, 15}}
	assert.Empty(t, SharedOverlaps(shared, nil), "shared holds overlap each other freely")
	assert.Len(t, SharedOverlaps(shared, []Interval{{"w", "x", 12, 20}}), 1)
	assert.Empty(t, SharedOverlaps(shared, []Interval{{"w", "x", 15, 20}}))
	assert.Empty(t, SharedOverlaps(shared, []Interval{{"w", "y", 0, 20}}))
}

func TestTerms(t *testing.T) {
	tests := []struct {
		name  string
		holds []TermHold
		want  int
	}{
		{"increasing", []TermHold{{"a", "e", 0, 1}, {"b", "e", 10, 2}, {"a", "e", 20, 5}}, 0},
		{"repeated", []TermHold{{"a", "e", 0, 1}, {"b", "e", 10, 1}}, 1},
		{"decreasing", []TermHold{{"a", "e", 0, 3}, {"b", "e", 10, 2}}, 1},
		{"other election", []TermHold{{"a", "e", 0, 3}, {"b", "f", 10, 1}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Len(t, Terms(tt.holds), tt.want)
		})
	}
}

func TestRecorderPrimitives(t *testing.T) {
	r := New(1)
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r.Limit("sem", 2)
	for _, o := range []string{"a", "b"} {
		r.Acquired(o, "sem", at(1), at(100))
	}
	assert.Empty(t, r.Violations(), "two holders of two permits")
	r.Acquired("c", "sem", at(50), at(60))
	assert.Len(t, r.Violations(), 1, "a third holder")

	r = New(1)
	r.AcquiredShared("r1", "x", at(1), at(100))
	r.AcquiredShared("r2", "x", at(1), at(100))
	assert.Empty(t, r.Violations())
	r.Acquired("w", "x", at(50), at(60))
	assert.Len(t, r.Violations(), 2, "the exclusive hold overlaps both shared ones")

	r = New(1)
	r.AcquiredMulti("m", []string{"a", "b"}, at(1), at(100))
	r.Acquired("p", "b", at(50), at(60))
	assert.Len(t, r.Violations(), 1, "a multi-name hold covers each of its names")

	r = New(1)
	r.Acquired("a", "e", at(1), at(10)).SetTerm(1)
	r.Acquired("b", "e", at(20), at(30)).SetTerm(1)
	assert.Len(t, r.Violations(), 1, "a term given twice")
	r.Partial("m", []string{"a", "b"}, []string{"a"})
	assert.Len(t, r.Violations(), 2)
}
