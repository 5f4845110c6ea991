package runner

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/workspace"
)

// The scratch ledger is where a runner judges: a branch and notes ref of
// its clone that start at its ledger's tips before each verdict. What the
// verdict appends there reaches the shared ledger only through the atomic
// push that also releases the claim; a verdict whose claim was lost, or a
// runner killed mid-verdict, leaves it only there, and the next verdict
// starts the scratch refs afresh, so no second outcome ever leaves it.
const (
	scratchBranch = "hone-runner/judging"
	scratchNotes  = "refs/notes/hone-runner-judging"
)

type scratch struct {
	ws *workspace.Workspace
}

// newScratch points the scratch refs at ws's ledger and notes tips and
// returns a workspace whose ledger they are.
func newScratch(ctx context.Context, ws *workspace.Workspace) (*scratch, error) {
	refs := ws.Refs().WithReason("hone runner: judge")
	for from, to := range map[string]string{"refs/heads/" + ws.Config.Ledger.Branch: "refs/heads/" + scratchBranch, ws.Config.Ledger.NotesRef: scratchNotes} {
		tip, ok, err := refs.Read(from)
		if err != nil {
			return nil, err
		}
		if !ok {
			if cur, had, err := refs.Read(to); err != nil {
				return nil, err
			} else if had {
				if err := refs.Delete(ctx, to, cur); err != nil {
					return nil, err
				}
			}
			continue
		}
		if _, err := refs.Update(ctx, to, func(plumbing.Hash, bool) (plumbing.Hash, error) { return tip, nil }); err != nil {
			return nil, err
		}
	}
	cfg := *ws.Config
	cfg.Ledger.Branch, cfg.Ledger.NotesRef = scratchBranch, scratchNotes
	return &scratch{ws: &workspace.Workspace{Repo: ws.Repo, ConfigPath: ws.ConfigPath, Config: &cfg}}, nil
}

// tips are the scratch ledger's and notes' commits (zero when absent).
func (s *scratch) tips() (ledger, notes plumbing.Hash, err error) {
	refs := s.ws.Refs()
	if ledger, _, err = refs.Read("refs/heads/" + scratchBranch); err != nil {
		return
	}
	notes, _, err = refs.Read(scratchNotes)
	return
}
