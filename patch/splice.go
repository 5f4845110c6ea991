package patch

import (
	"context"
	"strings"

	"path/filepath"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// A target is usually a small part of a large repository, and the cost of a
// throwaway index grows with the whole tree. So the diff is applied to an
// index holding only the target's subtree (at its full path), and the result
// is spliced back into the pin's tree. Git still applies the diff and still
// reports every change: the diff of the index's tree before and after apply
// covers any path git touched, inside the target or not.

// applyPartial applies diff to an index holding only the pin's tree at root
// (rootHash) and returns the full patched tree and git's list of changes.
func (s *scratchIndex) applyPartial(ctx context.Context, st repo.Store, pin, root string, rootHash repo.Hash, diff []byte) (string, []git.Change, error) {
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
			sub = repo.NewHash(c.Hash)
		}
		// Trees are listed for the new subtree's hash; their files are
		// listed on their own lines, which the checks read.
		if (c.OldMode == allowlist.ModeTree || c.OldMode == allowlist.ModeNone) && (c.NewMode == allowlist.ModeTree || c.NewMode == allowlist.ModeNone) {
			continue
		}
		changes = append(changes, c)
	}
	pc, err := st.ReadCommit(repo.NewHash(pin))
	if err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "cannot read the pin %s", pin)
	}
	tree, err := s.splice(st, pc.Tree, comps, sub)
	if err != nil {
		return "", nil, err
	}
	return tree.String(), changes, nil
}

// subtree returns the hash of the pin's tree at root, if root is a tree below
// the top level: a target at the top level applies to the whole tree.
func subtree(st repo.Store, pin, root string) (repo.Hash, bool) {
	if root == "." {
		return repo.ZeroHash, false
	}
	c, err := st.ReadCommit(repo.NewHash(pin))
	if err != nil {
		return repo.ZeroHash, false
	}
	sub, err := repo.EntryAt(st, c.Tree, root)
	if err != nil || sub.Mode != repo.ModeDir {
		return repo.ZeroHash, false
	}
	return sub.Hash, true
}

// wrap writes the trees that hold h at the path comps and nothing else: the
// tree of the partial index before apply.
func (s *scratchIndex) wrap(comps []string, h repo.Hash) (repo.Hash, error) {
	for i := len(comps) - 1; i >= 0; i-- {
		var err error
		h, err = s.writeTree([]repo.TreeEntry{{Name: comps[i], Mode: repo.ModeDir, Hash: h}})
		if err != nil {
			return h, err
		}
	}
	return h, nil
}

// splice writes a copy of tree with the tree at comps replaced by sub.
func (s *scratchIndex) splice(st repo.Store, tree repo.Hash, comps []string, sub repo.Hash) (repo.Hash, error) {
	entries, err := st.ReadTree(tree)
	if err != nil {
		return repo.ZeroHash, errs.Wrap(errs.Failure, err, "cannot read the pin's tree %s", tree)
	}
	for i := range entries {
		if entries[i].Name != comps[0] {
			continue
		}
		if len(comps) == 1 {
			entries[i].Hash = sub
		} else if entries[i].Hash, err = s.splice(st, entries[i].Hash, comps[1:], sub); err != nil {
			return repo.ZeroHash, err
		}
		return s.writeTree(entries)
	}
	return repo.ZeroHash, errs.Failuref("the pin's tree has no %s", comps[0])
}

// writeTree stores a tree object in the scratch index's object directory,
// where a refused patch leaves it behind with the rest.
func (s *scratchIndex) writeTree(entries []repo.TreeEntry) (repo.Hash, error) {
	data, err := repo.EncodeTree(entries)
	if err != nil {
		return repo.ZeroHash, err
	}
	return repo.WriteLoose(filepath.Join(s.tmp, "objects"), repo.TreeObject, data)
}
