package verdict

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// The loop's own cost is what is measured: at the command's 100
// iterations the fake harness's start-up is twenty times its loop, yet
// the per-iteration figure is the loop's 1 µs, not the run's 21 µs.
func TestHarnessMeasuresTheLoopAloneNotTheStartUp(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": 1})}
	e := judged(t, harnessOf(m))
	a := e.Bench.Benchmarks[0]
	if got := a.CPUStats.BaselineMedian; math.Abs(got-1000)/1000 > 0.05 {
		t.Errorf("per-iteration cost %.0f ns, want about 1000 (the run's start-up must cancel out)", got)
	}
	// hone chose counts that make the loop about 90% of each run.
	if a.CommandIterations != 100 || a.Counts[0] < 15000 || a.BaselineScaling < 1.85 || a.BaselineScaling > 2 {
		t.Errorf("counts %v from %d, scaling %.3f", a.Counts, a.CommandIterations, a.BaselineScaling)
	}
}

// flatOn makes the named benchmark's loop cost the same at any count on
// one side: a memo kept from one iteration for the next.
func flatOn(candSide bool, name string, ratio float64) func(cand bool, bm string, n int) harnessAnswer {
	return func(cand bool, bm string, n int) harnessAnswer {
		a := costs(map[string]float64{"BenchmarkA": ratio, "BenchmarkB": 1})(cand, bm, n)
		a.flat = cand == candSide && bm == name
		return a
	}
}

// A candidate that remembers its result across iterations costs about the
// same at 2N as at N: rejected-gate, however much cheaper its runs are.
func TestCandidateMemoAcrossIterationsIsRejectedByLinearity(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: flatOn(true, "BenchmarkA", 1)}
	_, fail, err := harnessOf(m).run(context.Background())
	if err != nil || fail == nil || fail.side != "candidate" || fail.reason != ReasonNonlinear || !strings.Contains(fail.msg, `"BenchmarkA" costs`) {
		t.Fatalf("%v %+v", err, fail)
	}
	e := &Entry{}
	e.benchFailed(fail)
	if e.Verdict != ledger.VerdictRejectedGate || e.Reason != ReasonNonlinear {
		t.Errorf("%s (%s)", e.Verdict, e.Reason)
	}
	// A baseline benchmark whose loop does not scale is the pin's, not
	// the patch's: left out of the decision, named, the others deciding.
	m = &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: flatOn(false, "BenchmarkA", 1)}
	b, fail, _ := harnessOf(m).run(context.Background())
	if fail != nil || b.Benchmarks[0].Decides || !strings.Contains(b.Benchmarks[0].Excluded, "not its loop") || !b.Benchmarks[1].Decides {
		t.Fatalf("%+v", fail)
	}
	// With none left to decide, an error.
	m = &harnessMeter{names: []string{"BenchmarkA"}, answer: flatOn(false, "BenchmarkA", 1)}
	if _, fail, _ := harnessOf(m).run(context.Background()); fail == nil || fail.side != "baseline" || !strings.Contains(fail.msg, "not its loop") {
		t.Fatalf("%+v", fail)
	}
}

// busyCores scales each run's CPU time by 25% noise, seeded: measured on
// a shared 2-core machine, one plain loop's CPU time per iteration moved
// from 4.3 to 7.7 µs from run to run, bare as much as in the jail.
func busyCores(seed uint64) func() float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	return func() float64 { return max(0.4, 1+0.25*rng.NormFloat64()) }
}

// On such a machine single pairs of an honest loop scale from N to 2N by
// anything from 1.4x to 2.8x; linearity fails only a scaling clearly
// outside the band, so the honest loop is judged, and a memo under the
// same noise still is not.
func TestHonestLoopOnABusyMachineIsNotCalledNonlinear(t *testing.T) {
	for seed := range uint64(6) {
		m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: costs(map[string]float64{"BenchmarkA": 0.6, "BenchmarkB": 1}), speed: busyCores(seed)}
		e := judged(t, harnessOf(m))
		a := e.Bench.Benchmarks[0]
		lo, hi := float64(countFactor)*(1-scalingTolerance), float64(countFactor)*(1+scalingTolerance)
		outside := 0
		for i := range a.ShortCPU.Baseline {
			if r := a.LongCPU.Baseline[i] / a.ShortCPU.Baseline[i]; r < lo || r > hi {
				outside++
			}
		}
		if outside == 0 {
			t.Errorf("seed %d: no pair of %d scaled outside [%.2f, %.2f]; the noise is not the machine's", seed, len(a.ShortCPU.Baseline), lo, hi)
		}
		if e.Reason == ReasonNonlinear {
			t.Errorf("seed %d: %s (%s)", seed, e.Verdict, e.Detail)
		}
		m = &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: flatOn(true, "BenchmarkA", 1), speed: busyCores(seed)}
		if _, fail, err := harnessOf(m).run(context.Background()); err != nil || fail == nil || fail.reason != ReasonNonlinear {
			t.Errorf("seed %d: the memo was not rejected: %v %+v", seed, err, fail)
		}
	}
}

// An honest loop far faster than the baseline's is a small share of a run
// sized for the baseline, and there scales as the run's start-up does; at
// counts of its own it proves its work, so it is judged on its speed
// (here past max_speedup: a person looks), never rejected as a memo.
func TestMuchFasterLoopProvesItsWorkAtItsOwnCounts(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": 0.002})}
	e := judged(t, harnessOf(m))
	a := e.Bench.Benchmarks[0]
	if a.CandidateProof < 1.7 || a.CandidateProof > 2.3 || len(a.ProofCounts) != 2 || a.ProofCounts[0] <= a.Counts[0] {
		t.Errorf("proof %.3f at %v (shared counts %v, candidate scaling %.3f)", a.CandidateProof, a.ProofCounts, a.Counts, a.CandidateScaling)
	}
	if e.Verdict != ledger.VerdictNeedsHumanReview || e.Reason != ReasonImplausible {
		t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
}

// A deciding benchmark driven toward zero would carry the geometric mean;
// past max_speedup the acceptance needs a person.
func TestBenchmarkDrivenTowardZeroNeedsAPerson(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: costs(map[string]float64{"BenchmarkA": 0.04, "BenchmarkB": 1})}
	hr := harnessOf(m)
	hr.protocol.MaxSpeedup = 20
	e := judged(t, hr)
	if e.Verdict != ledger.VerdictNeedsHumanReview || e.Reason != ReasonImplausible || !strings.Contains(e.Summary, "over max_speedup: BenchmarkA") {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
	if re := recompute(e); !sameVerdict(e, re) {
		t.Errorf("recomputed %s (%s)", re.Verdict, re.Reason)
	}
}

// jittery is costs with noise of sd on each run, seeded: at 4% a
// benchmark with no change cannot be shown the same within 2% in a few
// pairs.
func jittery(ratio map[string]float64, sd float64) func(cand bool, name string, n int) harnessAnswer {
	rng := rand.New(rand.NewPCG(5, 6))
	return func(cand bool, name string, n int) harnessAnswer {
		a := costs(ratio)(cand, name, n)
		a.nsPerOp *= 1 + sd*rng.NormFloat64()
		return a
	}
}

// A verdict accepted while one deciding benchmark is still undecided says
// which one could not be resolved. Once A is decided faster at its share
// of the rates and B shows no sign of being slower, more pairs could only
// narrow B's interval: the bench stops there, not at max_pairs.
func TestAcceptedVerdictNamesTheBenchmarksItCouldNotResolve(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: jittery(map[string]float64{"BenchmarkA": 0.4, "BenchmarkB": 1}, 0.04)}
	e := judged(t, harnessOf(m))
	if e.Verdict != ledger.VerdictAccepted || !strings.Contains(e.Summary, "unresolved: BenchmarkB") || !strings.Contains(e.Detail, "not resolved after") {
		t.Fatalf("%s (%s): %s / %s", e.Verdict, e.Reason, e.Summary, e.Detail)
	}
	b := e.Bench
	if a, bb := b.Benchmarks[0], b.Benchmarks[1]; a.Decision != decFaster || a.FamilyDecision != decFaster || bb.Decision != decMeasureMore {
		t.Errorf("decisions %q (family %q) and %q", a.Decision, a.FamilyDecision, bb.Decision)
	}
	if b.Pairs >= b.MaxPairs {
		t.Errorf("%d of %d pairs: the bench went on after it was settled", b.Pairs, b.MaxPairs)
	}
}

// A regression beyond the threshold that noise keeps from being proven is
// not accepted on the geometric mean: a patch that made a deciding
// benchmark 25% slower and noisy enough that its interval still reached 1
// would otherwise ride on another's gain (under two hogs, a real 30%
// regression measured 0.825x [0.619, 1.007] beside a 1.976x gain).
func TestAnUnresolvedBenchmarkThatLooksRegressedBlocksTheAccept(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: jittery(map[string]float64{"BenchmarkA": 0.4, "BenchmarkB": 1.25}, 0.1)}
	e := judged(t, harnessOf(m))
	b := e.Bench.Benchmarks[1]
	if b.Decision != decUndecided || b.CPUStats.Speedup >= 0.9 || b.CPUStats.CIHigh < 1 {
		t.Fatalf("BenchmarkB %s at %.3f [%.3f, %.3f]; want it undecided, its estimate past the threshold", b.Decision, b.CPUStats.Speedup, b.CPUStats.CILow, b.CPUStats.CIHigh)
	}
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != ReasonInconclusive || !strings.Contains(e.Detail, "BenchmarkB") {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	if re := recompute(e); !sameVerdict(e, re) {
		t.Errorf("recomputed %s (%s)", re.Verdict, re.Reason)
	}
}

// A benchmark whose extra iterations cost nothing is shown as too small to
// measure, not as a ratio; a harness bench without outputs is flagged.
func TestUnmeasurableBenchmarkSaysSoAndNoOutputsIsWorkUnverified(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: func(cand bool, name string, n int) harnessAnswer {
		a := costs(map[string]float64{"BenchmarkA": 0.5, "BenchmarkB": 1})(cand, name, n)
		if name == "BenchmarkB" {
			a.nsPerOp = 0
		}
		return a
	}}
	hr := harnessOf(m, "BenchmarkA")
	hr.outputs = nil
	e := judged(t, hr)
	if e.Verdict != ledger.VerdictAccepted || !e.HasFlag(ledger.FlagWorkUnverified) || !strings.HasPrefix(e.Summary, "work unverified: ") {
		t.Fatalf("%s %v: %s", e.Verdict, e.Flags, e.Summary)
	}
	if !e.Bench.Benchmarks[1].Unmeasurable {
		t.Errorf("BenchmarkB %+v", e.Bench.Benchmarks[1].CPUStats)
	}
	var text strings.Builder
	if err := WriteText(&text, e); err != nil || !strings.Contains(text.String(), "too small to measure") {
		t.Errorf("%v\n%s", err, text.String())
	}
}

// Every pair of a harness bench runs with a setup of its own, recorded.
func TestHarnessPairsEachHaveTheirOwnSetup(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": 0.5})}
	e := judged(t, harnessOf(m))
	b := e.Bench
	seeds := map[int64]bool{}
	for _, s := range b.Setups {
		seeds[s.Seed] = true
	}
	if len(b.Setups) != b.Pairs || len(seeds) != b.Pairs {
		t.Errorf("%d setups with %d seeds for %d pairs", len(b.Setups), len(seeds), b.Pairs)
	}
}

// Where the geometric mean itself is not faster, a deciding benchmark left
// undecided that looks slower past the threshold is still named: the
// verdict is a rejection either way, and its summary says what the mean
// hides.
func TestAnUnresolvedRegressionIsNamedInAVerdictThatIsNotFaster(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: jittery(map[string]float64{"BenchmarkA": 0.8, "BenchmarkB": 1.25}, 0.1)}
	e := judged(t, harnessOf(m))
	b := e.Bench.Benchmarks[1]
	if b.Decision != decUndecided || b.CPUStats.Speedup >= 0.9 {
		t.Fatalf("BenchmarkB %s at %.3f [%.3f, %.3f]; want it undecided, its estimate past the threshold", b.Decision, b.CPUStats.Speedup, b.CPUStats.CILow, b.CPUStats.CIHigh)
	}
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason == ReasonImproved || !strings.Contains(e.Summary, "may have regressed: BenchmarkB") {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
	if re := recompute(e); !sameVerdict(e, re) || re.Summary != e.Summary {
		t.Errorf("recomputed %s (%s): %s", re.Verdict, re.Reason, re.Summary)
	}
}
