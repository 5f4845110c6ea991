package soundness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// A candidate whose build is the baseline's, byte for byte, from a change
// to compiled source alone runs the very same programs: it is no change,
// judged without layouts or a bench. A change the bench could read
// directly (here a file beside the program) is always measured.
func TestIdenticalBuildIsNoChangeWithoutMeasuring(t *testing.T) {
	w := newWorld(t)
	comment := w.judge("a comment is free", "static unsigned long long work;", "static unsigned long long work; /* steps walked */")
	if comment.Verdict != ledger.VerdictRejectedBench || comment.Reason != verdict.ReasonNoChange || comment.Bench != nil ||
		!strings.Contains(comment.Detail, "byte-identical") {
		t.Fatalf("a comment: %s (%s), bench %v: %s; want rejected-bench (no-change) with nothing measured", comment.Verdict, comment.Reason, comment.Bench != nil, comment.Detail)
	}
	w.write("targets/c/notes.txt", "a file the bench could read\n")
	w.run(w.dir, "git", "add", "-N", "targets/c/notes.txt")
	diff := w.run(w.dir, "git", "diff")
	w.run(w.dir, "git", "rm", "-q", "--cached", "targets/c/notes.txt")
	os.Remove(filepath.Join(w.dir, "targets/c/notes.txt"))
	e := w.judgeDiff("a file beside the program", diff)
	if e.Bench == nil || e.Verdict != ledger.VerdictRejectedBench {
		t.Errorf("a new data file with identical build outputs: %s, bench %v; want it measured", e.Verdict, e.Bench != nil)
	}
}
