package bench

// traceSave, when set (trace_test.go, built with the redlocktrace tag), saves the
// worker's handoff trace as worker id; the workers call it before they exit.
var traceSave func(id string) error
