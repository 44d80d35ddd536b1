//go:build race

package cli

// raceDetector is true in a test binary built with -race, whose timings are not
// the program's.
const raceDetector = true
