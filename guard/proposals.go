package guard

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// checkProposals holds a push to one proposal per patch id, one patch id
// per patch commit and per tree, and proposals made at an acceptable pin
// that arrive with their patch ref: a second proposal of a patch could
// otherwise claim another's idea or an earlier arrival, and patch ids
// minted for one commit would each be judged on a fresh seed.
func checkProposals(ctx context.Context, rc *Receive) ([]Violation, error) {
	pushedRefs := map[string]string{} // patch id -> pushed commit
	for _, u := range rc.Updates {
		if c, id := rc.classify(u.Ref); c == patchRef && !isZero(u.New) {
			pushedRefs[id] = u.New
		}
	}
	if len(rc.Proposed) == 0 && len(pushedRefs) == 0 {
		return nil, nil
	}
	existing, err := rc.Existing(ctx)
	if err != nil {
		return nil, err
	}
	held, err := rc.patchRefs(ctx)
	if err != nil {
		return nil, err
	}
	var vs []Violation
	for _, id := range sortedIDs(rc.Proposed) {
		pr := rc.Proposed[id]
		refuse := func(format string, args ...any) {
			vs = append(vs, Violation{Ref: rc.Server.Branch, Path: ledger.EntryPath(pr.Target, ledger.KindProposal, pr.ID), Rule: fmt.Sprintf(format, args...)})
		}
		if prev, ok := existing[id]; ok && prev.ID == pr.ID {
			// The same entry again, through another writer's inbox or a
			// fold of it: checked when it first arrived, and the same path
			// with other bytes is the ledger check's integrity error.
			continue
		} else if ok {
			refuse("patch %s already has proposal %s; a patch is proposed once, by whoever proposed it first", id, prev.ID)
			continue
		}
		if _, onServer := held[id]; !onServer && pushedRefs[id] == "" {
			refuse("proposal %s names patch %s, whose ref %s%s is neither on the server nor in this push; push them together (hone ledger push does)", pr.ID, id, ledger.PatchRefPrefix, id)
		}
		if why, err := rc.acceptablePin(ctx, pr.Target, pr.Pin); err != nil {
			return nil, err
		} else if why != "" {
			refuse("proposal %s: %s", pr.ID, why)
		}
	}
	byCommit, byTree := map[string]string{}, map[string]string{}
	for id, h := range held {
		byCommit[h.commit], byTree[h.tree] = id, id
	}
	for _, id := range sortedIDs(pushedRefs) {
		commit := pushedRefs[id]
		if _, ok := held[id]; ok {
			continue // the patch ref check says whether it may move
		}
		tree, err := git.Output(ctx, rc.Dir(), "rev-parse", "--verify", "--quiet", "--end-of-options", commit+"^{tree}")
		if err != nil {
			continue // the patch ref check refuses what is not a commit
		}
		ref := ledger.PatchRefPrefix + id
		switch {
		case byCommit[commit] != "":
			vs = append(vs, Violation{Ref: ref, Rule: fmt.Sprintf("commit %s is already patch %s; one patch commit is one attempt", git.Short(commit), byCommit[commit])})
		case byTree[tree] != "":
			vs = append(vs, Violation{Ref: ref, Rule: fmt.Sprintf("commit %s has the tree of patch %s; the same result is the same attempt", git.Short(commit), byTree[tree])})
		default:
			byCommit[commit], byTree[tree] = id, id
		}
	}
	return vs, nil
}

type patchObjects struct{ commit, tree string }

// patchRefs lists the patch refs the server holds before the push.
func (rc *Receive) patchRefs(ctx context.Context) (map[string]patchObjects, error) {
	out, err := git.Output(ctx, rc.Dir(), "for-each-ref", "--format=%(refname) %(objectname) %(tree)", ledger.PatchRefPrefix)
	if err != nil {
		return nil, err
	}
	m := map[string]patchObjects{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 {
			m[strings.TrimPrefix(f[0], ledger.PatchRefPrefix)] = patchObjects{commit: f[1], tree: f[2]}
		}
	}
	return m, nil
}

// acceptablePin says why pin is not a pin a proposal of target may be made
// at, or "" when it is: the protected base as it was before the push must
// accept it (workspace.Judge: its current pin, or an earlier one with the
// same goalposts).
func (rc *Receive) acceptablePin(ctx context.Context, target, pin string) (string, error) {
	_, err := workspace.Judge(ctx, rc.repo, target, pin)
	switch {
	case err == nil:
		return "", nil
	case errs.Is(err, errs.Policy), errs.Is(err, errs.NotFound), errs.Is(err, errs.Invalid):
		return err.Error(), nil
	}
	return "", err
}

func sortedIDs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
