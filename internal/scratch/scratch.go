// Package scratch makes the folders hone works in under its state
// directory (a verdict's checkouts, a proposal's throwaway index) so that
// a hone killed half-way leaves nothing behind for long: each folder holds
// an owner lock, an flock its process keeps for its whole life, and the
// next hone that makes a folder in the same place sweeps those whose owner
// died. A folder marked kept (hone verdict --keep) is never swept.
package scratch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
)

// Names inside each folder and in the parent.
const (
	ownerFile = ".owner.lock"
	keepFile  = ".keep"
	// parentLock serialises making folders with sweeping them: without it a
	// sweeper could take the owner lock of a folder made a moment ago,
	// before its owner did, and delete it.
	parentLock = ".scratch.lock"
)

// Dir is one folder owned by this process.
type Dir struct {
	Path  string
	owner *lock.Lock
}

// New makes a fresh folder named prefix* in parent (created if missing),
// owned by this process until Remove or Release, after sweeping the
// folders of parent whose owners are dead.
func New(ctx context.Context, parent, prefix string) (*Dir, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", parent)
	}
	held, err := lock.Acquire(ctx, filepath.Join(parent, parentLock), "make a scratch folder")
	if err != nil {
		return nil, err
	}
	defer held.Release()
	sweep(ctx, parent)
	p, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create a folder in %s", parent)
	}
	owner, err := lock.Acquire(ctx, filepath.Join(p, ownerFile), "own "+filepath.Base(p))
	if err != nil {
		os.RemoveAll(p)
		return nil, err
	}
	return &Dir{Path: p, owner: owner}, nil
}

// Keep marks the folder so that no sweep removes it, for a person to look
// at; removing it is theirs to do.
func (d *Dir) Keep() error {
	if err := os.WriteFile(filepath.Join(d.Path, keepFile), []byte("kept by hone\n"), 0o644); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot mark %s as kept", d.Path)
	}
	return nil
}

// Release gives up ownership without removing the folder.
func (d *Dir) Release() { d.owner.Release() }

// Remove deletes the folder and everything in it, then gives up ownership.
func (d *Dir) Remove() error {
	err := RemoveAll(d.Path)
	d.owner.Release()
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot remove %s", d.Path)
	}
	return nil
}

// Freed is what a sweep removed.
type Freed struct {
	Items int   `json:"items"`
	Bytes int64 `json:"bytes"`
}

// Add counts another sweep's work.
func (f *Freed) Add(g Freed) { f.Items, f.Bytes = f.Items+g.Items, f.Bytes+g.Bytes }

// Sweep removes the folders of parent whose owner is dead, never kept ones
// and never one whose owner lives.
func Sweep(ctx context.Context, parent string) (Freed, error) {
	if _, err := os.Stat(parent); errors.Is(err, os.ErrNotExist) {
		return Freed{}, nil
	}
	held, err := lock.Acquire(ctx, filepath.Join(parent, parentLock), "sweep scratch folders")
	if err != nil {
		return Freed{}, err
	}
	defer held.Release()
	return sweep(ctx, parent), nil
}

func sweep(ctx context.Context, parent string) Freed {
	var freed Freed
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if _, err := os.Lstat(filepath.Join(p, keepFile)); err == nil {
			continue
		}
		if _, err := os.Lstat(filepath.Join(p, ownerFile)); err != nil {
			// Not a folder this package made.
			continue
		}
		now, cancel := context.WithDeadline(ctx, time.Now())
		owner, err := lock.Acquire(now, filepath.Join(p, ownerFile), "sweep "+e.Name())
		cancel()
		if err != nil {
			continue
		}
		n := Size(p)
		if RemoveAll(p) == nil {
			freed.Items++
			freed.Bytes += n
		}
		owner.Release()
	}
	return freed
}

// Kept lists the kept folders of parent.
func Kept(parent string) []string {
	var out []string
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if _, err := os.Lstat(filepath.Join(parent, e.Name(), keepFile)); err == nil {
			out = append(out, filepath.Join(parent, e.Name()))
		}
	}
	return out
}

// RemoveAll removes path and everything below it, also folders a build
// left without write permission (Go's module cache makes them 0555), which
// os.RemoveAll cannot empty as an ordinary user. It never follows a
// symlink.
func RemoveAll(path string) error {
	err := os.RemoveAll(path)
	if err == nil || !errors.Is(err, os.ErrPermission) {
		return err
	}
	filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			unix.Fchmodat(unix.AT_FDCWD, p, 0o700, 0)
		}
		return nil
	})
	return os.RemoveAll(path)
}

// Size is the disk space below path, in bytes, counting each file once.
func Size(path string) int64 {
	var n int64
	seen := map[[2]uint64]bool{}
	filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			return nil
		}
		k := [2]uint64{st.Dev, st.Ino}
		if !seen[k] {
			seen[k] = true
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

// Old lists entries of parent named prefix* untouched for longer than age:
// leftovers of hone versions that made their folders without an owner lock.
func Old(parent, prefix string, age time.Duration) []string {
	var out []string
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			out = append(out, filepath.Join(parent, e.Name()))
		}
	}
	return out
}
