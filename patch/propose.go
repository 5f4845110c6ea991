package patch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/safetext"
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
	if strings.TrimSpace(req.Target) == "" {
		return nil, errs.Usagef("a target is required")
	}
	// The idea's words are shown wherever the ledger is: stored escaped,
	// they cannot redraw a terminal (see safetext).
	req.Hotspot, req.Hypothesis = safetext.Line(req.Hotspot), safetext.Log(req.Hypothesis)
	gp, err := ws.Proposing(ctx, req.Target)
	if err != nil {
		return nil, err
	}
	if err := req.validate(gp.Config.Patch); err != nil {
		return nil, err
	}
	if req.Author == "" {
		req.Author = gitUser(ctx, ws.Root)
	}
	pin := gp.Pin
	l := ledger.Open(ws)
	key := ledger.AttemptKey(req.Target, req.Hotspot, req.Class, req.Hypothesis)
	judged, err := judgedAttempts(ctx, ws, l, req.Target, gp.Target.Path, pin)
	if err != nil {
		return nil, err
	}
	retries, err := refuseSameWords(judged, key)
	if err != nil {
		return nil, err
	}
	c, idx, err := check(ctx, ws, req.Target, req.Diff)
	if idx != nil {
		defer idx.close()
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
		ConfigBlob: c.goal.PinBlob, PinRef: c.goal.PinRef, Author: req.Author,
	}
	if p.NormalizedSHA256, err = normalizedOf(ws, c.Pin, c.Changes, func(hash string) ([]byte, error) {
		out, err := idx.git(ctx, nil, nil, "cat-file", "blob", hash)
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot read blob %s", git.Short(hash))
		}
		return out, nil
	}); err != nil {
		return nil, err
	}
	sameCode, err := refuseSameCode(ctx, ws, judged, p.NormalizedSHA256, p.PatchID)
	if err != nil {
		return nil, err
	}
	p.Retries = cmp.Or(sameCode, retries)
	// Warnings is [] rather than null in JSON when there are none.
	res := &Result{PatchID: p.PatchID, Warnings: append(append([]errs.Warning{}, c.goal.Warnings...), warnings(ctx, l, p)...)}
	if p.Retries != "" {
		res.Warnings = append(res.Warnings, retriesNote(p.Retries))
	}
	// Two proposals of one diff in one clone take turns from here: the
	// second then finds the first's ref and its entry, never a ref whose
	// entry is not written yet, which it would take for an interrupted
	// proposal and write again. (Clones race at the remote, whose hook
	// refuses a second proposal of a patch.)
	held, err := lock.Acquire(ctx, ws.StatePath("proposals", p.PatchID+".lock"), "propose patch "+p.PatchID)
	if err != nil {
		return nil, err
	}
	defer held.Release()
	ref := ledger.PatchRef(p.PatchID)
	refs := ws.Refs()
	stored, ok, err := refs.Read(ref)
	if err != nil {
		return nil, err
	}
	if ok {
		return existing(ctx, ws, l, p, stored.String(), res)
	}
	commit, err := commitTree(ctx, ws, idx, c, p.Hypothesis)
	if err != nil {
		return nil, err
	}
	switch err := refs.CompareAndSwap(ctx, ref, repo.NewHash(commit), repo.ZeroHash); {
	case errors.Is(err, repo.ErrRaceLost):
		// A concurrent proposal of the same diff stored it first.
		other, _, err := refs.Read(ref)
		if err != nil {
			return nil, err
		}
		return existing(ctx, ws, l, p, other.String(), res)
	case err != nil:
		return nil, err
	}
	p.Commit = commit
	if p.DiffSHA256, err = git.CanonicalDiffSHA256(ctx, ws.Root, c.Pin, commit); err != nil {
		return nil, dropRef(ctx, ws, ref, commit, err)
	}
	if _, err := l.Append(ctx, p); err != nil {
		return nil, dropRef(ctx, ws, ref, commit, err)
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

// commitTree writes the patch commit in the scratch index and moves its objects
// into the repository. Author and committer are fixed and dated like the pin.
func commitTree(ctx context.Context, ws *workspace.Workspace, idx *scratchIndex, c *Checked, msg string) (string, error) {
	pc, err := ws.Store("").ReadCommit(repo.NewHash(c.Pin))
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot read the pin commit %s", c.Pin)
	}
	date := fmt.Sprintf("@%d +0000", pc.Committer.When.Unix())
	env := []string{
		"GIT_AUTHOR_NAME=" + AuthorName, "GIT_AUTHOR_EMAIL=" + AuthorEmail, "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + AuthorName, "GIT_COMMITTER_EMAIL=" + AuthorEmail, "GIT_COMMITTER_DATE=" + date,
	}
	out, err := idx.git(ctx, []byte(msg+"\n"), env, "commit-tree", "--no-gpg-sign", c.Tree, "-p", c.Pin)
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot write the patch commit")
	}
	if err := idx.keep(); err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// dropRef undoes a ref this proposal created, when the entry could not be
// written (cause), so a failed proposal leaves no ref behind. It returns
// cause, saying so when the ref could not be removed either.
func dropRef(ctx context.Context, ws *workspace.Workspace, ref, commit string, cause error) error {
	if err := ws.Refs().Delete(context.WithoutCancel(ctx), ref, repo.NewHash(commit)); err != nil {
		return fmt.Errorf("%w (and %s could not be removed: %v)", cause, ref, err)
	}
	return cause
}
