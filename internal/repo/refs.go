package repo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
)

// ErrRaceLost means the ref no longer holds the old value a compare-and-swap
// expected: another writer moved it first. Callers rebuild on the fresh tip.
var ErrRaceLost = errors.New("ref moved by another writer")

// Refs reads and moves the refs of one repository the way git's "files"
// backend does, so git, hone and other git tools see a consistent value and
// respect each other's locks. It is the only code in hone that writes refs.
// (go-git's CheckAndSetReference is invisible to git's locks and rewrites
// the ref file in place, so mixed writers lose updates.)
type Refs struct {
	commonDir string // holds refs/ and packed-refs
	stateDir  string // holds refs.lock (hone's own lock beside git's) and its record
	reason    string // the reflog message of every move
	pol       *lazyPolicy
}

// Refs returns the repository's ref store.
func (r *Repo) Refs() *Refs {
	return &Refs{commonDir: r.CommonDir, stateDir: r.StatePath(), reason: "hone", pol: &lazyPolicy{}}
}

// Read returns the value of a fully qualified ref. ok is false when the ref
// exists neither as a loose file nor in packed-refs.
func (s *Refs) Read(ref string) (h plumbing.Hash, ok bool, err error) {
	b, err := os.ReadFile(s.path(ref))
	switch {
	case err == nil:
		return parseRefValue(ref, b)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR):
		// Not loose: git then looks in packed-refs.
	default:
		return h, false, errs.Wrap(errs.Failure, err, "cannot read ref %s", ref)
	}
	return s.readPacked(ref)
}

func (s *Refs) path(ref string) string { return filepath.Join(s.commonDir, filepath.FromSlash(ref)) }

func parseRefValue(ref string, b []byte) (plumbing.Hash, bool, error) {
	v := strings.TrimSpace(string(b))
	if len(v) != 40 || !plumbing.IsHash(v) {
		return plumbing.ZeroHash, false, errs.Invalidf("ref %s holds %q, not a commit id; repair it with `git update-ref %s <commit>`", ref, v, ref)
	}
	return plumbing.NewHash(v), true, nil
}

func (s *Refs) readPacked(ref string) (plumbing.Hash, bool, error) {
	f, err := os.Open(filepath.Join(s.commonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, false, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, errs.Wrap(errs.Failure, err, "cannot read packed-refs")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	suffix := []byte(" " + ref)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 41+len(ref) && bytes.HasSuffix(line, suffix) {
			return parseRefValue(ref, line[:40])
		}
	}
	if err := sc.Err(); err != nil {
		return plumbing.ZeroHash, false, errs.Wrap(errs.Failure, err, "cannot read packed-refs")
	}
	return plumbing.ZeroHash, false, nil
}

// CompareAndSwap moves ref from old to newH through git's lock-file
// protocol: create <ref>.lock exclusively, re-read the current value (loose
// or packed) under the lock, write and fsync the new value, rename the lock
// over the ref. An all-zero old means "the ref must not exist yet". It
// returns ErrRaceLost when the ref holds something else, and a Busy error
// when git holds the lock for longer than a writer plausibly needs or
// another hone holds hone's lock past ctx's deadline.
func (s *Refs) CompareAndSwap(ctx context.Context, ref string, newH, old plumbing.Hash) error {
	return s.locked(ctx, ref, func(l *refLock) error {
		cur, err := l.current()
		if err != nil {
			return err
		}
		if cur != old {
			return ErrRaceLost
		}
		if err := l.commit(newH); err != nil {
			return err
		}
		// The entry after the move, unlike git: a writer killed in between
		// leaves a move without an entry, which is an append the ledger's
		// checks accept, never an entry for a move that did not happen,
		// which they would read as a rewrite.
		if err := s.appendReflog(ref, cur, newH); err != nil {
			return fmt.Errorf("%s was moved to %s, but %w", ref, newH, err)
		}
		return nil
	})
}

// Delete removes ref if it holds old, from packed-refs too, in git's order:
// packed-refs is rewritten before the loose file goes, so no reader ever
// sees an older packed value come back. It returns ErrRaceLost when the ref
// is absent or holds something else.
func (s *Refs) Delete(ctx context.Context, ref string, old plumbing.Hash) error {
	if old.IsZero() {
		return fmt.Errorf("delete %s: an old value is required", ref)
	}
	return s.locked(ctx, ref, func(l *refLock) error {
		if cur, err := l.current(); err != nil || cur != old {
			if err == nil {
				err = ErrRaceLost
			}
			return err
		}
		if err := s.dropPacked(ref, l.held); err != nil {
			return err
		}
		if err := os.Remove(s.path(ref)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return errs.Wrap(errs.Failure, err, "cannot delete ref %s", ref)
		}
		// git removes a deleted ref's reflog with it.
		os.Remove(filepath.Join(s.commonDir, "logs", filepath.FromSlash(ref)))
		return nil
	})
}

// Update moves ref by compare-and-swap, retrying on a fresh tip whenever
// another writer moved it first. next computes the new value from the
// current tip (ok is false when the ref does not exist yet); returning the
// tip itself means there is nothing to do. It returns the tip that was
// replaced. A ref deleted while the loop runs stops it: that is not an
// absent ref to start afresh.
func (s *Refs) Update(ctx context.Context, ref string, next func(tip plumbing.Hash, ok bool) (plumbing.Hash, error)) (plumbing.Hash, error) {
	return UpdateRef(ctx, s, ref, next)
}

// UpdateRef is Update on any ref store: the one retry loop over
// compare-and-swap.
func UpdateRef(ctx context.Context, s CASRefs, ref string, next func(tip plumbing.Hash, ok bool) (plumbing.Hash, error)) (plumbing.Hash, error) {
	seen := false
	for n := 1; n <= maxAttempts; n++ {
		if err := ctx.Err(); err != nil {
			return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "update of %s interrupted", ref)
		}
		tip, ok, err := s.Read(ref)
		if err != nil {
			return tip, err
		}
		if !ok && seen {
			return tip, errs.Failuref("%s was deleted while hone was updating it; restore it (see `git reflog`) and try again", ref)
		}
		seen = seen || ok
		h, err := next(tip, ok)
		if err != nil || (ok && h == tip) {
			return tip, err
		}
		err = s.CompareAndSwap(ctx, ref, h, tip)
		if !errors.Is(err, ErrRaceLost) {
			return tip, err
		}
		RetryWait(n)
	}
	return plumbing.ZeroHash, errs.Busyf("%s kept moving; gave up after %d attempts", ref, maxAttempts)
}

// RetryWait sleeps before attempt n of a loop retrying on a contended ref:
// growing, with jitter, so writers that lost the same race do not collide
// again in step.
func RetryWait(n int) {
	ceil := time.Duration(min(n, 20)) * time.Millisecond
	time.Sleep(time.Duration(rand.N(int64(ceil) + 1)))
}

// maxAttempts bounds every compare-and-swap loop. A writer losing this many
// races in a row means the ref is hot beyond reason; it reports Busy.
const maxAttempts = 400

// refLock is <ref>.lock while this process holds it.
type refLock struct {
	s        *Refs
	ref      string
	path     string // the lock file, <ref>.lock
	f        *os.File
	held     *staleRecord
	consumed bool // renamed over the ref: nothing to remove
}

// locked runs fn holding hone's lock and <ref>.lock. git's <ref>.lock files
// have no owner, so a writer killed between creating and renaming one would
// block every later writer; hone's lock is an flock the kernel drops when
// its holder dies, and while holding it a writer records which <ref>.lock it
// created. The next holder finds that record and removes the stale lock,
// which no live process can own.
func (s *Refs) locked(ctx context.Context, ref string, fn func(*refLock) error) error {
	held, err := lock.Acquire(ctx, filepath.Join(s.stateDir, "refs.lock"), "update refs")
	if err != nil {
		return err
	}
	defer held.Release()
	rec, err := s.openRecord()
	if err != nil {
		return err
	}
	defer rec.close()
	l := &refLock{s: s, ref: ref, path: s.path(ref) + ".lock", held: rec}
	if err := l.take(); err != nil {
		return err
	}
	defer l.drop()
	return fn(l)
}

// take creates <ref>.lock. The file is made under a private name and
// recorded before it is linked into place, so there is no moment at which a
// <ref>.lock of ours exists without a record naming its inode: a writer
// killed anywhere leaves a lock the next one can prove stale.
func (l *refLock) take() error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create the directory of ref %s", l.ref)
	}
	f, err := l.held.linkExclusive(l.path, "ref.lock.new")
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errs.Busyf("ref %s is locked by %s; if no git process is running, remove that file", l.ref, l.path)
		}
		return errs.Wrap(errs.Failure, err, "cannot lock ref %s", l.ref)
	}
	l.f = f
	return nil
}

// current is the ref's value read under the lock, all-zero when it does not
// exist.
func (l *refLock) current() (plumbing.Hash, error) {
	cur, _, err := l.s.Read(l.ref)
	return cur, err
}

// commit writes newH into the lock file, syncs it and renames it over the ref.
func (l *refLock) commit(newH plumbing.Hash) error {
	if _, err := fmt.Fprintf(l.f, "%s\n", newH); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", l.path)
	}
	if err := l.f.Sync(); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot sync %s", l.path)
	}
	if err := l.f.Close(); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", l.path)
	}
	if err := os.Rename(l.path, l.s.path(l.ref)); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot update ref %s", l.ref)
	}
	l.consumed = true
	return nil
}

// drop removes the lock file unless it became the ref.
func (l *refLock) drop() {
	l.f.Close()
	if !l.consumed {
		os.Remove(l.path)
	}
}

// dropPacked rewrites packed-refs without ref (and the peeled line after
// it), under packed-refs.lock, when packed-refs holds it.
func (s *Refs) dropPacked(ref string, rec *staleRecord) error {
	packed := filepath.Join(s.commonDir, "packed-refs")
	b, err := os.ReadFile(packed)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot read packed-refs")
	}
	lines := strings.SplitAfter(string(b), "\n")
	var kept strings.Builder
	found := false
	for i := 0; i < len(lines); i++ {
		if l := strings.TrimSuffix(lines[i], "\n"); len(l) == 41+len(ref) && strings.HasSuffix(l, " "+ref) {
			found = true
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "^") {
				i++
			}
			continue
		}
		kept.WriteString(lines[i])
	}
	if !found {
		return nil
	}
	lockPath := packed + ".lock"
	f, err := rec.linkExclusive(lockPath, "packed-refs.lock.new")
	if errors.Is(err, fs.ErrExist) {
		return errs.Busyf("packed-refs is locked by %s; if no git process is running, remove that file", lockPath)
	}
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot lock packed-refs")
	}
	_, err = f.WriteString(kept.String())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(lockPath, packed)
	}
	if err != nil {
		os.Remove(lockPath)
		return errs.Wrap(errs.Failure, err, "cannot rewrite packed-refs")
	}
	return nil
}

// staleRecord is the file, beside refs.lock, where the holder of refs.lock
// lists the git lock files it has linked into place, one "<path>
// <dev>:<inode>" line each. Only a holder of refs.lock reads or writes it.
type staleRecord struct {
	f   *os.File
	dir string // where lock files are made before they are linked into place
}

// openRecord opens the record and removes the lock files a dead holder of
// refs.lock left behind. A recorded lock is removed only when it is that very
// file, so a lock git itself holds is never touched.
func (s *Refs) openRecord() (*staleRecord, error) {
	p := filepath.Join(s.stateDir, "refs.lock.record")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open %s", p)
	}
	rec := &staleRecord{f: f, dir: s.stateDir}
	b := make([]byte, 64*1024)
	n, _ := f.ReadAt(b, 0)
	for _, line := range strings.Split(string(b[:n]), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		lockPath, id := line[:i], line[i+1:]
		if fi, err := os.Lstat(lockPath); err == nil && fileID(fi) == id {
			if err := os.Remove(lockPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
				f.Close()
				return nil, errs.Wrap(errs.Failure, err, "cannot remove the stale lock %s", lockPath)
			}
		}
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, errs.Wrap(errs.Failure, err, "cannot write %s", p)
	}
	return rec, nil
}

// close empties the record: this holder leaves no lock file behind.
func (r *staleRecord) close() {
	r.f.Truncate(0)
	r.f.Close()
}

// linkExclusive creates lockPath as git does (it must not exist), recorded
// first, and returns it open for writing. A lock git holds is waited for
// briefly, since git keeps its locks for milliseconds; the error then wraps
// fs.ErrExist.
func (r *staleRecord) linkExclusive(lockPath, tmpName string) (*os.File, error) {
	tmp := filepath.Join(r.dir, tmpName)
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	fi, err := f.Stat()
	if err == nil {
		_, err = fmt.Fprintf(r.f, "%s %s\n", lockPath, fileID(fi))
	}
	for wait := time.Millisecond; err == nil; wait *= 2 {
		err = os.Link(tmp, lockPath)
		if err == nil {
			return f, nil
		}
		// Only a git process can hold it (hone writers hold refs.lock
		// first), and git keeps ref locks for milliseconds.
		if !errors.Is(err, fs.ErrExist) || wait > 2*time.Second {
			break
		}
		time.Sleep(wait/2 + rand.N(wait))
		err = nil
	}
	f.Close()
	return nil, err
}

func fileID(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}
