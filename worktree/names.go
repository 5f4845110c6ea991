package worktree

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// MaxNameLen bounds a worktree name, so the directory and the branch
// worktree-<name> stay well inside path and ref limits.
const MaxNameLen = 64

// ValidateName checks a managed worktree name: segments of letters, digits,
// '.', '_' and '-' separated by '/', at most MaxNameLen characters. A segment
// may not start with '.' (which also rules out "." and "..", and hidden
// directories), nor end in ".lock" or hold "..", because git refuses such
// branch names and the branch is worktree-<name>.
func ValidateName(name string) error {
	bad := func(why string) error {
		return errs.Usagef("invalid worktree name %q: %s; use segments of letters, digits, '.', '_' and '-' separated by '/', at most %d characters", name, why, MaxNameLen)
	}
	if name == "" {
		return bad("it is empty")
	}
	if len(name) > MaxNameLen {
		return bad(fmt.Sprintf("it has %d characters", len(name)))
	}
	for _, seg := range strings.Split(name, "/") {
		switch {
		case seg == "":
			return bad("it has an empty segment")
		case strings.HasPrefix(seg, "."):
			return bad(fmt.Sprintf("segment %q starts with '.'", seg))
		case strings.HasSuffix(seg, ".lock"):
			return bad(fmt.Sprintf("segment %q ends in .lock", seg))
		case strings.Contains(seg, ".."):
			return bad(fmt.Sprintf("segment %q contains \"..\"", seg))
		}
		for _, r := range seg {
			if !nameRune(r) {
				return bad(fmt.Sprintf("%q is not allowed", r))
			}
		}
	}
	return nil
}

func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

var (
	adjectives = []string{"amber", "brisk", "calm", "clever", "crisp", "deft", "eager", "fleet", "gentle", "keen", "lucid", "nimble", "quiet", "rapid", "steady", "sunny", "swift", "tidy", "vivid", "witty"}
	nouns      = []string{"badger", "falcon", "heron", "lynx", "marten", "otter", "panda", "quail", "raven", "robin", "salmon", "sparrow", "stoat", "swan", "tapir", "thrush", "vole", "walrus", "wren", "yak"}
)

// randomName makes a readable name such as "brisk-otter-4821" that no managed
// worktree uses yet; exists reports whether a candidate is taken.
func randomName(exists func(string) bool) (string, error) {
	for range 20 {
		n := fmt.Sprintf("%s-%s-%04d", adjectives[rand.IntN(len(adjectives))], nouns[rand.IntN(len(nouns))], rand.IntN(10000))
		if !exists(n) {
			return n, nil
		}
	}
	return "", errs.Failuref("could not pick an unused worktree name after 20 tries; pass --name")
}

// SessionName is the session hone works on: $HONE_SESSION, or "default", which
// gives one session per repository. Separate sessions let several agents each
// hold a worktree in the same repository.
func SessionName() (string, error) {
	s := os.Getenv("HONE_SESSION")
	if s == "" {
		return "default", nil
	}
	if len(s) > MaxNameLen || strings.HasPrefix(s, ".") || strings.ContainsFunc(s, func(r rune) bool { return !nameRune(r) }) {
		return "", errs.Usagef("invalid HONE_SESSION %q: use letters, digits, '.', '_' and '-' (not starting with '.'), at most %d characters", s, MaxNameLen)
	}
	return s, nil
}
