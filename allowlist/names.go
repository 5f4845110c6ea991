package allowlist

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hone-perf/hone/internal/gitpath"
)

// CheckName applies the path-syntax rules to one repository-relative path, as
// named by a diff header or reported by git. It returns the rule broken, or ""
// when the name is acceptable. The rules are deliberately stricter than git's
// own verify_path: a name that some filesystem (NTFS, HFS+) or some git
// version could read as something else is refused, whatever this machine is.
func CheckName(name string) string {
	switch {
	case name == "":
		return "empty path"
	case !utf8.ValidString(name):
		return "path is not valid UTF-8"
	case strings.HasPrefix(name, "/"):
		return "absolute path"
	case strings.ContainsRune(name, '\\'):
		return `backslash in path (a directory separator on Windows)`
	case strings.ContainsRune(name, ':'):
		return `colon in path (an NTFS stream separator)`
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return fmt.Sprintf("control character %U in path", r)
		}
		if gitpath.HFSIgnorable(r) {
			return fmt.Sprintf("invisible character %U in path (HFS+ ignores it, so it can hide .git)", r)
		}
	}
	for _, comp := range strings.Split(name, "/") {
		if rule := checkComponent(comp); rule != "" {
			return rule
		}
	}
	return ""
}

func checkComponent(c string) string {
	switch {
	case c == "":
		return "empty path component (// or trailing /)"
	case c == "." || c == "..":
		return fmt.Sprintf("%q path component", c)
	case strings.TrimLeft(c, " ") != c || strings.TrimRight(c, " ") != c:
		return "leading or trailing space in a path component"
	case strings.HasSuffix(c, "."):
		return "trailing dot in a path component (Windows drops it)"
	}
	folded := strings.ToLower(c)
	switch {
	case folded == ".git":
		return `".git" component (git's own directory)`
	case strings.HasPrefix(folded, ".git"):
		// .gitattributes, .gitmodules and .gitignore change how git itself
		// reads the tree; .git followed by dots or spaces is .git on Windows.
		return fmt.Sprintf("%q: files that configure git (.git*) are never patchable", c)
	case isShortName(folded):
		return fmt.Sprintf("%q looks like an NTFS 8.3 short name (git~1 is .git on Windows)", c)
	}
	return ""
}

// isShortName reports whether c ends in an 8.3 short-name tail "~<digits>",
// optionally followed by an extension, as in "git~1" or "gitmod~1.txt".
func isShortName(c string) bool {
	i := strings.LastIndexByte(c, '~')
	if i < 0 || i == len(c)-1 {
		return false
	}
	j := i + 1
	for j < len(c) && c[j] >= '0' && c[j] <= '9' {
		j++
	}
	return j > i+1 && (j == len(c) || c[j] == '.')
}
