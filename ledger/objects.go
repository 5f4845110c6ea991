package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/signing"
)

// objects writes and reads git objects straight in the object store, without
// an index or a worktree. Reads go through go-git, which knows packs; writes
// are loose objects written here the way git writes them, because go-git's
// writer compresses at zlib's default level with a fresh compressor per
// object, which is most of the cost of an append.
type objects struct {
	st  storer.EncodedObjectStorer
	dir string // the objects directory
}

func (o objects) writeBlob(data []byte) (plumbing.Hash, error) {
	return o.put(plumbing.BlobObject, data)
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
	return o.put(obj.Type(), data)
}

// put writes one loose object, "<type> <size>\0<content>" in a zlib stream,
// into a temporary file that is then renamed to objects/<2 hex>/<38 hex>, so
// readers never see a partial object. An object that already exists loose is
// not written again.
func (o objects) put(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, data)
	hex := h.String()
	dir := filepath.Join(o.dir, hex[:2])
	path := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(path); err == nil {
		return h, nil
	}
	fail := func(err error) (plumbing.Hash, error) {
		return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot write object %s to %s", hex, o.dir)
	}
	f, err := os.CreateTemp(o.dir, "tmp_obj_")
	if err != nil {
		return fail(err)
	}
	defer os.Remove(f.Name()) // a no-op once renamed
	payload := append([]byte(t.String()+" "+strconv.Itoa(len(data))+"\x00"), data...)
	if _, err := f.Write(storedZlib(payload)); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Chmod(0o444); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fail(err)
		}
		if err := os.Rename(f.Name(), path); err != nil {
			return fail(err)
		}
	}
	return h, nil
}

// storedZlib wraps p in a zlib stream of uncompressed ("stored") deflate
// blocks: what git itself writes with core.looseCompression=0. A hone process
// writes a handful of small objects and exits; setting up a compressor (over
// half a megabyte of tables, every page a fresh fault) costs more than the
// bytes it would save, and git gc compresses the objects when it packs them.
func storedZlib(p []byte) []byte {
	const maxBlock = 0xffff
	sum := adler32.Checksum(p)
	blocks := max(1, (len(p)+maxBlock-1)/maxBlock)
	out := make([]byte, 0, 2+5*blocks+len(p)+4)
	out = append(out, 0x78, 0x01) // deflate, 32 KiB window, fastest; the header's check bits hold
	for {
		n := min(len(p), maxBlock)
		var final byte
		if n == len(p) {
			final = 1
		}
		out = append(out, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		out = append(out, p[:n]...)
		if p = p[n:]; len(p) == 0 {
			return binary.BigEndian.AppendUint32(out, sum)
		}
	}
}

func (o objects) readBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := o.st.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read blob %s", h)
	}
	return readAll(obj)
}

// tree returns the entries of tree h; the zero hash is the empty tree.
func (o objects) tree(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	t, err := object.GetTree(o.st, h)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read tree %s", h)
	}
	return t.Entries, nil
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
	return o.put(plumbing.CommitObject, payload)
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

// commitInfo reads a commit's tree, parents and raw content.
func (o objects) commitInfo(h plumbing.Hash) (*commitInfo, error) {
	hex := h.String()
	if _, err := os.Lstat(filepath.Join(o.dir, hex[:2], hex[2:])); err != nil {
		if raw, ok := packedCommit(o.dir, h); ok {
			return parseCommit(h, raw)
		}
	}
	obj, err := o.st.EncodedObject(plumbing.CommitObject, h)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read commit %s", h)
	}
	raw, err := readAll(obj)
	if err != nil {
		return nil, err
	}
	return parseCommit(h, raw)
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
