package patch

import (
	"context"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
)

// A target is usually a small part of a large repository, and the cost of a
// throwaway index grows with the whole tree. So the diff is applied to an
// index holding only the target's subtree (at its full path), and the result
// is spliced back into the pin's tree. Git still applies the diff and still
// reports every change: the diff of the index's tree before and after apply
// covers any path git touched, inside the target or not.

// applyPartial applies diff to an index holding only the pin's tree at root
// (rootHash) and returns the full patched tree and git's list of changes.
func (s *scratchIndex) applyPartial(ctx context.Context, repo *gogit.Repository, pin, root string, rootHash plumbing.Hash, diff []byte) (string, []git.Change, error) {
	if _, err := s.git(ctx, nil, nil, "read-tree", "--prefix="+root+"/", rootHash.String()); err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "cannot read the target's tree at the pin into a throwaway index")
	}
	after, err := s.applyAndWrite(ctx, pin, diff)
	if err != nil {
		return "", nil, err
	}
	comps := strings.Split(root, "/")
	before, err := s.wrap(comps, rootHash)
	if err != nil {
		return "", nil, err
	}
	out, err := s.git(ctx, nil, nil, append(append([]string{"diff-tree", "-t"}, git.RawDiffArgs...), before.String(), after)...)
	if err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "cannot list the changes git made")
	}
	all, err := parseRaw(out)
	if err != nil {
		return "", nil, err
	}
	sub := rootHash
	var changes []git.Change
	for _, c := range all {
		if c.Path == root && c.NewMode == allowlist.ModeTree {
			sub = plumbing.NewHash(c.Hash)
		}
		// Trees are listed for the new subtree's hash; their files are
		// listed on their own lines, which the checks read.
		if (c.OldMode == allowlist.ModeTree || c.OldMode == allowlist.ModeNone) && (c.NewMode == allowlist.ModeTree || c.NewMode == allowlist.ModeNone) {
			continue
		}
		changes = append(changes, c)
	}
	pc, err := repo.CommitObject(plumbing.NewHash(pin))
	if err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "cannot read the pin %s", pin)
	}
	top, err := pc.Tree()
	if err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "cannot read the pin's tree")
	}
	tree, err := s.splice(repo, top, comps, sub)
	if err != nil {
		return "", nil, err
	}
	return tree.String(), changes, nil
}

// subtree returns the hash of the pin's tree at root, if root is a tree below
// the top level: a target at the top level applies to the whole tree.
func subtree(repo *gogit.Repository, pin, root string) (plumbing.Hash, bool) {
	if root == "." {
		return plumbing.ZeroHash, false
	}
	c, err := repo.CommitObject(plumbing.NewHash(pin))
	if err != nil {
		return plumbing.ZeroHash, false
	}
	t, err := c.Tree()
	if err != nil {
		return plumbing.ZeroHash, false
	}
	sub, err := t.Tree(root)
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return sub.Hash, true
}

// wrap writes the trees that hold h at the path comps and nothing else: the
// tree of the partial index before apply.
func (s *scratchIndex) wrap(comps []string, h plumbing.Hash) (plumbing.Hash, error) {
	for i := len(comps) - 1; i >= 0; i-- {
		var err error
		h, err = s.writeTree(&object.Tree{Entries: []object.TreeEntry{{Name: comps[i], Mode: filemode.Dir, Hash: h}}})
		if err != nil {
			return h, err
		}
	}
	return h, nil
}

// splice writes a copy of t with the tree at comps replaced by sub.
func (s *scratchIndex) splice(repo *gogit.Repository, t *object.Tree, comps []string, sub plumbing.Hash) (plumbing.Hash, error) {
	entries := append([]object.TreeEntry(nil), t.Entries...)
	for i := range entries {
		if entries[i].Name != comps[0] {
			continue
		}
		if len(comps) == 1 {
			entries[i].Hash = sub
		} else {
			child, err := repo.TreeObject(entries[i].Hash)
			if err != nil {
				return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot read the pin's tree %s", comps[0])
			}
			if entries[i].Hash, err = s.splice(repo, child, comps[1:], sub); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		return s.writeTree(&object.Tree{Entries: entries})
	}
	return plumbing.ZeroHash, errs.Failuref("the pin's tree has no %s", comps[0])
}

// writeTree stores a tree object in the scratch index's object directory.
func (s *scratchIndex) writeTree(t *object.Tree) (plumbing.Hash, error) {
	if s.store == nil {
		s.store = filesystem.NewStorage(osfs.New(s.tmp), cache.NewObjectLRUDefault())
	}
	obj := s.store.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot encode a tree")
	}
	h, err := s.store.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot write a tree")
	}
	return h, nil
}
