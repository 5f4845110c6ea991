// Package allowlist is what a target's patches may change: every path under
// the target's root, or only those its files globs name, minus what its
// protect patterns cover, with names and file modes no filesystem or git
// version could read as something else. Proposals, guards and verdicts all
// judge changes by these rules; the package knows nothing of hone.toml or
// git beyond the change records git reports.
package allowlist

import (
	"fmt"
	"strings"

	"github.com/hone-perf/hone/internal/git"
)

// Rules is one target's allowlist.
type Rules struct {
	// Root is the target's path, relative to the repository top level,
	// clean: "." for a target at the top level, which hone.toml allows only
	// with Files.
	Root    string
	Protect []string // patterns relative to Root that may never change; "**" spans directories
	Files   []string // when set, only paths matching one of these globs (relative to Root) may change
}

// Rel returns p (repository-relative) relative to the target's root, and
// whether it lies below it.
func (r Rules) Rel(p string) (string, bool) {
	if r.Root == "." {
		return p, p != "" && p != "."
	}
	return strings.CutPrefix(p, r.Root+"/")
}

// Rule returns the rule that forbids changing p (a repository-relative path,
// as a diff header names it or git reports it), or "" when p may change.
func (r Rules) Rule(p string) string {
	if rule := CheckName(p); rule != "" {
		return rule
	}
	if rule := Reserved(p); rule != "" {
		return rule
	}
	rel, ok := r.Rel(p)
	if !ok {
		return fmt.Sprintf("outside the target's path %s/", r.Root)
	}
	for _, pat := range r.Protect {
		if Protected(pat, rel) {
			return fmt.Sprintf("protected by pattern %q", pat)
		}
	}
	if len(r.Files) > 0 && !r.listed(rel) {
		return fmt.Sprintf("not among the target's files (%s)", quoteList(r.Files))
	}
	return ""
}

func (r Rules) listed(rel string) bool {
	for _, pat := range r.Files {
		if MatchFile(pat, rel) {
			return true
		}
	}
	return false
}

// ChangeRule is the rule a change git reports breaks, or "": its path, both
// its modes, and binary content (refused whenever the file remains).
func (r Rules) ChangeRule(c git.Change) string {
	if rule := r.Rule(c.Path); rule != "" {
		return rule
	}
	for _, m := range []uint32{c.OldMode, c.NewMode} {
		if rule := ModeRule(m); rule != "" {
			return rule
		}
	}
	if c.Binary && c.NewMode != ModeNone {
		return "binary content is not accepted"
	}
	return ""
}

// Unlisted returns the files globs that match none of paths (relative to
// the repository top level): a glob that names nothing at the pin is a
// mistake in hone.toml, not a rule.
func (r Rules) Unlisted(paths []string) []string {
	var out []string
	for _, pat := range r.Files {
		found := false
		for _, p := range paths {
			if rel, ok := r.Rel(p); ok && MatchFile(pat, rel) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, pat)
		}
	}
	return out
}

// Reserved returns the rule that keeps a repository-relative path out of
// every allowlist, whatever its globs say, or "": hone.toml, which holds
// the rules, and .hone/, which holds what hone and the guards read beside
// it (the allowed signers). Case is ignored: on a case-insensitive checkout
// HONE.TOML is hone.toml.
func Reserved(p string) string {
	first, _, _ := strings.Cut(p, "/")
	switch {
	case strings.EqualFold(p, ConfigFile):
		return ConfigFile + " holds the rules and is never patchable"
	case strings.EqualFold(first, StateDir):
		return StateDir + "/ holds what hone and its guards read and is never patchable"
	}
	return ""
}

// ConfigFile and StateDir are the top-level names Reserved keeps out.
const (
	ConfigFile = "hone.toml"
	StateDir   = ".hone"
)

// quoteList shows a few globs for a one-line message.
func quoteList(pats []string) string {
	var b strings.Builder
	for i, p := range pats {
		if i == 4 {
			fmt.Fprintf(&b, ", and %d more", len(pats)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", p)
	}
	return b.String()
}

// Git file modes as git writes them.
const (
	ModeNone       = 0
	ModeTree       = 0o040000
	ModeFile       = 0o100644
	ModeExecutable = 0o100755
	ModeSymlink    = 0o120000
	ModeGitlink    = 0o160000
)

// ModeRule returns the rule a file mode breaks, or "" for a plain or
// executable file (or no file).
func ModeRule(m uint32) string {
	switch m {
	case ModeNone, ModeFile, ModeExecutable:
		return ""
	case ModeSymlink:
		return "symlinks (mode 120000) are not accepted"
	case ModeGitlink:
		return "gitlinks (mode 160000, submodules) are not accepted"
	}
	return fmt.Sprintf("mode %06o is not accepted (only 100644 and 100755)", m)
}
