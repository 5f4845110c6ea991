package source

import (
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/gitpath"
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
		case gitpath.IsDotGit(seg):
			return nil, errs.Policyf("path %q names git's own directory (%q); it is never shown", p, seg)
		}
		parts = append(parts, seg)
	}
	return parts, nil
}
