package schedstat

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSamplerReadsFreshFiguresOfEveryThread: a Sampler's reads of its open files
// give the figures of now (the threads' CPU grows between two reads, as Threads
// sees it), pick up a thread started since within the listing period, and drop a
// thread that exited (its file closed).
func TestSamplerReadsFreshFiguresOfEveryThread(t *testing.T) {
	_, err := NewSampler(math.MaxInt32)
	require.ErrorIs(t, err, ErrUnavailable)
	if runtime.GOOS != "linux" {
		t.Skip("schedstat is Linux's")
	}
	s, err := NewSampler(os.Getpid())
	require.NoError(t, err)
	defer s.Close()
	sum := func(m map[int]Thread) (cpu time.Duration) {
		for _, th := range m {
			cpu += th.CPU
		}
		return cpu
	}
	before, err := s.Read(nil)
	require.NoError(t, err)
	b := sum(before)
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); { // spin: CPU time grows
	}
	after, err := s.Read(nil)
	require.NoError(t, err)
	assert.Greater(t, sum(after), b, "a second read of the open files sees the threads' CPU of now")

	// A thread of its own: started, read, then gone. A goroutine that locks the
	// process's main thread and exits does not end it (Go keeps that thread): such
	// a goroutine stays, unlocked at the end, and another takes a thread of its own.
	tidc, exit := make(chan int), make(chan struct{})
	var kept []chan struct{}
	defer func() {
		for _, k := range kept {
			close(k)
		}
	}()
	tid := os.Getpid()
	for tid == os.Getpid() {
		keep := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			tid := syscall.Gettid()
			tidc <- tid
			if tid == os.Getpid() {
				<-keep
				runtime.UnlockOSThread()
				return
			}
			<-exit // never unlocked: the thread exits with the goroutine
		}()
		if tid = <-tidc; tid == os.Getpid() {
			kept = append(kept, keep)
		}
	}
	time.Sleep(relistEvery + 10*time.Millisecond)
	got, err := s.Read(after)
	require.NoError(t, err)
	assert.Contains(t, got, tid, "a thread started since the last listing")
	close(exit)
	gone := "/proc/self/task/" + strconv.Itoa(tid)
	require.Eventually(t, func() bool { _, err := os.Stat(gone); return err != nil }, 5*time.Second, time.Millisecond)
	got, err = s.Read(got)
	require.NoError(t, err)
	assert.NotContains(t, got, tid, "a thread that exited")
	assert.NotContains(t, s.files, tid, "its file is closed")
}

// BenchmarkReadThreads reads a process of 100 threads as a checker's sampler
// does every 5 ms: Threads (a listing and an open, read and close per thread)
// beside a Sampler (one read per thread).
func BenchmarkReadThreads(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("schedstat is Linux's")
	}
	exit := make(chan struct{})
	defer close(exit)
	for range 100 {
		go func() {
			runtime.LockOSThread()
			<-exit
		}()
	}
	pid := os.Getpid()
	b.Run("Threads", func(b *testing.B) {
		for b.Loop() {
			if _, err := Threads(pid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Sampler", func(b *testing.B) {
		s, err := NewSampler(pid)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var m map[int]Thread
		for b.Loop() {
			if m, err = s.Read(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
