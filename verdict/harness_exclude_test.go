package verdict

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// lateSetUp is the set-up, in seconds of CPU time, that a benchmark's
// runs grow once the bench is past its first look: it outweighs the loop
// at both counts, so the runs scale about 1.05x from N to 2N (an
// upstream benchmark whose set-up dominates at hone's counts, measured at
// 1.16-1.29x), while each pair's marginal cost is the loop's as before.
const lateSetUp = 2.0

// lateNonlinear is a harness meter whose benchmarks in late (by side:
// false the baseline, true the candidate) grow lateSetUp from their
// sixth pair on, the first look being five pairs, its other benchmarks
// honest; the candidate's BenchmarkA runs at ratioA of the baseline's
// cost, its BenchmarkB at ratioB with noise of 30% a run, which keeps
// B's own decision open past the first looks. sized is each
// side's count of sizing runs per benchmark, which come before the pairs.
func lateNonlinear(late map[bool]string, ratioA, ratioB float64, sized map[string]int, names ...string) *harnessMeter {
	rng := rand.New(rand.NewPCG(11, 12))
	m := &harnessMeter{names: names}
	m.answer = func(cand bool, name string, n int) harnessAnswer {
		a := costs(map[string]float64{"BenchmarkA": ratioA, "BenchmarkB": ratioB})(cand, name, n)
		if cand && name == "BenchmarkB" {
			a.nsPerOp *= max(0.2, 1+0.3*rng.NormFloat64())
		}
		return a
	}
	m.burn = func(cand bool, _ int) float64 {
		run := m.order[len(m.order)-1]
		if name, ok := late[cand]; ok && strings.HasSuffix(run, " "+name) && m.runs[run] > sized[run]+2*proto().Pairs {
			return lateSetUp
		}
		return 0
	}
	return m
}

// sizingRuns counts each side's sizing runs of each benchmark of e, as
// the meter names them.
func sizingRuns(e *Entry) map[string]int {
	out := map[string]int{}
	for _, r := range e.Bench.Benchmarks {
		for _, s := range r.Sizing {
			side := "base "
			if s.Side == "candidate" {
				side = "cand "
			}
			out[side+r.Name] += len(s.CPU)
		}
	}
	return out
}

// sizedFor runs the bench once with no benchmark growing its set-up, to
// learn how many sizing runs come before the pairs: sizing reads only
// the runs' costs, which the set-up added later does not change.
func sizedFor(t *testing.T, ratioA, ratioB float64, names ...string) map[string]int {
	t.Helper()
	b, _, err := harnessOf(lateNonlinear(nil, ratioA, ratioB, nil, names...)).run(context.Background())
	if err != nil || b == nil {
		t.Fatalf("%v", err)
	}
	return sizingRuns(&Entry{Bench: b})
}

// A baseline benchmark that stops scaling only after the first look (an
// untouched upstream benchmark whose set-up came to outweigh its loop) is
// left out with its reason and the pairs its exclusion read, and the
// others decide: the verdict names both, and it recomputes to itself from
// the stored entry, the exclusion too. It was an error (baseline), the
// whole verdict lost to a benchmark the user does not own. The
// candidate's B, slower and noisy, keeps the geometric mean with B
// undecided at the third look, which A alone decides: the looks are made
// again on the benchmarks left, as recompute replays them from the
// stored series.
func TestABaselineBenchmarkThatStopsScalingLateIsLeftOutAndTheRestDecide(t *testing.T) {
	names := []string{"BenchmarkA", "BenchmarkB"}
	m := lateNonlinear(map[bool]string{false: "BenchmarkB"}, 0.5, 1.3, sizedFor(t, 0.5, 1.3, names...), names...)
	e := judged(t, harnessOf(m))
	b := e.Bench
	bb := b.Benchmarks[1]
	if bb.Decides || !strings.Contains(bb.Excluded, `the baseline's benchmark "BenchmarkB"`) || bb.ExcludedAfter <= proto().Pairs || !b.Benchmarks[0].Decides {
		t.Fatalf("B decides %v after %d pairs, excluded %q", bb.Decides, bb.ExcludedAfter, bb.Excluded)
	}
	if e.Verdict != ledger.VerdictAccepted || !strings.Contains(e.Summary, "left out: BenchmarkB") || !strings.Contains(e.Detail, "decided by: BenchmarkA.") {
		t.Fatalf("%s (%s): %s\n%s", e.Verdict, e.Reason, e.Summary, e.Detail)
	}
	// The deciding series is A's alone from the first pair on, and every
	// look was decided on it.
	if a := b.Benchmarks[0].CPU; b.Stat(b.Metric).Speedup != b.Benchmarks[0].CPUStats.Speedup || len(a.Baseline) != b.Pairs {
		t.Errorf("geomean %.4f, A alone %.4f", b.Stat(b.Metric).Speedup, b.Benchmarks[0].CPUStats.Speedup)
	}
	re := recompute(e)
	if !sameVerdict(e, re) || re.Summary != e.Summary || re.Detail != e.Detail {
		t.Errorf("recomputed %s (%s) %q %q; stored %s (%s) %q", re.Verdict, re.Reason, re.Summary, re.Bench.Decisions, e.Verdict, e.Reason, e.Summary)
	}
	// What the exclusion read is in the entry: its first pairs'
	// baseline runs lie outside the band.
	k, lo, hi := bb.ExcludedAfter, float64(countFactor)*(1-scalingTolerance), float64(countFactor)*(1+scalingTolerance)
	if !clearlyOutside(scalingInterval(bb.ShortCPU.Baseline[:k], bb.LongCPU.Baseline[:k]), lo, hi) {
		t.Errorf("the stored runs of the first %d pairs do not show B's baseline outside [%.2f, %.2f]", k, lo, hi)
	}
	// An entry that leaves out a benchmark its own runs keep in does not
	// recompute to itself: A scales, so A cannot be left out.
	forged := *e
	fb := *b
	fb.Benchmarks = slices.Clone(b.Benchmarks)
	fb.Benchmarks[0].Decides, fb.Benchmarks[0].Excluded, fb.Benchmarks[0].ExcludedAfter = false, bb.Excluded, bb.ExcludedAfter
	forged.Bench = &fb
	if sameVerdict(&forged, recompute(&forged)) {
		t.Error("an entry leaving out a benchmark that scales recomputed to itself")
	}
}

// When every deciding benchmark stops scaling on the baseline, none is
// left to decide on: the verdict is an error, and what it measured stays
// with the reason each was left out.
func TestEveryBenchmarkLeftOutLateIsAnError(t *testing.T) {
	names := []string{"BenchmarkB"}
	m := lateNonlinear(map[bool]string{false: "BenchmarkB"}, 0.5, 1, sizedFor(t, 0.5, 1, names...), names...)
	b, fail, err := harnessOf(m).run(context.Background())
	if err != nil || fail == nil || fail.side != "baseline" || !strings.Contains(fail.msg, "not its loop") {
		t.Fatalf("%v %+v", err, fail)
	}
	e := &Entry{Bench: b}
	e.benchFailed(fail)
	if e.Verdict != ledger.VerdictError {
		t.Errorf("%s (%s)", e.Verdict, e.Reason)
	}
	if r := b.Benchmarks[0]; r.Decides || r.Excluded != fail.msg || r.ExcludedAfter <= proto().Pairs || len(r.ShortCPU.Baseline) != b.Pairs {
		t.Errorf("kept %d pairs of %d, excluded after %d: %q", len(r.ShortCPU.Baseline), b.Pairs, r.ExcludedAfter, r.Excluded)
	}
}

// The candidate's own failure to scale is never excused: a candidate
// benchmark that stops scaling at the look where another benchmark's
// baseline does is rejected-gate (nonlinear), the baseline's benchmark
// left out; a benchmark can only leave the decision by the baseline.
func TestTheCandidateStoppingScalingLateIsNotExcused(t *testing.T) {
	names := []string{"BenchmarkA", "BenchmarkB"}
	// B a tenth slower keeps the bench going past A's own decision, to
	// the pairs where the set-up grows.
	m := lateNonlinear(map[bool]string{false: "BenchmarkB", true: "BenchmarkA"}, 0.5, 1.1, sizedFor(t, 0.5, 1.1, names...), names...)
	b, fail, err := harnessOf(m).run(context.Background())
	if err != nil || fail == nil || fail.side != "candidate" || fail.reason != ReasonNonlinear || !strings.Contains(fail.msg, `"BenchmarkA" costs`) {
		t.Fatalf("%v %+v", err, fail)
	}
	e := &Entry{Bench: b}
	e.benchFailed(fail)
	if e.Verdict != ledger.VerdictRejectedGate || !b.Benchmarks[0].Decides || b.Benchmarks[0].Excluded != "" || b.Benchmarks[1].Decides {
		t.Errorf("%s (%s); A decides %v, B decides %v", e.Verdict, e.Reason, b.Benchmarks[0].Decides, b.Benchmarks[1].Decides)
	}
}

// A rejudge pools the earlier verdict's pairs: a baseline benchmark that
// stops scaling in the rejudge's pairs is left out of the pooled decision
// as it is of a fresh one, the rest deciding on every pooled pair.
func TestARejudgeLeavesOutABaselineBenchmarkThatStopsScaling(t *testing.T) {
	names := []string{"BenchmarkA", "BenchmarkB"}
	hr := harnessOf(lateNonlinear(nil, 0.5, 1.3, nil, names...))
	hr.protocol.MaxPairs = 10
	first, fail, err := hr.run(context.Background())
	if err != nil || fail != nil {
		t.Fatalf("%v %+v", err, fail)
	}
	// The rejudge sizes nothing: its baseline's B grows its set-up from
	// its first pair.
	hr = harnessOf(lateNonlinear(map[bool]string{false: "BenchmarkB"}, 0.5, 1.3, map[string]int{"base BenchmarkB": -2 * proto().Pairs}, names...))
	hr.prior = first
	b, fail, err := hr.run(context.Background())
	if err != nil || fail != nil {
		t.Fatalf("%v %+v", err, fail)
	}
	e := &Entry{Bench: b}
	judgeBench(e)
	bb := b.Benchmarks[1]
	if bb.Decides || bb.ExcludedAfter <= first.Pairs || b.PooledPairs != first.Pairs || e.Verdict != ledger.VerdictAccepted || !strings.Contains(e.Summary, "left out: BenchmarkB") {
		t.Fatalf("%s (%s) after %d pooled pairs of %d: %s; B excluded after %d: %q", e.Verdict, e.Reason, b.PooledPairs, b.Pairs, e.Summary, bb.ExcludedAfter, bb.Excluded)
	}
	if re := recompute(e); !sameVerdict(e, re) || re.Summary != e.Summary {
		t.Errorf("recomputed %s (%s) %q; stored %s (%s) %q", re.Verdict, re.Reason, re.Bench.Decisions, e.Verdict, e.Reason, b.Decisions)
	}
}
