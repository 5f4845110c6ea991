package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict/stats"
	"github.com/hone-perf/hone/workspace"
)

// xxhash's inlining made a few of its sixteen benchmarks faster (1.40x
// at most) and left the rest as they were: a geometric mean of a few per
// cent, which the threshold of 2% lets through only after many pairs, if
// ever. Decided alone at its share of the rates,
// the one benchmark accepts the patch; the verdict names it, and the bench
// stops once it is decided and nothing looks slower.
func TestOneBenchmarkOfManyDecidedFasterAloneAcceptsThePatch(t *testing.T) {
	names, ratio := unchanged(6)
	ratio["BenchmarkA"] = 0.9 // 1.11x; alone in six, a geometric mean of 1.018
	m := &harnessMeter{names: names, answer: jittery(ratio, 0.005)}
	hr := harnessOf(m)
	hr.protocol.MaxPairs = 30
	e := judged(t, hr)
	b := e.Bench
	if e.Verdict != ledger.VerdictAccepted || e.Reason != ReasonImproved || !strings.Contains(e.Summary, "faster alone: BenchmarkA") || !strings.Contains(e.Detail, "Bonferroni") {
		t.Fatalf("%s (%s): %s\n%s", e.Verdict, e.Reason, e.Summary, e.Detail)
	}
	if b.Decisions[len(b.Decisions)-1] == decFaster {
		t.Errorf("the geometric mean decided faster (%v): the test does not show the benchmark deciding alone", b.Decisions)
	}
	if b.Pairs >= b.MaxPairs {
		t.Errorf("%d of %d pairs: the bench went on after BenchmarkA was decided", b.Pairs, b.MaxPairs)
	}
	if re := recompute(e); !sameVerdict(e, re) || re.Summary != e.Summary {
		t.Errorf("recomputed to %s (%s): %s", re.Verdict, re.Reason, re.Summary)
	}
	old := *e
	oldBench := *b
	oldBench.Family = ""
	old.Bench = &oldBench
	if re := recompute(&old); re.Verdict == ledger.VerdictAccepted {
		t.Errorf("an entry judged on the geometric mean alone recomputed to an accept on one benchmark: %s", re.Summary)
	}
}

// Twelve benchmarks, one faster, the other eleven as they were and noisy:
// by chance one of them is estimated a little past the threshold
// (BenchmarkL 0.980x [0.956, 1.003]), which blocked the accept when any
// estimate past it did. Under the family rule a small shortfall must be
// below 1 beyond chance, at the benchmarks' share of regressionDoubt,
// before it blocks; one ten per cent or more below still blocks.
func TestNoiseInManyUntouchedBenchmarksDoesNotBlockTheAccept(t *testing.T) {
	names, ratio := unchanged(12)
	ratio["BenchmarkA"] = 0.8
	judge := func(ratio map[string]float64) *Entry {
		hr := harnessOf(&harnessMeter{names: names, answer: jittery(ratio, 0.01)})
		hr.protocol.MaxPairs = 30
		return judged(t, hr)
	}
	e := judge(ratio)
	if e.Verdict != ledger.VerdictAccepted || !strings.Contains(e.Summary, "faster alone: BenchmarkA") {
		t.Fatalf("%s (%s): %s\n%s", e.Verdict, e.Reason, e.Summary, e.Detail)
	}
	short := 0
	for _, r := range e.Bench.Benchmarks[1:] {
		if r.CPUStats.Speedup < 1-e.Bench.Threshold {
			short++
		}
	}
	if short == 0 {
		t.Error("no untouched benchmark fell past the threshold by chance: the test shows nothing")
	}
	ratio["BenchmarkL"] = 1.15
	if e := judge(ratio); e.Verdict == ledger.VerdictAccepted {
		t.Errorf("a benchmark 13%% slower was accepted: %s", e.Summary)
	}
}

// A deciding benchmark decided slower past the threshold ends the bench at
// that look: the patch is rejected whatever the others would show, so
// the pairs after it would be spent on nothing.
func TestABenchmarkDecidedSlowerEndsTheBench(t *testing.T) {
	names := []string{"BenchmarkA", "BenchmarkB", "BenchmarkC", "BenchmarkD"}
	m := &harnessMeter{names: names, answer: jittery(map[string]float64{"BenchmarkA": 2, "BenchmarkB": 1, "BenchmarkC": 1, "BenchmarkD": 1}, 0.2)}
	hr := harnessOf(m)
	hr.protocol.MaxPairs = 30
	e := judged(t, hr)
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != ReasonRegressed || !strings.Contains(e.Summary, "slower: BenchmarkA") {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
	if b := e.Bench; b.Pairs >= b.MaxPairs {
		t.Errorf("%d of %d pairs: the bench went on after BenchmarkA was decided slower", b.Pairs, b.MaxPairs)
	}
}

// The family rule keeps the design's false-accept rate: m benchmarks, each
// truly faster by exactly the threshold (the most a false "faster" can be
// wrong by), measured with 3% noise a pair, call any of them faster in at
// most the design's one-sided 2.5% of verdicts; without the division by
// m, each would spend the whole rate and the chance that one of them does
// grows with m, past the bound.
func TestFamilyRuleHoldsTheFalseAcceptRateInSimulation(t *testing.T) {
	const (
		verdicts = 2000
		members  = 12
	)
	p := workspace.DefaultBench
	rate := func(share int) float64 {
		rng := rand.New(rand.NewPCG(21, 22))
		b := newBench("sim", p)
		b.Family = FamilyBonferroni
		b.plan()
		b.Decisions = make([]string, len(b.Looks))
		hits := 0
		for range verdicts {
			for range members {
				s := Samples{Metric: workspace.MetricCPUTime}
				for range p.MaxPairs {
					base := math.Exp(0.03 * rng.NormFloat64())
					s.Baseline = append(s.Baseline, base)
					s.Candidate = append(s.Candidate, base/(1+p.Threshold)*math.Exp(0.03*rng.NormFloat64()))
				}
				if firstDecision(b, &s, share) == decFaster {
					hits++
					break
				}
			}
		}
		return float64(hits) / verdicts
	}
	bound := (1 - p.Confidence) / 2
	shared, whole := rate(members), rate(1)
	t.Logf("any of %d benchmarks at the threshold called faster: %.2f%% with the rates shared, %.2f%% without (bound %.1f%%)", members, 100*shared, 100*whole, 100*bound)
	if shared > bound {
		t.Errorf("with the rates shared among %d benchmarks, %.2f%% of verdicts called one faster, above %.1f%%", members, 100*shared, 100*bound)
	}
	if whole <= bound {
		t.Errorf("without sharing the rates only %.2f%% were: this simulation cannot tell the rules apart", 100*whole)
	}
}

// A patch that makes a benchmark a little slower and its runs noisy, so
// that its interval reaches past 1 and its shortfall (here even a gain)
// looks like chance, is held: its runs are many times noisier than the
// baseline's on the same machine in the same pairs, which the machine's
// noise is not.
func TestACandidateMadeNoisyToHideARegressionIsHeld(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	names := []string{"BenchmarkA", "BenchmarkB", "BenchmarkC", "BenchmarkD"}
	answer := func(cand bool, name string, n int) harnessAnswer {
		a := jittery(map[string]float64{"BenchmarkA": 0.5, "BenchmarkB": 1.06, "BenchmarkC": 1, "BenchmarkD": 1}, 0.01)(cand, name, n)
		if cand && name == "BenchmarkB" {
			a.nsPerOp *= max(0.3, 1+0.4*rng.NormFloat64())
		}
		return a
	}
	hr := harnessOf(&harnessMeter{names: names, answer: answer})
	hr.protocol.MaxPairs = 30
	e := judged(t, hr)
	r := e.Bench.Benchmarks[1]
	t.Logf("BenchmarkB %.3fx [%.3f, %.3f], cv b/c %.3f/%.3f", r.CPUStats.Speedup, r.CPUStats.CILow, r.CPUStats.CIHigh, r.CPUStats.BaselineCV, r.CPUStats.CandidateCV)
	if r.Decision == decSlower {
		t.Fatalf("BenchmarkB was decided slower: the test does not show noise hiding it")
	}
	if e.Verdict == ledger.VerdictAccepted || !strings.Contains(e.Summary, "noisier: BenchmarkB") {
		t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
	// An entry that sets a floor of its own, above the noise, and stores
	// the verdict that floor gives does not recompute to itself.
	forged := *e
	fb := *e.Bench
	fb.NoisierFloor = 1
	forged.Bench = &fb
	re := recompute(&forged)
	forged.Verdict, forged.Reason = re.Verdict, re.Reason
	if sameVerdict(&forged, re) {
		t.Errorf("an entry with noisier_floor 1 recomputed to itself: %s (%s)", re.Verdict, re.Reason)
	}
}

// Noise kept under the floor hides no regression past the threshold: a
// benchmark made 4% slower, its runs spread just under half the
// threshold, is still held by its estimate and interval, not accepted on
// the gain elsewhere.
func TestARegressionUnderNoiseBelowTheFloorIsHeld(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	answer := func(cand bool, name string, n int) harnessAnswer {
		cost := 1000 * (1 + 0.0005*rng.NormFloat64())
		switch {
		case cand && name == "BenchmarkA":
			cost /= 2
		case cand:
			cost *= 1.04 * (1 + 0.003*rng.NormFloat64())
		}
		return harnessAnswer{nsPerOp: cost, checksum: 7}
	}
	e := judged(t, harnessOf(&harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: answer}))
	r := e.Bench.Benchmarks[1]
	if rel := stats.MAD(r.CPU.Candidate) / stats.Median(r.CPU.Candidate); rel >= e.Bench.NoisierFloor {
		t.Fatalf("BenchmarkB's candidate spread %.4f of its median, not under the floor %g", rel, e.Bench.NoisierFloor)
	}
	t.Logf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	if e.Verdict == ledger.VerdictAccepted || e.Reason != ReasonRegressed && e.Reason != ReasonInconclusive {
		t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
}

// An untouched benchmark whose baseline runs happen to agree to a few
// tenths of a percent (on one CPU they do) while the candidate's spread a
// little more is not noisier: its spread is under half the threshold,
// which hides no regression past it, and an honest patch faster elsewhere
// is accepted. An xxhash verdict read such a benchmark as 3.4 times as
// spread (1.6 ns against 0.47 ns of 200) and went on past its decision.
func TestATightBaselineDoesNotMakeAnUntouchedBenchmarkNoisier(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	answer := func(cand bool, name string, n int) harnessAnswer {
		cost := 1000 * (1 + 0.0005*rng.NormFloat64())
		switch {
		case cand && name == "BenchmarkA":
			cost /= 2
		case cand:
			cost *= 1 + 0.003*rng.NormFloat64()
		}
		return harnessAnswer{nsPerOp: cost, checksum: 7}
	}
	e := judged(t, harnessOf(&harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: answer}))
	b := e.Bench
	r := b.Benchmarks[1]
	if ratio := stats.MAD(r.CPU.Candidate) / stats.MAD(r.CPU.Baseline); ratio <= noisierFactor {
		t.Fatalf("BenchmarkB's candidate spread %.1f times the baseline's: the test does not show a tight baseline", ratio)
	}
	if e.Verdict != ledger.VerdictAccepted || b.NoisierFloor != b.Threshold/2 {
		t.Errorf("%s (%s): %s (floor %g)", e.Verdict, e.Reason, e.Summary, b.NoisierFloor)
	}
}

// unchanged names n benchmarks, BenchmarkA on, each costing the candidate
// what it costs the baseline.
func unchanged(n int) ([]string, map[string]float64) {
	var names []string
	ratio := map[string]float64{}
	for i := range n {
		name := "Benchmark" + string(rune('A'+i))
		names, ratio[name] = append(names, name), 1
	}
	return names, ratio
}
