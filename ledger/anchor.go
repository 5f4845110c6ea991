package ledger

import (
	"context"
	"os"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/atomicfile"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
)

// The anchor is hone's own record of the ledger tip it last wrote, pulled,
// pushed or verified, kept at <git common dir>/hone/ledger.anchor. Verify
// proves the branch an append of it. A plain `git update-ref` of the branch
// does not move it, and what moves it only moves it forward: to a tip that
// contains it. The branch's reflog and the remote-tracking ledgers under
// refs/hone/remotes/ are checked beside it, so rewriting the ledger
// unnoticed takes rewriting every one of those records too. A clone with
// no anchor yet trusts the first tip it sees.
//
// The file holds one line per branch, "<tip> <branch>", because a clone
// may keep more than one ledger branch: a runner judges in a scratch
// ledger of its clone. Each branch moves its own line only; were the file
// one line, each write for the scratch branch would drop the real
// branch's anchor, and the next write there would trust whatever tip it
// found.

func (l *Ledger) anchorPath() string { return l.ws.StatePath("ledger.anchor") }

// readAnchors returns every branch's anchored tip.
func (l *Ledger) readAnchors() map[string]plumbing.Hash {
	out := map[string]plumbing.Hash{}
	b, err := os.ReadFile(l.anchorPath())
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && plumbing.IsHash(f[0]) {
			out[f[1]] = plumbing.NewHash(f[0])
		}
	}
	return out
}

// readAnchor returns this ledger's branch's anchored tip, or false when
// there is none.
func (l *Ledger) readAnchor() (plumbing.Hash, bool) {
	h, ok := l.readAnchors()[l.ws.Config.Ledger.Branch]
	return h, ok
}

// advanceAnchor moves the anchor to tip after hone moved the branch from
// old to tip (or found tip sound), but only forward: when there is no
// anchor, or it is old, or old contains it. An anchor the branch no longer
// contains stays where it is, so verify keeps reporting the rewrite. The
// other branches' anchors are kept as they are.
func (l *Ledger) advanceAnchor(ctx context.Context, old, tip plumbing.Hash) error {
	held, err := lock.Acquire(ctx, l.ws.StatePath("ledger.anchor.lock"), "record the ledger tip")
	if err != nil {
		return err
	}
	defer held.Release()
	all := l.readAnchors()
	branch := l.ws.Config.Ledger.Branch
	cur, ok := all[branch]
	if ok && cur != old && cur != tip {
		up, err := l.isAncestor(ctx, cur, tip)
		if err != nil || !up {
			return err
		}
	}
	if ok && cur == tip {
		return nil
	}
	if err := os.MkdirAll(l.honeDir(), 0o755); err != nil {
		return err
	}
	all[branch] = tip
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString(all[name].String() + " " + name + "\n")
	}
	return atomicfile.Write(l.anchorPath(), []byte(b.String()), 0o644)
}

// verifyRecords checks the tip against every record of what the branch
// held: hone's anchor, each value the branch's reflog recorded, and the
// remote-tracking ledgers of `hone ledger pull`. The tip must contain each
// (reachable is every commit it contains); for one it does not, the files
// that record had and the tip lost or changed are reported one by one, so a
// dropped verdict is named.
func (l *Ledger) verifyRecords(ctx context.Context, tip plumbing.Hash, reachable map[plumbing.Hash]bool, rep *VerifyReport) error {
	type record struct {
		h    plumbing.Hash
		what string
	}
	var recs []record
	if a, ok := l.readAnchor(); ok {
		rep.Anchor = a.String()
		recs = append(recs, record{a, "hone's anchor (the tip hone last wrote, pulled, pushed or verified) records"})
	}
	log, err := l.refs.Reflog(l.branchRef())
	if err != nil {
		return err
	}
	for _, e := range log {
		for _, h := range []plumbing.Hash{e.Old, e.New} {
			if !h.IsZero() {
				recs = append(recs, record{h, "the reflog of " + l.branchRef() + " records"})
			}
		}
	}
	out, err := l.git(ctx, "for-each-ref", "--format=%(objectname) %(refname)", "refs/hone/remotes/")
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot list the remote-tracking ledgers")
	}
	for _, line := range strings.Split(string(out), "\n") {
		h, ref, ok := strings.Cut(line, " ")
		// Only a remote's branch is a record of what this branch held; an
		// inbox is a writer's copy, judged by verifyInboxes, and one whose
		// entries came by another way is never folded in.
		name, rest, _ := strings.Cut(strings.TrimPrefix(ref, "refs/hone/remotes/"), "/")
		if ok && name != "" && rest == "ledger" && plumbing.IsHash(h) {
			recs = append(recs, record{plumbing.NewHash(h), ref + " (what `hone ledger pull` last fetched) holds"})
		}
	}
	tipTree, err := l.obj.commitTree(tip)
	if err != nil {
		return err
	}
	seen := map[plumbing.Hash]bool{}
	reported := map[string]bool{}
	for _, r := range recs {
		if reachable[r.h] || seen[r.h] {
			continue
		}
		seen[r.h] = true
		rep.add(ProblemRewritten, l.branchRef(), "the branch no longer contains %s, which %s; its history was rewritten", r.h, r.what)
		old, err := l.obj.commitTree(r.h)
		if err != nil {
			continue // the record's commit is gone too; the line above says enough
		}
		_, gone, err := diffTrees(l.obj, old, tipTree, "")
		if err != nil {
			return err
		}
		for _, g := range gone {
			if reported[g.path] {
				continue
			}
			reported[g.path] = true
			if g.deleted {
				rep.add(ProblemDeleted, g.path, "%s held this file, and the tip does not", r.h)
			} else {
				rep.add(ProblemModified, g.path, "%s held this file with other content than the tip", r.h)
			}
		}
	}
	return nil
}
