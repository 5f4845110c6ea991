package jail

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// copyTree copies the directory tree from into the existing directory to,
// keeping permission bits, modification times and symlinks (copied as
// links, never followed). make decides what to rebuild from modification
// times, so a copy that reset them would not be the same tree. Sockets and
// device nodes are left out.
func copyTree(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", from)
	}
	if err := copyDir(from, to); err != nil {
		return err
	}
	return finish(to, fi)
}

func copyDir(from, to string) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range ents {
		src, dst := filepath.Join(from, e.Name()), filepath.Join(to, e.Name())
		fi, err := os.Lstat(src)
		if err != nil {
			return err
		}
		switch mode := fi.Mode(); {
		case mode.IsDir():
			// Filled while private to the meter, opened up at the end: a
			// read-only source directory must still receive its children.
			if err := os.Mkdir(dst, 0o700); err != nil {
				return err
			}
			if err := copyDir(src, dst); err != nil {
				return err
			}
		case mode&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
		case mode.IsRegular():
			if err := copyFile(src, dst); err != nil {
				return err
			}
		case mode&os.ModeNamedPipe != 0:
			if err := unix.Mkfifo(dst, 0o600); err != nil {
				return err
			}
		default:
			continue
		}
		if err := finish(dst, fi); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// finish gives path the permission bits and times of fi. Symlinks have no
// permission bits of their own on Linux, only times.
func finish(path string, fi os.FileInfo) error {
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode()&os.ModeSymlink == 0 {
		if err := unix.Fchmodat(unix.AT_FDCWD, path, st.Mode&0o1777, 0); err != nil {
			return err
		}
	}
	ts := []unix.Timespec{unix.Timespec(st.Atim), unix.Timespec(st.Mtim)}
	return unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
}
