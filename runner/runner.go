// Package runner is the loop a quiet machine holding the signing key runs to
// judge what agents anywhere propose, coordinated with other runners through
// the git remote alone: a create-only claim ref per patch, a lease renewed
// by compare-and-swap, and one atomic push of the verdict with the claim's
// release (see ledger/FORMAT.md, "Runner fleet").
package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

// Options are one runner's settings.
type Options struct {
	Remote  string        // the git remote the fleet shares (default origin)
	Class   string        // the runner class, recorded in every verdict
	Name    string        // the runner's name in claims (default host/writer id)
	Version string        // hone's version, recorded in every claim
	Once    bool          // judge at most one proposal, then return
	Idle    time.Duration // return after this long without work; 0: never
	Lease   time.Duration // how long a claim holds without a heartbeat (default 15m)
	Poll    time.Duration // how often to look for work while idle (default 5s)
	// RetryMax caps the wait between tries of a push that failed in a way
	// that may pass (the release of a verdict, the release on a stop);
	// 0: a tenth of the lease, between 1s and 10s.
	RetryMax time.Duration
	// Progress, when set, is told each phase in a line for people.
	Progress func(format string, args ...any)
}

// DefaultLease is a claim's lease when Options.Lease is zero.
const DefaultLease = 15 * time.Minute

// Judgement is what the runner did with one proposal.
type Judgement struct {
	PatchID string `json:"patch_id"`
	Verdict string `json:"verdict,omitempty"`
	EntryID string `json:"entry_id,omitempty"`
	Summary string `json:"summary,omitempty"`
	Error   string `json:"error,omitempty"`
}

type runner struct {
	ws     *workspace.Workspace
	opts   Options
	l      *ledger.Ledger
	writer string
	record plumbing.Hash // this runner's record on the remote
	last   ledger.RunnerRecord
	failed map[string]bool // patches this run could not judge: not picked again
	// started is set once a round has read the queue: until then, live
	// claims under this runner's name are an earlier run's to resume.
	started bool
	quiet   *quiet       // what the last round that found nothing saw; nil after work
	pairs   atomic.Int64 // bench pairs of the running verdict, for the heartbeat's record
	phase   atomic.Value // string: the running verdict's phase, for the heartbeat's record
}

// Run loops: pull the ledger, pick the oldest proposal without a trusted
// verdict and without a live claim, claim it, judge it, push the verdict
// with the claim's release, repeat. It returns what it judged when ctx ends
// (the claim being judged is released without a verdict, so the proposal
// returns to the queue), after one proposal with Once, or when Idle passes
// without work (with Once too: it waits up to Idle for one proposal). A
// round that fails for any reason but policy or usage (the remote away, a
// push that broke off) is tried again a poll later; the last such failure
// is returned if the loop ends before a round succeeds again. With allowed
// signers configured, a runner without a signing key, or with one they do
// not list, is refused (errs.Policy) before anything runs: its verdicts
// would not count.
func Run(ctx context.Context, ws *workspace.Workspace, opts Options) ([]Judgement, error) {
	r, err := start(ctx, ws, &opts)
	if err != nil {
		return nil, err
	}
	out := []Judgement{}
	idleSince := time.Now()
	var failed error // the last round's failure, nil once one succeeds
	for {
		if ctx.Err() != nil {
			return out, nil
		}
		j, worked, err := r.step(ctx)
		if worked {
			out = append(out, j)
			idleSince = time.Now()
		}
		if ctx.Err() != nil {
			return out, nil
		}
		if err != nil && final(err) {
			return out, err
		}
		failed = err
		if opts.Once && (worked || opts.Idle <= 0) {
			return out, failed
		}
		if worked && err == nil {
			continue
		}
		if opts.Idle > 0 && time.Since(idleSince) >= opts.Idle {
			r.progress("idle for %s: stopping", opts.Idle)
			return out, failed
		}
		wait := opts.Poll
		if opts.Idle > 0 {
			wait = min(wait, max(opts.Idle-time.Since(idleSince), time.Millisecond))
		}
		if err != nil {
			// A round that failed waits a poll too, even one that worked:
			// a failure that recurs must not spin against the remote.
			r.progress("%s; trying again in %s", errs.ClipTo(err.Error(), 400), wait.Round(time.Millisecond))
		}
		select {
		case <-ctx.Done():
			return out, nil
		case <-time.After(wait):
		}
	}
}

// final reports whether err ends the loop: a refusal by policy or a usage
// error stays whatever the loop tries. Anything else (the remote away, a
// fetch or push that broke off, a lock another process holds) may pass.
func final(err error) bool {
	c := errs.CodeOf(err)
	return c == errs.Policy || c == errs.Usage
}

func start(ctx context.Context, ws *workspace.Workspace, opts *Options) (*runner, error) {
	if opts.Remote == "" {
		opts.Remote = "origin"
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Poll <= 0 {
		opts.Poll = 5 * time.Second
	}
	l := ledger.Open(ws)
	if err := checkKey(ctx, l); err != nil {
		return nil, err
	}
	writer, err := l.WriterID(ctx)
	if err != nil {
		return nil, err
	}
	if opts.Name == "" {
		host, _ := os.Hostname()
		opts.Name = host + "-" + writer[:8]
	}
	if !validRunnerName(opts.Name) {
		return nil, errs.Usagef("runner name %q: use letters, digits, '.', '_' and '-' only", opts.Name)
	}
	return &runner{ws: ws, opts: *opts, l: l, writer: writer, failed: map[string]bool{}}, nil
}

func validRunnerName(s string) bool {
	if s == "" || len(s) > 100 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (r *runner) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		r.opts.Progress(format, args...)
	}
}

// step does one round: fetch, pick, claim, judge, push. worked is false
// when nothing was there to judge.
func (r *runner) step(ctx context.Context) (j Judgement, worked bool, err error) {
	refs, same, err := r.unchanged(ctx)
	if err != nil || same {
		return j, false, err
	}
	r.progress("fetch %s", r.opts.Remote)
	// Claims first, then the ledger: a claim released after this fetch
	// was released with its verdict, which the pull then brings, so a
	// patch is never seen both unclaimed and unjudged once judged.
	fleet, err := r.l.FetchFleet(ctx, r.opts.Remote)
	if err != nil {
		return j, false, err
	}
	if _, err := r.l.Pull(ctx, r.opts.Remote); err != nil {
		return j, false, err
	}
	if rec, ok := fleet.Runners[r.opts.Name]; ok {
		r.record, r.last = rec.Commit, *rec.RunnerRecord
	}
	cands, err := r.candidates(ctx, fleet)
	if err != nil {
		return j, false, err
	}
	if len(cands) == 0 {
		r.started = true
		r.rest(refs, fleet)
		r.progress("queue empty")
		return j, false, nil
	}
	// An earlier run's claims stay this run's to resume until a claim
	// push of this round went through.
	defer func() {
		if err == nil {
			r.started = true
		}
	}()
	for _, c := range cands {
		cl, err := r.claim(ctx, c, fleet.Claims[c.PatchID])
		if errors.Is(err, ledger.ErrLostRace) {
			r.progress("claim %s: another runner was first", c.PatchID)
			continue
		}
		if errs.CodeOf(err) == errs.Policy {
			// The hook refused this claim (the patch was judged meanwhile,
			// or a loaded machine pushed it after its own lease): another
			// round decides afresh.
			r.progress("claim %s refused: %v", c.PatchID, err)
			continue
		}
		if err != nil {
			return j, false, err
		}
		r.started = true
		j, err := r.judge(ctx, c, cl)
		return j, true, err
	}
	r.progress("every pending proposal is claimed by another runner")
	if r.started {
		r.rest(refs, fleet)
	}
	return j, false, nil
}

// candidates are the proposals this runner may claim, in the queue's order: no
// trusted verdict, no verdict running here, no live claim on the remote.
// Until its first round succeeds, a live claim under this runner's own name
// is an earlier run's, killed or cut off from the remote: its proposals come
// first, resumed at once rather than after the lease, and its claims on
// proposals no longer queued are released.
func (r *runner) candidates(ctx context.Context, fleet *ledger.Fleet) ([]ledger.Attempt, error) {
	// The queue's order is by arrival, round robin across proposers (the
	// identities the server authenticated, where it does), so a flood from
	// one agent delays the others by one turn, never starves them.
	attempts, err := r.l.Queue(ctx, ledger.QueueOptions{Pushers: fleet.Pushers})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	resume := !r.started
	var mine, out []ledger.Attempt
	queued := map[string]bool{}
	for _, a := range attempts {
		queued[a.PatchID] = true
		if r.failed[a.PatchID] {
			continue
		}
		c, claimed := fleet.Claims[a.PatchID]
		switch {
		case claimed && resume && r.ownLive(c, now):
			mine = append(mine, a)
		case claimed && c.Live(now):
		default:
			out = append(out, a)
		}
	}
	if resume {
		r.releaseStale(ctx, fleet, queued, now)
		r.warnSharedHost(ctx, fleet)
	}
	for _, a := range mine {
		r.progress("resuming %s, claimed by an earlier run of %s", a.PatchID, r.opts.Name)
	}
	return append(mine, out...), nil
}

// ownLive reports whether c is a live claim under this runner's name.
func (r *runner) ownLive(c ledger.RemoteClaim, now time.Time) bool {
	return c.Live(now) && c.Runner == r.opts.Name
}

// releaseStale ends, at once, the leases of live claims under this
// runner's name on proposals the queue no longer holds (judged meanwhile):
// an earlier run's, they would hold nothing but the status view. A failure
// is only reported: the lease ends anyway.
func (r *runner) releaseStale(ctx context.Context, fleet *ledger.Fleet, queued map[string]bool, now time.Time) {
	for id, c := range fleet.Claims {
		if queued[id] || !r.ownLive(c, now) {
			continue
		}
		err := r.giveUp(ctx, id, &held{commit: c.Commit, claim: *c.Claim})
		if err != nil {
			r.progress("release %s, claimed by an earlier run of %s: %v", id, r.opts.Name, err)
			continue
		}
		r.progress("released %s, claimed by an earlier run of %s", id, r.opts.Name)
	}
}

// held is a claim this runner holds: its commit on the remote and content.
type held struct {
	commit plumbing.Hash
	claim  ledger.Claim
}

// claim pushes a claim on a: create-only, or the compare-and-swap takeover
// of an expired one. It returns ErrLostRace when another runner was first.
func (r *runner) claim(ctx context.Context, a ledger.Attempt, prev ledger.RemoteClaim) (*held, error) {
	now := time.Now().UTC()
	c := ledger.Claim{Patch: a.PatchID, Runner: r.opts.Name, Class: r.opts.Class, Version: r.opts.Version,
		Pin: a.Pin, Renewed: now, Expires: now.Add(r.opts.Lease)}
	h, err := r.l.WriteClaim(ctx, &c, prev.Commit)
	if err != nil {
		return nil, err
	}
	ups := []ledger.RefPush{{Ref: ledger.ClaimRef(a.PatchID), Old: prev.Commit, New: h}}
	rec, err := r.recordUpdate(ctx, a.PatchID, now, nil)
	if err != nil {
		return nil, err
	}
	if err := r.l.PushRefs(ctx, r.opts.Remote, append(ups, rec)); err != nil {
		return nil, err
	}
	r.record, r.last.Heartbeat, r.last.Judging = rec.New, now, a.PatchID
	switch {
	case prev.Commit.IsZero():
		r.progress("claimed %s (lease until %s)", a.PatchID, c.Expires.Format(time.RFC3339))
	case prev.Live(now):
		r.progress("resumed %s (lease until %s)", a.PatchID, c.Expires.Format(time.RFC3339))
	default:
		r.progress("took over %s from %s, whose lease ended %s (lease until %s)", a.PatchID, prevRunner(prev), prevExpiry(prev), c.Expires.Format(time.RFC3339))
	}
	return &held{commit: h, claim: c}, nil
}

func prevRunner(c ledger.RemoteClaim) string {
	if c.Claim == nil {
		return "an unreadable claim"
	}
	return c.Runner
}

func prevExpiry(c ledger.RemoteClaim) string {
	if c.Claim == nil {
		return "never"
	}
	return c.Expires.Format(time.RFC3339)
}

// recordUpdate writes this runner's next record: seen at now, judging
// patch ("" when done), with verdict v when one was just reached.
func (r *runner) recordUpdate(ctx context.Context, patch string, now time.Time, v *verdict.Entry) (ledger.RefPush, error) {
	rec := r.last
	rec.Runner, rec.Class, rec.Version, rec.Heartbeat, rec.Judging = r.opts.Name, r.opts.Class, r.opts.Version, now, patch
	rec.Host, _ = os.Hostname()
	rec.Pairs, rec.Phase = 0, ""
	if patch != "" {
		rec.Pairs = int(r.pairs.Load())
		rec.Phase, _ = r.phase.Load().(string)
	}
	if v != nil {
		rec.LastPatch, rec.LastVerdict, rec.LastAt = v.PatchID, v.Verdict, now
	}
	h, err := r.l.WriteRunnerRecord(ctx, &rec, r.record)
	if err != nil {
		return ledger.RefPush{}, err
	}
	return ledger.RefPush{Ref: ledger.RunnerRefPrefix + r.opts.Name, Old: r.record, New: h}, nil
}

// judge judges a claimed proposal, renewing the lease while it runs, and
// pushes the verdict with the claim's release.
func (r *runner) judge(ctx context.Context, a ledger.Attempt, cl *held) (Judgement, error) {
	j := Judgement{PatchID: a.PatchID}
	sc, err := newScratch(ctx, r.ws)
	if err != nil {
		j.Error = err.Error()
		return j, errors.Join(err, r.stop(ctx, a.PatchID, cl))
	}
	judgeCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.pairs.Store(0)
	r.phase.Store("")
	hb := r.heartbeat(judgeCtx, cancel, cl)
	e, err := verdict.Run(judgeCtx, sc.ws, a.PatchID, verdict.Options{
		RunnerClass: r.opts.Class,
		Progress: func(p verdict.Progress) {
			r.phase.Store(phaseName(p))
			if p.Phase == "bench" && p.Pairs > 0 {
				r.pairs.Store(int64(p.Pairs))
				r.progress("judge %s: bench %d/%d pairs", a.PatchID, p.Pairs, p.MaxPairs)
			} else if p.Phase != "bench" {
				r.progress("judge %s: %s", a.PatchID, p.Phase)
			}
		},
	})
	cancel(nil)
	lost := <-hb
	if lost != nil {
		// Another runner holds the claim now: whatever this runner
		// recorded stays in its scratch ledger, never pushed, so the
		// proposal has one outcome, the new holder's.
		r.progress("judge %s: %v; its verdict is dropped", a.PatchID, lost)
		j.Error = lost.Error()
		return j, nil
	}
	if ctx.Err() != nil && (err != nil || e == nil || e.Verdict == ledger.VerdictCancelled) {
		// This runner's own stop: not the attempt's outcome. What the
		// verdict recorded stays in the scratch ledger, and the claim's
		// lease ends now, so the proposal returns to the queue for the
		// next runner.
		j.Error = "stopped before a verdict; the proposal is back in the queue"
		r.progress("judge %s: stopped before a verdict; releasing its claim", a.PatchID)
		if err := r.stop(ctx, a.PatchID, cl); err != nil {
			// The loop ends with the stop whatever this says: tell it here.
			r.progress("release %s: %v", a.PatchID, err)
			return j, err
		}
		return j, nil
	}
	if err != nil {
		// Nothing recorded (the proposal cannot be judged here): end the
		// lease now so another runner may try, and skip it from now on.
		r.failed[a.PatchID] = true
		j.Error = err.Error()
		r.progress("judge %s: not judged: %v", a.PatchID, err)
		return j, r.giveUp(context.WithoutCancel(ctx), a.PatchID, cl)
	}
	if err := r.releaseRetrying(ctx, a.PatchID, cl, sc, e); err != nil {
		j.Error = err.Error()
		return j, err
	}
	j.Verdict, j.EntryID, j.Summary = e.Verdict, e.ID, e.Summary
	r.progress("verdict %s: %s %s", a.PatchID, e.Verdict, e.Summary)
	// Offer the folded branch to the remote, as any writer does; a stop
	// need not wait for it, the next pull of any writer folds the inbox.
	if ctx.Err() == nil {
		if _, err := r.l.Push(ctx, r.opts.Remote); err != nil {
			r.progress("verdict %s pushed to this runner's inbox; folding it into the branch failed: %v", a.PatchID, err)
		}
	}
	return j, nil
}

// release pushes, in one atomic push, the scratch ledger and notes (holding
// the verdict) to this runner's inbox, the deletion of its claim, and its
// record.
func (r *runner) release(ctx context.Context, patch string, cl *held, tip, notes plumbing.Hash, e *verdict.Entry) error {
	rec, err := r.recordUpdate(ctx, "", time.Now().UTC(), e)
	if err != nil {
		return err
	}
	ups := []ledger.RefPush{
		{Ref: ledger.InboxLedgerRef(r.writer), New: tip, Unleased: true},
		{Ref: ledger.ClaimRef(patch), Old: cl.commit},
		rec,
	}
	if !notes.IsZero() {
		ups = append(ups, ledger.RefPush{Ref: ledger.InboxNotesRef(r.writer), New: notes, Unleased: true})
	}
	if err := r.l.PushRefs(ctx, r.opts.Remote, ups); err != nil {
		return fmt.Errorf("cannot push the verdict on %s with its claim's release: %w", patch, err)
	}
	r.record = rec.New
	return nil
}

// giveUp ends this runner's lease on a proposal it could not judge: the
// claim stays, expired at once, so another runner may take it over.
func (r *runner) giveUp(ctx context.Context, patch string, cl *held) error {
	c := cl.claim
	c.Renewed = time.Now().UTC()
	c.Expires = c.Renewed
	h, err := r.l.WriteClaim(ctx, &c, cl.commit)
	if err != nil {
		return err
	}
	err = r.l.PushRefs(ctx, r.opts.Remote, []ledger.RefPush{{Ref: ledger.ClaimRef(patch), Old: cl.commit, New: h}})
	if errors.Is(err, ledger.ErrLostRace) {
		return nil
	}
	return err
}

// phaseName names a verdict's phase for the runner's record.
func phaseName(p verdict.Progress) string {
	if p.Phase == "gate" && p.Gate != "" {
		return "gate " + p.Gate
	}
	return p.Phase
}
