//go:build !unix

package wire

// precheck cannot poll on this platform: each connection is peeked.
func (ps *Pipes) precheck(*round) {}
