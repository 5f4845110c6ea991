package build

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// tracked is one path of a commit's tree as git records it.
type tracked struct {
	blob repo.Hash
	mode repo.Mode
}

// maxLinkTarget bounds a symlink's target as stored in a blob.
const maxLinkTarget = 4096

// materialize writes the tree of commit into dest, a directory that must
// not exist, straight from the object store: blobs with their modes,
// symlinks as symlinks, submodules (gitlinks) as empty directories. No
// .git is made and no git command runs, so no filter, hook or attribute of
// the repository can take part. It returns every path it wrote but
// directories, relative to dest.
//
// Every file is created below a directory descriptor, exclusively and
// without following symlinks, so a tree that names one path twice, or a
// file below a symlink, fails instead of writing outside dest.
func materialize(st repo.Store, commit, dest string) (map[string]tracked, error) {
	c, err := st.ReadCommit(repo.NewHash(commit))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read commit %s", git.Short(commit))
	}
	if err := unix.Mkdir(dest, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", dest)
	}
	fd, err := unix.Open(dest, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot open %s", dest)
	}
	defer unix.Close(fd)
	out := map[string]tracked{}
	m := &materializer{st: st, out: out}
	if err := m.tree(fd, c.Tree, ""); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot write the tree of %s into %s", git.Short(commit), dest)
	}
	return out, nil
}

type materializer struct {
	st  repo.Store
	out map[string]tracked
}

func (m *materializer) tree(dir int, tree repo.Hash, prefix string) error {
	entries, err := m.st.ReadTree(tree)
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	for _, e := range entries {
		if bad := badName(e.Name); bad != "" {
			return fmt.Errorf("%q: %s", prefix+e.Name, bad)
		}
		p := prefix + e.Name
		switch e.Mode {
		case repo.ModeDir:
			if err := unix.Mkdirat(dir, e.Name, 0o755); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			fd, err := unix.Openat(dir, e.Name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			err = m.tree(fd, e.Hash, p+"/")
			unix.Close(fd)
			if err != nil {
				return err
			}
			continue
		case repo.ModeRegular, repo.ModeDeprecated, repo.ModeExecutable:
			perm := uint32(0o644)
			if e.Mode == repo.ModeExecutable {
				perm = 0o755
			}
			if err := m.file(dir, e.Name, e.Hash, perm); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		case repo.ModeSymlink:
			target, err := m.blob(e.Hash, maxLinkTarget)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if err := unix.Symlinkat(string(target), dir, e.Name); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		case repo.ModeSubmodule:
			if err := unix.Mkdirat(dir, e.Name, 0o755); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		default:
			return fmt.Errorf("%s: unknown mode %s", p, e.Mode)
		}
		m.out[p] = tracked{blob: e.Hash, mode: e.Mode}
	}
	return nil
}

func (m *materializer) file(dir int, name string, h repo.Hash, perm uint32) error {
	b, err := m.st.ReadObject(repo.BlobObject, h)
	if err != nil {
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	_, err = f.Write(b)
	if err == nil {
		// The umask narrowed perm at creation.
		err = f.Chmod(os.FileMode(perm))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (m *materializer) blob(h repo.Hash, max int64) ([]byte, error) {
	size, err := m.st.ObjectSize(repo.BlobObject, h)
	if err != nil {
		return nil, err
	}
	if size > max {
		return nil, fmt.Errorf("symlink target of %d bytes", size)
	}
	return m.st.ReadObject(repo.BlobObject, h)
}

// badName says why git would never check out a tree entry of this name, or "".
func badName(name string) string {
	switch {
	case name == "" || name == "." || name == "..":
		return "not a file name"
	case strings.ContainsAny(name, "/\x00"):
		return "a slash or NUL in a file name"
	case strings.EqualFold(name, ".git"):
		return "git's own directory"
	}
	return ""
}
