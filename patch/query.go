package patch

import (
	"context"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/safetext"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Listed is a proposal with the latest verdict on its patch: the word, its
// entry, the deciding speedup and who signed it (empty and zero while it
// has none).
type Listed struct {
	Proposal
	Verdict   string  `json:"verdict,omitempty"`
	VerdictID string  `json:"verdict_id,omitempty"`
	Summary   string  `json:"summary,omitempty"`
	Speedup   float64 `json:"speedup,omitempty"`
	// VerdictFlags and VerdictRunnerClass are the verdict's; the names
	// keep them apart from the proposal's own Flags and RunnerClass.
	VerdictFlags       []string `json:"verdict_flags,omitempty"`
	VerdictRunnerClass string   `json:"verdict_runner_class,omitempty"`
	Signer             string   `json:"signer,omitempty"`
	Trusted            *bool    `json:"trusted,omitempty"`
}

// List returns the proposals of a target (all targets when target is ""),
// oldest first, each with the latest verdict on its patch.
func List(ctx context.Context, ws *workspace.Workspace, target string) ([]*Listed, error) {
	if target != "" {
		if _, err := ws.Target(target); err != nil {
			return nil, err
		}
	}
	l := ledger.Open(ws)
	f := ledger.Filter{Target: target, Kind: ledger.KindProposal}
	stored, err := l.List(ctx, f)
	if err != nil {
		return nil, err
	}
	attempts, err := l.Attempts(ctx, f)
	if err != nil {
		return nil, err
	}
	byPatch := make(map[string]*ledger.Attempt, len(attempts))
	for i := range attempts {
		byPatch[attempts[i].PatchID] = &attempts[i]
	}
	out := make([]*Listed, 0, len(stored))
	for _, s := range stored {
		var p Listed
		if err := s.Decode(&p.Proposal); err != nil {
			return nil, err
		}
		if a := byPatch[p.PatchID]; a != nil {
			if v := a.Latest(); v != nil {
				trusted := v.Trusted
				p.Verdict, p.VerdictID, p.Summary, p.Speedup, p.Signer, p.Trusted = v.Verdict, v.ID, v.Summary, v.Speedup, v.Signer, &trusted
				p.VerdictFlags, p.VerdictRunnerClass = v.Flags, v.RunnerClass
			}
		}
		out = append(out, &p)
	}
	// Entries are anyone's to push: their text is shown escaped.
	safetext.Strings(out)
	return out, nil
}

// Shown is one patch: its proposal, its diff against the pin, and every
// verdict recorded for it, oldest first.
type Shown struct {
	Proposal *Proposal       `json:"proposal"`
	Diff     string          `json:"diff"`
	Verdicts []ledger.Common `json:"verdicts"`
}

// Show returns a patch by id or by a unique prefix of its id.
func Show(ctx context.Context, ws *workspace.Workspace, id string) (*Shown, error) {
	l := ledger.Open(ws)
	id, err := l.ResolvePatch(ctx, id)
	if err != nil {
		return nil, err
	}
	entries, err := l.ByPatch(ctx, id)
	if err != nil {
		return nil, err
	}
	sh := &Shown{Verdicts: []ledger.Common{}}
	for _, e := range entries {
		switch e.Kind {
		case ledger.KindProposal:
			if sh.Proposal == nil {
				var p Proposal
				if err := e.Decode(&p); err != nil {
					return nil, err
				}
				sh.Proposal = &p
			}
		case ledger.KindVerdict:
			sh.Verdicts = append(sh.Verdicts, e.Common)
		}
	}
	commit, ok, err := ws.Refs().Read(ledger.PatchRef(id))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.NotFoundf("patch %s has no ref %s; fetch it with `hone ledger pull`", id, ledger.PatchRef(id))
	}
	if sh.Proposal == nil {
		return nil, errs.NotFoundf("patch %s has a ref but no proposal entry in the ledger", id)
	}
	out, err := git.Run(ctx, git.Cmd{Dir: ws.Root, Isolated: true, Args: []string{"diff-tree", "-p", "--no-renames", "--no-color", sh.Proposal.Pin, commit.String()}})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot show the diff of patch %s", id)
	}
	sh.Diff = string(out)
	safetext.Strings(sh)
	return sh, nil
}
