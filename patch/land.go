package patch

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// LandOptions say how a judged patch lands.
type LandOptions struct {
	// Reviewed lands a needs-human-review verdict: the person landing it
	// says they did the review the verdict asks for.
	Reviewed bool
}

// Landed is a patch applied to the checked-out branch as a new commit.
type Landed struct {
	PatchID string  `json:"patch_id"`
	Commit  string  `json:"commit"`
	Branch  string  `json:"branch"`
	Author  string  `json:"author"`
	Verdict string  `json:"verdict"`
	Speedup float64 `json:"speedup,omitempty"`
}

// Land applies patch id (or a unique prefix) to the branch checked out in
// the workspace, as one commit whose author is the proposer (the
// proposal's author, or hone's fixed identity for proposals that recorded
// none) and whose message names the patch and its verdict. Only a trusted
// accepted verdict lands (needs-human-review with opts.Reviewed); the
// working tree must be clean, and a patch that no longer applies is
// refused with the tree left as it was. The commit goes through the
// repository's own hooks, hone's guard included.
func Land(ctx context.Context, ws *workspace.Workspace, id string, opts LandOptions) (*Landed, error) {
	sh, err := Show(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	p := sh.Proposal
	l := ledger.Open(ws)
	attempts, err := l.Attempts(ctx, ledger.Filter{PatchID: p.PatchID})
	if err != nil {
		return nil, err
	}
	var v *ledger.Judged
	if len(attempts) == 1 {
		v = attempts[0].Outcome()
	}
	switch {
	case v == nil:
		return nil, errs.Policyf("refused: patch %s has no trusted verdict; run `hone verdict %s` first", p.PatchID, p.PatchID)
	case v.Verdict == ledger.VerdictNeedsHumanReview && !opts.Reviewed:
		return nil, errs.Policyf("refused: patch %s is %s (%s); review it, then land it with --reviewed", p.PatchID, v.Verdict, v.Summary)
	case v.Verdict != ledger.VerdictAccepted && v.Verdict != ledger.VerdictNeedsHumanReview:
		return nil, errs.Policyf("refused: patch %s was judged %s; only an accepted patch lands", p.PatchID, v.Verdict)
	}
	branch, err := git.Output(ctx, ws.Root, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return nil, errs.Policyf("refused: HEAD is detached; check out the branch to land patch %s on", p.PatchID)
	}
	if dirty, err := git.Output(ctx, ws.Root, "status", "--porcelain", "--untracked-files=no"); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the working tree's status")
	} else if dirty != "" {
		return nil, errs.Policyf("refused: the working tree has uncommitted changes; commit or stash them before landing patch %s", p.PatchID)
	}
	diff, err := git.Run(ctx, git.Cmd{Dir: ws.Root, Isolated: true, Args: []string{"diff-tree", "-p", "--binary", "--full-index", "--no-renames", "--no-color", p.Pin, p.Commit}})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the diff of patch %s", p.PatchID)
	}
	if _, err := git.Run(ctx, git.Cmd{Dir: ws.Root, Args: []string{"apply", "--index", "--3way", "-"}, Stdin: bytes.NewReader(diff)}); err != nil {
		_, _ = git.Run(ctx, git.Cmd{Dir: ws.Root, Args: []string{"reset", "--quiet", "--merge"}})
		return nil, errs.Policyf("refused: patch %s (made at %s) does not apply to %s: %v; re-propose the idea at the current pin", p.PatchID, git.Short(p.Pin), branch, err)
	}
	if _, err := git.Run(ctx, git.Cmd{Dir: ws.Root, Args: []string{"diff", "--cached", "--quiet"}}); err == nil {
		return nil, errs.Policyf("refused: %s already has the change of patch %s; nothing to land", branch, p.PatchID)
	}
	author := p.Author
	if author == "" {
		author = AuthorName + " <" + AuthorEmail + ">"
	}
	msg := landMessage(p, v)
	if _, err := git.Run(ctx, git.Cmd{Dir: ws.Root, Args: []string{"commit", "--quiet", "--author=" + author, "--file=-"}, Stdin: strings.NewReader(msg)}); err != nil {
		_, _ = git.Run(ctx, git.Cmd{Dir: ws.Root, Args: []string{"reset", "--quiet", "--merge"}})
		return nil, errs.Wrap(errs.Failure, err, "cannot commit patch %s on %s (the working tree is back as it was)", p.PatchID, branch)
	}
	commit, err := git.Output(ctx, ws.Root, "rev-parse", "HEAD")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the landed commit")
	}
	return &Landed{PatchID: p.PatchID, Commit: commit, Branch: branch, Author: author, Verdict: v.Verdict, Speedup: v.Speedup}, nil
}

// landMessage is the landed commit's message: the hypothesis as subject,
// then trailers that lead back to the patch and the verdict in the ledger.
func landMessage(p *Proposal, v *ledger.Judged) string {
	subject, body, _ := strings.Cut(strings.TrimSpace(p.Hypothesis), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n\n", p.Target, strings.TrimSpace(subject))
	if body = strings.TrimSpace(body); body != "" {
		b.WriteString(body + "\n\n")
	}
	fmt.Fprintf(&b, "Hone-Patch: %s\nHone-Verdict: %s %s", p.PatchID, v.ID, v.Verdict)
	if v.Speedup > 0 {
		fmt.Fprintf(&b, " %.3fx", v.Speedup)
	}
	fmt.Fprintf(&b, "\nHone-Pin: %s\n", p.Pin)
	return b.String()
}
