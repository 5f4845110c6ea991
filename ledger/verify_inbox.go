package ledger

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
)

// ProblemInbox is a writer's inbox, as the last pull fetched it from a
// remote, holding what the remote's pre-receive refuses on an inbox.
const ProblemInbox = "inbox"

// verifyInboxes holds every writer's inbox the last pull fetched
// (refs/hone/remotes/<remote>/inbox/<writer>/{ledger,notes}) to the rules
// a server's pre-receive holds inboxes to, for what the local branch does
// not hold yet: appends only, only well-formed entries at their own paths,
// verdicts signed by an allowed signer, notes appends only. The branch
// alone does not show it all: a pull skips this clone's own inbox (anyone
// may have pushed there on a remote that runs no hooks, and every other
// clone folds it), and an inbox a fold refused never reaches the branch.
// Each refusal is reported at "<ref>:<path>" (or the ref).
func (l *Ledger) verifyInboxes(ctx context.Context, rep *VerifyReport) error {
	out, err := l.git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", "refs/hone/remotes/")
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot list the fetched inboxes")
	}
	type inbox struct {
		ref, what string
		tip       plumbing.Hash
	}
	var inboxes []inbox
	for _, line := range strings.Split(string(out), "\n") {
		h, ref, ok := strings.Cut(line, " ")
		if !ok || !plumbing.IsHash(h) {
			continue
		}
		_, tail, _ := strings.Cut(strings.TrimPrefix(ref, "refs/hone/remotes/"), "/")
		if _, what, ok := ParseInboxRef("refs/hone/" + tail); ok {
			inboxes = append(inboxes, inbox{ref, what, plumbing.NewHash(h)})
		}
	}
	if len(inboxes) == 0 {
		return nil
	}
	tr, err := l.trust(ctx)
	if err != nil {
		return err
	}
	srv := &Server{Dir: l.ws.Root, Branch: l.branchRef(), NotesRef: l.ws.Config.Ledger.NotesRef, Trust: tr}
	if err := srv.Open(ctx); err != nil {
		return err
	}
	defer srv.Close()
	for _, in := range inboxes {
		sub := *srv
		var refused []Refusal
		if in.what == "notes" {
			sub.NotesRef = in.ref
			refused, err = sub.CheckNotes(ctx, plumbing.ZeroHash, in.tip)
		} else {
			sub.Branch, sub.inbox, sub.known = in.ref, true, l.branchRef()
			refused, _, err = sub.CheckBranch(ctx, plumbing.ZeroHash, in.tip)
		}
		if err != nil {
			return err
		}
		if in.what == "ledger" {
			if path, err := l.conflictWithBranch(in.tip); err != nil {
				return err
			} else if path != "" {
				refused = append(refused, Refusal{Ref: in.ref, Path: path, Rule: "holds this file with other bytes than the ledger branch; a pull folds everything else and skips this inbox"})
			}
		}
		for _, r := range refused {
			at := in.ref
			if r.Path != "" {
				at += ":" + r.Path
			}
			rep.add(ProblemInbox, at, "%s", r.Rule)
		}
	}
	return nil
}

// conflictWithBranch is a path the ledger commit tip holds with other
// content than the local branch, or "".
func (l *Ledger) conflictWithBranch(tip plumbing.Hash) (string, error) {
	cur, ok, err := l.refs.Read(l.branchRef())
	if err != nil || !ok {
		return "", err
	}
	a, err := l.obj.commitTree(cur)
	if err != nil {
		return "", err
	}
	b, err := l.obj.commitTree(tip)
	if err != nil {
		return "", err
	}
	_, err = l.union(a, b, "")
	var c *pathConflict
	if errors.As(err, &c) {
		return c.path, nil
	}
	return "", err
}
