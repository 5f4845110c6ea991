package verdict

import (
	"context"
	"fmt"
	"strings"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Reasons of the verdicts recorded without running anything.
const (
	// ReasonProposalMismatch: error, the proposal entry disagrees with its
	// patch commit.
	ReasonProposalMismatch = "proposal-mismatch"
	// ReasonWeakRefused: error, hone.toml asks for weak isolation and this
	// account does not allow it.
	ReasonWeakRefused = "weak-refused"
)

// weakRefused is the detail of a ReasonWeakRefused verdict.
var weakRefused = fmt.Sprintf("hone.toml at the protected tip sets [sandbox] isolation = \"weak\", and this account does not allow it, so nothing ran; a runner allows it with %s=1 or `git config --global %s true`, never through the repository",
	workspace.WeakEnv, workspace.WeakGitConfig)

// derive compares the proposal's fields with what its patch commit
// (p.Commit) holds, and says what disagrees, or "": the pin is the commit's
// one parent, the attempt key is derived from the idea's words, the config
// blob is hone.toml's at the pin and the diff hash the canonical diff's.
// The target is bound by its allowlist (see outside), once the tip's rules
// are known.
func (p *proposal) derive(ctx context.Context, ws *workspace.Workspace) (string, error) {
	co, err := ws.Store("").ReadCommit(repo.NewHash(p.Commit))
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot read the patch commit %s", git.Short(p.Commit))
	}
	if len(co.Parents) != 1 {
		return fmt.Sprintf("the patch commit %s has %d parents; a patch commit has one, its pin", git.Short(p.Commit), len(co.Parents)), nil
	}
	parent := co.Parents[0].String()
	var why []string
	if p.Pin != parent {
		why = append(why, fmt.Sprintf("pin %s is not the patch commit's parent %s", git.Short(p.Pin), git.Short(parent)))
	}
	if key := ledger.AttemptKey(p.Target, p.Hotspot, p.Class, p.Hypothesis); key != p.AttemptKey {
		why = append(why, fmt.Sprintf("attempt key %s is not the one its target, hotspot, class and hypothesis give", p.AttemptKey))
	}
	blob, err := workspace.ConfigBlob(ws.Repo, parent)
	if err != nil {
		return "", err
	}
	if p.ConfigBlob != "" && p.ConfigBlob != blob {
		why = append(why, fmt.Sprintf("config blob %s is not hone.toml's at the parent (%s)", git.Short(p.ConfigBlob), git.Short(blob)))
	}
	if p.DiffSHA256 != "" {
		sum, err := git.CanonicalDiffSHA256(ctx, ws.Dir(), parent, p.Commit)
		if err != nil {
			return "", err
		}
		if sum != p.DiffSHA256 {
			why = append(why, "diff hash is not the patch commit's diff")
		}
	}
	return p.mismatched(why), nil
}

// mismatched is the detail of a proposal-mismatch refusal, or "".
func (p *proposal) mismatched(why []string) string {
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("refused (%s): the proposal entry of patch %s disagrees with its patch commit %s: %s; nothing ran. A proposal is only what its patch ref holds: propose the patch again with `hone patch propose`",
		ReasonProposalMismatch, p.PatchID, git.Short(p.Commit), strings.Join(why, "; "))
}

// outside is the mismatch of a patch commit that changes a path the
// target's allowlist at the protected tip forbids (an agent may push any
// commit as a patch ref and name any target for it), or "".
func (p *proposal) outside(ctx context.Context, ws *workspace.Workspace, rules allowlist.Rules) (string, error) {
	changes, err := gitChanges(ctx, ws.Dir(), p.Pin, p.Commit)
	if err != nil {
		return "", err
	}
	for _, c := range changes {
		if rule := rules.ChangeRule(c); rule != "" {
			return p.mismatched([]string{fmt.Sprintf("it changes %s, which target %q may not change (%s)", c.Path, p.Target, rule)}), nil
		}
	}
	return "", nil
}

// refuse records an error verdict for a proposal that is not judged at
// all (reason, flag when set, detail): none of its code runs, and as an
// error it does not use up the attempt. configBlob names the rules that
// refused it, when known.
func refuse(ctx context.Context, l *ledger.Ledger, prop proposal, reason, flag, detail, configBlob string) (*Entry, error) {
	e := newEntry(prop.Common, prop.Target)
	e.harnessError(reason, detail)
	if flag != "" {
		e.AddFlag(flag)
	}
	e.ConfigBlob, e.Retries = configBlob, prop.Retries
	rec, err := e.record(ctx, l)
	if err != nil {
		return nil, err
	}
	e.Schema, e.ID, e.Created = rec.Schema, rec.ID, rec.Created
	return e, nil
}

// gitChanges is git.TreeChanges with hone's error kind.
func gitChanges(ctx context.Context, root, pin, commit string) ([]git.Change, error) {
	changes, err := git.TreeChanges(ctx, root, pin, commit)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the patch's changes")
	}
	return changes, nil
}
