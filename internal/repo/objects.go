package repo

import (
	"encoding/binary"
	"errors"
	"hash/adler32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
)

// objectsDir is where the repository keeps its objects.
func (r *Repo) objectsDir() string { return filepath.Join(r.CommonDir, "objects") }

// WriteObject writes one loose object, "<type> <size>\0<content>" in a
// zlib stream, into a temporary file that is then renamed to
// objects/<2 hex>/<38 hex>, so readers never see a partial object. An
// object that already exists loose is not written again.
//
// This writer is hone's own, not go-git's, because go-git compresses at
// zlib's default level with a fresh compressor per object, which was most
// of the cost of a ledger append; it earns its keep there.
func (r *Repo) WriteObject(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	return WriteLoose(r.objectsDir(), t, data)
}

// WriteLoose is WriteObject into objects, an object directory that need
// not be a repository's own: a quarantine that git reads through
// GIT_OBJECT_DIRECTORY, whose objects are moved in only when kept.
func WriteLoose(objects string, t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, data)
	hex := h.String()
	dir := filepath.Join(objects, hex[:2])
	path := filepath.Join(dir, hex[2:])
	if _, err := os.Lstat(path); err == nil {
		return h, nil
	}
	fail := func(err error) (plumbing.Hash, error) {
		return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "cannot write object %s to %s", hex, objects)
	}
	f, err := os.CreateTemp(objects, "tmp_obj_")
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

// ErrNoObject means the repository has no object of that id and type.
var ErrNoObject = errors.New("no such object")

// ReadObject returns the content of object h, which must be of type t.
// Reads go through go-git, which knows packs and deltas, except that a
// commit stored whole in a pack is read by packedCommit, which touches a
// few pages where go-git would decode a whole pack index first. An object
// git packed after go-git listed the packs (a fetch) is found by listing
// them again.
func (r *Repo) ReadObject(t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	if t == plumbing.CommitObject {
		hex := h.String()
		if _, err := os.Lstat(filepath.Join(r.objectsDir(), hex[:2], hex[2:])); err != nil {
			if raw, ok := packedCommit(r.objectsDir(), h); ok {
				return raw, nil
			}
		}
	}
	obj, err := r.gg.Storer.EncodedObject(t, h)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if ri, ok := r.gg.Storer.(interface{ Reindex() }); ok {
			ri.Reindex()
			obj, err = r.gg.Storer.EncodedObject(t, h)
		}
	}
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, errs.Wrap(errs.Failure, ErrNoObject, "cannot read %s %s", t, h)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s %s", t, h)
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s %s", t, h)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s %s", t, h)
	}
	return b, nil
}
