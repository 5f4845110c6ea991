package build

import (
	"fmt"
	"sort"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/repo"
)

// checkSources returns the first way a build changed the checkout it was
// given, or "": a tracked file changed (content or mode), replaced or
// deleted, or a new file that a protect pattern of the target covers. A
// build that could rewrite the files its gates compare against (golden
// outputs, tests) would judge itself.
func checkSources(sc *scan, want map[string]tracked, rules allowlist.Rules) string {
	got := make(map[string]Entry, len(sc.entries))
	for _, e := range sc.entries {
		got[e.Path] = e
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		w := want[p]
		e, ok := got[p]
		if !ok {
			return fmt.Sprintf("the build deleted or replaced the tracked file %s", p)
		}
		if w.mode == repo.ModeSubmodule {
			if e.Type != typeDir {
				return fmt.Sprintf("the build replaced the submodule folder %s", p)
			}
			continue
		}
		wantMode := "100644"
		switch w.mode {
		case repo.ModeExecutable:
			wantMode = "100755"
		case repo.ModeSymlink:
			wantMode = "120000"
		}
		if m := gitMode(e); m != wantMode {
			return fmt.Sprintf("the build changed the tracked file %s (mode %s, was %s)", p, m, wantMode)
		}
		if sc.blobs[p] != w.blob {
			return fmt.Sprintf("the build changed the tracked file %s", p)
		}
	}
	for _, e := range sc.entries {
		if e.Type == typeDir {
			continue
		}
		if _, ok := want[e.Path]; ok {
			continue
		}
		rel, ok := rules.Rel(e.Path)
		if !ok {
			continue
		}
		for _, pat := range rules.Protect {
			if allowlist.Protected(pat, rel) {
				return fmt.Sprintf("the build wrote %s, which protect pattern %q covers", e.Path, pat)
			}
		}
	}
	return ""
}
