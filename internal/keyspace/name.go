package keyspace

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidName: an empty lock name or one that collides with a reserved key
// suffix. Package quorum exports it as quorum.ErrInvalidName.
var ErrInvalidName = errors.New("invalid lock name")

// ReservedSuffixes are the suffixes of the keys kept beside a lock (fence
// counter, fair queue and waiting flag): lock names may not end with them.
var ReservedSuffixes = []string{FenceSuffix, QueueSuffix}

// ValidateKeyName checks the name of an existing lock for an administrative
// action: any key that listing shows, whitespace, foreign spellings and all,
// except an empty name and the reserved suffixes (the fence counter, the fair
// queue and the waiting flag are not locks). The error matches ErrInvalidName.
func ValidateKeyName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidName)
	}
	for _, s := range ReservedSuffixes {
		if strings.HasSuffix(name, s) {
			return fmt.Errorf("%w: %q ends with the reserved suffix %q", ErrInvalidName, name, s)
		}
	}
	return nil
}
