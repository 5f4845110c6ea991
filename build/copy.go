package build

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// errMismatch marks a tree that differs from its manifest.
var errMismatch = errors.New("differs from its manifest")

// mismatch is the first difference between a tree and its manifest.
type mismatch struct{ path, what string }

func (m *mismatch) Error() string { return m.path + ": " + m.what }
func (m *mismatch) Unwrap() error { return errMismatch }

// copyVerified copies the tree at from into to (which must not exist),
// checking every entry against want as it goes: the same entries, types,
// modes, sizes, contents and link targets, nothing more and nothing less.
// The first difference is a *mismatch (errors.Is errMismatch); the copy
// is then incomplete and the caller removes it. Modification times are
// kept, since make decides what to rebuild from them.
func copyVerified(from, to string, want []Entry) error {
	src, err := unix.Open(from, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return &mismatch{".", "the tree is missing"}
		}
		return err
	}
	defer unix.Close(src)
	if err := unix.Mkdir(to, 0o700); err != nil {
		return err
	}
	dst, err := unix.Open(to, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dst)
	c := &copier{want: map[string]Entry{}, seen: map[string]bool{}}
	for _, e := range want {
		c.want[e.Path] = e
	}
	if err := c.dir(src, dst, ""); err != nil {
		return err
	}
	for _, e := range want {
		if !c.seen[e.Path] {
			return &mismatch{e.Path, "missing"}
		}
	}
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return err
	}
	if err := unix.Fchmod(dst, sealedMode(st.Mode, true)); err != nil {
		return err
	}
	return unix.UtimesNanoAt(unix.AT_FDCWD, to, times(st), unix.AT_SYMLINK_NOFOLLOW)
}

func times(st unix.Stat_t) []unix.Timespec { return []unix.Timespec{st.Atim, st.Mtim} }

type copier struct {
	want map[string]Entry
	seen map[string]bool
}

func (c *copier) dir(src, dst int, prefix string) error {
	names, err := readNames(src)
	if err != nil {
		return err
	}
	for _, name := range names {
		p := prefix + name
		var st unix.Stat_t
		if err := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
		w, ok := c.want[p]
		if !ok {
			return &mismatch{p, "not in the manifest"}
		}
		c.seen[p] = true
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if w.Type != typeDir || st.Mode&0o7777 != w.Mode {
				return &mismatch{p, "a directory in the tree, not as the manifest says"}
			}
			if err := c.subdir(src, dst, name, p, st, w); err != nil {
				return err
			}
		case unix.S_IFREG:
			if w.Type != typeFile || st.Mode&0o7777 != w.Mode || st.Size != w.Size {
				return &mismatch{p, "type, mode or size differs"}
			}
			if err := copyFile(src, dst, name, p, st, w); err != nil {
				return err
			}
		case unix.S_IFLNK:
			target, err := readlinkat(src, name)
			if err != nil {
				return err
			}
			if w.Type != typeSymlink || target != w.Link {
				return &mismatch{p, "symlink differs"}
			}
			if err := unix.Symlinkat(target, dst, name); err != nil {
				return err
			}
			if err := unix.UtimesNanoAt(dst, name, times(st), unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return err
			}
		default:
			return &mismatch{p, "a special file"}
		}
	}
	return nil
}

func (c *copier) subdir(src, dst int, name, p string, st unix.Stat_t, w Entry) error {
	if err := unix.Mkdirat(dst, name, 0o700); err != nil {
		return err
	}
	s, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	d, err := unix.Openat(dst, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(d)
	if err := c.dir(s, d, p+"/"); err != nil {
		return err
	}
	// Filled while private to hone, opened up at the end.
	if err := unix.Fchmod(d, w.Mode); err != nil {
		return err
	}
	return unix.UtimesNanoAt(dst, name, times(st), unix.AT_SYMLINK_NOFOLLOW)
}

func copyFile(src, dst int, name, p string, st unix.Stat_t, w Entry) error {
	in, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	inf := os.NewFile(uintptr(in), name)
	defer inf.Close()
	out, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	outf := os.NewFile(uintptr(out), name)
	defer outf.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(outf, h), inf)
	if err != nil {
		return err
	}
	if n != w.Size || hex.EncodeToString(h.Sum(nil)) != w.SHA256 {
		return &mismatch{p, fmt.Sprintf("content differs (%d bytes, SHA-256 %.12s, manifest %.12s)", n, hex.EncodeToString(h.Sum(nil)), w.SHA256)}
	}
	if err := outf.Chmod(os.FileMode(w.Mode)); err != nil {
		return err
	}
	return unix.UtimesNanoAt(dst, name, times(st), unix.AT_SYMLINK_NOFOLLOW)
}
