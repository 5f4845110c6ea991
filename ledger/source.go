package ledger

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
)

// reader is a source over any raw object reader: the repository's Store
// for the ledger, `git cat-file --batch` for a server's hook.
type reader struct {
	read func(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error)
}

// catFileReader reads through cf, which sees a hook's quarantined objects.
func catFileReader(cf *git.CatFile) reader {
	return reader{read: func(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) { return cf.Read(h.String(), t.String()) }}
}

func (r reader) readBlob(h plumbing.Hash) ([]byte, error) { return r.read(plumbing.BlobObject, h) }

// tree returns the entries of tree h; the zero hash is the empty tree.
func (r reader) tree(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	raw, err := r.read(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	t := &object.Tree{}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TreeObject)
	obj.Write(raw)
	if err := t.Decode(obj); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "tree %s is malformed", h)
	}
	return t.Entries, nil
}

// commitInfo reads a commit's tree, parents and raw content.
func (r reader) commitInfo(h plumbing.Hash) (*commitInfo, error) {
	raw, err := r.read(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	return parseCommit(h, raw)
}
