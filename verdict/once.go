package verdict

import (
	"context"
	"os"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/ledger"
)

// One verdict per attempt. An optimizer rewarded only by "accepted" would
// judge a patch again and again until noise says yes, or cancel a verdict
// that is going badly. So a patch with a trusted verdict is not judged
// again unless a person gives a reason (a rejudge, whose samples are
// pooled with the earlier ones), a verdict leaves a started entry before
// its first run, and one that never finishes counts as cancelled. Only an
// error, which blames the environment, may be run again as is, on the same
// input seed and the same setups (replay).

// holdPatch takes the patch's judging lock for the verdict's life: a second
// verdict of the same patch is Busy, and the ledger tells a running verdict
// from a dead one by it.
func holdPatch(ctx context.Context, l *ledger.Ledger, patchID string) (*lock.Lock, error) {
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	held, err := lock.Acquire(short, l.JudgingLock(patchID), "judge patch "+patchID)
	if errs.Is(err, errs.Busy) {
		return nil, errs.Busyf("patch %s is being judged right now: %v", patchID, err)
	}
	return held, err
}

// prior is what earlier verdicts of a patch mean for a new one.
type prior struct {
	// outcome is the attempt's trusted outcome, nil when it has none.
	outcome *ledger.Judged
	// entry is the outcome's verdict entry; nil for a start that never
	// finished.
	entry *Entry
	// started is the outcome's started entry, when the outcome is one.
	started *StartedEntry
	// rejudge is set when a person asked to judge again.
	rejudge bool
}

// priorOf reads the attempt of patchID and decides whether it may be
// judged: never judged, or its outcome an error, or a rejudge with a
// reason. The caller holds the patch's judging lock. Anything else is a
// Policy error naming the verdict.
func priorOf(ctx context.Context, l *ledger.Ledger, patchID, rejudge string) (*prior, error) {
	attempts, err := l.Attempts(ctx, ledger.Filter{PatchID: patchID})
	if err != nil {
		return nil, err
	}
	pr := &prior{}
	for i := range attempts {
		o := attempts[i].Outcome()
		if r := attempts[i].Running(); r != nil {
			// The caller holds the judging lock, so a start that looks
			// running is a dead verdict's: killed, it counts as cancelled.
			dead := *r
			dead.Verdict = ledger.VerdictCancelled
			o = &dead
		}
		if o != nil {
			pr.outcome = o
		}
	}
	if pr.outcome == nil {
		return pr, nil
	}
	s, err := l.Get(ctx, pr.outcome.ID)
	if err != nil {
		return nil, err
	}
	if s.Kind == ledger.KindStarted {
		pr.started = &StartedEntry{}
		err = s.Decode(pr.started)
	} else {
		pr.entry = &Entry{}
		err = s.Decode(pr.entry)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case pr.outcome.Verdict == ledger.VerdictError:
		return pr, nil
	case rejudge == "":
		return nil, errs.Policyf("refused: patch %s already has a verdict: entry %s is %s (%s); a patch is judged once, and a person may judge it again with --rejudge \"REASON\" (the samples are pooled)",
			patchID, pr.outcome.ID, pr.outcome.Verdict, errs.Clip(pr.outcome.Summary))
	}
	pr.rejudge = true
	return pr, nil
}

// seed is the input seed of the new verdict: the earlier one's when it
// runs again on the same inputs (after an error, or a rejudge whose
// samples are pooled), else a fresh one.
func (p *prior) seed() (int64, error) {
	switch {
	case p.entry != nil && p.entry.InputSeed > 0:
		return p.entry.InputSeed, nil
	case p.started != nil && p.started.InputSeed > 0:
		return p.started.InputSeed, nil
	}
	return build.NewSeed()
}

// bench is the bench a rejudge pools with, when the earlier verdict had
// one. An error's samples are not pooled: the environment was at fault.
func (p *prior) bench() *Bench {
	if !p.rejudge || p.entry == nil || p.entry.Bench == nil || p.entry.Bench.Pairs == 0 {
		return nil
	}
	return p.entry.Bench
}

// replay are the setups an error verdict drew, which running it again
// replays; nil for anything else.
func (p *prior) replay() *setupReplay {
	if p.rejudge || p.entry == nil || p.entry.Verdict != ledger.VerdictError {
		return nil
	}
	return replayOf(p.entry)
}

// rejudges is the id of the verdict a rejudge judges again, or "".
func (p *prior) rejudges() string {
	if !p.rejudge {
		return ""
	}
	return p.outcome.ID
}

// cancelled turns an interrupted verdict into its record: the attempt's
// outcome, with whatever was measured.
func (e *Entry) cancelled() {
	detail := "the verdict was interrupted before it could finish; it counts as the attempt's outcome, and a person may judge the patch again with --rejudge (samples measured here are pooled)"
	summary := "interrupted"
	if b := e.Bench; b != nil && b.Pairs > 0 {
		if st := b.Stat(b.Metric); st != nil {
			summary = "interrupted after " + benchFigures(b, st)
			e.Speedup = st.Speedup
		}
	}
	e.Verdict, e.Reason, e.Detail, e.Summary = ledger.VerdictCancelled, ReasonInterrupted, detail, oneLine(summary)
}

// newStarted is the started entry of a verdict of the patch a proposal
// names, before its first run.
func newStarted(c ledger.Common, seed int64, rejudges string) *StartedEntry {
	host, _ := os.Hostname()
	return &StartedEntry{
		Common: ledger.Common{Kind: ledger.KindStarted, Target: c.Target, PatchID: c.PatchID, Commit: c.Commit, Pin: c.Pin,
			AttemptKey: c.AttemptKey, Hotspot: c.Hotspot, Class: c.Class, Hypothesis: c.Hypothesis},
		InputSeed: seed, Host: host, PID: os.Getpid(), Rejudges: rejudges,
	}
}
