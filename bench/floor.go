package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// floorRelease is the usual compare-and-delete release script, run by the floor.
const floorRelease = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`

// Floor is the cheapest possible Redlock cycle, the yardstick of the benchmarks: one
// hand-multiplexed round of SET NX PX (one write to every socket, then the reads)
// and one round of a preloaded compare-and-delete script, on raw connections with no
// pooling, no goroutines and no validity bookkeeping. It is not a lock client: it
// does not check quorum, drift or timeouts. It is not safe for concurrent use.
type Floor struct {
	conns []net.Conn
	rds   []*bufio.Reader
	sha   string
	buf   []byte
}

// DialFloor connects to every address (loopback masters in the benchmarks) and
// loads the release script on each.
func DialFloor(addrs []string, timeout time.Duration) (*Floor, error) {
	f := &Floor{}
	for _, a := range addrs {
		c, err := net.DialTimeout("tcp", a, timeout)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("floor: dial %s: %w", a, err)
		}
		f.conns = append(f.conns, c)
		f.rds = append(f.rds, bufio.NewReaderSize(c, 4096))
	}
	for i := range f.conns {
		f.buf = appendCommand(f.buf[:0], "SCRIPT", "LOAD", floorRelease)
		if _, err := f.conns[i].Write(f.buf); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("floor: %s: %w", addrs[i], err)
		}
		sha, err := readReply(f.rds[i])
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("floor: %s: script load: %w", addrs[i], err)
		}
		f.sha = sha
	}
	return f, nil
}

// Cycle runs one acquire round and one release round of key with value. It
// returns the number of masters that granted the SET, or the first I/O error.
func (f *Floor) Cycle(key, value string, ttl time.Duration) (int, error) {
	ms := strconv.FormatInt(ttl.Milliseconds(), 10)
	f.buf = appendCommand(f.buf[:0], "SET", key, value, "NX", "PX", ms)
	granted := 0
	err := f.round(func(reply string) {
		if reply == "OK" {
			granted++
		}
	})
	if err != nil {
		return granted, err
	}
	f.buf = appendCommand(f.buf[:0], "EVALSHA", f.sha, "1", key, value)
	return granted, f.round(func(string) {})
}

// round writes f.buf to every socket, then reads one reply from each.
func (f *Floor) round(each func(reply string)) error {
	for _, c := range f.conns {
		if _, err := c.Write(f.buf); err != nil {
			return err
		}
	}
	for _, rd := range f.rds {
		r, err := readReply(rd)
		if err != nil {
			return err
		}
		each(r)
	}
	return nil
}

// Close closes every connection.
func (f *Floor) Close() error {
	var errs []error
	for _, c := range f.conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// appendCommand appends a RESP array of bulk strings.
func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// readReply reads one simple, integer, nil or bulk reply and returns its text; an
// error reply becomes an error.
func readReply(rd *bufio.Reader) (string, error) {
	line, err := rd.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 {
		return "", fmt.Errorf("short reply %q", line)
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+', ':':
		return body, nil
	case '-':
		return "", errors.New(body)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return "", fmt.Errorf("bad bulk length %q", body)
		}
		if n < 0 {
			return "", nil
		}
		data := make([]byte, n+2)
		if _, err := io.ReadFull(rd, data); err != nil {
			return "", err
		}
		return string(data[:n]), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}
