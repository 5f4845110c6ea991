package ledger

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// mergeNotes brings remote notes commit r into the notes ref: notes only one
// side has are taken as they are, and notes both sides have become the sorted
// union of their lines (cat_sort_uniq), in a two-parent commit.
func (l *Ledger) mergeNotes(ctx context.Context, r plumbing.Hash) (how string, err error) {
	_, err = l.refs.Update(ctx, l.ws.Config.Ledger.NotesRef, func(cur plumbing.Hash, ok bool) (plumbing.Hash, error) {
		if !ok {
			how = "created"
			return r, nil
		}
		how = "up-to-date"
		if cur == r {
			return cur, nil
		}
		if up, err := l.isAncestor(ctx, r, cur); err != nil || up {
			return cur, err
		}
		ff, err := l.isAncestor(ctx, cur, r)
		if err != nil {
			return cur, err
		}
		if ff {
			how = "fast-forward"
			return r, nil
		}
		how = "merged"
		return l.notesMergeCommit(cur, r)
	})
	if err != nil {
		return "", err
	}
	return how, nil
}

func (l *Ledger) notesMergeCommit(cur, r plumbing.Hash) (plumbing.Hash, error) {
	curTree, err := l.obj.commitTree(cur)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	rTree, err := l.obj.commitTree(r)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	mine, err := l.readNotes(curTree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	theirs, err := l.readNotes(rTree)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var files []file
	for obj, t := range theirs {
		m, ok := mine[obj]
		switch {
		case !ok:
			p, _, _, err := l.findNote(curTree, obj)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			files = append(files, file{path: p, hash: t.blob})
		case m.blob != t.blob:
			a, err := l.obj.readBlob(m.blob)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			b, err := l.obj.readBlob(t.blob)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			h, err := l.obj.writeBlob([]byte(unionNote(string(a), string(b))))
			if err != nil {
				return plumbing.ZeroHash, err
			}
			files = append(files, file{path: m.path, hash: h, replace: true})
		}
	}
	tree, err := l.obj.insert(curTree, files)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return l.obj.commit(tree, []plumbing.Hash{cur, r}, "hone: merge the notes of another clone\n", l.sig())
}

// Push shares the local ledger with a remote: it pulls first (so the push is
// a fast-forward), then pushes the branch, the notes and the patch refs the
// remote lacks, never forcing. When another clone pushed in between, the
// remote rejects the update and Push pulls and tries again.
func (l *Ledger) Push(ctx context.Context, remote string) (*SyncReport, error) {
	var lastErr error
	for n := 1; n <= 5; n++ {
		rep, theirs, err := l.pull(ctx, remote)
		if err != nil {
			return nil, err
		}
		args := []string{"push", "--quiet", "--porcelain", remote}
		var pushed SyncReport
		for _, ref := range []string{l.branchRef(), l.ws.Config.Ledger.NotesRef} {
			h, ok, err := l.refs.Read(ref)
			if err != nil {
				return nil, err
			}
			how := ""
			switch prev, had := theirs[ref]; {
			case !ok:
			case prev == h:
				how = "up-to-date"
			case !had:
				how = "created"
			default:
				how = "updated"
			}
			if how == "created" || how == "updated" {
				args = append(args, ref+":"+ref)
			}
			if ref != l.branchRef() {
				pushed.RemoteNotes = how
				continue
			}
			pushed.RemoteLedger = how
			if how != "up-to-date" && how != "" {
				if pushed.EntriesPushed, err = l.entriesGained(theirs[ref], h); err != nil {
					return nil, err
				}
			}
		}
		mine, err := l.git(ctx, "for-each-ref", "--format=%(refname)", PatchRefPrefix)
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot list the patch refs")
		}
		for _, ref := range strings.Fields(string(mine)) {
			if _, ok := theirs[ref]; !ok {
				args = append(args, ref+":"+ref)
				pushed.PatchesPushed++
			}
		}
		rep.RemoteLedger, rep.RemoteNotes = pushed.RemoteLedger, pushed.RemoteNotes
		if len(args) == 4 {
			return rep, nil
		}
		out, err := l.git(ctx, args...)
		if err == nil {
			rep.Pushed, rep.EntriesPushed, rep.PatchesPushed = true, pushed.EntriesPushed, pushed.PatchesPushed
			return rep, nil
		}
		lastErr = err
		var ge *git.Error
		if !errors.As(err, &ge) || !(strings.Contains(string(out), "[rejected]") || strings.Contains(string(out), "[remote rejected]") || strings.Contains(ge.Stderr, "rejected")) {
			return nil, errs.Wrap(errs.Failure, err, "cannot push the ledger to remote %q", remote)
		}
		repo.RetryWait(n * 10)
	}
	return nil, errs.Wrap(errs.Busy, lastErr, "remote %q kept moving while pushing the ledger; try again", remote)
}

// entriesGained counts the entries of ledger commit to that ledger commit
// from (zero: none) lacks. The ledger only ever adds files, so it is the
// difference of their entry counts.
func (l *Ledger) entriesGained(from, to plumbing.Hash) (int, error) {
	count := func(c plumbing.Hash) (int, error) {
		if c.IsZero() {
			return 0, nil
		}
		tree, err := l.obj.commitTree(c)
		if err != nil {
			return 0, err
		}
		files, err := l.allFiles(tree, "")
		n := 0
		for _, f := range files {
			if isEntryPath(f.path) {
				n++
			}
		}
		return n, err
	}
	a, err := count(from)
	if err != nil {
		return 0, err
	}
	b, err := count(to)
	return b - a, err
}
