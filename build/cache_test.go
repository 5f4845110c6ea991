package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// cacheEntries lists the build cache's entries.
func cacheEntries(t *testing.T, f *fixture) []string {
	t.Helper()
	var out []string
	ents, _ := os.ReadDir(f.ws.StatePath(cacheDir))
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(f.ws.StatePath(cacheDir), e.Name()))
		}
	}
	return out
}

// The pin's build is cached: a later baseline of the same tree is a
// verified copy of it and nothing runs; candidates are never cached.
func TestBaselineBuildIsCached(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, cFiles, cTarget)
	first := f.build(f.start(false), Baseline, f.pin)
	if !first.OK() || first.Cached || first.Result == nil {
		t.Fatalf("first baseline: %+v", first)
	}
	cand := f.commit(map[string]string{"targets/t/prog.c": "#include <stdio.h>\nint main(void){puts(\"ho\");return 0;}\n"})
	f.build(f.start(false), Candidate, cand)
	if n := len(cacheEntries(t, f)); n != 1 {
		t.Fatalf("%d cache entries, want only the baseline's", n)
	}
	second := f.build(f.start(false), Baseline, f.pin)
	if !second.OK() || !second.Cached || second.Result != nil || second.Discarded != "" {
		t.Fatalf("second baseline: %+v", second)
	}
	if out, _ := run(t, second, "$HONE_OUT/prog"); out != "hi\n" {
		t.Errorf("cached program printed %q", out)
	}
}

// Whatever rewrote the cached baseline (its binary, or a file added beside
// it) is found before the entry is used: the entry is discarded, the
// baseline rebuilt from the pin, and the first differing file named.
func TestRewrittenCachedBaselineIsDiscarded(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(entry string) error
		want string
	}{
		{"binary rewritten", func(e string) error {
			return os.WriteFile(filepath.Join(e, "out/prog"), []byte("#!/bin/sh\necho fast\n"), 0o755)
		}, "out/prog"},
		{"file added", func(e string) error {
			return os.WriteFile(filepath.Join(e, "out/extra"), nil, 0o644)
		}, "not in the manifest"},
		{"golden file rewritten", func(e string) error {
			return os.WriteFile(filepath.Join(e, "src/targets/t/testdata/golden"), []byte("ho\n"), 0o644)
		}, "src/targets/t/testdata/golden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, cFiles, cTarget)
			f.build(f.start(false), Baseline, f.pin)
			entries := cacheEntries(t, f)
			if len(entries) != 1 {
				t.Fatalf("cache entries %v", entries)
			}
			if err := tc.edit(entries[0]); err != nil {
				t.Fatal(err)
			}
			if tc.name == "file added" {
				// hone gc finds it too, and removes the entry.
				res, err := GC(context.Background(), f.ws.Repo, 1<<40)
				if err != nil || res.Damaged.Items != 1 || len(cacheEntries(t, f)) != 0 {
					t.Fatalf("gc of a damaged entry: %+v, %v", res, err)
				}
			}
			s := f.build(f.start(false), Baseline, f.pin)
			if tc.name == "file added" {
				tc.want = ""
			}
			if !s.OK() || s.Cached || !strings.Contains(s.Discarded, tc.want) {
				t.Fatalf("baseline after tampering: cached %v, discarded %q", s.Cached, s.Discarded)
			}
			if out, _ := run(t, s, "$HONE_OUT/prog"); out != "hi\n" {
				t.Errorf("rebuilt program printed %q", out)
			}
			if s := f.build(f.start(false), Baseline, f.pin); !s.Cached || s.Discarded != "" {
				t.Errorf("the rebuilt entry is not used: %+v", s)
			}
		})
	}
}

func TestFailedBuildIsNotCached(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, cFiles, strings.Replace(cTarget, "prog.c &&", "missing.c &&", 1))
	s := f.build(f.start(false), Baseline, f.pin)
	if s.OK() || s.Result == nil || s.Result.Success() {
		t.Fatalf("broken build: %+v", s)
	}
	if n := len(cacheEntries(t, f)); n != 0 {
		t.Errorf("%d cache entries after a failed build", n)
	}
}
