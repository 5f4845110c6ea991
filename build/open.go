package build

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenInTree opens the regular file at rel below root for reading, the way
// hone reads anything a jailed command wrote: no symlink anywhere on the
// way (RESOLVE_NO_SYMLINKS), nothing outside root (RESOLVE_BENEATH), and
// not a pipe or device that could block or lie about its size.
func OpenInTree(root, rel string) (*os.File, error) {
	dir, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root, rel), Err: err}
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
