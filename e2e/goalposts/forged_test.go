package goalposts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/workspace"
)

// An agent builds a patch commit on an older pin of main (no unit gate)
// with plain git, stores it as a patch ref and writes its proposal entry
// by hand, naming the current pin so that the pin looks acceptable (or the
// real parent with another config blob): the verdict re-derives the pin
// and the config blob from the patch commit, records error
// (proposal-mismatch), and runs nothing.
func TestHandWrittenProposalCannotChooseItsPin(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	old := w.pins["no unit gate"]
	diff := w.patchDiff("REPS * walk(steps)")
	file := filepath.Join(w.home, "forged.diff")
	if err := os.WriteFile(file, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(w.home, "forged.index")}
	for _, args := range [][]string{{"read-tree", old}, {"apply", "--cached", file}} {
		if out, errOut, code := w.run(index, "git", args...); code != 0 {
			t.Fatalf("git %v: %s%s", args, out, errOut)
		}
	}
	tree, _, _ := w.run(index, "git", "write-tree")
	commit := w.git("commit-tree", strings.TrimSpace(tree), "-p", old, "-m", "one walk")
	ws, err := workspace.Open(w.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, pin, blob, says string
	}{
		{"f0f0f0f0f0f0f0f0", w.tip, "", "is not the patch commit's parent"},
		{"f1f1f1f1f1f1f1f1", old, strings.Repeat("ab", 20), "config blob"},
	} {
		w.git("update-ref", ledger.PatchRef(c.id), commit)
		hyp := "one walk " + c.id
		p := &patch.Proposal{
			Common: ledger.Common{Kind: ledger.KindProposal, Target: "c", PatchID: c.id, Commit: commit, Pin: c.pin,
				Hotspot: "walk", Class: 1, Hypothesis: hyp, AttemptKey: ledger.AttemptKey("c", "walk", 1, hyp)},
			Files: []string{"t/build.sh", "t/prog.c"}, ConfigBlob: c.blob,
		}
		if _, err := ledger.Open(ws).Append(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		e := w.verdict(c.id)
		w.nothingRan(e, "proposal-mismatch")
		if !hasFlag(e.Flags, "proposal-mismatch") || !strings.Contains(e.Detail, c.says) {
			t.Errorf("%s: flags %v: %s", c.id, e.Flags, e.Detail)
		}
	}
}
