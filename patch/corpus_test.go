package patch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/guard"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// corpusCase is one file of testdata/attacks or testdata/legit. Leading
// "effect:" lines say what the attack tries to achieve in the tree, so the
// same attack can be committed directly and fed to the guards; "expect:"
// lines list the changes a legitimate diff must make (status, modes, path).
type corpusCase struct {
	name    string
	diff    []byte
	effects []string
	expect  []string
}

func loadCorpus(t testing.TB, dir string) []corpusCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.diff"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus in testdata/%s: %v", dir, err)
	}
	var cases []corpusCase
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := corpusCase{name: strings.TrimSuffix(filepath.Base(p), ".diff"), diff: b}
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "effect: "); ok {
				c.effects = append(c.effects, strings.TrimSuffix(v, "\n"))
			} else if v, ok := strings.CutPrefix(l, "expect: "); ok {
				c.expect = append(c.expect, strings.TrimSuffix(v, "\n"))
			} else {
				break
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// commitEffects commits the attack's intended tree change on top of pin,
// bypassing every check, as an agent with a shell could.
func commitEffects(t testing.TB, ws *workspace.Workspace, pin string, effects []string) string {
	t.Helper()
	flat := flatTree(t, ws.Root, pin)
	for _, e := range effects {
		f := strings.SplitN(e, " ", 3)
		switch f[0] {
		case "add", "binary":
			p, err := strconv.Unquote(f[2])
			if err != nil {
				t.Fatalf("effect %q: %v", e, err)
			}
			content := "attack\n"
			if f[0] == "binary" {
				content = "\x7fELF\x00\x01"
			}
			sha := strings.Repeat("1", 40)
			if f[1] != "160000" {
				sha = testgit.Cmd{Dir: ws.Root, Stdin: content}.Git(t, "hash-object", "-w", "--stdin")
			}
			for k := range flat {
				if strings.HasPrefix(k, p+"/") || strings.HasPrefix(p, k+"/") {
					delete(flat, k)
				}
			}
			flat[p] = treeEntry{mode: f[1], sha: sha}
		case "delete":
			p, err := strconv.Unquote(f[1])
			if err != nil {
				t.Fatalf("effect %q: %v", e, err)
			}
			delete(flat, p)
		default:
			t.Fatalf("unknown effect %q", e)
		}
	}
	tree := buildTree(t, ws.Root, flat)
	return testgit.Cmd{Dir: ws.Root, Stdin: "attack\n"}.Git(t, "commit-tree", tree, "-p", pin)
}

func assertRefused(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s accepted the attack", what)
	}
	if c := errs.CodeOf(err); c != errs.Policy && c != errs.Invalid {
		t.Fatalf("%s: want a policy (3) or invalid (5) refusal, got %d: %v", what, c, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("%s: refusal is not one line: %q", what, err)
	}
}

func TestAttacksRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	pin := testgit.Git(t, ws.Root, "rev-parse", "main")
	refsBefore := testgit.Git(t, ws.Root, "for-each-ref")
	allow := ws.Config.Targets["t"].Rules()
	policy, err := guard.Load(ctx, ws.Repo)
	if err != nil {
		t.Fatal(err)
	}
	cases := loadCorpus(t, "attacks")
	if len(cases) < 60 {
		t.Fatalf("corpus has %d attacks, want at least 60", len(cases))
	}
	committed := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 1, Hypothesis: "attack " + c.name, Diff: c.diff})
			assertRefused(t, "propose", err)
			_, err = Check(ctx, ws, "t", c.diff)
			assertRefused(t, "guard diff", err)
			if len(c.effects) == 0 {
				t.Fatal("attack file has no effect: line")
			}
			if c.effects[0] == "none" {
				return
			}
			committed++
			commit := commitEffects(t, ws, pin, c.effects)
			vs, err := guard.Commits(ctx, ws.Root, allow, pin+".."+commit)
			if err != nil || len(vs) == 0 {
				t.Fatalf("guard commits: want violations, got %v, %v", vs, err)
			}
			ref := "refs/heads/agent/t/" + c.name
			vs, err = policy.CheckPush(ctx, []guard.RefUpdate{{Ref: ref, Old: strings.Repeat("0", 40), New: commit}})
			if err != nil || len(vs) == 0 {
				t.Fatalf("guard pre-receive: want violations, got %v, %v", vs, err)
			}
		})
	}
	t.Logf("%d attacks, %d also committed and refused by the guards", len(cases), committed)
	if after := testgit.Git(t, ws.Root, "for-each-ref"); after != refsBefore {
		t.Fatalf("refs changed by refused attacks:\nbefore:\n%s\nafter:\n%s", refsBefore, after)
	}
	entries, err := ledger.Open(ws).List(ctx, ledger.Filter{})
	if err != nil || len(entries) != 0 {
		t.Fatalf("refused attacks left ledger entries: %d, %v", len(entries), err)
	}
	if left, _ := filepath.Glob(ws.StatePath(repo.ApplyArea, "apply-*")); len(left) != 0 {
		t.Fatalf("throwaway indexes left behind: %v", left)
	}
}

func TestLegitimateDiffsAccepted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws := newFixture(t, fixtureFiles())
	pin := testgit.Git(t, ws.Root, "rev-parse", "main")
	for i, c := range loadCorpus(t, "legit") {
		t.Run(c.name, func(t *testing.T) {
			res, err := Propose(ctx, ws, Request{Target: "t", Hotspot: "A", Class: 1 + i%MaxClass, Hypothesis: "legit " + c.name, Diff: c.diff})
			if err != nil {
				t.Fatalf("propose: %v", err)
			}
			got := testgit.Git(t, ws.Root, "-c", "core.quotePath=false", "diff-tree", "-r", "--no-renames", "--no-commit-id", "--format=", pin, res.Commit)
			var lines []string
			for _, l := range strings.Split(got, "\n") {
				meta, p, _ := strings.Cut(l, "\t")
				f := strings.Fields(strings.TrimPrefix(meta, ":"))
				lines = append(lines, f[4]+" "+f[0]+" "+f[1]+" "+p)
			}
			if strings.Join(lines, "\n") != strings.Join(c.expect, "\n") {
				t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(c.expect, "\n"))
			}
			checkContentLikeGitApply(t, ws, pin, res.Commit, c)
			// The target-only index spliced into the pin gives the very tree
			// a whole-tree index gives.
			idx, err := newScratchIndex(ctx, ws.Repo)
			if err != nil {
				t.Fatal(err)
			}
			defer idx.close()
			full, _, err := idx.applyFull(ctx, pin, c.diff)
			if err != nil || full != testgit.Git(t, ws.Root, "rev-parse", res.Commit+"^{tree}") {
				t.Fatalf("whole-index tree %s (%v) differs from the patch's", full, err)
			}
			if ref := testgit.Git(t, ws.Root, "rev-parse", ledger.PatchRef(res.PatchID)); ref != res.Commit {
				t.Fatalf("patch ref %s, commit %s", ref, res.Commit)
			}
			if vs, err := guard.Commits(ctx, ws.Root, ws.Config.Targets["t"].Rules(), pin+".."+res.Commit); err != nil || len(vs) != 0 {
				t.Fatalf("guard commits refuses an accepted patch: %v %v", vs, err)
			}
		})
	}
}

// checkContentLikeGitApply applies the diff with plain `git apply` to the
// pin's files on disk and compares every added or modified file with the
// patch commit's blob.
func checkContentLikeGitApply(t *testing.T, ws *workspace.Workspace, pin, commit string, c corpusCase) {
	t.Helper()
	wt := t.TempDir()
	for p, e := range flatTree(t, ws.Root, pin) {
		if e.mode == "100644" || e.mode == "100755" {
			full := filepath.Join(wt, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.WriteFile(full, []byte(testgit.Git(t, ws.Root, "cat-file", "blob", e.sha)+"\n"), 0o644)
		}
	}
	testgit.Cmd{Dir: wt, Stdin: string(c.diff)}.Git(t, "apply", "-")
	for _, e := range c.expect {
		f := strings.SplitN(e, " ", 4)
		if f[2] == "000000" {
			continue
		}
		want, err := os.ReadFile(filepath.Join(wt, f[3]))
		if err != nil {
			t.Fatal(err)
		}
		if got := testgit.Git(t, ws.Root, "cat-file", "blob", commit+":"+f[3]); got != strings.TrimSpace(string(want)) {
			t.Fatalf("%s: content %q, git apply gives %q", f[3], got, want)
		}
	}
}
