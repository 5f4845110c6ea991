package patch

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/workspace"
)

// TestMain fixes the commit dates too, so fixture commits hash the same on
// every run.
func TestMain(m *testing.M) {
	testgit.SetenvMain("GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	os.Exit(m.Run())
}

// fileSpec is one entry of a fixture tree: a mode and the blob content (for
// a gitlink, the commit it names).
type fileSpec struct {
	mode, content string
}

const fixtureToml = `[patch]
max_diff_bytes = 65536

[guard]
refs = ["refs/heads/agent/<target>/*"]

[targets.t]
path = "targets/t"
pin = "main"
protect = ["testdata/**", "**/*_test.go", "go.sum"]

[targets.t2]
path = "targets/t2"
pin = "main"
`

const libGo = `package t

// A returns one.
func A() int {
	return 1
}

// B returns two.
func B() int {
	return 2
}
`

// fixtureFiles is the pin of every corpus test: a target with protected
// files, an executable, a symlink to a file, a symlink to a directory above
// the target, a gitlink, and files outside the target.
func fixtureFiles() map[string]fileSpec {
	return map[string]fileSpec{
		"hone.toml":                     {"100644", fixtureToml},
		"README.md":                     {"100644", "fixture\n"},
		"secret.txt":                    {"100644", "secret\n"},
		"targets/t/lib.go":              {"100644", libGo},
		"targets/t/main.go":             {"100644", "package t\n"},
		"targets/t/lib_test.go":         {"100644", "package t\n"},
		"targets/t/testdata/golden.txt": {"100644", "golden\n"},
		"targets/t/run.sh":              {"100755", "#!/bin/sh\necho hi\n"},
		"targets/t/link":                {"120000", "../../secret.txt"},
		"targets/t/up":                  {"120000", "../.."},
		"targets/t/vendored":            {"160000", strings.Repeat("2", 40)},
		"targets/t/dir/inner.go":        {"100644", "package dir\n"},
		"targets/t2/x.go":               {"100644", "package t2\n"},
	}
}

// newFixture makes a workspace whose main branch holds files, built with
// plumbing only, and returns it opened.
func newFixture(t testing.TB, files map[string]fileSpec) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q", "-b", "main")
	entries := map[string]treeEntry{}
	for p, f := range files {
		sha := f.content
		if f.mode != "160000" {
			sha = testgit.Cmd{Dir: dir, Stdin: f.content}.Git(t, "hash-object", "-w", "--stdin")
		}
		entries[p] = treeEntry{mode: f.mode, sha: sha}
	}
	tree := buildTree(t, dir, entries)
	commit := testgit.Cmd{Dir: dir, Stdin: "pin\n"}.Git(t, "commit-tree", tree)
	testgit.Git(t, dir, "update-ref", "refs/heads/main", commit)
	if err := os.WriteFile(filepath.Join(dir, "hone.toml"), []byte(files["hone.toml"].content), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

type treeEntry struct{ mode, sha string }

// buildTree writes nested tree objects for a flat path -> entry map. It
// writes raw tree objects, so names git itself would refuse (".git",
// "git~1", control characters) can be committed, as an attacker could.
func buildTree(t testing.TB, dir string, flat map[string]treeEntry) string {
	t.Helper()
	subs := map[string]map[string]treeEntry{}
	here := map[string]treeEntry{}
	for p, e := range flat {
		first, rest, nested := strings.Cut(p, "/")
		if !nested {
			here[p] = e
			continue
		}
		if subs[first] == nil {
			subs[first] = map[string]treeEntry{}
		}
		subs[first][rest] = e
	}
	for name, sub := range subs {
		here[name] = treeEntry{mode: "40000", sha: buildTree(t, dir, sub)}
	}
	names := make([]string, 0, len(here))
	for n := range here {
		names = append(names, n)
	}
	sortKey := func(n string) string {
		if here[n].mode == "40000" {
			return n + "/"
		}
		return n
	}
	sort.Slice(names, func(i, j int) bool { return sortKey(names[i]) < sortKey(names[j]) })
	var raw bytes.Buffer
	for _, n := range names {
		e := here[n]
		sha, err := hex.DecodeString(e.sha)
		if err != nil || len(sha) != 20 {
			t.Fatalf("bad sha %q for %q", e.sha, n)
		}
		raw.WriteString(e.mode + " " + n + "\x00")
		raw.Write(sha)
	}
	return testgit.Cmd{Dir: dir, Stdin: raw.String()}.Git(t, "hash-object", "-t", "tree", "-w", "--literally", "--stdin")
}

// flatTree lists a commit's tree as path -> entry, gitlinks included.
func flatTree(t testing.TB, dir, rev string) map[string]treeEntry {
	t.Helper()
	return parseLsTree(testgit.Git(t, dir, "ls-tree", "-r", "-z", "--full-tree", rev))
}

func parseLsTree(out string) map[string]treeEntry {
	flat := map[string]treeEntry{}
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		meta, p, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		flat[p] = treeEntry{mode: f[0], sha: f[2]}
	}
	return flat
}
