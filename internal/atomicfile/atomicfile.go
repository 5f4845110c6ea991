// Package atomicfile replaces files so that a reader sees the old content or
// the new, never a partial write: hone's caches, session state and git hooks
// are all read by other processes while hone may be rewriting them.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data and mode perm by writing a temporary file in
// the same directory and renaming it over path. On any failure path is left
// as it was and the temporary file is removed. It does not fsync: callers
// keep nothing here that cannot be rebuilt or reported as corrupt.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// CreateTemp makes the file 0600 whatever the umask; set what was asked.
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
