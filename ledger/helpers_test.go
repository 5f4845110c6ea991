package ledger_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hgit "github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// testEntry stands for the real kinds, which live in other packages: any
// struct embedding ledger.Common must round-trip.
type testEntry struct {
	ledger.Common
	Note    string    `toml:"note,omitempty"`
	Samples []float64 `toml:"samples,omitempty"`
}

var gitEnv = []string{
	"GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
	"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid",
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
}

func TestMain(m *testing.M) {
	for _, kv := range gitEnv {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	if helperMain() {
		return
	}
	os.Exit(m.Run())
}

// git runs git in dir and returns its trimmed output, failing the test on error.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func gitErr(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// newRepo makes a workspace with one commit on main holding hone.toml and a
// target directory.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "hone.toml"), "[ledger]\n")
	writeFile(t, filepath.Join(dir, "targets/demo/main.c"), "int main(void) { return 0; }\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "start")
	return dir
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openLedger(t testing.TB, dir string) *ledger.Ledger {
	t.Helper()
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.Open(ws)
}

// makePatch commits a change to the target on top of main, stores it at
// refs/hone/patches/<id> as the patch helper does, and returns the proposal
// fields it would record.
func makePatch(t testing.TB, dir, id string) testEntry {
	t.Helper()
	pin := git(t, dir, "rev-parse", "main")
	tree := git(t, dir, "rev-parse", "main^{tree}")
	blob := strings.TrimSpace(gitStdin(t, dir, fmt.Sprintf("int main(void) { return %q; }\n", id), "hash-object", "-w", "--stdin"))
	newSub := strings.TrimSpace(gitStdin(t, dir, fmt.Sprintf("100644 blob %s\tmain.c\n", blob), "mktree"))
	top := git(t, dir, "ls-tree", tree)
	var lines []string
	for _, l := range strings.Split(top, "\n") {
		if strings.HasSuffix(l, "\ttargets") {
			continue
		}
		lines = append(lines, l)
	}
	targetsTree := strings.TrimSpace(gitStdin(t, dir, fmt.Sprintf("040000 tree %s\tdemo\n", newSub), "mktree"))
	lines = append(lines, "040000 tree "+targetsTree+"\ttargets")
	newTree := strings.TrimSpace(gitStdin(t, dir, strings.Join(lines, "\n")+"\n", "mktree"))
	commit := git(t, dir, "commit-tree", newTree, "-p", pin, "-m", "patch "+id)
	git(t, dir, "update-ref", ledger.PatchRef(id), commit)
	sum, err := hgit.CanonicalDiffSHA256(context.Background(), dir, pin, commit)
	if err != nil {
		t.Fatal(err)
	}
	e := testEntry{Note: "patch " + id}
	e.Kind, e.Target, e.PatchID, e.Commit, e.Pin, e.DiffSHA256 = ledger.KindProposal, "demo", id, commit, pin, sum
	e.Hotspot, e.Class, e.Hypothesis = "main", 5, "return "+id
	e.AttemptKey = ledger.AttemptKey(e.Target, e.Hotspot, e.Class, e.Hypothesis)
	return e
}

func gitStdin(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func verdictFor(p testEntry, word, summary string) *testEntry {
	v := &testEntry{Note: "verdict"}
	v.Common = p.Common
	v.ID, v.Schema, v.Created = "", 0, time.Time{}
	v.Kind, v.Verdict, v.Summary = ledger.KindVerdict, word, summary
	return v
}

var ctx = context.Background()

func splitLines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

// rewriteEntry commits, on top of the ledger branch of dir, a new content for
// the file at path: what a careless hand edit would do.
func rewriteEntry(t testing.TB, dir, path, content string) {
	t.Helper()
	editLedger(t, dir, func(run func(stdin string, args ...string) string) {
		blob := run(content, "hash-object", "-w", "--stdin")
		run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	})
}

// editLedger commits on top of the ledger branch whatever edit does to a
// scratch index that starts as the branch's tree.
func editLedger(t testing.TB, dir string, edit func(run func(stdin string, args ...string) string)) {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index")
	env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
	run := func(stdin string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "read-tree", "hone/ledger")
	edit(run)
	tree := run("", "write-tree")
	commit := run("", "commit-tree", tree, "-p", "hone/ledger", "-m", "edit")
	run("", "update-ref", "refs/heads/hone/ledger", commit)
}
