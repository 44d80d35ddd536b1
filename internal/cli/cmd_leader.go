package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redlock/redlock/admin"
	"github.com/redlock/redlock/internal/escape"
	"github.com/redlock/redlock/internal/human"
	"github.com/redlock/redlock/quorum"
)

// ExitNoLeader: leader found that nobody leads the election.
const ExitNoLeader = 3

// leaderArgs are the arguments of leader.
type leaderArgs struct {
	lockArgs
	watch bool
}

func (a *leaderArgs) flags(f *Flags) {
	f.Bool(&a.watch, "watch", "follow every change until Ctrl-C")
	a.jsonFlag(f)
	a.common.flags(f)
}

var _ = define(&Command{
	Name:     "leader",
	Synopsis: "show who leads an election, or follow every change",
	Args:     "NAME",
	About: `
Reads the current leader of the election NAME from every master and prints it:
the value it published (elect -value), its term (strictly increasing per
election: the fencing number), since when it leads, the validity left and how many
masters hold it. A leader is named only when one candidate holds the leadership,
with its record, on a quorum of the masters with validity left: a partial or
expired leadership is "nobody leads".

With -watch, prints the leader now and then one line at every change (another
term, another value, nobody leading, a read that failed) until Ctrl-C. A wake-up
message from a campaign or a resignation only triggers a quorum read; every line
is what a quorum holds. With -json, one JSON document (JSON lines with -watch).
-timeout bounds each read of -watch, not the watch.`,
	Exits: []Exit{
		{0, "a leader was found (-watch: ended by Ctrl-C)"},
		{1, "error: fewer than a quorum of masters answered"},
		exitBadInput,
		{3, "nobody leads the election (not with -watch)"},
	},
	Complete: Completion{LockName: true, Elections: true},
}, withSession(runLeader))

// leaderJSON is the -json output of leader, and each line of leader -watch.
type leaderJSON struct {
	Name       string     `json:"name"`
	Key        string     `json:"key"`
	ObservedAt *time.Time `json:"observed_at,omitempty"`
	Leading    bool       `json:"leading"`
	// Value is what the leader published: hostile input, escaped by readers that print it.
	Value      string     `json:"value,omitempty"`
	Term       int64      `json:"term,omitempty"`
	Since      *time.Time `json:"since,omitempty"`
	ValidityMS float64    `json:"validity_ms"`
	ValidUntil *time.Time `json:"valid_until,omitempty"`
	// NoExpiry: the leadership's keys on the quorum have no TTL (set by hand, or
	// PERSISTed): ValidityMS is 0 and ValidUntil absent, as in locks -json.
	NoExpiry bool       `json:"no_expiry,omitempty"`
	Votes    int        `json:"votes"`
	Quorum   int        `json:"quorum"`
	Total    int        `json:"total"`
	Owner    *ownerJSON `json:"owner,omitempty"`
	Error    string     `json:"error,omitempty"`
	err      error      // the read's error: nil, quorum.ErrNoLeader or a failed read
}

// human prints one read as a block.
func (d leaderJSON) human(env *Env) error {
	printLeader(env.Stdout, d, d.err, false)
	return nil
}

// humanLine is one line of leader -watch.
func (d leaderJSON) humanLine() string {
	var b strings.Builder
	printLeader(&b, d, d.err, true)
	return strings.TrimSuffix(b.String(), "\n")
}

// leaderDoc is the document of one read: li when someone leads, else err says
// why not (quorum.ErrNoLeader, or a failed read).
func (s *lockSession) leaderDoc(el *quorum.Election, li *quorum.LeaderInfo, err error) leaderJSON {
	out := leaderJSON{Name: el.Name(), Key: el.Key(), Quorum: s.m.Quorum(), Total: len(s.m.Nodes()), err: err}
	if err != nil {
		out.Error = s.redact(err.Error())
		if rep := reportOf(err); rep != nil {
			out.Votes = rep.Votes
		}
		return out
	}
	out.ObservedAt, out.Leading, out.Value, out.Term = jsonTime(li.ObservedAt), true, li.Value, li.Term
	out.Since = jsonTime(li.Since)
	if li.Validity == admin.NoExpiry {
		out.NoExpiry = true
	} else {
		until := li.ObservedAt.Add(li.Validity)
		out.ValidityMS, out.ValidUntil = ms(li.Validity), &until
	}
	out.Votes, out.Quorum, out.Owner = li.Votes, li.Quorum, toOwnerJSON(li.Owner)
	return out
}

// printLeader writes one read for humans: a block, or one line when watching.
// err is the read's error: nil, quorum.ErrNoLeader or a failed read.
func printLeader(w io.Writer, d leaderJSON, err error, oneLine bool) {
	name := escape.Line(d.Name, 60)
	if oneLine {
		at := time.Now()
		if d.ObservedAt != nil {
			at = *d.ObservedAt
		}
		stamp := at.Format("15:04:05.000")
		switch {
		case d.Leading:
			fmt.Fprintf(w, "%s  %s  term %d  %s  (%s; %d/%d masters, valid %v)\n", stamp, name, d.Term, escape.Line(d.Value, 80),
				leaderHolder(d.Owner), d.Votes, d.Total, d.validityText())
		case err != nil && !errors.Is(err, quorum.ErrNoLeader):
			fmt.Fprintf(w, "%s  %s  read failed: %s\n", stamp, name, escape.Text(d.Error))
		default:
			fmt.Fprintf(w, "%s  %s  nobody leads\n", stamp, name)
		}
		return
	}
	if !d.Leading {
		fmt.Fprintf(w, "nobody leads %s\n", name)
		return
	}
	fmt.Fprintf(w, "leader of %s: %s\n", name, escape.Line(d.Value, 200))
	fmt.Fprintf(w, "  term     %d\n", d.Term)
	if d.Since != nil {
		fmt.Fprintf(w, "  since    %s (%s ago)\n", d.Since.Format(time.RFC3339), human.Duration(time.Since(*d.Since)))
	}
	fmt.Fprintf(w, "  validity %s (%d of %d masters, quorum %d)\n", d.validityText(), d.Votes, d.Total, d.Quorum)
	fmt.Fprintf(w, "  holder   %s\n", leaderHolder(d.Owner))
}

// validityText is the leadership's validity for humans: "no ttl" when its keys
// have none (as locks says it).
func (d leaderJSON) validityText() string {
	if d.NoExpiry {
		return "no ttl"
	}
	return human.Duration(time.Duration(d.ValidityMS) * time.Millisecond)
}

// leaderHolder says which process leads: "label, host pid 42", escaped.
func leaderHolder(o *ownerJSON) string {
	if o == nil {
		return "unknown process"
	}
	out := ""
	if o.Label != "" {
		out = o.Label + ", "
	}
	return escape.Line(fmt.Sprintf("%s%s pid %d", out, o.Host, o.PID), 80)
}

func runLeader(ctx context.Context, env *Env, s *lockSession, a *leaderArgs) error {
	el, err := s.m.Election(a.name)
	if err != nil {
		return usagef("election NAME %s: %v", a.name, err)
	}
	if a.watch {
		for obs := range el.Observe(ctx) {
			if err := showLine(env, a.json, s.leaderDoc(el, obs.Leader, obs.Err)); err != nil {
				return s.fail(ExitError, err) // stdout is gone (a closed pipe): nobody reads the stream
			}
		}
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	li, err := el.Leader(cctx)
	doc := s.leaderDoc(el, li, err)
	switch {
	case err == nil:
		return show(env, a.json, doc)
	case errors.Is(err, quorum.ErrNoLeader):
		if werr := show(env, a.json, doc); werr != nil {
			return s.fail(ExitError, werr)
		}
		return &exitError{code: ExitNoLeader, err: err, shown: true, doc: skipDoc{}}
	}
	return failDoc(ExitError, redacted(err, s.redact), doc)
}
