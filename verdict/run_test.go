package verdict

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Run records the verdict with its note, and Recompute reproduces it from
// the stored samples alone.
func TestRunRecordsAndRecomputes(t *testing.T) {
	f := newFixture(t, "ctarget", "c", cToml)
	ctx := context.Background()
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 2")}), "a1a1a1a1a1a1a1a1", "do half the walks")
	var phases []string
	e, err := Run(ctx, f.ws, "a1a1a1a1a1a1a1a1", Options{Progress: func(p Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictAccepted, ReasonImproved)
	if e.ID == "" || e.AttemptKey == "" || e.Hypothesis != "do half the walks" {
		t.Errorf("entry common fields: %+v", e.Common)
	}
	if st := e.Bench.Stat(e.Bench.Metric); e.Speedup != st.Speedup || e.Speedup <= 1 {
		t.Errorf("entry speedup %v, want the deciding metric's %v", e.Speedup, st.Speedup)
	}
	// A unique prefix names the patch as its whole id does.
	if _, err := lookupPatch(ctx, f.ws, "a1a1a1"); err != nil {
		t.Errorf("lookup by prefix: %v", err)
	}
	if got := strings.Join(phases, ","); got != "checkout,build,gate,bench,record" {
		t.Errorf("progress phases %s", got)
	}
	if !strings.Contains(e.CalibrationWarning, "hone calibrate c") {
		t.Errorf("calibration warning %q", e.CalibrationWarning)
	}
	note := testgit.Git(t, f.ws.Root, "log", "-1", "--format=%N", "--notes=hone", ledger.PatchRef("a1a1a1a1a1a1a1a1"))
	if !strings.Contains(note, e.ID+" accepted patch=a1a1a1a1a1a1a1a1 speedup ") {
		t.Errorf("note on the patch commit: %q", note)
	}
	if list := testgit.Git(t, f.ws.Root, "worktree", "list"); strings.Count(list, "\n") != 0 {
		t.Errorf("checkouts left behind:\n%s", list)
	}

	re, match, err := Recompute(ctx, f.ws, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !match || re.Verdict != e.Verdict || re.Bench.Stat(workspace.MetricCPUTime).CILow != e.Bench.Stat(workspace.MetricCPUTime).CILow {
		t.Errorf("recomputed %s %+v, stored %s %+v", re.Verdict, re.Bench.Metrics, e.Verdict, e.Bench.Metrics)
	}
}

func TestRunUnknownPatch(t *testing.T) {
	f := newFixture(t, "ctarget", "c", cToml)
	_, err := Run(context.Background(), f.ws, "nope", Options{})
	if !errs.Is(err, errs.NotFound) {
		t.Fatalf("err = %v, want NotFound", err)
	}
}

// Cancelling a verdict that is going badly does not erase the attempt: the
// interrupted verdict is recorded as cancelled, with the pairs measured so
// far, it is the attempt's outcome, and the patch is not judged again
// without a person's reason. Its checkouts are gone.
func TestCancelWhenLosingIsRecorded(t *testing.T) {
	f := newFixture(t, "ctarget", "c", cToml)
	id := "b2b2b2b2b2b2b2b2"
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 5")}), id, "one more walk")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Run(ctx, f.ws, id, Options{Progress: func(p Progress) {
		if p.Phase == "bench" && p.Pairs > 0 {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("a cancelled verdict returned no error")
	}
	l := ledger.Open(f.ws)
	entries, lerr := l.ByPatch(context.Background(), id)
	if lerr != nil || len(entries) != 3 {
		t.Fatalf("ledger holds %d entries for the patch (want proposal, started, cancelled): %v", len(entries), lerr)
	}
	var v Entry
	if err := entries[2].Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.Verdict != ledger.VerdictCancelled || v.Reason != ReasonInterrupted || v.Bench == nil || v.Bench.Pairs == 0 || v.InputSeed == 0 || v.Started != entries[1].ID {
		t.Fatalf("cancelled verdict %s (%s) seed %d started %q bench %+v", v.Verdict, v.Reason, v.InputSeed, v.Started, v.Bench)
	}
	if _, err := Run(context.Background(), f.ws, id, Options{}); !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), v.ID) {
		t.Fatalf("judging the cancelled patch again: %v; want a refusal naming %s", err, v.ID)
	}
	if runs, _ := filepath.Glob(filepath.Join(f.ws.StatePath("runs"), "verdict-*")); len(runs) != 0 {
		t.Errorf("run folders left behind: %v", runs)
	}
}
