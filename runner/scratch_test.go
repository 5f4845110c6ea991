package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/workspace"
)

func TestMain(m *testing.M) { testproc.Main(m) }

// A runner judges in a scratch ledger of its own clone. Someone then
// rewrites the clone's real ledger branch with plain git, dropping an
// entry, and deletes the branch's reflog: the anchor hone kept for that
// branch must still name the dropped tip, so verify reports the rewrite.
// With one anchor for the whole clone, judging in the scratch ledger
// replaced it, and verify trusted the rewritten branch.
func TestJudgingInTheScratchLedgerKeepsTheClonesAnchor(t *testing.T) {
	ctx := context.Background()
	dir := testgit.NewRepo(t, map[string]string{
		"hone.toml":        "[targets.c]\nbuild = \"true\"\n\n  [targets.c.bench]\n  run = \"true\"\n",
		"targets/c/prog.c": "int main(void) { return 0; }\n",
	})
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	propose := func(ws *workspace.Workspace, n string) {
		t.Helper()
		diff := "diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1 +1 @@\n-int main(void) { return 0; }\n+int main(void) { return " + n + " - " + n + "; }\n"
		if _, err := patch.Propose(ctx, ws, patch.Request{Target: "c", Hotspot: "main", Class: 1, Hypothesis: "idea " + n, Diff: []byte(diff)}); err != nil {
			t.Fatal(err)
		}
	}
	propose(ws, "1")
	first := testgit.Git(t, dir, "rev-parse", "hone/ledger")
	propose(ws, "2")

	sc, err := newScratch(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	propose(sc.ws, "3")

	testgit.Git(t, dir, "update-ref", "refs/heads/hone/ledger", first)
	if err := os.Remove(filepath.Join(dir, ".git", "logs", "refs", "heads", "hone", "ledger")); err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.Open(ws).Verify(ctx, ledger.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range rep.Problems {
		found = found || p.Kind == ledger.ProblemRewritten
	}
	if !found {
		t.Fatalf("verify of the rewritten branch found %+v (anchor %q), want it rewritten", rep.Problems, rep.Anchor)
	}
}
