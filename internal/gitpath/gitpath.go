// Package gitpath holds the one definition of which path components git
// itself treats as its own directory on some filesystem, so the source view,
// the patch policy and hone.toml validation refuse the same spellings.
package gitpath

import "strings"

// IsDotGit reports whether a path component would name ".git" on some
// filesystem: any case, trailing dots or spaces (Windows), an NTFS short name
// (git~1) or stream suffix (.git::$INDEX_ALLOCATION), or with the code points
// HFS+ ignores inserted. It follows git's own is_ntfs_dotgit and
// is_hfs_dotgit checks.
func IsDotGit(seg string) bool {
	s := strings.Map(func(r rune) rune {
		if HFSIgnorable(r) {
			return -1
		}
		return r
	}, seg)
	s = strings.ToLower(s)
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, ". ")
	return s == ".git" || s == "git~1"
}

// HFSIgnorable reports whether HFS+ drops r when comparing names, the same set
// as git's is_hfs_dotgit uses.
func HFSIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
