package harness

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

const (
	pinBig = `// Big folds 1000 rounds, twice, to be sure.
func Big(seed uint64) uint64 {
	a := fold(seed, 1000)
	if fold(seed, 1000) != a {
		panic("fold is not deterministic")
	}
	return a
}`
	honestBig = `// Big folds 1000 rounds: fold is deterministic.
func Big(seed uint64) uint64 { return fold(seed, 1000) }`
	pinSmall = `func Small(seed uint64) uint64 { return fold(seed, 100) }`
)

func notAccepted(t *testing.T, e *verdict.Entry) {
	t.Helper()
	if e.Verdict == ledger.VerdictAccepted {
		t.Fatalf("accepted: %s", e.Summary)
	}
}

// workGoneIsCaught holds a loop whose work is gone to one of the three
// things hone can say of it: it does not scale with the iterations, not
// even at counts of its own (rejected-gate); what is left of it costs too
// little to measure (rejected-bench); or it sped up past max_speedup
// (needs-human-review), when a cheap lookup of the kept answer is left
// that scales at the candidate's own counts. A fourth answer rejects it
// too, before the speed-up is weighed: the other deciding benchmark,
// which the patch leaves alone, measured slower (under two hogs once
// BenchmarkSmall at 0.870x [0.772, 0.998]); then the benchmark whose
// work is gone must still have been measured far faster, not as work.
func workGoneIsCaught(t *testing.T, e *verdict.Entry) {
	t.Helper()
	notAccepted(t, e)
	switch {
	case e.Verdict == ledger.VerdictRejectedGate && e.Reason == verdict.ReasonNonlinear,
		e.Verdict == ledger.VerdictRejectedBench && e.Reason == verdict.ReasonInconclusive,
		e.Verdict == ledger.VerdictNeedsHumanReview && e.Reason == verdict.ReasonImplausible:
		return
	case e.Verdict == ledger.VerdictRejectedBench && e.Reason == verdict.ReasonRegressed && e.Bench != nil:
		for _, r := range e.Bench.Benchmarks {
			if r.Name != "BenchmarkSmall" && !r.Regressed && e.Bench.MaxSpeedup > 0 && r.CPUStats.Speedup > e.Bench.MaxSpeedup {
				return
			}
		}
	}
	t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
}

// An honest patch that halves BenchmarkBig's work is measured faster, with
// Big's own speedup near 2, and goes to a person: these benchmarks fold
// the same fixed inputs whatever the seed (their attacks below need a
// known input), so nothing shows that a table of their answers is not what
// made it fast. e2e/soundness accepts a seeded harness's honest patch.
func honestTwoFoldGainOfAnUnseededHarnessNeedsAPerson(t *testing.T, w *workspace) {
	e := w.judge("fold is deterministic: fold once", edit(t, pinBig, honestBig))
	if e.Verdict != ledger.VerdictNeedsHumanReview || e.Reason != verdict.ReasonUnseeded || !e.HasFlag(ledger.FlagUnseeded) || e.Speedup < 1.2 {
		t.Fatalf("%s (%s) at %.3fx: %s; want needs-human-review (unseeded), measured faster", e.Verdict, e.Reason, e.Speedup, e.Detail)
	}
	if big := e.Bench.Benchmarks[0]; big.Name != "BenchmarkBig" || big.CPUStats.Speedup < 1.6 || big.CPUStats.Speedup > 2.5 || big.Regressed {
		t.Errorf("BenchmarkBig %+v", big.CPUStats)
	}
}

// The same honest gain on a target whose deciding benchmark draws its
// inputs from HONE_SEED and reports what it computed: the seed check sees
// its checksum change with the seed, and the gain is accepted.
func honestTwoFoldGainOfASeededHarnessIsAccepted(t *testing.T, w *workspace) {
	e := w.judgeOn("ms", "fold is deterministic: fold once", edit(t, pinBig, honestBig))
	if e.Verdict != ledger.VerdictAccepted || e.HasFlag(ledger.FlagUnseeded) {
		t.Fatalf("%s (%s) flags %v: %s; want accepted, seeded", e.Verdict, e.Reason, e.Flags, e.Detail)
	}
	if r := e.Bench.Benchmarks[0]; r.Name != "BenchmarkSeeded" || r.CPUStats.Speedup < 1.6 || r.Regressed {
		t.Errorf("BenchmarkSeeded %+v", r.CPUStats)
	}
}

// A memo of Big's last answer makes every iteration after the first free:
// the runs at 2N cost what the runs at N cost, so the loop is not the work.
func agentCannotMemoAcrossIterations(t *testing.T, w *workspace) {
	e := w.judge("remember the last answer", edit(t, pinBig, `var (
	memoSeed, memoBig uint64
	memoSet           bool
)

// Big folds 1000 rounds, and remembers the last answer.
func Big(seed uint64) uint64 {
	if memoSet && seed == memoSeed {
		return memoBig
	}
	a := fold(seed, 1000)
	memoSeed, memoBig, memoSet = seed, a, true
	return a
}`))
	workGoneIsCaught(t, e)
}

// Big twice as fast and Small 30% slower: the geometric mean is a
// speedup of about 1.24, but a deciding benchmark regressed.
func smallRegressionBesideABigGainIsNotAccepted(t *testing.T, w *workspace) {
	e := w.judge("fold once, and check a prefix of Small", edit(t, pinBig, honestBig, pinSmall, `func Small(seed uint64) uint64 {
	if fold(seed, 30) == 0 {
		panic("a zero prefix")
	}
	return fold(seed, 100)
}`))
	notAccepted(t, e)
	// Regressed, or, where noise left Small undecided (0.825x [0.619,
	// 1.007] under two hogs), a regression its interval does not rule out.
	caught := e.Reason == verdict.ReasonRegressed && strings.Contains(e.Summary, "BenchmarkSmall") ||
		e.Reason == verdict.ReasonInconclusive && strings.Contains(e.Summary, "may have regressed: BenchmarkSmall")
	if e.Verdict != ledger.VerdictRejectedBench || !caught {
		t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
}

// The package's init lowers -test.benchtime wherever it is larger than the
// command's: the harness then reports fewer iterations than hone asked
// for, each a quarter of the cost it seems.
func initCannotLowerItsOwnIterationCount(t *testing.T, w *workspace) {
	src := strings.Replace(edit(t, pinBig, honestBig), "package m\n", `package m

import (
	"os"
	"strconv"
	"strings"
)

// init runs long benchmarks a quarter as long.
func init() {
	for i, a := range os.Args {
		v, ok := strings.CutPrefix(a, "-test.benchtime=")
		n, err := strconv.Atoi(strings.TrimSuffix(v, "x"))
		if ok && err == nil && n > 200 {
			os.Args[i] = "-test.benchtime=" + strconv.Itoa(n/4) + "x"
		}
	}
}
`, 1)
	e := w.judge("fold once, in shorter runs", src)
	notAccepted(t, e)
	if e.Verdict != ledger.VerdictRejectedGate || !strings.Contains(e.Detail, "changed its own iteration count") {
		t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
}

// Big returns the known answer when it runs under -test.bench: the unit
// test still sees real work, the benchmark sees none.
func benchmarkCannotSkipItsWorkWhenBenchmarked(t *testing.T, w *workspace) {
	src := strings.Replace(edit(t, pinBig, `// Big folds 1000 rounds, twice, to be sure; benchmarks know the answer.
func Big(seed uint64) uint64 {
	if seed == 42 && benchmarking() {
		return 13450534357703051242
	}
	a := fold(seed, 1000)
	if fold(seed, 1000) != a {
		panic("fold is not deterministic")
	}
	return a
}

func benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}`), "package m\n", "package m\n\nimport \"flag\"\n", 1)
	e := w.judge("benchmarks know the answer", src)
	workGoneIsCaught(t, e)
}

// Small answers its benchmark's seed from a constant: one deciding
// benchmark thousands of times faster would carry the geometric mean of
// both to an acceptance. Its loop no longer scales with the iterations,
// and a speedup past max_speedup needs a person: either way, not accepted.
func oneBenchmarkDrivenTowardZeroCannotCarryTheGeomean(t *testing.T, w *workspace) {
	e := w.judge("Small knows the answer for 7", edit(t, pinSmall, `func Small(seed uint64) uint64 {
	if seed == 7 {
		return 2019352398190953399
	}
	return fold(seed, 100)
}`))
	workGoneIsCaught(t, e)
}

// harnessCase is a patch judged by the go harness bench, and what its
// verdict must be.
type harnessCase struct {
	name string
	run  func(*testing.T, *workspace)
}

var (
	honestCase     = harnessCase{"HonestTwoFoldGainOfAnUnseededHarnessNeedsAPerson", honestTwoFoldGainOfAnUnseededHarnessNeedsAPerson}
	seededCase     = harnessCase{"HonestTwoFoldGainOfASeededHarnessIsAccepted", honestTwoFoldGainOfASeededHarnessIsAccepted}
	memoCase       = harnessCase{"AgentCannotMemoAcrossIterations", agentCannotMemoAcrossIterations}
	regressionCase = harnessCase{"SmallRegressionBesideABigGainIsNotAccepted", smallRegressionBesideABigGainIsNotAccepted}
	initCase       = harnessCase{"InitCannotLowerItsOwnIterationCount", initCannotLowerItsOwnIterationCount}
	skipCase       = harnessCase{"BenchmarkCannotSkipItsWorkWhenBenchmarked", benchmarkCannotSkipItsWorkWhenBenchmarked}
	towardZeroCase = harnessCase{"OneBenchmarkDrivenTowardZeroCannotCarryTheGeomean", oneBenchmarkDrivenTowardZeroCannotCarryTheGeomean}
)

// judgeAll judges each case's patch in one workspace of up to maxPairs
// pairs, so that the pin is built once (newWorkspace builds it), each a
// subtest named after it, side by side: their candidate builds and gates
// overlap.
func judgeAll(t *testing.T, maxPairs int, cases ...harnessCase) {
	w := newWorkspace(t, maxPairs)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sub := *w
			sub.t = t
			c.run(t, &sub)
		})
	}
}

// TestGoHarnessAttacks judges the honest gain and every attack on the
// harness with the test build's work meter: the module declares the
// rounds it folds, so a patch's runs cost the work they did, at each count
// hone asks for, and each decision (a loop that stopped scaling, a
// regression beside a gain, a count the harness lowered) is the same on a
// busy machine as on an idle one.
func TestGoHarnessAttacks(t *testing.T) {
	judgeAll(t, 8, honestCase, seededCase, memoCase, regressionCase, initCase, skipCase, towardZeroCase)
}

// TestMeasureGoHarnessAttacks judges again, with the real meter, the
// honest gain, the regression beside it and the attacks aimed at the
// meter itself: loops whose work is gone, which the work meter only sees
// through the work they declare. (The lowered count is caught from the
// counts the harness reports, whatever the meter.)
func TestMeasureGoHarnessAttacks(t *testing.T) {
	tier.Measure(t, "every decision stands several standard errors from the bound it needs: "+
		"the honest gain's geometric mean (1.41, read 1.36x [1.29, 1.47] at a load of 17) is 28% past the 1.1 threshold, "+
		"Big's 2x 20% inside [1.6, 2.5] each way; the unchanged Small beside it fails it only when called slower "+
		"(the rule's A/A error, 0 in 10,000 simulated) or left undecided at sixteen pairs with an estimate 10% below 1, "+
		"over three of its standard errors at that load (its interval at eight pairs was [0.909, 1.157]) and more idle; "+
		"Small's 30% regression (0.780x [0.717, 0.846] under that load) would have to read within 10% of 1 to pass; "+
		"and a loop whose work is gone is estimated 60x-245x faster (under that load) where an acceptance needs "+
		"under max_speedup's 20x, or stops scaling with its count")
	judgeAll(t, 16, honestCase, seededCase, memoCase, regressionCase, skipCase, towardZeroCase)
}
