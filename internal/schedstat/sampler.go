package schedstat

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// relistEvery is how often a Sampler lists the process's threads anew: a thread
// started since is read from the next listing on.
const relistEvery = 100 * time.Millisecond

// Sampler reads the figures of every thread of one process again and again, as
// Threads does, at the cost of one read per thread: it keeps each thread's
// schedstat file open and reads it from its start, and lists the threads anew at
// most every 100 ms. Threads opens, reads and closes a file per thread and lists
// the directory on every call: a test process with a hundred threads, read every
// 5 ms, spent a processor on it under the race detector. A thread started since
// the last listing is missing from the reads until the next one. A Sampler is not
// safe for concurrent use.
type Sampler struct {
	dir    string
	pid    int
	files  map[int]*os.File
	listed time.Time
	buf    [128]byte
}

// NewSampler returns a Sampler of process pid. It fails with ErrUnavailable where
// the figures cannot be read (off Linux, a process that is gone).
func NewSampler(pid int) (*Sampler, error) {
	s := &Sampler{dir: filepath.Join("/proc", strconv.Itoa(pid), "task"), pid: pid, files: map[int]*os.File{}}
	if err := s.list(); err != nil {
		return nil, err
	}
	return s, nil
}

// list opens the file of every thread not open yet.
func (s *Sampler) list() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("%w: process %d: %w", ErrUnavailable, s.pid, err)
	}
	s.listed = time.Now()
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ok := s.files[tid]; ok {
			continue
		}
		f, err := os.Open(filepath.Join(s.dir, e.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		s.files[tid] = f
	}
	return nil
}

// Read returns the figures of every thread, by thread id, into out (cleared
// first; a new map when nil). A thread that exited is left out, and its file
// closed.
func (s *Sampler) Read(out map[int]Thread) (map[int]Thread, error) {
	if time.Since(s.listed) >= relistEvery {
		if err := s.list(); err != nil {
			return nil, err
		}
	}
	if out == nil {
		out = make(map[int]Thread, len(s.files))
	}
	clear(out)
	for tid, f := range s.files {
		n, err := f.ReadAt(s.buf[:], 0)
		if err != nil && !(errors.Is(err, io.EOF) && n > 0) {
			_ = f.Close() // the thread exited
			delete(s.files, tid)
			continue
		}
		if th, ok := parseBytes(s.buf[:n]); ok {
			out[tid] = th
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: process %d has no readable schedstat", ErrUnavailable, s.pid)
	}
	return out, nil
}

// Close closes the files the Sampler keeps open.
func (s *Sampler) Close() error {
	for tid, f := range s.files {
		_ = f.Close()
		delete(s.files, tid)
	}
	return nil
}

// parseBytes reads one schedstat line without allocating: time on a processor
// (ns), time waiting on a run queue (ns), slices; three decimal fields separated
// by spaces (more may follow).
func parseBytes(b []byte) (Thread, bool) {
	var f [3]int64
	i := 0
	for k := range f {
		for i < len(b) && b[i] == ' ' {
			i++
		}
		start := i
		var v int64
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if v > (1<<63-1-9)/10 {
				return Thread{}, false
			}
			v = v*10 + int64(b[i]-'0')
			i++
		}
		if i == start || (i < len(b) && b[i] != ' ' && b[i] != '\n') {
			return Thread{}, false
		}
		f[k] = v
	}
	return Thread{CPU: time.Duration(f[0]), RunDelay: time.Duration(f[1]), Slices: f[2]}, true
}
