package ledger

import (
	"context"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
)

// source reads git objects: the repository's own store, or, in a server's
// pre-receive hook, `git cat-file --batch`, which also sees the pushed
// objects git keeps in quarantine until the hook accepts them. Every
// reading of the ledger's history goes through one of the two, so the
// append-only rule is written once.
type source interface {
	tree(h plumbing.Hash) ([]object.TreeEntry, error)
	readBlob(h plumbing.Hash) ([]byte, error)
	// commitInfo returns a commit's tree, parents and raw content (which a
	// signature check needs).
	commitInfo(h plumbing.Hash) (*commitInfo, error)
}

type commitInfo struct {
	hash    plumbing.Hash
	tree    plumbing.Hash
	parents []plumbing.Hash
	when    time.Time // the committer date, which allowed_signers validity is checked at
	raw     []byte
}

// lost is a file of a parent that a commit changed or removed: never
// allowed on the ledger branch.
type lost struct {
	path    string
	deleted bool
	parent  plumbing.Hash
}

// diffTrees compares tree old with tree cur: the files cur adds, and the
// files of old it changes or removes. Subtrees with the same id are skipped,
// so an append costs a few tree reads whatever the ledger's size.
func diffTrees(src source, old, cur plumbing.Hash, prefix string) (added []file, gone []lost, err error) {
	if old == cur {
		return nil, nil, nil
	}
	oldE, err := treeEntries(src, old)
	if err != nil {
		return nil, nil, err
	}
	curE, err := treeEntries(src, cur)
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]object.TreeEntry, len(oldE))
	for _, e := range oldE {
		byName[e.Name] = e
	}
	for _, n := range curE {
		o, ok := byName[n.Name]
		delete(byName, n.Name)
		switch {
		case ok && o.Hash == n.Hash && o.Mode == n.Mode:
		case ok && o.Mode == filemode.Dir && n.Mode == filemode.Dir:
			a, g, err := diffTrees(src, o.Hash, n.Hash, prefix+n.Name+"/")
			if err != nil {
				return nil, nil, err
			}
			added, gone = append(added, a...), append(gone, g...)
		case ok && o.Mode != filemode.Dir && n.Mode != filemode.Dir:
			gone = append(gone, lost{path: prefix + n.Name})
		default:
			if ok { // a file became a directory or the other way round
				g, err := filesOf(src, o, prefix)
				if err != nil {
					return nil, nil, err
				}
				for _, f := range g {
					gone = append(gone, lost{path: f.path, deleted: true})
				}
			}
			a, err := filesOf(src, n, prefix)
			if err != nil {
				return nil, nil, err
			}
			added = append(added, a...)
		}
	}
	for _, e := range oldE {
		if _, still := byName[e.Name]; !still {
			continue
		}
		g, err := filesOf(src, e, prefix)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range g {
			gone = append(gone, lost{path: f.path, deleted: true})
		}
	}
	return added, gone, nil
}

func treeEntries(src source, h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	return src.tree(h)
}

// filesOf is the file e names, or every file below it when it is a
// directory.
func filesOf(src source, e object.TreeEntry, prefix string) ([]file, error) {
	if e.Mode != filemode.Dir {
		return []file{{path: prefix + e.Name, hash: e.Hash, mode: e.Mode}}, nil
	}
	return listFiles(src, e.Hash, prefix+e.Name+"/")
}

// listFiles lists every file under tree t in git's order, which is the
// byte order of the full paths.
func listFiles(src source, t plumbing.Hash, prefix string) ([]file, error) {
	entries, err := treeEntries(src, t)
	if err != nil {
		return nil, err
	}
	var out []file
	for _, e := range entries {
		f, err := filesOf(src, e, prefix)
		if err != nil {
			return nil, err
		}
		out = append(out, f...)
	}
	return out, nil
}

// change is what one commit did to the ledger: the files it adds that none
// of its parents has (so it, and not a parent, wrote them), and the files of
// a parent it changed or removed.
type change struct {
	*commitInfo
	novel []file
	gone  []lost
}

// changeOf diffs a commit against each parent. For a merge, a file one
// parent lacks but the other has came from that other side: only a file no
// parent has is the merge's own.
func changeOf(src source, c *commitInfo) (*change, error) {
	ch := &change{commitInfo: c}
	if len(c.parents) == 0 {
		files, err := listFiles(src, c.tree, "")
		ch.novel = files
		return ch, err
	}
	var counts map[string]int
	for i, p := range c.parents {
		pc, err := src.commitInfo(p)
		if err != nil {
			return nil, err
		}
		added, gone, err := diffTrees(src, pc.tree, c.tree, "")
		if err != nil {
			return nil, err
		}
		for _, g := range gone {
			g.parent = p
			ch.gone = append(ch.gone, g)
		}
		if i == 0 {
			ch.novel = added
			counts = make(map[string]int, len(added))
		}
		for _, f := range added {
			counts[f.path]++
		}
	}
	if len(c.parents) > 1 {
		novel := ch.novel[:0]
		for _, f := range ch.novel {
			if counts[f.path] == len(c.parents) {
				novel = append(novel, f)
			}
		}
		ch.novel = novel
	}
	return ch, nil
}

// walk calls fn with the change of every commit reachable from tip, newest
// first (breadth-first), not going below a commit in stop. fn returns false
// to end the walk.
func walk(ctx context.Context, src source, tip plumbing.Hash, stop map[plumbing.Hash]bool, fn func(*change) (bool, error)) error {
	seen := map[plumbing.Hash]bool{tip: true}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return errs.Wrap(errs.Failure, err, "ledger: reading the history interrupted")
		}
		c, err := src.commitInfo(queue[0])
		if err != nil {
			return err
		}
		queue = queue[1:]
		ch, err := changeOf(src, c)
		if err != nil {
			return err
		}
		if more, err := fn(ch); err != nil || !more {
			return err
		}
		for _, p := range c.parents {
			if !seen[p] && !stop[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return nil
}

// adders finds the commit that added each path of want, walking back from
// tip until every path is found (or the history ends): the commit whose
// tree has the path and whose parents' do not. A merge of two ledgers adds
// nothing of its own, so its entries are credited to the commits on either
// side that wrote them. want is emptied of the paths found.
func adders(ctx context.Context, src source, tip plumbing.Hash, want map[string]bool) (map[string]plumbing.Hash, error) {
	out := make(map[string]plumbing.Hash, len(want))
	if len(want) == 0 {
		return out, nil
	}
	err := walk(ctx, src, tip, nil, func(ch *change) (bool, error) {
		for _, f := range ch.novel {
			if want[f.path] {
				out[f.path] = ch.hash
				delete(want, f.path)
			}
		}
		return len(want) > 0, nil
	})
	return out, err
}
