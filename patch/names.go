package patch

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hone-perf/hone/internal/gitpath"
)

// checkName applies the path-syntax rules to one repository-relative path, as
// named by a diff header or reported by git. It returns the rule broken, or ""
// when the name is acceptable. The rules are deliberately stricter than git's
// own verify_path: a name that some filesystem (NTFS, HFS+) or some git
// version could read as something else is refused, whatever this machine is.
func checkName(name string) string {
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

// unquoteGit reads a C-quoted name the way git's unquote_c_style does: only
// \a \b \t \n \v \f \r \" \\ and three-digit octal escapes. s starts with the
// opening quote; the result is the name and the bytes consumed. Go's
// strconv.Unquote also takes \x, \u and \U, which git would not read the same,
// so a name using them is refused rather than guessed at.
func unquoteGit(s string) (string, int, error) {
	if len(s) == 0 || s[0] != '"' {
		return "", 0, fmt.Errorf("not a quoted name")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i >= len(s) {
				return "", 0, fmt.Errorf("unterminated escape")
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", 0, fmt.Errorf("bad octal escape")
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", 0, fmt.Errorf(`escape \%c is not one git reads`, e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated quoted name")
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
