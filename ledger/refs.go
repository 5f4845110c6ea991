package ledger

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
)

// errRaceLost means the ref no longer holds the old value a compare-and-swap
// expected: another writer moved it first. Callers rebuild on the fresh tip.
var errRaceLost = errors.New("ref moved by another writer")

// refStore reads and moves refs of one repository the way git's "files"
// backend does, so git, hone and other git tools see a consistent value and
// respect each other's locks.
type refStore struct {
	commonDir string // holds refs/ and packed-refs
	honeDir   string // holds refs.lock, hone's own lock beside git's
}

// read returns the value of a fully qualified ref. ok is false when the ref
// exists neither as a loose file nor in packed-refs.
func (r *refStore) read(ref string) (h plumbing.Hash, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(r.commonDir, filepath.FromSlash(ref)))
	switch {
	case err == nil:
		return parseRefValue(ref, b)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR):
		// Not loose: git then looks in packed-refs.
	default:
		return h, false, errs.Wrap(errs.Failure, err, "cannot read ref %s", ref)
	}
	return r.readPacked(ref)
}

func parseRefValue(ref string, b []byte) (plumbing.Hash, bool, error) {
	s := strings.TrimSpace(string(b))
	if len(s) != 40 || !plumbing.IsHash(s) {
		return plumbing.ZeroHash, false, errs.Invalidf("ref %s holds %q, not a commit id; repair it with `git update-ref %s <commit>`", ref, s, ref)
	}
	return plumbing.NewHash(s), true, nil
}

func (r *refStore) readPacked(ref string) (plumbing.Hash, bool, error) {
	f, err := os.Open(filepath.Join(r.commonDir, "packed-refs"))
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

// cas moves ref from old to new through git's lock-file protocol: create
// <ref>.lock exclusively, re-read the current value (loose or packed) under
// the lock, write and fsync the new value, rename the lock over the ref. An
// all-zero old means "the ref must not exist yet". It returns errRaceLost when
// the ref holds something else, and a Busy error when git holds the lock for
// longer than a writer plausibly needs.
func (r *refStore) cas(ref string, newH, old plumbing.Hash) error {
	held, err := r.lockHone()
	if err != nil {
		return err
	}
	defer held.unlock()
	path := filepath.Join(r.commonDir, filepath.FromSlash(ref))
	lockPath := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create the directory of ref %s", ref)
	}
	// The lock file is made under a private name and recorded before it is
	// linked into place as <ref>.lock, so there is no moment at which a
	// <ref>.lock of ours exists without a record naming its inode: a writer
	// killed anywhere leaves a lock the next one can prove stale.
	tmp := filepath.Join(r.honeDir, "ref.lock.new")
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", tmp)
	}
	defer os.Remove(tmp)
	committed := false
	linked := false
	defer func() {
		if !committed {
			f.Close()
			if linked {
				os.Remove(lockPath)
			}
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot stat %s", tmp)
	}
	if err := held.mark(lockPath, fileID(fi)); err != nil {
		return err
	}
	for wait := time.Millisecond; ; wait *= 2 {
		err = os.Link(tmp, lockPath)
		if err == nil {
			linked = true
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return errs.Wrap(errs.Failure, err, "cannot lock ref %s", ref)
		}
		// Only a git process can hold it (hone writers hold refs.lock first),
		// and git keeps ref locks for milliseconds.
		if wait > 2*time.Second {
			return errs.Busyf("ref %s is locked by %s; if no git process is running, remove that file", ref, lockPath)
		}
		time.Sleep(wait/2 + rand.N(wait))
	}
	cur, ok, err := r.read(ref)
	if err != nil {
		return err
	}
	if (!ok && !old.IsZero()) || (ok && cur != old) {
		return errRaceLost
	}
	if _, err := fmt.Fprintf(f, "%s\n", newH); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", lockPath)
	}
	if err := f.Sync(); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot sync %s", lockPath)
	}
	if err := f.Close(); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", lockPath)
	}
	if err := os.Rename(lockPath, path); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot update ref %s", ref)
	}
	committed = true
	return nil
}

// readAgain reads ref on each attempt of a compare-and-swap loop. A ref that
// existed on an earlier attempt and is gone now was deleted under the
// writer; that is not an empty ledger, so the loop must stop rather than
// start the ref afresh.
func (r *refStore) readAgain(ref string, seen *bool) (plumbing.Hash, bool, error) {
	h, ok, err := r.read(ref)
	if err == nil && !ok && *seen {
		return h, false, errs.Failuref("%s was deleted while hone was updating it; restore it (see `git reflog`) and try again", ref)
	}
	*seen = *seen || ok
	return h, ok, err
}

// update moves ref by compare-and-swap, retrying on a fresh tip whenever
// another writer moved it first. next computes the new value from the current
// tip (ok is false when the ref does not exist yet); returning the tip itself
// means there is nothing to do. It returns the tip that was replaced.
func (l *Ledger) update(ctx context.Context, ref string, next func(tip plumbing.Hash, ok bool) (plumbing.Hash, error)) (plumbing.Hash, error) {
	seen := false
	for n := 1; n <= maxAttempts; n++ {
		if err := ctx.Err(); err != nil {
			return plumbing.ZeroHash, errs.Wrap(errs.Failure, err, "ledger: update of %s interrupted", ref)
		}
		tip, ok, err := l.refs.readAgain(ref, &seen)
		if err != nil {
			return tip, err
		}
		h, err := next(tip, ok)
		if err != nil || (ok && h == tip) {
			return tip, err
		}
		err = l.refs.cas(ref, h, tip)
		if !errors.Is(err, errRaceLost) {
			return tip, err
		}
		retryWait(n)
	}
	return plumbing.ZeroHash, errs.Busyf("ledger: %s kept moving; gave up after %d attempts", ref, maxAttempts)
}

// retryWait sleeps before attempt n of a compare-and-swap loop: growing, with
// jitter, so writers that lost the same race do not collide again in step.
func retryWait(n int) {
	ceil := time.Duration(min(n, 20)) * time.Millisecond
	time.Sleep(time.Duration(rand.N(int64(ceil) + 1)))
}

// maxAttempts bounds every compare-and-swap loop. A writer losing this many
// races in a row means the ref is hot beyond reason; it reports Busy.
const maxAttempts = 400

// lockHone takes hone's own lock for ref updates in this repository. git's
// <ref>.lock files have no owner, so a writer killed between creating and
// renaming one would block every later writer; hone's lock is an flock the
// kernel drops when its holder dies, and while holding it a writer records
// which <ref>.lock it created. The next holder finds that record and removes
// the stale lock, which no live process can own.
func (r *refStore) lockHone() (*heldLock, error) {
	path := filepath.Join(r.honeDir, "refs.lock")
	if err := os.MkdirAll(r.honeDir, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", r.honeDir)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open %s", path)
	}
	deadline := time.Now().Add(30 * time.Second)
	for n := 1; ; n++ {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, errs.Wrap(errs.Failure, err, "cannot lock %s", path)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, errs.Busyf("another hone process has held %s for 30s", path)
		}
		retryWait(n)
	}
	h := &heldLock{f}
	if err := h.recoverStale(); err != nil {
		f.Close()
		return nil, err
	}
	return h, nil
}

// heldLock is refs.lock while this process holds its flock.
type heldLock struct{ f *os.File }

// unlock clears the record (this writer left no <ref>.lock) and drops the flock.
func (h *heldLock) unlock() {
	h.f.Truncate(0)
	h.f.Close()
}

// recoverStale removes the <ref>.lock a dead holder of refs.lock left behind.
// The record is "<lock path> <dev>:<inode>", written before the lock file is
// linked into place; a lock is removed only when it is that very file, so a
// lock git itself holds is never touched.
func (h *heldLock) recoverStale() error {
	b := make([]byte, 4096)
	n, _ := h.f.ReadAt(b, 0)
	rec := strings.TrimSpace(string(b[:n]))
	if rec == "" {
		return nil
	}
	i := strings.LastIndexByte(rec, ' ')
	if i < 0 {
		return h.f.Truncate(0)
	}
	lockPath, id := rec[:i], rec[i+1:]
	if fi, err := os.Lstat(lockPath); err == nil {
		if fileID(fi) == id {
			if err := os.Remove(lockPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return errs.Wrap(errs.Failure, err, "cannot remove the stale lock %s", lockPath)
			}
		}
	}
	return h.f.Truncate(0)
}

// mark records, in refs.lock, the state of the <ref>.lock being taken.
func (h *heldLock) mark(lockPath, state string) error {
	if err := h.f.Truncate(0); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", h.f.Name())
	}
	if _, err := h.f.WriteAt([]byte(lockPath+" "+state+"\n"), 0); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", h.f.Name())
	}
	return nil
}

func fileID(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}
