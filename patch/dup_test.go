package patch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

func TestNormalizedFormsOfOneIdea(t *testing.T) {
	t.Parallel()
	const before = "package t\n\n// A returns one.\nfunc A() int {\n\treturn 1\n}\n"
	base := "package t\n\n// A returns one.\nfunc A() int {\n\tn := 10\n\treturn n\n}\n"
	for _, tc := range []struct {
		name, file, src string
		same            bool
	}{
		{"the same text", "lib.go", base, true},
		{"comments reworded", "lib.go", "package t\n\n/* cheaper */\nfunc A() int {\n\tn := 10 // ten\n\treturn n\n}\n", true},
		{"whitespace", "lib.go", "package t\nfunc   A()  int {\n    n  :=  10\n\n    return n }\n", true},
		{"a semicolon more", "lib.go", "package t\nfunc A() int { n := 10; return n }\n", false},
		{"the new local renamed", "lib.go", "package t\n\n// A returns one.\nfunc A() int {\n\tanswer := 10\n\treturn answer\n}\n", true},
		{"another constant", "lib.go", "package t\n\n// A returns one.\nfunc A() int {\n\tn := 11\n\treturn n\n}\n", false},
		{"an identifier the file had kept", "lib.go", "package t\n\n// A returns one.\nfunc A() int {\n\tA := 10\n\treturn A\n}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := identifiers("lib.go", []byte(before))
			a := normalizedSHA256([]sourceChange{{path: "lib.go", mode: 0o100644, content: []byte(base), before: old}})
			b := normalizedSHA256([]sourceChange{{path: tc.file, mode: 0o100644, content: []byte(tc.src), before: old}})
			if (a == b) != tc.same {
				t.Errorf("same = %v, want %v:\n%s\nvs\n%s", a == b, tc.same,
					normalizeSource("lib.go", []byte(base), old), normalizeSource(tc.file, []byte(tc.src), old))
			}
		})
	}
}

// In C: comments, layout, a renamed local and a renamed new helper are the
// same idea; calling another library function is not.
func TestNormalizedFormsInC(t *testing.T) {
	t.Parallel()
	const before = "#include <string.h>\nint f(char *d, const char *s, int n) {\n\tfor (int i = 0; i < n; i++) d[i] = s[i];\n\treturn n;\n}\n"
	a := "#include <string.h>\nstatic int copy_all(char *dst, const char *src, int len) { memcpy(dst, src, len); return len; }\nint f(char *d, const char *s, int n) {\n\treturn copy_all(d, s, n);\n}\n"
	b := "#include <string.h>\n/* one call */\nstatic int  helper(char *out,\n    const char *in, int count)\n{\n\tmemcpy(out, in, count); // fast\n\treturn count;\n}\nint f(char *d, const char *s, int n) {\n\treturn helper(d, s, n);\n}\n"
	c := strings.ReplaceAll(a, "memcpy", "memmove")
	old := identifiers("f.c", []byte(before))
	norm := func(src string) string {
		return normalizedSHA256([]sourceChange{{path: "f.c", mode: 0o100644, content: []byte(src), before: old}})
	}
	if norm(a) != norm(b) {
		t.Errorf("renamed and reformatted C differs:\n%s\nvs\n%s", normalizeSource("f.c", []byte(a), old), normalizeSource("f.c", []byte(b), old))
	}
	if norm(a) == norm(c) {
		t.Error("memcpy and memmove normalise alike")
	}
}

// proposeFile proposes the target's lib.go with new content, as a diff
// against main made with git.
func proposeFile(t *testing.T, ws *workspace.Workspace, hotspot string, class int, hypothesis, content string) (*Result, error) {
	t.Helper()
	dir := ws.Root
	idx := testgit.Cmd{Dir: dir, Env: []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}}
	idx.Git(t, "read-tree", "main")
	blob := testgit.Cmd{Dir: dir, Stdin: content}.Git(t, "hash-object", "-w", "--stdin")
	idx.Git(t, "update-index", "--cacheinfo", "100644,"+blob+",targets/t/lib.go")
	tree := idx.Git(t, "write-tree")
	diff := testgit.Git(t, dir, "diff-tree", "-p", "main", tree) + "\n"
	return Propose(context.Background(), ws, Request{Target: "t", Hotspot: hotspot, Class: class, Hypothesis: hypothesis, Diff: []byte(diff)})
}

func judge(t *testing.T, ws *workspace.Workspace, p *Proposal, word string) string {
	t.Helper()
	v := &verdictEntry{Common: p.Common}
	v.ID, v.Created, v.Kind = "", time.Time{}, ledger.KindVerdict
	v.Verdict, v.Summary = word, "judged"
	s, err := ledger.Open(ws).Append(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

const tenLocal = "package t\n\n// A returns one.\nfunc A() int {\n\tn := 10\n\treturn n\n}\n\n// B returns two.\nfunc B() int {\n\treturn 2\n}\n"

// The same code proposed again with another hypothesis, hotspot and
// class, its comments reworded and its new local renamed, is refused as a
// duplicate attempt naming the judged patch. Its exact diff too.
func TestParaphrasedAndRenamedReproposalIsRefused(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	first, err := proposeFile(t, ws, "A", 3, "a constant is cheaper", tenLocal)
	if err != nil {
		t.Fatal(err)
	}
	vid := judge(t, ws, first.Proposal, ledger.VerdictRejectedBench)
	renamed := strings.NewReplacer("n := 10", "answer := 10 // precomputed", "return n", "return answer", "// A returns one.", "// A: ten, at once.").Replace(tenLocal)
	_, err = proposeFile(t, ws, "B", 5, "skip the arithmetic entirely", renamed)
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "duplicate attempt") || !strings.Contains(err.Error(), first.PatchID) || !strings.Contains(err.Error(), vid) {
		t.Fatalf("paraphrased re-proposal: %v; want a duplicate-attempt refusal naming %s and %s", err, first.PatchID, vid)
	}
	if _, err := proposeFile(t, ws, "B", 5, "words of its own", tenLocal); !errs.Is(err, errs.Policy) {
		t.Fatalf("the judged diff itself under new words: %v", err)
	}
	// Another idea is still welcome.
	if _, err := proposeFile(t, ws, "B", 5, "another constant", strings.Replace(tenLocal, "n := 10", "n := 12", 1)); err != nil {
		t.Fatalf("another idea refused: %v", err)
	}
}

// Once the pin has moved (a maintainer fixed the test that rejected the
// idea), the same idea may be tried again, under the same words and code,
// and the new proposal links the earlier verdict. Before, it may not.
func TestIdeaMayReturnOnceThePinMoved(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	first, err := proposeFile(t, ws, "A", 3, "a constant is cheaper", tenLocal)
	if err != nil {
		t.Fatal(err)
	}
	vid := judge(t, ws, first.Proposal, ledger.VerdictRejectedGate)
	if _, err := proposeFile(t, ws, "A", 3, "a constant is cheaper", tenLocal); !errs.Is(err, errs.Policy) {
		t.Fatalf("before the pin moved: %v", err)
	}
	// Outside the target, the pin's tree of the target and hone.toml stay:
	// the same pin, whatever the commit.
	moveMain(t, ws, "README.md", "fixture, reworded\n")
	if _, err := proposeFile(t, ws, "A", 3, "a constant is cheaper", tenLocal); !errs.Is(err, errs.Policy) {
		t.Fatalf("after a commit outside the target: %v", err)
	}
	moveMain(t, ws, "targets/t/testdata/golden.txt", "golden, fixed\n")
	again, err := proposeFile(t, ws, "A", 3, "a constant is cheaper", tenLocal)
	if err != nil {
		t.Fatalf("after the pin moved: %v", err)
	}
	if again.Proposal.Retries != vid || again.PatchID == first.PatchID {
		t.Fatalf("retry %+v; want it to link %s", again.Proposal, vid)
	}
	found := false
	for _, w := range again.Warnings {
		found = found || w.Code == "retried_idea"
	}
	if !found {
		t.Errorf("warnings %+v", again.Warnings)
	}
}

// moveMain commits one file on main.
func moveMain(t *testing.T, ws *workspace.Workspace, path, content string) {
	t.Helper()
	dir := ws.Root
	idx := testgit.Cmd{Dir: dir, Env: []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}}
	idx.Git(t, "read-tree", "main")
	blob := testgit.Cmd{Dir: dir, Stdin: content}.Git(t, "hash-object", "-w", "--stdin")
	idx.Git(t, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	commit := testgit.Cmd{Dir: dir, Stdin: "move\n"}.Git(t, "commit-tree", idx.Git(t, "write-tree"), "-p", "main")
	testgit.Git(t, dir, "update-ref", "refs/heads/main", commit)
}

// An agent with a shell empties protect in its working tree's hone.toml:
// the allowlist still comes from the pin, so a protected file stays out of
// reach, and a proposal says the working tree's file is not the one used.
func TestUncommittedConfigMovesNoGoalposts(t *testing.T) {
	t.Parallel()
	ws := newFixture(t, fixtureFiles())
	widened := strings.Replace(fixtureToml, `protect = ["testdata/**", "**/*_test.go", "go.sum"]`, `protect = []`, 1)
	if err := os.WriteFile(filepath.Join(ws.Root, "hone.toml"), []byte(widened), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(ws.Root)
	if err != nil {
		t.Fatal(err)
	}
	diff := "diff --git a/targets/t/testdata/golden.txt b/targets/t/testdata/golden.txt\n--- a/targets/t/testdata/golden.txt\n+++ b/targets/t/testdata/golden.txt\n@@ -1 +1 @@\n-golden\n+anything\n"
	_, err = Propose(context.Background(), ws, Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "change the expected output", Diff: []byte(diff)})
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "protect") {
		t.Fatalf("a protected file through an uncommitted hone.toml: %v", err)
	}
	res, err := proposeFile(t, ws, "A", 3, "a constant is cheaper", tenLocal)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) == 0 || res.Warnings[0].Code != "uncommitted_config" || !strings.Contains(res.Warnings[0].Message, "change nothing") {
		t.Errorf("warnings %+v", res.Warnings)
	}
}
