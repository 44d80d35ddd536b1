package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	experiment "github.com/redlock/redlock/internal/bench"
)

// floorRing is the cheapest fair handoff there can be over these masters, the
// yardstick of BenchmarkHandoff's fair row ("floor-ring"): the workers pass the
// lock around a ring, p1 to p2 to ... to p1. A worker waits for its predecessor's
// message (SUBSCRIBE on the first N-Q+1 masters, as a fair waiter of this project
// listens: quorum/wake_narrow.go), takes the key with one raw round of SET NX PX GET
// on every master (a quorum of them set it or hold its value; a round short of it,
// the release not yet run everywhere, is made again at once), and gives it back
// with one round of a compare-and-delete script that publishes to its successor
// where it deleted. The same steps as a fair handoff (a release round, a wake-up
// message, an acquisition round), on raw connections, with no queue, no validity,
// no library and no goroutine between a message and the round: a handoff that
// takes as long here as the fair row's is the machine's, not the protocol's.
type floorRing struct {
	conns  []net.Conn
	rds    []*bufio.Reader
	subs   []net.Conn
	sha    string
	key    string
	quorum int
	first  bool   // p1 takes the key first, without a message
	next   string // the successor's channel
	prefix string // this worker's values: prefix + acquisition count
	n      int
	msgs   chan string // the predecessor's messages: the value it released
	last   string      // the value of the last message acted upon
	buf    []byte
}

// ringRelease deletes the key where it holds ARGV[1] and then wakes ARGV[2].
const ringRelease = `if redis.call("GET", KEYS[1]) == ARGV[1] then redis.call("DEL", KEYS[1]) redis.call("PUBLISH", ARGV[2], ARGV[1]) return 1 end return 0`

func ringChannel(i int) string { return "ring:p" + strconv.Itoa(i) }

// newFloorRing connects worker id ("p1".."pN") of clients workers to addrs and
// subscribes it; it returns once every subscription is confirmed.
func newFloorRing(addrs []string, id string, clients int) (*floorRing, error) {
	i, err := strconv.Atoi(id[1:])
	if err != nil || i < 1 || i > clients {
		return nil, fmt.Errorf("floor ring: worker id %q of %d", id, clients)
	}
	r := &floorRing{key: "ring:key", quorum: len(addrs)/2 + 1, first: i == 1, next: ringChannel(i%clients + 1),
		prefix: id + ".", msgs: make(chan string, 64)}
	for _, a := range addrs {
		c, err := net.DialTimeout("tcp", a, time.Second)
		if err != nil {
			_ = r.close()
			return nil, fmt.Errorf("floor ring: dial %s: %w", a, err)
		}
		r.conns, r.rds = append(r.conns, c), append(r.rds, bufio.NewReaderSize(c, 4096))
	}
	for j, c := range r.conns {
		if _, err := c.Write(appendCommand(nil, "SCRIPT", "LOAD", ringRelease)); err != nil {
			_ = r.close()
			return nil, err
		}
		if r.sha, err = readReply(r.rds[j]); err != nil {
			_ = r.close()
			return nil, fmt.Errorf("floor ring: %s: script load: %w", addrs[j], err)
		}
	}
	for _, a := range addrs[:len(addrs)-r.quorum+1] {
		c, err := net.DialTimeout("tcp", a, time.Second)
		if err != nil {
			_ = r.close()
			return nil, err
		}
		r.subs = append(r.subs, c)
		rd := bufio.NewReaderSize(c, 4096)
		if _, err := c.Write(appendCommand(nil, "SUBSCRIBE", ringChannel(i))); err != nil {
			_ = r.close()
			return nil, err
		}
		if _, err := readPush(rd); err != nil { // the confirmation
			_ = r.close()
			return nil, fmt.Errorf("floor ring: subscribe on %s: %w", a, err)
		}
		go func() {
			for {
				m, err := readPush(rd)
				if err != nil {
					return // closed
				}
				if len(m) == 3 && m[0] == "message" {
					r.msgs <- m[2]
				}
			}
		}()
	}
	return r, nil
}

// readPush reads a pub/sub push: an array of bulk strings or integers.
func readPush(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 4 || line[0] != '*' {
		return nil, fmt.Errorf("not a push: %q", line)
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil {
		return nil, err
	}
	out := make([]string, n)
	for k := range out {
		if out[k], err = readReply(rd); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// acquire waits for the predecessor's release (p1's first: none), then takes the
// key on a quorum.
func (r *floorRing) acquire(ctx context.Context) (func(), error) {
	if r.first {
		r.first = false
	} else {
		for woken := false; !woken; {
			select {
			case v := <-r.msgs:
				woken = v != r.last // the same release's message from another master: seen
				r.last = v
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	r.n++
	value := r.prefix + strconv.Itoa(r.n)
	r.buf = appendCommand(r.buf[:0], "SET", r.key, value, "NX", "PX", "8000", "GET")
	for {
		granted := 0
		if err := r.round(func(reply string) {
			if reply == "" || reply == value { // set now (nil), or set by our last round
				granted++
			}
		}); err != nil {
			return nil, err
		}
		if granted >= r.quorum {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return func() {
		r.buf = appendCommand(r.buf[:0], "EVALSHA", r.sha, "1", r.key, value, r.next)
		_ = r.round(func(string) {})
	}, nil
}

// round writes r.buf to every master (the last first, as this project's rounds
// do), then reads one reply from each.
func (r *floorRing) round(each func(reply string)) error {
	for j := len(r.conns) - 1; j >= 0; j-- {
		if _, err := r.conns[j].Write(r.buf); err != nil {
			return err
		}
	}
	for _, rd := range r.rds {
		reply, err := readReply(rd)
		if err != nil {
			return err
		}
		each(reply)
	}
	return nil
}

func (r *floorRing) close() error {
	var errs []error
	for _, c := range append(r.conns, r.subs...) {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// floorRingAcquirer is the floor ring of one worker as an experiment.Acquirer.
func floorRingAcquirer(addrs []string, id string, clients int, rec *pathRecorder) (experiment.Acquirer, func(), error) {
	r, err := newFloorRing(addrs, id, clients)
	if err != nil {
		return nil, nil, err
	}
	acquire := experiment.Acquirer(r.acquire)
	if rec != nil {
		acquire = rec.wrap(acquire)
	}
	return acquire, func() { _ = r.close() }, nil
}
