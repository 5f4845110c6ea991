package build

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenInTree opens the regular file at rel below root for reading, the way
// hone reads anything a jailed command wrote: no symlink anywhere on the
// way (RESOLVE_NO_SYMLINKS), nothing outside root (RESOLVE_BENEATH), and
// not a pipe or device that could block or lie about its size.
func OpenInTree(root, rel string) (*os.File, error) {
	fd, err := openBeneath(root, rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), filepath.Join(root, rel))
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &os.PathError{Op: "open", Path: f.Name(), Err: unix.EINVAL}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// RemoveInTree removes the file at rel below root, if there is one, with
// the same care: a symlink on the way is refused, not followed, so a tree
// a build wrote cannot turn hone's removal into one elsewhere.
func RemoveInTree(root, rel string) error {
	dir, err := openBeneath(root, filepath.Dir(rel), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	defer unix.Close(dir)
	err = unix.Unlinkat(dir, filepath.Base(rel), 0)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: filepath.Join(root, rel), Err: err}
	}
	return nil
}

func openBeneath(root, rel string, flags int) (int, error) {
	dir, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, rel, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: filepath.Join(root, rel), Err: err}
	}
	return fd, nil
}
