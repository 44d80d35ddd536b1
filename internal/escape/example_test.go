package escape_test

import (
	"fmt"

	"github.com/redlock/redlock/internal/escape"
)

func ExampleLine() {
	owner := "x\x1b[2J\x1b[31mPWNED" // an owner label written by someone else
	fmt.Println(escape.Line(owner, 16))
	// Output: x\x1b[2J\x1b[31…
}
