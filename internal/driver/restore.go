package driver

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// A side's private copies (the checkout, and what else a command may
// write) must be as the jail made them for every input, as they are for
// every other command: the driver puts back, between inputs, whatever a
// run changed, from a read-only view of the same tree. A file counts as
// changed when its inode or its change time moved, which a run can
// neither forge nor set back (utimes sets mtime and atime, never ctime).

// restore is one private copy and the read-only tree it was copied from.
type restore struct {
	Work, Pristine string
	snap           map[string]stamp
}

// stamp is what a run cannot leave unchanged when it changes a path.
type stamp struct {
	ino   uint64
	ctime unix.Timespec
	mode  uint32
}

func stampOf(p string) (stamp, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return stamp{}, err
	}
	return stamp{ino: st.Ino, ctime: st.Ctim, mode: st.Mode}, nil
}

// record notes the copy's paths as they are now, before the first input.
func (r *restore) record() error {
	r.snap = map[string]stamp{}
	return filepath.WalkDir(r.Work, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return r.note(p)
	})
}

// note records p as it is now.
func (r *restore) note(p string) error {
	s, err := stampOf(p)
	if err == nil {
		r.snap[p] = s
	}
	return err
}

// reset puts the copy back as record found it: paths a run added, or
// changed in any way, are removed, and what is missing is copied again
// from the pristine tree. A directory keeps its entries (each is checked
// on its own) and gets its mode back.
func (r *restore) reset() error {
	var gone []string
	err := filepath.WalkDir(r.Work, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		want, known := r.snap[p]
		got, err := stampOf(p)
		if err != nil {
			return err
		}
		switch {
		case !known:
		case want.mode&unix.S_IFMT == unix.S_IFDIR && got.mode&unix.S_IFMT == unix.S_IFDIR:
			if got.mode != want.mode {
				if err := os.Chmod(p, fs.FileMode(want.mode&0o7777)|fs.ModeDir); err != nil {
					return err
				}
				return r.note(p)
			}
			return nil
		case got == want:
			return nil
		}
		if err := removeAll(p); err != nil {
			return err
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return err
	}
	for p := range r.snap {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			gone = append(gone, p)
		}
	}
	sort.Strings(gone) // a directory before what is in it
	for _, p := range gone {
		rel, err := filepath.Rel(r.Work, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("%s is not below %s", p, r.Work)
		}
		if err := copyOne(filepath.Join(r.Pristine, rel), p); err != nil {
			return err
		}
		if err := r.note(p); err != nil {
			return err
		}
	}
	return nil
}

// copyOne copies one directory (without its entries), symlink or file.
func copyOne(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := os.Mkdir(to, 0o700); err != nil {
			return err
		}
		return os.Chmod(to, fi.Mode().Perm()|fi.Mode()&(fs.ModeSetgid|fs.ModeSticky))
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return os.Symlink(target, to)
	case fi.Mode().IsRegular():
		in, err := os.Open(from)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("%s is neither a file, a directory nor a symlink", from)
}

// removeAll removes p, making directories a run shut writable again
// first.
func removeAll(p string) error {
	if os.RemoveAll(p) == nil {
		return nil
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(q, 0o700)
		}
		return nil
	})
	return os.RemoveAll(p)
}
