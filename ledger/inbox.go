package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
)

// InboxRefPrefix is where each writer of a shared ledger pushes its own copy
// of the ledger and the notes: InboxRefPrefix + writer id + "/ledger" and
// "/notes". Only that writer moves them, so writers never race for one ref;
// every pull folds all of them into the branch by tree union (entries are
// immutable, so the union is the merge), and every push also offers the
// folded branch to the remote, where it lands whenever it is a fast-forward.
// The branch stays the record plain git reads; an inbox holds nothing the
// next fold does not bring to it.
const InboxRefPrefix = "refs/hone/inbox/"

// InboxLedgerRef and InboxNotesRef are writer id's inbox refs.
func InboxLedgerRef(id string) string { return InboxRefPrefix + id + "/ledger" }
func InboxNotesRef(id string) string  { return InboxRefPrefix + id + "/notes" }

// ParseInboxRef splits an inbox ref into its writer id and what it holds
// ("ledger" or "notes"); ok is false for any other ref.
func ParseInboxRef(ref string) (writer, what string, ok bool) {
	rest, found := strings.CutPrefix(ref, InboxRefPrefix)
	if !found {
		return "", "", false
	}
	writer, what, found = strings.Cut(rest, "/")
	if !found || !validName(writer) || (what != "ledger" && what != "notes") {
		return "", "", false
	}
	return writer, what, true
}

// writerIDKey is the git config key that keeps this clone's writer id.
const writerIDKey = "hone.writerid"

// WriterID is this clone's writer id, drawn at random on first use and kept
// in the clone's git config: its inbox on every remote it pushes to.
func (l *Ledger) WriterID(ctx context.Context) (string, error) {
	if id := l.ownWriterID(ctx); id != "" {
		return id, nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot draw a writer id")
	}
	id := hex.EncodeToString(b[:])
	// --add would keep two ids if two processes raced here; the last
	// value wins for both, and `config --get` then reads that one.
	if _, err := l.git(ctx, "config", "--replace-all", writerIDKey, id); err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot record the writer id in git config %s", writerIDKey)
	}
	out, err := l.git(ctx, "config", "--get", writerIDKey)
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot read git config %s", writerIDKey)
	}
	return strings.TrimSpace(string(out)), nil
}

// ownWriterID is the writer id this clone has, or "" before its first push.
func (l *Ledger) ownWriterID(ctx context.Context) string {
	if out, err := l.git(ctx, "config", "--get", writerIDKey); err == nil {
		if id := strings.TrimSpace(string(out)); validName(id) {
			return id
		}
	}
	return ""
}

// SkippedInbox is a writer's inbox a pull did not fold: it holds a file the
// local ledger (or an inbox folded before it) holds with other bytes.
// Entries never change, so the two cannot both be right; the inbox folded
// first is kept, and this one waits for `hone ledger verify` and a person.
type SkippedInbox struct {
	Ref  string `json:"ref"`
	Path string `json:"path"`
}

// foldInboxes merges the fetched inbox refs (what each writer's inbox held)
// into the local ledger and notes. The ledger gains at most one commit,
// whose parents are the local tip and every inbox that brought something:
// whether one does is a tree union in memory, cheap when it brings nothing
// (the shared subtrees are not read), so no per-inbox record is written
// and a pull that fails half way simply folds again. Inboxes are folded in
// the order of their names, so every clone makes the same choice; one
// that conflicts with what is folded before it is skipped and reported,
// never allowed to stop the fold of the others.
//
// This clone's own inbox is folded like the others, and is a parent of the
// fold whenever the branch does not hold its tip already, even when it
// brings no file: the next push of the inbox is then a fast-forward of
// whatever the remote's inbox holds, so nothing put on top of it there
// stops this clone's pushes.
func (l *Ledger) foldInboxes(ctx context.Context, fetched map[string]plumbing.Hash) (added int, skipped []SkippedInbox, err error) {
	own := l.ownWriterID(ctx)
	notesTip, _, err := l.refs.Read(l.ws.Config.Ledger.NotesRef)
	if err != nil {
		return 0, nil, err
	}
	refs := make([]string, 0, len(fetched))
	for ref := range fetched {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	var ledgers []foldSource
	for _, ref := range refs {
		if writer, what, _ := ParseInboxRef(ref); what == "ledger" {
			ledgers = append(ledgers, foldSource{ref: ref, tip: fetched[ref], own: writer == own})
		}
	}
	if len(ledgers) > 0 {
		if added, skipped, err = l.mergeMany(ctx, ledgers); err != nil {
			return 0, nil, err
		}
	}
	// The notes of an inbox whose ledger was skipped would name verdicts
	// this ledger does not hold; they wait with it.
	left := map[string]bool{}
	for _, s := range skipped {
		w, _, _ := ParseInboxRef(s.Ref)
		left[w] = true
	}
	for _, ref := range refs {
		h := fetched[ref]
		if writer, what, _ := ParseInboxRef(ref); what != "notes" || h == notesTip || left[writer] {
			continue
		}
		if _, err := l.mergeNotes(ctx, h); err != nil {
			return 0, nil, err
		}
	}
	return added, skipped, nil
}

// foldSource is one inbox a fold takes in.
type foldSource struct {
	ref string
	tip plumbing.Hash
	own bool // this clone's own inbox: a parent whenever the branch lacks it
}

// mergeMany brings the inbox ledgers rs into the branch in one commit: the
// union of the local tree and theirs, with the local tip and each of rs
// that added anything as parents. An inbox whose tree conflicts with the
// union so far is left out and reported. With no local branch yet, the
// first of rs is taken as it is.
func (l *Ledger) mergeMany(ctx context.Context, rs []foldSource) (int, []SkippedInbox, error) {
	held, err := l.writeLock(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer held.Release()
	var from, to plumbing.Hash
	var skipped []SkippedInbox
	_, err = repo.UpdateRef(ctx, l.refs, l.branchRef(), func(cur plumbing.Hash, ok bool) (plumbing.Hash, error) {
		from, to, skipped = cur, cur, nil
		rest := rs
		if !ok {
			cur, rest = rs[0].tip, rs[1:]
		}
		tree, err := l.obj.commitTree(cur)
		if err != nil {
			return from, err
		}
		parents := []plumbing.Hash{cur}
		for _, r := range rest {
			rTree, err := l.obj.commitTree(r.tip)
			if err != nil {
				return from, err
			}
			u, err := l.union(tree, rTree, "")
			var conflict *pathConflict
			if errors.As(err, &conflict) {
				skipped = append(skipped, SkippedInbox{Ref: r.ref, Path: conflict.path})
				continue
			}
			if err != nil {
				return from, err
			}
			if u == tree && r.own {
				if in, err := l.isAncestor(ctx, r.tip, cur); err != nil {
					return from, err
				} else if !in {
					parents = append(parents, r.tip)
				}
				continue
			}
			if u != tree {
				tree, parents = u, append(parents, r.tip)
			}
		}
		if len(parents) == 1 {
			to = cur
			return cur, nil
		}
		to, err = l.obj.commit(ctx, tree, parents, "hone: fold the ledgers of other writers\n", l.sig(), l.signingKey())
		return to, err
	})
	if err != nil || to == from {
		return 0, skipped, err
	}
	if err := l.advanceAnchor(ctx, from, to); err != nil {
		return 0, skipped, err
	}
	var n int
	if from.IsZero() {
		n, err = l.entriesGained(from, to)
	} else {
		n, err = l.countAdded(from, to)
	}
	return n, skipped, err
}

// Adopt merges commits of this clone's own making into the branch and the
// notes (either may be zero): a runner's scratch ledger once its push
// published it, since pulls skip this clone's own inbox.
func (l *Ledger) Adopt(ctx context.Context, ledgerTip, notesTip plumbing.Hash) error {
	if !ledgerTip.IsZero() {
		if _, _, err := l.mergeLedger(ctx, ledgerTip); err != nil {
			return err
		}
	}
	if !notesTip.IsZero() {
		if _, err := l.mergeNotes(ctx, notesTip); err != nil {
			return err
		}
	}
	return nil
}
