package patch

import (
	"context"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// List returns the proposals of a target (all targets when target is ""),
// oldest first.
func List(ctx context.Context, ws *workspace.Workspace, target string) ([]*Proposal, error) {
	if target != "" {
		if _, err := ws.Target(target); err != nil {
			return nil, err
		}
	}
	stored, err := ledger.Open(ws).List(ctx, ledger.Filter{Target: target, Kind: ledger.KindProposal})
	if err != nil {
		return nil, err
	}
	out := make([]*Proposal, 0, len(stored))
	for _, s := range stored {
		var p Proposal
		if err := s.Decode(&p); err != nil {
			return nil, err
		}
		out = append(out, &p)
	}
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
	id, err := resolveID(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	entries, err := ledger.Open(ws).ByPatch(ctx, id)
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
	return sh, nil
}

// resolveID expands a unique prefix of a patch id through the patch refs.
func resolveID(ctx context.Context, ws *workspace.Workspace, id string) (string, error) {
	if id == "" || strings.ContainsAny(id, "/*?[\\") {
		return "", errs.NotFoundf("no patch %q", id)
	}
	out, err := git.Output(ctx, ws.Root, "for-each-ref", "--format=%(refname)", ledger.PatchRefPrefix+id+"*")
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot list patch refs")
	}
	var ids []string
	for _, r := range strings.Fields(out) {
		ids = append(ids, strings.TrimPrefix(r, ledger.PatchRefPrefix))
	}
	for _, x := range ids {
		if x == id {
			return id, nil
		}
	}
	switch len(ids) {
	case 0:
		return "", errs.NotFoundf("no patch %q; see `hone patch list`", id)
	case 1:
		return ids[0], nil
	}
	return "", errs.NotFoundf("patch id prefix %q is ambiguous (%s); give more characters", id, strings.Join(ids, ", "))
}
