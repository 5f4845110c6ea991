package build

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"sort"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/repo"
)

// A built tree is hostile: the build ran the candidate's code, which could
// leave symlinks pointing anywhere, files hone cannot read, set-uid bits.
// Everything here walks it by directory descriptor with Lstat semantics:
// nothing follows a symlink or opens through one.

// Entry is one file, directory or symlink of a built tree.
type Entry struct {
	Path   string `json:"path"` // relative to the tree's root, slash-separated
	Type   string `json:"type"` // "dir", "file" or "symlink"
	Mode   uint32 `json:"mode"` // permission bits (not for symlinks)
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"` // files
	Link   string `json:"link,omitempty"`   // symlinks: the target
}

const (
	typeDir     = "dir"
	typeFile    = "file"
	typeSymlink = "symlink"
)

// scan is what sealAndScan found.
type scan struct {
	entries []Entry
	blobs   map[string]repo.Hash // git blob ids of the files asked for
	bytes   int64
}

// account is who a sealed tree belongs to; uid -1 leaves owners alone.
type account struct{ uid, gid int }

// sealAndScan makes the tree at root hone's after a build: every entry
// given to owner (root, when hone is root, so the jail user cannot write
// it even if it were ever shown to a jail), set-uid and set-gid bits
// dropped, everything readable by everyone (gates run as the jail user and
// must be able to copy it), write permission for group and others removed,
// and special files (pipes, sockets) deleted, since no copy can carry
// them. It then lists the tree, hashing every file with SHA-256 and, for
// the paths blobOf selects, as a git blob.
func sealAndScan(root string, owner account, blobOf func(string) bool) (*scan, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if owner.uid >= 0 {
		if err := unix.Fchown(fd, owner.uid, owner.gid); err != nil {
			return nil, fmt.Errorf("%s: %w", root, err)
		}
	}
	if err := seal(fd, true); err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	s := &scan{blobs: map[string]repo.Hash{}}
	if err := s.dir(fd, "", owner, blobOf); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *scan) dir(dir int, prefix string, owner account, blobOf func(string) bool) error {
	names, err := readNames(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	for _, name := range names {
		p := prefix + name
		var st unix.Stat_t
		if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if owner.uid >= 0 {
			if err := unix.Fchownat(dir, name, owner.uid, owner.gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		// A build may leave a file or folder that even its owner cannot
		// read; as an ordinary user hone must open it up before it can look
		// inside. Nothing runs in the tree any more, and st says it is no
		// symlink.
		if t := st.Mode & unix.S_IFMT; (t == unix.S_IFDIR || t == unix.S_IFREG) && st.Mode&0o400 == 0 {
			if err := unix.Fchmodat(dir, name, sealedMode(st.Mode, t == unix.S_IFDIR), 0); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			sub, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if err = seal(sub, true); err == nil {
				s.entries = append(s.entries, Entry{Path: p, Type: typeDir, Mode: sealedMode(st.Mode, true)})
				err = s.dir(sub, p+"/", owner, blobOf)
			}
			unix.Close(sub)
			if err != nil {
				return err
			}
		case unix.S_IFREG:
			e, blob, err := hashFile(dir, name, blobOf(p))
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			e.Path = p
			s.entries = append(s.entries, e)
			s.bytes += e.Size
			if blob != repo.ZeroHash {
				s.blobs[p] = blob
			}
		case unix.S_IFLNK:
			target, err := readlinkat(dir, name)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			s.entries = append(s.entries, Entry{Path: p, Type: typeSymlink, Link: target})
			if blobOf(p) {
				s.blobs[p] = repo.ComputeHash(repo.BlobObject, []byte(target))
			}
		default:
			if err := unix.Unlinkat(dir, name, 0); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
	}
	return nil
}

// hashFile seals one regular file and hashes it, opening it without
// following a symlink swapped in meanwhile.
func hashFile(dir int, name string, blob bool) (Entry, repo.Hash, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return Entry{}, repo.ZeroHash, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Entry{}, repo.ZeroHash, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Entry{}, repo.ZeroHash, fmt.Errorf("changed type while hone read it")
	}
	if err := seal(fd, false); err != nil {
		return Entry{}, repo.ZeroHash, err
	}
	sum := sha256.New()
	w := io.Writer(sum)
	var gh hash.Hash
	if blob {
		gh = repo.BlobHasher(st.Size)
		w = io.MultiWriter(sum, gh)
	}
	n, err := io.Copy(w, f)
	if err != nil {
		return Entry{}, repo.ZeroHash, err
	}
	if n != st.Size {
		return Entry{}, repo.ZeroHash, fmt.Errorf("changed size while hone read it")
	}
	e := Entry{Type: typeFile, Mode: sealedMode(st.Mode, false), Size: n, SHA256: hex.EncodeToString(sum.Sum(nil))}
	var bh repo.Hash
	if gh != nil {
		copy(bh[:], gh.Sum(nil))
	}
	return e, bh, nil
}

// seal sets the sealed mode of the open file or directory fd.
func seal(fd int, dir bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if m := sealedMode(st.Mode, dir); m != st.Mode&0o7777 {
		return unix.Fchmod(fd, m)
	}
	return nil
}

// sealedMode keeps the owner's bits, gives everyone read (and search, and
// execute where the owner has it), and drops write for others and the
// set-id and sticky bits.
func sealedMode(mode uint32, dir bool) uint32 {
	m := mode&0o755 | 0o444
	if dir || mode&0o100 != 0 {
		m |= 0o111
	}
	return m
}

// readNames lists a directory by descriptor, sorted.
func readNames(dir int) ([]string, error) {
	dup, err := unix.Dup(dir)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

func readlinkat(dir int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// gitMode is the mode git would record for a scanned entry.
func gitMode(e Entry) string {
	switch {
	case e.Type == typeSymlink:
		return "120000"
	case e.Type == typeDir:
		return "040000"
	case e.Mode&0o100 != 0:
		return "100755"
	}
	return "100644"
}
