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
	"github.com/hone-perf/hone/internal/testgit"
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

func TestMain(m *testing.M) {
	testgit.SetenvMain()
	if helperMain() {
		return
	}
	os.Exit(m.Run())
}

// gitErr runs git in dir and returns its trimmed output (standard error
// included) and error, for the runs that may fail.
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
	return testgit.NewRepo(t, map[string]string{
		"hone.toml":           "[ledger]\n",
		"targets/demo/main.c": "int main(void) { return 0; }\n",
	})
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
	pin := testgit.Git(t, dir, "rev-parse", "main")
	tree := testgit.Git(t, dir, "rev-parse", "main^{tree}")
	blob := testgit.Cmd{Dir: dir, Stdin: fmt.Sprintf("int main(void) { return %q; }\n", id)}.Git(t, "hash-object", "-w", "--stdin")
	newSub := testgit.Cmd{Dir: dir, Stdin: fmt.Sprintf("100644 blob %s\tmain.c\n", blob)}.Git(t, "mktree")
	top := testgit.Git(t, dir, "ls-tree", tree)
	var lines []string
	for _, l := range strings.Split(top, "\n") {
		if strings.HasSuffix(l, "\ttargets") {
			continue
		}
		lines = append(lines, l)
	}
	targetsTree := testgit.Cmd{Dir: dir, Stdin: fmt.Sprintf("040000 tree %s\tdemo\n", newSub)}.Git(t, "mktree")
	lines = append(lines, "040000 tree "+targetsTree+"\ttargets")
	newTree := testgit.Cmd{Dir: dir, Stdin: strings.Join(lines, "\n") + "\n"}.Git(t, "mktree")
	commit := testgit.Git(t, dir, "commit-tree", newTree, "-p", pin, "-m", "patch "+id)
	testgit.Git(t, dir, "update-ref", ledger.PatchRef(id), commit)
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
	scratch := testgit.Cmd{Dir: dir, Env: []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}}
	run := func(stdin string, args ...string) string {
		t.Helper()
		scratch.Stdin = stdin
		return scratch.Git(t, args...)
	}
	run("", "read-tree", "hone/ledger")
	edit(run)
	tree := run("", "write-tree")
	commit := run("", "commit-tree", tree, "-p", "hone/ledger", "-m", "edit")
	run("", "update-ref", "refs/heads/hone/ledger", commit)
}
