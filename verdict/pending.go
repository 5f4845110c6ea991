package verdict

import (
	"context"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/signing"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// ReasonUnjudgeable is the reason of an error verdict a runner records for
// a proposal it can never judge as it stands (no patch ref, a patch ref
// that disagrees with its proposal): recorded once, so the proposal leaves
// the queue and stops costing every runner loop.
const ReasonUnjudgeable = "unjudgeable"

// Judgement is the outcome of one pending proposal: its verdict entry, or
// why none was reached.
type Judgement struct {
	PatchID string `json:"patch_id"`
	Entry   *Entry `json:"entry,omitempty"`
	Error   string `json:"error,omitempty"`
	// Skipped is set when the queue left the proposal out (a patch commit
	// judged under another id, a proposer over [guard] max_queued) or it
	// could not be judged now (a lock another runner holds, a failure of
	// this machine): nothing was recorded, and a later run sees it again
	// unless it was a duplicate.
	Skipped bool `json:"skipped,omitempty"`
}

// Pending judges, one at a time, the proposals of target ("" for every
// target) that have no trusted verdict, in the order of the ledger's queue
// (ledger.Queue: by arrival, round robin across proposers, each patch
// commit once): what a verdict runner (a CI job, or a service account on a
// quiet machine, holding the signing key) runs after fetching the ledger
// and before `hone ledger push`. No single input stops it: a proposal that
// cannot be judged as it stands gets an error verdict saying why (once),
// one that cannot be judged now is skipped, and every other proposal is
// still judged. done, when set, is called after each. The error is only
// for what stops every judgement: a runner without a signing key while
// allowed signers are configured (its verdicts would not count, and every
// later run would judge the same proposals again) or with one it cannot
// sign with, an unreadable ledger, an interruption.
func Pending(ctx context.Context, ws *workspace.Workspace, target string, opts Options, done func(Judgement)) ([]Judgement, error) {
	if target != "" {
		if _, err := ws.Target(target); err != nil {
			return nil, err
		}
	}
	l := ledger.Open(ws)
	tr, err := l.Trust(ctx)
	if err != nil {
		return nil, err
	}
	if err := refuseFleet(ctx, ws, tr); err != nil {
		return nil, err
	}
	if tr.Configured() && l.SigningKey() == "" {
		return nil, errs.Policyf("refused: [ledger] allowed_signers is configured (%s), and this runner has no signing key, so its verdicts would not count; set `git config hone.signingkey` to a key that file lists", tr.File)
	}
	// A key that cannot sign fails every verdict alike: that is the
	// runner's fault, not any proposal's, so it stops the run before a
	// single proposal is blamed.
	if key := l.SigningKey(); key != "" {
		if _, err := signing.Sign(ctx, key, []byte("hone: can this runner sign?\n")); err != nil {
			return nil, err
		}
	}
	out := []Judgement{}
	report := func(j Judgement) {
		out = append(out, j)
		if done != nil {
			done(j)
		}
	}
	queue, err := l.Queue(ctx, ledger.QueueOptions{Target: target, Skip: func(a ledger.Attempt, why string) {
		report(Judgement{PatchID: a.PatchID, Error: why, Skipped: true})
	}})
	if err != nil {
		return nil, err
	}
	for _, a := range queue {
		if err := ctx.Err(); err != nil {
			return out, errs.Wrap(errs.Failure, err, "judging the pending proposals interrupted after %d", len(out))
		}
		j := Judgement{PatchID: a.PatchID}
		e, err := Run(ctx, ws, a.PatchID, opts)
		switch {
		case err == nil:
			j.Entry = e
		case ctx.Err() != nil:
			return out, errs.Wrap(errs.Failure, err, "judging the pending proposals interrupted after %d", len(out))
		case errs.Is(err, errs.NotFound) || errs.Is(err, errs.Invalid):
			j.Error = err.Error()
			if j.Entry, err = recordUnjudgeable(ctx, l, a, j.Error); err != nil {
				j.Error += " (and its error verdict could not be recorded: " + err.Error() + ")"
				j.Skipped = true
			}
		default:
			j.Error, j.Skipped = err.Error(), true
		}
		report(j)
	}
	return out, nil
}

// refuseFleet refuses to judge the queue where runners judge it: a remote
// of this clone with runner records or claims, or a protected base that
// names the repository (whose server takes a verdict only with the release
// of a claim made on it). A runner claims a proposal before judging it;
// judging here, without a claim, would judge what a runner holds, and the
// server would refuse the second verdict. One queue protocol serves a
// fleet: hone runner's.
func refuseFleet(ctx context.Context, ws *workspace.Workspace, tr *ledger.Trust) error {
	const instead = "run `hone runner --once` instead, which claims each proposal before judging it and pushes its verdict with the claim's release"
	if tr.Repository != "" {
		return errs.Policyf("refused: the protected base names this repository ([runner] repository = %q), so its server takes a verdict only with the release of a claim made on it, which hone verdict --pending does not make; %s", tr.Repository, instead)
	}
	remotes, err := git.Output(ctx, ws.Root, "remote")
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot list the git remotes")
	}
	for _, remote := range strings.Fields(remotes) {
		// A remote out of reach takes no verdict either; its runners are
		// looked for again on the next run.
		refs, err := git.Output(ctx, ws.Root, "ls-remote", "--refs", remote, ledger.RunnerRefPrefix+"*", ledger.ClaimRefPrefix+"*")
		if err != nil || refs == "" {
			continue
		}
		_, ref, _ := strings.Cut(strings.SplitN(refs, "\n", 2)[0], "\t")
		return errs.Policyf("refused: remote %q has runners (%s), which claim a proposal before judging it, and hone verdict --pending does not claim, so it would judge what a runner holds; %s", remote, ref, instead)
	}
	return nil
}

// recordUnjudgeable appends an error verdict for attempt a, saying why it
// cannot be judged. A proposal without a 40-hex commit cannot carry one.
func recordUnjudgeable(ctx context.Context, l *ledger.Ledger, a ledger.Attempt, why string) (*Entry, error) {
	e := newEntry(ledger.Common{PatchID: a.PatchID, Commit: a.Commit, Pin: a.Pin, AttemptKey: a.AttemptKey,
		Hotspot: a.Hotspot, Class: a.Class, Hypothesis: a.Hypothesis}, a.Target)
	e.setVerdict(ledger.VerdictError, ReasonUnjudgeable, why)
	rec, err := e.record(ctx, l)
	if err != nil {
		return nil, err
	}
	e.Schema, e.ID, e.Created = rec.Schema, rec.ID, rec.Created
	return e, nil
}
