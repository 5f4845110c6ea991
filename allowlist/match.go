package allowlist

import (
	"errors"
	"path"
	"strings"
)

// Protected matches rel (relative to the target's root) against a protect
// pattern, or any directory leading to rel, so "testdata" protects
// everything below it too. Matching ignores case: on a case-insensitive
// checkout "TestData/x" would overwrite "testdata/x".
func Protected(pattern, rel string) bool {
	pat := strings.Split(strings.ToLower(strings.Trim(pattern, "/")), "/")
	return matchSegs(pat, strings.Split(strings.ToLower(rel), "/"), true)
}

// MatchFile matches rel (relative to the target's root) against a files
// glob: whole paths only, case-sensitive, "**" for any number of
// directories, so "dir/**" names everything below dir and "json.c" only
// that file. Being exact errs on the side of refusing: on a
// case-insensitive checkout "JSON.C" is refused when only "json.c" is
// listed.
func MatchFile(pattern, rel string) bool {
	return matchSegs(strings.Split(strings.TrimSuffix(pattern, "/"), "/"), strings.Split(rel, "/"), false)
}

// matchSegs matches path segments against pattern segments, "**" standing
// for any number of segments: all of segs or, when leading is set, any
// non-empty leading part of them. It runs the pattern as a set of positions advanced
// one segment at a time, so time grows with len(pat)*len(segs) whatever the
// number of "**": paths come from diffs, and a backtracking matcher is
// exponential in the stars.
func matchSegs(pat, segs []string, leading bool) bool {
	cur := make([]bool, len(pat)+1)
	next := make([]bool, len(pat)+1)
	closure := func(set []bool) {
		for i := range pat {
			if set[i] && pat[i] == "**" {
				set[i+1] = true
			}
		}
	}
	cur[0] = true
	closure(cur)
	for _, seg := range segs {
		clear(next)
		alive := false
		for i, on := range cur[:len(pat)] {
			switch {
			case !on:
			case pat[i] == "**":
				next[i], alive = true, true
			default:
				if ok, err := path.Match(pat[i], seg); err == nil && ok {
					next[i+1], alive = true, true
				}
			}
		}
		if !alive {
			return false
		}
		closure(next)
		cur, next = next, cur
		if leading && cur[len(pat)] {
			return true
		}
	}
	return cur[len(pat)]
}

// ErrNegation is the error of a pattern starting with "!": gitignore-style
// negation reads naturally but would be a file name here.
var ErrNegation = errors.New("negation is not supported; list the files to allow in `files`")

// CheckPattern reports what makes pat unusable as a protect pattern or a
// files glob: empty, a leading "!", absolute, a ".." segment, an empty
// segment, "**" inside a segment, or a segment path.Match rejects.
func CheckPattern(pat string) error {
	switch {
	case pat == "":
		return errors.New("empty pattern")
	case strings.HasPrefix(pat, "!"):
		return ErrNegation
	case strings.HasPrefix(pat, "/"):
		return errors.New("absolute; patterns are relative to the target path")
	}
	for _, seg := range strings.Split(strings.TrimSuffix(pat, "/"), "/") {
		switch {
		case seg == "..":
			return errors.New("'..' is not allowed; patterns are relative to the target path")
		case seg == "":
			return errors.New("empty path segment (//)")
		case seg != "**" && strings.Contains(seg, "**"):
			return errors.New("** inside a segment; ** must be a whole segment, as in \"dir/**\" or \"**/*.c\"")
		}
		if _, err := path.Match(seg, ""); err != nil {
			return errors.New("not a valid glob: " + err.Error())
		}
	}
	return nil
}
