package repo

import (
	"context"
	"errors"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
)

// Hash, ObjectType and Mode are go-git's value types under hone's names:
// packages name ids, object types and modes through this seam without
// importing go-git, and values pass unchanged to the code that still does
// (internal/repo itself, ledger's entry encoding).
type (
	Hash       = plumbing.Hash
	ObjectType = plumbing.ObjectType
	Mode       = filemode.FileMode
)

// ZeroHash is the all-zero id: "no object", and "must not exist yet" as
// the old value of a compare-and-swap.
var ZeroHash = plumbing.ZeroHash

// IsHash reports whether s is a 40-hex id.
func IsHash(s string) bool { return len(s) == 40 && plumbing.IsHash(s) }

// NewHash reads a 40-hex id (an invalid one yields a hash no object has).
func NewHash(hex string) Hash { return plumbing.NewHash(hex) }

// ComputeHash is the id git gives an object of type t holding data.
func ComputeHash(t ObjectType, data []byte) Hash { return plumbing.ComputeHash(t, data) }

// BlobHasher hashes the content of a blob of size bytes as it is written,
// for files too large to hold: its Sum is the blob's id.
func BlobHasher(size int64) hash.Hash { return plumbing.NewHasher(BlobObject, size).Hash }

// Object types.
const (
	CommitObject = plumbing.CommitObject
	TreeObject   = plumbing.TreeObject
	BlobObject   = plumbing.BlobObject
	TagObject    = plumbing.TagObject
)

// Tree entry modes, as git writes them (ModeDeprecated is the group-
// writable file mode old trees may hold).
const (
	ModeDir        = filemode.Dir
	ModeRegular    = filemode.Regular
	ModeDeprecated = filemode.Deprecated
	ModeExecutable = filemode.Executable
	ModeSymlink    = filemode.Symlink
	ModeSubmodule  = filemode.Submodule
)

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Name string
	Mode Mode
	Hash Hash
}

// Signature is a commit's author or committer.
type Signature struct {
	Name, Email string
	When        time.Time
}

// Commit is a commit object, decoded.
type Commit struct {
	Hash      Hash
	Tree      Hash
	Parents   []Hash
	Author    Signature
	Committer Signature
	Message   string
}

// ErrNoEntry means a tree has no entry at the path asked for (or a
// component on the way is not a directory).
var ErrNoEntry = errors.New("no such path in the tree")

func (s *fileStore) ReadCommit(h Hash) (*Commit, error) {
	var c object.Commit
	if err := s.decode(CommitObject, h, &c); err != nil {
		return nil, err
	}
	sig := func(s object.Signature) Signature { return Signature{Name: s.Name, Email: s.Email, When: s.When} }
	return &Commit{Hash: h, Tree: c.TreeHash, Parents: c.ParentHashes, Author: sig(c.Author), Committer: sig(c.Committer), Message: c.Message}, nil
}

// decode reads object h of type t and has go-git's decoder of that type
// parse it into v.
func (s *fileStore) decode(t ObjectType, h Hash, v interface {
	Decode(plumbing.EncodedObject) error
}) error {
	raw, err := s.repo.ReadObject(t, h)
	if err != nil {
		return err
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(t)
	obj.Write(raw)
	if err := v.Decode(obj); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot decode %s %s", t, h)
	}
	return nil
}

func (s *fileStore) ReadTree(h Hash) ([]TreeEntry, error) {
	var t object.Tree
	if err := s.decode(TreeObject, h, &t); err != nil {
		return nil, err
	}
	out := make([]TreeEntry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = TreeEntry{Name: e.Name, Mode: e.Mode, Hash: e.Hash}
	}
	return out, nil
}

func (s *fileStore) ObjectSize(t ObjectType, h Hash) (int64, error) {
	obj, err := s.repo.gg.Storer.EncodedObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return 0, errs.Wrap(errs.Failure, ErrNoObject, "cannot read %s %s", t, h)
	}
	if err != nil {
		return 0, errs.Wrap(errs.Failure, err, "cannot read %s %s", t, h)
	}
	return obj.Size(), nil
}

func (s *fileStore) ResolveCommit(ctx context.Context, rev string) (Hash, error) {
	c, err := s.repo.ResolveCommit(ctx, rev)
	if err != nil {
		return ZeroHash, err
	}
	return NewHash(c), nil
}

func (s *fileStore) Symref(ref string) (string, bool, error) {
	dir := s.repo.CommonDir
	if ref == "HEAD" {
		dir = s.repo.GitDir
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ref)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", false, nil
		}
		return "", false, errs.Wrap(errs.Failure, err, "cannot read ref %s", ref)
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	return target, ok, nil
}

func (s *fileStore) Config(key string) string {
	section, option, _ := strings.Cut(key, ".")
	if c, err := s.repo.gg.Config(); err == nil {
		if v := c.Raw.Section(section).Option(option); v != "" {
			return v
		}
	}
	if g := globalConfig(); g != nil {
		return g.Raw.Section(section).Option(option)
	}
	return ""
}

// EncodeTree is the content of the tree object holding entries, which
// must be in git's order (by name, a directory's compared as if it ended
// in "/").
func EncodeTree(entries []TreeEntry) ([]byte, error) {
	t := object.Tree{Entries: make([]object.TreeEntry, len(entries))}
	for i, e := range entries {
		t.Entries[i] = object.TreeEntry{Name: e.Name, Mode: e.Mode, Hash: e.Hash}
	}
	obj := &plumbing.MemoryObject{}
	if err := t.Encode(obj); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot encode a tree")
	}
	rd, _ := obj.Reader() // a memory object's reader cannot fail
	return io.ReadAll(rd)
}

// EntryAt follows p, a slash path, from tree through s: the entry it
// names, or ErrNoEntry (wrapped) when there is none. Every component
// before the last must be a directory; a symlink on the way is not
// followed.
func EntryAt(s Store, tree Hash, p string) (TreeEntry, error) {
	parts := strings.Split(path.Clean(p), "/")
	at := tree
	for i, name := range parts {
		entries, err := s.ReadTree(at)
		if err != nil {
			return TreeEntry{}, err
		}
		var found *TreeEntry
		for j := range entries {
			if entries[j].Name == name {
				found = &entries[j]
				break
			}
		}
		if found == nil || i < len(parts)-1 && found.Mode != ModeDir {
			return TreeEntry{}, errs.Wrap(errs.NotFound, ErrNoEntry, "%s: no %s in tree %s", strings.Join(parts[:i+1], "/"), p, tree)
		}
		if i == len(parts)-1 {
			return *found, nil
		}
		at = found.Hash
	}
	return TreeEntry{}, errs.Wrap(errs.NotFound, ErrNoEntry, "no %s in tree %s", p, tree)
}

// WalkTree calls fn with every entry below tree, depth first in git's
// order, each with its slash path from tree; a directory is passed before
// its entries (submodules are not entered). An error from fn stops the
// walk and is returned.
func WalkTree(s Store, tree Hash, fn func(p string, e TreeEntry) error) error {
	return walkTree(s, tree, "", fn)
}

func walkTree(s Store, tree Hash, prefix string, fn func(string, TreeEntry) error) error {
	entries, err := s.ReadTree(tree)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := path.Join(prefix, e.Name)
		if err := fn(p, e); err != nil {
			return err
		}
		if e.Mode == ModeDir {
			if err := walkTree(s, e.Hash, p, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// FileAt reads the blob at path p of commit: the entry and its content.
// An absent path is ErrNoEntry (wrapped).
func FileAt(s Store, commit Hash, p string) (TreeEntry, []byte, error) {
	c, err := s.ReadCommit(commit)
	if err != nil {
		return TreeEntry{}, nil, err
	}
	e, err := EntryAt(s, c.Tree, p)
	if err != nil {
		return TreeEntry{}, nil, err
	}
	if e.Mode == ModeDir || e.Mode == ModeSubmodule {
		return TreeEntry{}, nil, errs.Wrap(errs.NotFound, ErrNoEntry, "%s is a directory at %s, not a file", p, commit)
	}
	b, err := s.ReadObject(BlobObject, e.Hash)
	return e, b, err
}
