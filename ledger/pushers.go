package ledger

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// PushersRef is the server's record of whom it authenticated ([guard]
// pusher) for each proposal: a commit whose tree holds, at
// <last two hex digits of the proposal's entry id>/<entry id>, the
// identity of the push that first brought the proposal to the server. The
// server's hook writes it, once a push passed every check; no push may
// write or delete anything under PushersRefPrefix. Runners fetch it, so
// that the queue takes turns by authenticated identity, not by a committer
// name anyone can write.
const (
	PushersRefPrefix = "refs/hone/pushers/"
	PushersRef       = PushersRefPrefix + "proposals"
)

// RecordPushers adds to the record the proposals the updates bring that
// the server's ledger branch (branch, before the push) does not hold yet,
// each under who, the identity the server authenticated for this push; a
// proposal recorded before keeps its first identity. It writes through st
// into the repository's own object store and refs, outside the push's
// quarantine, so the record stands whatever the push's refs do next (an
// identity recorded for a push that then fails names the proposal of a
// push it made). Nothing is recorded for a push no identity was
// authenticated for.
func RecordPushers(ctx context.Context, st repo.Store, branch, who string, updates []Update, now time.Time) error {
	if who == "" {
		return nil
	}
	ids, err := pushedProposals(ctx, st, branch, updates)
	if err != nil || len(ids) == 0 {
		return err
	}
	for try := 0; ; try++ {
		old, _, err := st.Read(PushersRef)
		if err != nil {
			return err
		}
		h, changed, err := pushersCommit(st, old, who, ids, now)
		if err != nil || !changed {
			return err
		}
		err = st.CompareAndSwap(ctx, PushersRef, h, old)
		if err == nil || !errors.Is(err, repo.ErrRaceLost) || try >= 20 {
			return err
		}
	}
}

// pushedProposals are the entry ids of the proposals the ledger refs of
// updates (the branch and the inboxes' ledgers) bring that the branch
// does not hold before the push. It reads through git, which sees the
// push's quarantined objects.
func pushedProposals(ctx context.Context, st repo.Store, branch string, updates []Update) ([]string, error) {
	base, hasBase, err := st.Read(branch)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, u := range updates {
		_, what, inbox := ParseInboxRef(u.Ref)
		if u.New.IsZero() || (u.Ref != branch && (!inbox || what != "ledger")) {
			continue
		}
		from := u.Old
		if from.IsZero() {
			from = base
		}
		var raw []byte
		if from.IsZero() {
			raw, err = st.Git(ctx, git.Cmd{Args: []string{"ls-tree", "-r", "--name-only", u.New.String()}})
		} else {
			raw, err = st.Git(ctx, git.Cmd{Args: []string{"diff-tree", "-r", "--no-renames", "--diff-filter=A", "--name-only", from.String(), u.New.String()}})
		}
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot list the proposals %s brings", u.Ref)
		}
		for _, p := range strings.Fields(string(raw)) {
			if isEntryPath(p) && pathKind(p) == KindProposal && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	if hasBase && len(out) > 0 {
		// A proposal the branch holds already came in an earlier push.
		raw, err := st.Git(ctx, git.Cmd{Args: append([]string{"ls-tree", "-r", "--name-only", base.String(), "--"}, out...)})
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot read the ledger branch %s", branch)
		}
		held := map[string]bool{}
		for _, p := range strings.Fields(string(raw)) {
			held[p] = true
		}
		kept := out[:0]
		for _, p := range out {
			if !held[p] {
				kept = append(kept, p)
			}
		}
		out = kept
	}
	for i, p := range out {
		out[i] = entryID(p)
	}
	return out, nil
}

// pushersCommit is the record old (zero: none) with ids added under who;
// changed is false when every id had an identity already.
func pushersCommit(st repo.Store, old plumbing.Hash, who string, ids []string, now time.Time) (plumbing.Hash, bool, error) {
	dirs := map[string][]repo.TreeEntry{}
	var tree plumbing.Hash
	if !old.IsZero() {
		c, err := st.ReadCommit(old)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		tree = c.Tree
		top, err := st.ReadTree(tree)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		for _, d := range top {
			if dirs[d.Name], err = st.ReadTree(d.Hash); err != nil {
				return plumbing.ZeroHash, false, err
			}
		}
	}
	blob, err := st.WriteObject(plumbing.BlobObject, []byte(who+"\n"))
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	changed := false
	for _, id := range ids {
		d := id[len(id)-2:]
		known := false
		for _, e := range dirs[d] {
			known = known || e.Name == id
		}
		if !known {
			dirs[d] = append(dirs[d], repo.TreeEntry{Name: id, Mode: filemode.Regular, Hash: blob})
			changed = true
		}
	}
	if !changed {
		return old, false, nil
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	var top []repo.TreeEntry
	for _, d := range names {
		es := dirs[d]
		sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
		h, err := writeTree(st, es)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		top = append(top, repo.TreeEntry{Name: d, Mode: filemode.Dir, Hash: h})
	}
	if tree, err = writeTree(st, top); err != nil {
		return plumbing.ZeroHash, false, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	if !old.IsZero() {
		fmt.Fprintf(&b, "parent %s\n", old)
	}
	sig := fmt.Sprintf("hone <hone@localhost> %d +0000", now.Unix())
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\nhone: the identities the server authenticated for proposals\n", sig, sig)
	h, err := st.WriteObject(plumbing.CommitObject, []byte(b.String()))
	return h, true, err
}

func writeTree(st repo.Store, es []repo.TreeEntry) (plumbing.Hash, error) {
	data, err := repo.EncodeTree(es)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return st.WriteObject(plumbing.TreeObject, data)
}

// readPushers reads a record commit h: proposal entry id -> identity.
func (l *Ledger) readPushers(h plumbing.Hash) (map[string]string, error) {
	c, err := l.refs.ReadCommit(h)
	if err != nil {
		return nil, err
	}
	top, err := l.refs.ReadTree(c.Tree)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	names := map[plumbing.Hash]string{}
	for _, d := range top {
		es, err := l.refs.ReadTree(d.Hash)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			who, ok := names[e.Hash]
			if !ok {
				b, err := l.refs.ReadObject(plumbing.BlobObject, e.Hash)
				if err != nil {
					return nil, err
				}
				who = strings.TrimSpace(string(b))
				names[e.Hash] = who
			}
			out[e.Name] = who
		}
	}
	return out, nil
}
