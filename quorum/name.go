package quorum

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/redlock/redlock/internal/keyspace"
)

// MaxNameLen bounds a lock name, in bytes.
const MaxNameLen = 200

// Reserved suffixes: keys the package keeps beside a lock (fence counter, fair queue
// and waiting flag). Lock names may not end with them.
var reservedSuffixes = keyspace.ReservedSuffixes

// ValidateName checks a lock name against the one rule that the library, the CLI
// and the console share: 1 to MaxNameLen bytes of valid UTF-8, without whitespace,
// control characters (C0, DEL, C1) or invisible format characters (bidi controls,
// zero-width characters), and not ending with a reserved suffix (":fence",
// ":queue", and the primitives' ":xwait", ":leader", ":term", ":permit" and
// ":permit:<digits>": see the key layout in primitives.go). Every other character is allowed, glob characters included (listing
// escapes them). The error matches ErrInvalidName and says what is wrong, with the
// offending character escaped. Keys written by other tools may break the rule:
// they are listed (escaped), never created.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidName, len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidName)
	}
	for i, r := range name {
		switch {
		case unicode.IsSpace(r):
			return fmt.Errorf("%w: whitespace %U at byte %d", ErrInvalidName, r, i)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return fmt.Errorf("%w: control or format character %U at byte %d", ErrInvalidName, r, i)
		}
	}
	for _, s := range reservedSuffixes {
		if strings.HasSuffix(name, s) {
			return fmt.Errorf("%w: %q ends with the reserved suffix %q", ErrInvalidName, name, s)
		}
	}
	if s := reservedName(name); s != "" {
		return fmt.Errorf("%w: %q ends with the reserved suffix %q", ErrInvalidName, name, s)
	}
	return nil
}

// checkName is ValidateName, for the package's entry points.
func checkName(name string) error { return ValidateName(name) }
