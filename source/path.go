package source

import (
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// cleanPath checks a path given relative to a target and returns its
// components. It refuses (Policy, exit 3) absolute paths, backslashes, ".."
// and any spelling of ".git"; "." components and repeated or trailing slashes
// are dropped. An empty result means the target's root.
func cleanPath(p string) ([]string, error) {
	switch {
	case strings.HasPrefix(p, "/"):
		return nil, errs.Policyf("path %q is absolute; give it relative to the target's path", p)
	case strings.ContainsRune(p, '\\'):
		return nil, errs.Policyf("path %q contains a backslash; separate components with '/'", p)
	case strings.ContainsRune(p, 0):
		return nil, errs.Policyf("path %q contains a NUL byte", p)
	}
	var parts []string
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "" || seg == ".":
			continue
		case seg == "..":
			return nil, errs.Policyf("path %q contains '..'; the source view only shows files inside the target", p)
		case isDotGit(seg):
			return nil, errs.Policyf("path %q names git's own directory (%q); it is never shown", p, seg)
		}
		parts = append(parts, seg)
	}
	return parts, nil
}

// isDotGit reports whether a path component would name ".git" on some
// filesystem: any case, trailing dots or spaces (Windows), an NTFS short name
// (git~1) or stream suffix (.git::$INDEX_ALLOCATION), or with the Unicode code
// points HFS+ ignores inserted. It follows git's own is_ntfs_dotgit and
// is_hfs_dotgit checks.
func isDotGit(seg string) bool {
	s := strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
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

func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
