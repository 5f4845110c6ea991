package ledger

import (
	"bytes"
	"context"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/signing"
)

// objects builds and reads the ledger's blobs, trees and commits through
// the repository's Store: no index, no worktree. Its writer is the Store's
// loose-object writer (repo.Repo.WriteObject says why hone has its own).
type objects struct {
	reader
	st repo.Store
}

func newObjects(st repo.Store) objects { return objects{reader: reader{read: st.ReadObject}, st: st} }

func (o objects) writeBlob(data []byte) (plumbing.Hash, error) {
	return o.st.WriteObject(plumbing.BlobObject, data)
}

// store writes an object go-git encoded in memory.
func (o objects) store(obj *plumbing.MemoryObject) (plumbing.Hash, error) {
	r, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot encode a git object")
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot encode a git object")
	}
	return o.st.WriteObject(obj.Type(), data)
}

// writeTree stores entries in git's tree order: by name, a directory
// comparing as if its name ended in "/".
func (o objects) writeTree(entries []object.TreeEntry) (plumbing.Hash, error) {
	sort.Slice(entries, func(i, j int) bool { return treeKey(entries[i]) < treeKey(entries[j]) })
	t := &object.Tree{Entries: entries}
	obj := &plumbing.MemoryObject{}
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot encode a tree")
	}
	return o.store(obj)
}

func treeKey(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// commit writes a commit, signed with git's SSH signature format when key
// names a signing key (see package signing).
func (o objects) commit(ctx context.Context, tree plumbing.Hash, parents []plumbing.Hash, msg string, sig object.Signature, key string) (plumbing.Hash, error) {
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: parents}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot encode a commit")
	}
	payload, err := readAll(obj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if key != "" {
		armored, err := signing.Sign(ctx, key, payload)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		payload = signing.AddSignature(payload, armored)
	}
	return o.st.WriteObject(plumbing.CommitObject, payload)
}

func readAll(obj plumbing.EncodedObject) ([]byte, error) {
	r, err := obj.Reader()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read git object %s", obj.Hash())
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read git object %s", obj.Hash())
	}
	return b, nil
}

// parseCommit reads the tree and parents from a commit's headers.
func parseCommit(h plumbing.Hash, raw []byte) (*commitInfo, error) {
	c := &commitInfo{hash: h, raw: raw}
	for rest := raw; len(rest) > 0 && rest[0] != '\n'; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		switch {
		case bytes.HasPrefix(line, []byte("tree ")) && plumbing.IsHash(string(line[5:])):
			c.tree = plumbing.NewHash(string(line[5:]))
		case bytes.HasPrefix(line, []byte("parent ")) && plumbing.IsHash(string(line[7:])):
			c.parents = append(c.parents, plumbing.NewHash(string(line[7:])))
		case bytes.HasPrefix(line, []byte("committer ")):
			if f := strings.Fields(string(line)); len(f) >= 2 {
				if t, err := strconv.ParseInt(f[len(f)-2], 10, 64); err == nil {
					c.when = time.Unix(t, 0)
				}
			}
		}
	}
	if c.tree.IsZero() {
		return nil, errs.Failuref("commit %s has no tree", h)
	}
	return c, nil
}

// commitTree returns the tree of commit h; the zero hash has the empty tree.
func (o objects) commitTree(h plumbing.Hash) (plumbing.Hash, error) {
	if h.IsZero() {
		return plumbing.ZeroHash, nil
	}
	c, err := o.commitInfo(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return c.tree, nil
}

// file is a blob at a slash-separated path. Only notes are ever replaced;
// ledger entries never are. mode is the file's mode as read from a tree;
// files hone writes are always regular.
type file struct {
	path    string
	hash    plumbing.Hash
	replace bool
	mode    filemode.FileMode
}

// insert returns tree root with files added, rewriting only the trees on the
// way to each file. A path that already holds the same blob is left alone; one
// that holds anything else is an integrity error: entries never change.
func (o objects) insert(root plumbing.Hash, files []file) (plumbing.Hash, error) {
	entries, err := o.tree(root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	entries = append([]object.TreeEntry(nil), entries...)
	at := make(map[string]int, len(entries))
	for i, e := range entries {
		at[e.Name] = i
	}
	groups := map[string][]file{}
	var names []string
	for _, f := range files {
		name, rest, sub := strings.Cut(f.path, "/")
		if !sub {
			i, ok := at[name]
			switch {
			case !ok:
				at[name] = len(entries)
				entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: f.hash})
			case f.replace && entries[i].Mode != filemode.Dir:
				entries[i].Hash = f.hash
			case entries[i].Mode != filemode.Regular || entries[i].Hash != f.hash:
				return plumbing.ZeroHash, errs.Invalidf("ledger integrity: %s already exists with different content", f.path)
			}
			continue
		}
		if _, seen := groups[name]; !seen {
			names = append(names, name)
		}
		groups[name] = append(groups[name], file{path: rest, hash: f.hash, replace: f.replace})
	}
	for _, name := range names {
		var sub plumbing.Hash
		if i, ok := at[name]; ok {
			if entries[i].Mode != filemode.Dir {
				return plumbing.ZeroHash, errs.Invalidf("ledger integrity: %s is a file, not a directory", name)
			}
			sub = entries[i].Hash
		}
		h, err := o.insert(sub, groups[name])
		if err != nil {
			return plumbing.ZeroHash, prefixPath(err, name)
		}
		if i, ok := at[name]; ok {
			entries[i].Hash = h
		} else {
			at[name] = len(entries)
			entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
	}
	return o.writeTree(entries)
}

// prefixPath keeps integrity messages naming the full path as insert unwinds.
func prefixPath(err error, dir string) error {
	if e, ok := err.(*errs.Error); ok && strings.HasPrefix(e.Msg, "ledger integrity: ") {
		return errs.Invalidf("ledger integrity: %s/%s", dir, strings.TrimPrefix(e.Msg, "ledger integrity: "))
	}
	return err
}

// signature is the author and committer of ledger and notes commits: the
// environment's git identity when set, so a shared ledger says who appended,
// else hone's own.
func signature(env func(string) string, when time.Time) object.Signature {
	name, email := env("GIT_COMMITTER_NAME"), env("GIT_COMMITTER_EMAIL")
	if name == "" {
		name = env("GIT_AUTHOR_NAME")
	}
	if email == "" {
		email = env("GIT_AUTHOR_EMAIL")
	}
	if name == "" {
		name = "hone"
	}
	if email == "" {
		email = "hone@localhost"
	}
	return object.Signature{Name: name, Email: email, When: when}
}
