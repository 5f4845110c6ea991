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
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	ctx := context.Background()
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 2")}), "a1a1a1a1a1a1a1a1", "do half the walks")
	var phases []string
	e, err := Run(ctx, f.ws, "a1a1a1a1a1a1a1a1", Options{Progress: func(p Progress) {
		// Another package's verdict may hold the machine's turn.
		if p.Phase == turnPhase {
			return
		}
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
	if got := strings.Join(phases, ","); got != "checkout,build,gate,seed check,bench,record" {
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
	t.Parallel()
	f := newRepo(t, "ctarget", "c", cToml)
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
	t.Parallel()
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

// The protocol comes from hone.toml at the pin: a person may tighten it,
// never loosen it or change the metric.
func TestProtocolMayOnlyTighten(t *testing.T) {
	tgt := &workspace.Target{Name: "c", Bench: workspace.DefaultBench}
	for _, tc := range []struct {
		name string
		opts Options
		code errs.Code
		over *Overrides
	}{
		{"as configured", Options{}, 0, nil},
		{"the same metric", Options{Metric: workspace.MetricCPUTime, MaxPairs: 30, Threshold: 0.02}, 0, nil},
		{"more pairs", Options{MaxPairs: 60}, 0, &Overrides{MaxPairs: 60}},
		{"a higher bar", Options{Threshold: 0.05}, 0, &Overrides{Threshold: 0.05}},
		{"fewer pairs", Options{MaxPairs: 10}, errs.Policy, nil},
		{"a lower bar", Options{Threshold: 0.01}, errs.Policy, nil},
		{"another metric", Options{Metric: workspace.MetricWall}, errs.Policy, nil},
		{"no metric at all", Options{Metric: "speed"}, errs.Usage, nil},
		{"a bar of 100%", Options{Threshold: 1}, errs.Usage, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, over, err := protocol(tgt, tc.opts)
			if tc.code != 0 {
				if !errs.Is(err, tc.code) {
					t.Fatalf("err %v, want code %v", err, tc.code)
				}
				return
			}
			if err != nil || (over == nil) != (tc.over == nil) || (over != nil && *over != *tc.over) {
				t.Fatalf("overrides %+v, %v", over, err)
			}
			if tc.over != nil && tc.over.MaxPairs > 0 && p.MaxPairs != tc.over.MaxPairs {
				t.Errorf("max pairs %d", p.MaxPairs)
			}
		})
	}
}

// A person may judge a patch again with a reason: the new verdict pools
// its samples with the earlier one's, on the same input seed, and links it.
func TestRejudgePoolsOnTheSameSeed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	ctx := context.Background()
	id := "c3c3c3c3c3c3c3c3"
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 2")}), id, "half")
	first, err := Run(ctx, f.ws, id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Run(ctx, f.ws, id, Options{Rejudge: "the runner was busy", MaxPairs: 20})
	if err != nil {
		t.Fatal(err)
	}
	if again.Rejudges != first.ID || again.RejudgeReason != "the runner was busy" || again.InputSeed != first.InputSeed ||
		again.Bench.PooledPairs != first.Bench.Pairs || again.Overrides == nil || again.Overrides.MaxPairs != 20 {
		t.Fatalf("rejudge %+v, bench %+v", again.Common, again.Bench)
	}
	var b strings.Builder
	if err := WriteText(&b, again); err != nil || !strings.Contains(b.String(), "input seed") {
		t.Errorf("text %q %v", b.String(), err)
	}
	if _, match, err := Recompute(ctx, f.ws, again.ID); err != nil || !match {
		t.Errorf("the pooled verdict does not recompute: %v", err)
	}
}

// An error blames the environment: the patch may be judged again as is,
// on the same seed and the same setups, with no reason needed.
func TestErrorMayRunAgainOnTheSameSeed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", strings.Replace(cToml, `run = "sh ./test.sh"`, `run = "false"`, 1))
	ctx := context.Background()
	id := "d4d4d4d4d4d4d4d4"
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), id, "one walk")
	first, err := Run(ctx, f.ws, id, Options{})
	if err != nil || first.Verdict != ledger.VerdictError {
		t.Fatalf("%v %+v", err, first)
	}
	again, err := Run(ctx, f.ws, id, Options{})
	if err != nil || again.Verdict != ledger.VerdictError || again.InputSeed != first.InputSeed || again.Rejudges != "" {
		t.Fatalf("%v %+v", err, again)
	}
	// Every gate runs again on the setup it had (builds have none), the
	// one that failed too.
	if len(again.Gates) != len(first.Gates) || first.Gates[len(first.Gates)-1].Setup == nil {
		t.Fatalf("gates %+v, first %+v", again.Gates, first.Gates)
	}
	for i, g := range again.Gates {
		if was := first.Gates[i].Setup; (g.Setup == nil) != (was == nil) || was != nil && *g.Setup != *was {
			t.Errorf("gate %s ran on %+v, the error verdict's on %+v", g.Name, g.Setup, was)
		}
	}
}

// The runner judges each pending proposal once.
func TestPendingJudgesEachProposalOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	ctx := context.Background()
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), "e5e5e5e5e5e5e5e5", "one walk")
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace(`printf("%llu\n", r)`, `printf("%llu\n", r + 1)`)}), "f6f6f6f6f6f6f6f6", "off by one")
	var done []string
	js, err := Pending(ctx, f.ws, "c", Options{}, func(j Judgement) { done = append(done, j.PatchID) })
	if err != nil || len(js) != 2 || len(done) != 2 || js[0].Error != "" || js[1].Error != "" {
		t.Fatalf("%v %+v", err, js)
	}
	if js[0].Entry.Verdict != ledger.VerdictAccepted || js[1].Entry.Verdict != ledger.VerdictRejectedGate {
		t.Errorf("verdicts %s, %s", js[0].Entry.Verdict, js[1].Entry.Verdict)
	}
	if js, err := Pending(ctx, f.ws, "", Options{}, nil); err != nil || len(js) != 0 {
		t.Errorf("judged again: %+v %v", js, err)
	}
	if _, err := Pending(ctx, f.ws, "nope", Options{}, nil); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown target: %v", err)
	}
}
