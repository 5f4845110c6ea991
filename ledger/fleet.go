package ledger

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/workspace"
)

// RunnerRefPrefix is where each runner keeps its record: RunnerRefPrefix +
// runner name, moved by the runner with every claim, heartbeat and verdict
// it pushes, so `hone runner status` can say when each was last seen.
const RunnerRefPrefix = "refs/hone/runners/"

// RunnerRecord is a runner's record: who it is and what it last did.
type RunnerRecord struct {
	Runner  string `toml:"runner" json:"runner"`
	Class   string `toml:"class" json:"class"`
	Version string `toml:"version" json:"version"`
	// Host is the machine the runner runs on (its host name): runners on
	// one host take turns to measure, which operators need to see before
	// a runner's first verdict says where it measured.
	Host      string    `toml:"host,omitempty" json:"host,omitempty"`
	Heartbeat time.Time `toml:"heartbeat" json:"last_heartbeat"`
	Judging   string    `toml:"judging,omitempty" json:"judging,omitempty"` // the patch it holds a claim on
	Pairs     int       `toml:"pairs,omitempty" json:"pairs,omitempty"`     // bench pairs measured on it so far
	// Phase is where the verdict on Judging stood at this record (build,
	// gate <name>, wait for the machine, bench, ...), for the agent that
	// waits for it; it is as old as the record's heartbeat.
	Phase       string    `toml:"phase,omitempty" json:"phase,omitempty"`
	LastPatch   string    `toml:"last_patch,omitempty" json:"last_patch,omitempty"`
	LastVerdict string    `toml:"last_verdict,omitempty" json:"last_verdict,omitempty"`
	LastAt      time.Time `toml:"last_at,omitempty" json:"last_verdict_at,omitzero"`
}

const runnerSubject = "hone: runner "

// WriteRunnerRecord stores r as a commit whose parent is the record it
// follows (zero for the first).
func (l *Ledger) WriteRunnerRecord(ctx context.Context, r *RunnerRecord, parent plumbing.Hash) (plumbing.Hash, error) {
	return l.writeRecord(ctx, runnerSubject+r.Runner, r, parent)
}

// ParseRunnerRecord reads the record of runner name from its commit message.
func ParseRunnerRecord(name, msg string) (*RunnerRecord, error) {
	var r RunnerRecord
	if err := parseTOMLMessage(runnerSubject+name, msg, &r); err != nil {
		return nil, err
	}
	if r.Runner != name {
		return nil, errs.Invalidf("the record at %s names runner %q", RunnerRefPrefix+name, r.Runner)
	}
	return &r, nil
}

// RemoteClaim is a claim as a remote holds it. Err is set for a ref there
// that holds no readable claim, or one no allowed signer signed (possible
// only where no hook checks pushes): such a claim is treated as expired.
type RemoteClaim struct {
	*Claim
	PatchID string        `json:"-"`
	Commit  plumbing.Hash `json:"commit"`
	Err     error         `json:"-"`
}

// Live reports whether c still holds its patch at now.
func (c RemoteClaim) Live(now time.Time) bool { return c.Err == nil && c.Claim.Live(now) }

// RemoteRunner is a runner's record as a remote holds it.
type RemoteRunner struct {
	*RunnerRecord
	Commit plumbing.Hash `json:"commit"`
}

// Fleet is the remote's coordination state: its claims by patch id and its
// runners' records by name.
type Fleet struct {
	Claims  map[string]RemoteClaim
	Runners map[string]RemoteRunner
	// Pushers is, where the protected base names [guard] pusher, whom the
	// server authenticated for each proposal (entry id -> identity, from
	// PushersRef; empty before the first); nil otherwise. See
	// QueueOptions.Pushers.
	Pushers map[string]string
}

// FetchFleet fetches the remote's claims, runner records and record of
// pushers into scratch refs (refs the remote no longer has are pruned
// there) and reads them.
func (l *Ledger) FetchFleet(ctx context.Context, remote string) (*Fleet, error) {
	scratch := scratchPrefix(remote)
	if _, err := l.git(ctx, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--prune", remote,
		"+"+ClaimRefPrefix+"*:"+scratch+"claims/*", "+"+RunnerRefPrefix+"*:"+scratch+"runners/*",
		"+"+PushersRefPrefix+"*:"+scratch+"pushers/*"); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot fetch the claims of remote %q", remote)
	}
	out, err := l.git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", scratch+"claims/", scratch+"runners/")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the fetched claims")
	}
	tr, err := l.trust(ctx)
	if err != nil {
		return nil, err
	}
	f := &Fleet{Claims: map[string]RemoteClaim{}, Runners: map[string]RemoteRunner{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		hash, ref, ok := strings.Cut(line, " ")
		if !ok || !plumbing.IsHash(hash) {
			continue
		}
		h := plumbing.NewHash(hash)
		ci, err := l.obj.commitInfo(h)
		if err != nil {
			return nil, err
		}
		msg := commitMessage(ci.raw)
		if id, ok := strings.CutPrefix(ref, scratch+"claims/"); ok {
			c, err := ParseClaim(id, msg)
			if sg := tr.judge(h, checkSignature(ci)); err == nil && !sg.Trusted {
				// Where no hook checks claims, anyone could push one; a
				// claim no listed key signed holds nothing.
				err = errs.Policyf("the claim on %s is signed by no key %s lists", id, tr.File)
			}
			f.Claims[id] = RemoteClaim{Claim: c, PatchID: id, Commit: h, Err: err}
		} else if name, ok := strings.CutPrefix(ref, scratch+"runners/"); ok {
			if r, err := ParseRunnerRecord(name, msg); err == nil {
				f.Runners[name] = RemoteRunner{RunnerRecord: r, Commit: h}
			}
		}
	}
	if f.Pushers, err = l.fetchedPushers(ctx, scratch+"pushers/proposals"); err != nil {
		return nil, err
	}
	return f, nil
}

// fetchedPushers reads the record of pushers fetched to ref, where the
// protected base names [guard] pusher (nil where it does not: the queue
// then knows proposers by their signatures or committers).
func (l *Ledger) fetchedPushers(ctx context.Context, ref string) (map[string]string, error) {
	b, err := workspace.ProtectedBase(ctx, l.ws.Repo)
	if errs.Is(err, errs.NotFound) || err == nil && b.Config.Guard.Pusher == "" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h, ok, err := l.refs.Read(ref)
	if err != nil || !ok {
		return map[string]string{}, err
	}
	return l.readPushers(h)
}

// RefPush is one update of an atomic push: ref from Old (zero: it must not
// exist) to New (zero: delete it).
type RefPush struct {
	Ref      string
	Old, New plumbing.Hash
	// Unleased pushes New without naming the remote's old value: for refs
	// only this clone moves, which git refuses to move unless the update
	// is a fast-forward.
	Unleased bool
}

// ErrLostRace is what PushRefs returns when a ref was not at the value the
// push named: another runner moved it first.
var ErrLostRace = errors.New("a ref moved on the remote first")

// PushRefs applies updates on remote in one `git push --atomic`: all or
// none. Each leased update names the value it expects (compare-and-swap
// under the server's ref lock). A remote that moved first is ErrLostRace
// (wrapped, Busy); one whose hook refuses is a Policy error with its reasons.
func (l *Ledger) PushRefs(ctx context.Context, remote string, updates []RefPush) error {
	args := []string{"push", "--quiet", "--porcelain", "--atomic", remote}
	var specs []string
	for _, u := range updates {
		if !u.Unleased {
			old := ""
			if !u.Old.IsZero() {
				old = u.Old.String()
			}
			args = append(args, "--force-with-lease="+u.Ref+":"+old)
		}
		src := ""
		if !u.New.IsZero() {
			src = u.New.String()
		}
		specs = append(specs, src+":"+u.Ref)
	}
	out, err := l.git(ctx, append(args, specs...)...)
	if err == nil {
		return nil
	}
	var ge *git.Error
	if !errors.As(err, &ge) {
		return errs.Wrap(errs.Failure, err, "cannot push to remote %q", remote)
	}
	if strings.Contains(ge.Stderr, "hook declined") || strings.Contains(string(out), "hook declined") {
		return hookRefusal(remote, "the push", ge.Stderr)
	}
	if len(refusedRefs(string(out))) > 0 {
		return errs.Wrap(errs.Busy, ErrLostRace, "remote %q: %s", remote, errs.Clip(strings.TrimSpace(string(out))))
	}
	return errs.Wrap(errs.Failure, err, "cannot push to remote %q", remote)
}
