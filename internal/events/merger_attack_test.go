package events

import (
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kinds returns the kind and value of each event.
func kinds(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind + " " + e.Value
	}
	return out
}

// Regression: an unread set joined "the one acquisition reported within the window
// that its master has not reported yet", whichever cycle it belonged to. A value
// read on one master only (a holder's first master, a failed round's minority, a
// plain SET NX on one master), with another client's quick cycle on three other
// masters within the window, was reported acquired and released though no quorum
// ever held it.
func TestBugMergerUnreadSetsJoinAMinorityValue(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, del := range []bool{true, false} {
		m := NewMerger(3, 5, time.Second)
		var evs []Event
		// A minority on e, read there.
		evs = append(evs, m.Add("e", "x", "set", "minority", at(0))...)
		evs = append(evs, m.Add("e", "x", "expire", "", at(0))...)
		if del {
			evs = append(evs, m.Add("e", "x", "del", "", at(50))...)
		}
		// 800 ms later, a cycle too quick to read on a, b, c and d.
		for i, ms := range []string{"a", "b", "c", "d"} {
			evs = append(evs, m.Add(ms, "x", "set", "", at(800+i))...)
			evs = append(evs, m.Add(ms, "x", "expire", "", at(800+i))...)
			evs = append(evs, m.Add(ms, "x", "del", "", at(801+i))...)
		}
		evs = append(evs, m.Flush(at(5000))...)
		assert.Empty(t, kinds(evs), "the minority deleted: %v; no value was held by a quorum", del)
	}
}

// Regression: the holder's first master reports its set (read); a quick cycle of
// another client on c, d and e, unread, joined it; the holder then took b to e and
// held the lock for seconds. Its acquisition was reported with masters that never
// held it, a release was reported when c, d and e deleted the quick cycle's copies
// (the holder held all five masters), and its real release was a second one.
func TestBugMergerUnreadCycleJoinsTheNextHoldersAcquisition(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := NewMerger(3, 5, time.Second)
	var evs []Event
	step := func(ms, op, value string, t int) {
		evs = append(evs, m.Add(ms, "x", op, value, at(t))...)
		if op == "set" {
			evs = append(evs, m.Add(ms, "x", "expire", "", at(t))...)
		}
	}
	step("a", "set", "holder", 0)
	for i, ms := range []string{"c", "d", "e"} {
		step(ms, "set", "", 100+i)
		step(ms, "del", "", 101+i)
	}
	evs = append(evs, m.Flush(at(400))...)
	assert.Empty(t, kinds(evs), "one master holds the holder's value")
	for i, ms := range []string{"b", "c", "d", "e"} {
		step(ms, "set", "holder", 500+i)
	}
	evs = append(evs, m.Flush(at(3000))...)
	assert.Equal(t, []string{"acquired holder"}, kinds(evs), "every master holds the holder's value")
	for i, ms := range []string{"a", "b", "c", "d", "e"} {
		step(ms, "del", "", 5000+i)
	}
	evs = append(evs, m.Flush(at(9000))...)
	assert.Equal(t, []string{"acquired holder", "released holder"}, kinds(evs))
}

// Regression: the adoption path of the same mistake. Sets of unread value on c, d
// and e (an earlier quick cycle, reported late by those masters) waited to be
// adopted; the next holder's set, read on a, adopted them as its own, and their
// deletes were then counted as its release while it held every master.
func TestBugMergerAdoptsAnEarlierCyclesUnreadCopies(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := NewMerger(3, 5, time.Second)
	var evs []Event
	add := func(ms, op, value string, t int) { evs = append(evs, m.Add(ms, "x", op, value, at(t))...) }
	for i, ms := range []string{"c", "d", "e"} { // the quick cycle's sets, unread
		add(ms, "set", "", i)
		add(ms, "expire", "", i)
	}
	add("a", "set", "", 3) // the quick cycle on a, read there neither
	add("a", "expire", "", 3)
	add("a", "del", "", 3)
	add("a", "set", "v2", 4) // the next holder, read on a
	add("a", "expire", "", 4)
	for i, ms := range []string{"c", "d", "e"} { // the quick cycle's deletes
		add(ms, "del", "", 10+i)
	}
	for i, ms := range []string{"c", "d", "e", "b"} { // the next holder's sets
		add(ms, "set", "v2", 20+i)
		add(ms, "expire", "", 20+i)
	}
	evs = append(evs, m.Flush(at(1000))...)
	for i, ms := range []string{"a", "b", "c", "d", "e"} { // its release, 5 s later
		add(ms, "del", "", 5000+i)
	}
	evs = append(evs, m.Flush(at(9000))...)
	assert.Equal(t, []string{"acquired v2", "released v2"}, kinds(evs))
	require.NotEmpty(t, evs)
	assert.Equal(t, at(21), evs[0].At, "acquired once three masters (a, c, d) set v2")
	assert.ElementsMatch(t, []string{"a", "b", "c", "d", "e"}, evs[0].Masters)
}

// Regression: a change of hands waits the grace for a release that lags the next
// holder's sets; a release later than the grace (a master whose notifications are
// 300 ms late) was printed after the change of hands, so the first acquisition
// ended twice.
func TestBugMergerReleaseLaterThanTheGraceEndsTheAcquisitionTwice(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := NewMerger(3, 5, time.Second)
	var evs []Event
	add := func(ms, op, value string, t int) { evs = append(evs, m.Add(ms, "x", op, value, at(t))...) }
	for _, ms := range []string{"a", "b", "c"} { // held on a quorum of three
		add(ms, "set", "first", 0)
		add(ms, "expire", "", 0)
	}
	evs = append(evs, m.Flush(at(1000))...)
	add("b", "del", "", 1000)
	add("c", "del", "", 1000)
	for _, ms := range []string{"b", "c", "d", "e"} {
		add(ms, "set", "second", 1001)
		add(ms, "expire", "", 1001)
	}
	evs = append(evs, m.Flush(at(1200))...) // the grace passed: a change of hands
	add("a", "del", "", 1300)               // a's release, 300 ms late
	add("a", "set", "second", 1300)
	add("a", "expire", "", 1300)
	evs = append(evs, m.Flush(at(5000))...)
	assert.Equal(t, []string{"acquired first", "changed-hands second"}, kinds(evs), "the first acquisition ends once")
}

// Regression: a force-expire announcement marked the name until a release took
// it; when what it deleted was no acquisition (a stale copy on one master), the
// mark stayed, and the next holder's ordinary release was reported as a
// force-expire.
func TestBugMergerForceExpireOfALeftoverMarksTheNextRelease(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	all := []string{"a", "b", "c", "d", "e"}
	m := NewMerger(3, 5, time.Second)
	var evs []Event
	evs = append(evs, m.Add("a", "x", "set", "leftover", at(0))...)
	evs = append(evs, m.Add("a", "x", "del", "", at(100))...)
	evs = append(evs, m.Add("a", "x", admin.ForceExpiredMessage, "", at(100))...)
	evs = append(evs, add(m, "x", "set", "next", at(2000), all...)...)
	evs = append(evs, add(m, "x", "del", "", at(4000), all...)...)
	evs = append(evs, m.Flush(at(9000))...)
	assert.Equal(t, []string{"acquired next", "released next"}, kinds(evs))
}

// Attack: a simulated cluster (sim_attack_test.go) of lock clients contending for
// names (glob characters and colons among them), quick cycles and long holds,
// extensions, crashed holders whose keys expire, releases that miss a master,
// force-expires (of held and of free names), single-master SET NX clients, three
// masters, masters whose notifications lag by up to 20 ms or stall for 300 ms, and
// GETs that fail. Every event is checked, when it is printed, against what the
// masters it names really did: an acquisition a quorum set, a release when fewer
// than a quorum still hold the value, each acquisition reported once and ended at
// most once, never an end or extension of a value not reported held.
func TestAttackMergerSimulatedClusterTellsTheTruth(t *testing.T) {
	seeds := 20
	if n, err := strconv.Atoi(os.Getenv("MERGER_SIM_SEEDS")); err == nil {
		seeds = n
	}
	var names []string
	for n := range simScenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			cfg := simBase()
			simScenarios[name](&cfg)
			masters := []string{"a", "b", "c", "d", "e"}[:cfg.masters]
			total := map[string]int{}
			for seed := int64(1); seed <= int64(seeds); seed++ {
				m := NewMerger(cfg.quorum, cfg.masters, time.Second)
				bad, evs := simCheck(m, runSim(cfg, seed), masters, false)
				if name == "partial" {
					// A lock held on three masters whose release missed one ends by two
					// deletes and an expiry, a quorum of neither (kinds are counted
					// apart): the next holder is reported as a change of hands.
					delete(bad, "invented")
				}
				for class, list := range bad {
					t.Errorf("seed %d (replay with MERGER_SIM_SEEDS): %s: %d, e.g. %v", seed, class, len(list), list[:min(3, len(list))])
				}
				for _, e := range evs {
					total[e.Kind]++
				}
			}
			t.Logf("%d seeds: events %v", seeds, total)
			assert.Positive(t, total[Acquired]+total[ChangedHands], "acquisitions are reported")
		})
	}
}

// Regression: an acquisition whose quorum of read sets is completed by a master
// whose notifications lag (a holder that won exactly three masters, one of them
// late) reached its quorum after the next holder's; it was printed as a change of
// hands over the next holder, which in truth took the lock after it: the stream
// then showed the next holder replaced while it held the lock, and its extension
// as an extension of a value not held. Such a stale cycle is left out whole.
func TestBugMergerLateAcquisitionPrintedAsAChangeOfHandsOverTheNextHolder(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := NewMerger(3, 5, time.Second)
	var evs []Event
	add := func(ms, op, value string, t int) { evs = append(evs, m.Add(ms, "x", op, value, at(t))...) }
	// X wins e, a and c (a failed round of another client holds d and b for a
	// moment); X is released; K wins a, b, d and e. c's reports lag by 100 ms.
	for _, ms := range []string{"e", "a"} {
		add(ms, "set", "X", 0)
		add(ms, "expire", "", 0)
	}
	for _, ms := range []string{"e", "a"} {
		add(ms, "del", "", 5)
	}
	for _, ms := range []string{"a", "d", "e", "b"} {
		add(ms, "set", "K", 8)
		add(ms, "expire", "", 8)
	}
	add("c", "set", "X", 100)
	add("c", "expire", "", 100)
	add("c", "del", "", 105)
	add("a", "pexpire", "", 300) // K extends
	add("b", "pexpire", "", 300)
	add("d", "pexpire", "", 300)
	evs = append(evs, m.Flush(at(2000))...)
	for _, ms := range []string{"a", "b", "d", "e"} {
		add(ms, "del", "", 3000)
	}
	evs = append(evs, m.Flush(at(9000))...)
	assert.Equal(t, []string{"acquired K", "extended K", "released K"}, kinds(evs))
}

// Regression: an extension in flight when the holder releases (a keep-alive's
// round on the wire as Release is called) reaches each master before that
// master's delete, but the extension's quorum of reports can complete after the
// release's (the master that saw no extension reported its delete first): the
// extension was printed after the release, of a lock no longer held.
func TestBugMergerExtensionPrintedAfterTheRelease(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := NewMerger(3, 5, time.Second)
	var evs []Event
	evs = append(evs, add(m, "x", "set", "v", at(0), "a", "b", "c", "d", "e")...)
	evs = append(evs, add(m, "x", "expire", "", at(0), "a", "b", "c", "d", "e")...)
	evs = append(evs, m.Flush(at(1000))...)
	evs = append(evs, m.Add("a", "x", "del", "", at(2000))...)
	for i, ms := range []string{"e", "d", "b", "c"} {
		evs = append(evs, m.Add(ms, "x", "pexpire", "", at(2001+i))...)
		evs = append(evs, m.Add(ms, "x", "del", "", at(2001+i))...)
	}
	evs = append(evs, m.Flush(at(5000))...)
	require.NotEmpty(t, evs)
	assert.Equal(t, "released v", kinds(evs)[len(evs)-1], "nothing after the release: %v", kinds(evs))
}

// Regression: a change of hands waits the grace for a release that lags the next
// holder's sets, but an event that was ready later released every earlier one
// (events came out in the order of their quorums, across names): with other names
// busy, the change of hands was printed at once, and the release arriving 20 ms
// later was the truth.
func TestBugMergerChangeOfHandsGraceCutShortByAnotherName(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	all := []string{"a", "b", "c", "d", "e"}
	m := NewMerger(3, 5, time.Second)
	var evs []Event
	for _, ms := range []string{"a", "b", "c"} {
		evs = append(evs, m.Add(ms, "x", "set", "first", at(0))...)
	}
	evs = append(evs, m.Flush(at(1000))...)
	evs = append(evs, m.Add("b", "x", "del", "", at(1000))...)
	evs = append(evs, m.Add("c", "x", "del", "", at(1000))...)
	for _, ms := range []string{"b", "c", "d", "e"} {
		evs = append(evs, m.Add(ms, "x", "set", "second", at(1001))...)
	}
	// Another name's cycle, reported by every master, meanwhile.
	evs = append(evs, add(m, "y", "set", "other", at(1005), all...)...)
	evs = append(evs, m.Add("a", "x", "del", "", at(1020))...) // a's release, 20 ms late
	evs = append(evs, m.Add("a", "x", "set", "second", at(1020))...)
	evs = append(evs, m.Flush(at(5000))...)
	var x []string
	for _, e := range evs {
		if e.Name == "x" {
			x = append(x, e.Kind+" "+e.Value)
		}
	}
	assert.Equal(t, []string{"acquired first", "released first", "acquired second"}, x)
}

// Regression: a master whose reports lag by more than the window (1 s) split an
// acquisition's reports in two, neither a quorum, while its release's reports,
// close together, made one: a release was printed without its acquisition.
func TestBugMergerReleaseWithoutItsAcquisitionWhenALagExceedsTheWindow(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m := NewMerger(3, 5, time.Second)
	var evs []Event
	add := func(ms, op, value string, t int) { evs = append(evs, m.Add(ms, "x", op, value, at(t))...) }
	add("a", "set", "v", 0)
	add("b", "set", "v", 0)
	add("c", "set", "v", 1200) // c's reports are 1.2 s late
	add("a", "del", "", 1200)
	add("b", "del", "", 1200)
	add("c", "del", "", 1201)
	evs = append(evs, m.Flush(at(5000))...)
	assert.Empty(t, kinds(evs), "no acquisition was reported: no release either")
}

// Attack: a master's deliveries held up for 300 ms now and then, with values
// read at once (the events reader held up after its GET), three clients on two
// names: nothing false, no end without its acquisition, no change of hands over a
// later holder.
func TestAttackMergerStalledReaderAfterEarlyReads(t *testing.T) {
	cfg := simBase()
	cfg.clients, cfg.names, cfg.duration = 3, 2, 6*time.Second
	cfg.stall, cfg.stallLen, cfg.readEarly = 0.005, 300*time.Millisecond, true
	for seed := int64(1); seed <= 20; seed++ {
		bad, _ := simCheck(NewMerger(3, 5, time.Second), runSim(cfg, seed), []string{"a", "b", "c", "d", "e"}, false)
		for class, list := range bad {
			t.Errorf("seed %d: %s: %d, e.g. %v", seed, class, len(list), list[:min(3, len(list))])
		}
	}
}
