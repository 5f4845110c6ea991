package patch

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Author is the fixed identity of every patch commit, so a commit depends
// only on the pin, the tree and the hypothesis.
const (
	AuthorName  = "hone"
	AuthorEmail = "hone@localhost"
)

// Propose checks req's diff, stores it as refs/hone/patches/<id> (a commit
// whose parent is the pin) and appends a proposal entry. Refusals are Policy
// errors naming the path or header and the rule; a malformed diff is Invalid;
// an unknown target NotFound. A refusal leaves no ref, entry or object behind.
func Propose(ctx context.Context, ws *workspace.Workspace, req Request) (*Result, error) {
	if err := req.validate(ws.Config.Patch); err != nil {
		return nil, err
	}
	if _, err := ws.Target(req.Target); err != nil {
		return nil, err
	}
	l := ledger.Open(ws)
	key := ledger.AttemptKey(req.Target, req.Hotspot, req.Class, req.Hypothesis)
	if err := refuseDone(ctx, l, key); err != nil {
		return nil, err
	}
	c, sb, err := check(ctx, ws, req.Target, req.Diff)
	if sb != nil {
		defer sb.close()
	}
	if err != nil {
		return nil, err
	}
	p := &Proposal{
		Common: ledger.Common{
			Kind: ledger.KindProposal, Target: req.Target, Pin: c.Pin, AttemptKey: key,
			PatchID: ID(req.Target, c.Pin, c.Tree), Hotspot: strings.TrimSpace(req.Hotspot),
			Class: req.Class, Hypothesis: strings.TrimSpace(req.Hypothesis),
		},
		Files: c.Files, Added: c.Added, Removed: c.Removed,
	}
	res := &Result{PatchID: p.PatchID, Warnings: warnings(ctx, l, p)}
	ref := ledger.PatchRef(p.PatchID)
	if commit, ok := resolveRef(ws, ref); ok {
		return existing(ctx, ws, l, p, commit, res)
	}
	commit, err := commitTree(ctx, ws, sb, c, p.Hypothesis)
	if err != nil {
		return nil, err
	}
	if _, err := git.Run(ctx, git.Cmd{Dir: ws.Root, Isolated: true, Args: []string{"update-ref", "-m", "hone patch propose", ref, commit, ""}}); err != nil {
		if other, ok := resolveRef(ws, ref); ok {
			// A concurrent proposal of the same diff stored it first.
			return existing(ctx, ws, l, p, other, res)
		}
		return nil, errs.Wrap(errs.Failure, err, "cannot store %s", ref)
	}
	p.Commit = commit
	if p.DiffSHA256, err = git.CanonicalDiffSHA256(ctx, ws.Root, c.Pin, commit); err != nil {
		dropRef(ctx, ws, ref, commit)
		return nil, err
	}
	if _, err := l.Append(ctx, p); err != nil {
		dropRef(ctx, ws, ref, commit)
		return nil, err
	}
	res.Commit, res.Proposal = commit, p
	return res, nil
}

// existing answers a re-proposal of a stored patch with its earlier entry.
// A ref without an entry (a proposal interrupted between the two writes) gets
// its entry now, so the ref and the ledger agree.
func existing(ctx context.Context, ws *workspace.Workspace, l *ledger.Ledger, p *Proposal, commit string, res *Result) (*Result, error) {
	res.Commit, res.Existing = commit, true
	entries, err := l.ByPatch(ctx, p.PatchID)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		switch e.Kind {
		case ledger.KindProposal:
			if res.Proposal == nil {
				var prev Proposal
				if err := e.Decode(&prev); err != nil {
					return nil, err
				}
				res.Proposal = &prev
			}
		case ledger.KindVerdict:
			res.Warnings = append(res.Warnings, errs.Warning{Code: "already_judged", Message: fmt.Sprintf("patch %s already has a verdict: %s (entry %s)", p.PatchID, e.Verdict, e.ID)})
		}
	}
	if res.Proposal != nil {
		return res, nil
	}
	p.Commit = commit
	if p.DiffSHA256, err = git.CanonicalDiffSHA256(ctx, ws.Root, p.Pin, commit); err != nil {
		return nil, err
	}
	if _, err := l.Append(ctx, p); err != nil {
		return nil, err
	}
	res.Proposal, res.Existing = p, false
	return res, nil
}

// commitTree writes the patch commit in the sandbox and moves its objects
// into the repository. Author and committer are fixed and dated like the pin.
func commitTree(ctx context.Context, ws *workspace.Workspace, sb *sandbox, c *Checked, msg string) (string, error) {
	pc, err := ws.Git.CommitObject(plumbing.NewHash(c.Pin))
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot read the pin commit %s", c.Pin)
	}
	date := fmt.Sprintf("@%d +0000", pc.Committer.When.Unix())
	env := []string{
		"GIT_AUTHOR_NAME=" + AuthorName, "GIT_AUTHOR_EMAIL=" + AuthorEmail, "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + AuthorName, "GIT_COMMITTER_EMAIL=" + AuthorEmail, "GIT_COMMITTER_DATE=" + date,
	}
	out, err := sb.git(ctx, []byte(msg+"\n"), env, "commit-tree", "--no-gpg-sign", c.Tree, "-p", c.Pin)
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot write the patch commit")
	}
	if err := sb.keep(); err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// resolveRef returns the commit a ref points at, if the ref exists.
func resolveRef(ws *workspace.Workspace, ref string) (string, bool) {
	r, err := ws.Git.Reference(plumbing.ReferenceName(ref), true)
	if err != nil {
		return "", false
	}
	return r.Hash().String(), true
}

// dropRef undoes a ref this proposal created, when the entry could not be
// written, so a failed proposal leaves no ref behind.
func dropRef(ctx context.Context, ws *workspace.Workspace, ref, commit string) {
	_, _ = git.Run(context.WithoutCancel(ctx), git.Cmd{Dir: ws.Root, Isolated: true, Args: []string{"update-ref", "-d", ref, commit}})
}
