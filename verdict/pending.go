package verdict

import (
	"context"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Judgement is the outcome of judging one pending proposal: its verdict
// entry, or why none was reached.
type Judgement struct {
	PatchID string `json:"patch_id"`
	Entry   *Entry `json:"entry,omitempty"`
	Error   string `json:"error,omitempty"`
	err     error
}

// Pending judges, one at a time and oldest first, every proposal of target
// ("" for every target) that has no trusted verdict: what a verdict runner
// (a CI job, or a service account on a quiet machine, holding the signing
// key) runs after fetching the ledger and before `hone ledger push`. Each
// patch is judged by Run; one that cannot be judged is reported in its
// Judgement and the others are still judged. done, when set, is called
// after each. With allowed signers configured, a runner without a signing
// key is refused before anything runs: its verdicts would not count, and
// every later run would judge the same proposals again.
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
	if tr.Configured() && l.SigningKey() == "" {
		return nil, errs.Policyf("refused: [ledger] allowed_signers is configured (%s), and this runner has no signing key, so its verdicts would not count; set `git config hone.signingkey` to a key that file lists", tr.File)
	}
	attempts, err := l.Attempts(ctx, ledger.Filter{Target: target})
	if err != nil {
		return nil, err
	}
	out := []Judgement{}
	for _, a := range attempts {
		if a.ProposalID == "" || a.Outcome() != nil || a.Running() != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return out, errs.Wrap(errs.Failure, err, "judging the pending proposals interrupted after %d", len(out))
		}
		j := Judgement{PatchID: a.PatchID}
		j.Entry, j.err = Run(ctx, ws, a.PatchID, opts)
		if j.err != nil {
			j.Error = j.err.Error()
		}
		out = append(out, j)
		if done != nil {
			done(j)
		}
	}
	return out, nil
}

// Failed returns the first Judgement that reached no verdict, or nil.
func Failed(js []Judgement) error {
	for _, j := range js {
		if j.err != nil {
			return errs.Wrap(errs.CodeOf(j.err), j.err, "patch %s could not be judged", j.PatchID)
		}
	}
	return nil
}
