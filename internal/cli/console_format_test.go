package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/human"
)

// TestLocksAndConsoleShareOneDurationFormat (issue 23, item 9): `locks` printed
// 4m45.25s where the console printed 285250ms; both now print human.Duration.
func TestLocksAndConsoleShareOneDurationFormat(t *testing.T) {
	li := admin.LockInfo{State: admin.StateHeld, Validity: 285250 * time.Millisecond}
	assert.Equal(t, "4m45s", validityText(&li))
	assert.Equal(t, human.Duration(li.Validity), validityText(&li))
	li.Validity = 12345 * time.Millisecond
	assert.Equal(t, "12.3s", validityText(&li))
}
