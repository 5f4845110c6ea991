package patch

import (
	"fmt"
	"path"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/workspace"
)

// Allowlist is what a target's patches may change: every path under Root
// except those matching a Protect pattern.
type Allowlist struct {
	Root    string   // the target's path, relative to the repository top level
	Protect []string // patterns relative to Root; "**" spans directories
}

// AllowlistOf returns the allowlist of a configured target.
func AllowlistOf(t *workspace.Target) Allowlist {
	return Allowlist{Root: strings.TrimSuffix(path.Clean(t.Path), "/"), Protect: t.Protect}
}

// Rule returns the rule that forbids changing p, or "" when p may change.
func (a Allowlist) Rule(p string) string {
	if rule := checkName(p); rule != "" {
		return rule
	}
	rel, ok := strings.CutPrefix(p, a.Root+"/")
	if !ok {
		return fmt.Sprintf("outside the target's path %s/", a.Root)
	}
	for _, pat := range a.Protect {
		if protected(pat, rel) {
			return fmt.Sprintf("protected by pattern %q", pat)
		}
	}
	return ""
}

// Git file modes as git writes them.
const (
	modeNone       = 0
	modeTree       = 0o040000
	modeFile       = 0o100644
	modeExecutable = 0o100755
	modeSymlink    = 0o120000
	modeGitlink    = 0o160000
)

// modeRule returns the rule a file mode breaks, or "" for a plain or
// executable file (or no file).
func modeRule(m uint32) string {
	switch m {
	case modeNone, modeFile, modeExecutable:
		return ""
	case modeSymlink:
		return "symlinks (mode 120000) are not accepted"
	case modeGitlink:
		return "gitlinks (mode 160000, submodules) are not accepted"
	}
	return fmt.Sprintf("mode %06o is not accepted (only 100644 and 100755)", m)
}

// refusal is the one-line policy error every check returns.
func refusal(p, rule string) error { return errs.Policyf("refused %q: %s", p, rule) }

// protected matches rel against a protect pattern, or any directory leading
// to rel, so "testdata" protects everything below it too. Matching ignores
// case: on a case-insensitive checkout "TestData/x" would overwrite
// "testdata/x".
func protected(pattern, rel string) bool {
	pat := strings.Split(strings.ToLower(strings.Trim(pattern, "/")), "/")
	segs := strings.Split(strings.ToLower(rel), "/")
	for n := 1; n <= len(segs); n++ {
		if matchSegs(pat, segs[:n]) {
			return true
		}
	}
	return false
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for skip := 0; skip <= len(segs); skip++ {
				if matchSegs(pat[1:], segs[skip:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
