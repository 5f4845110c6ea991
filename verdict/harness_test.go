package verdict

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/benchformat"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// The harness bench's decision flow, fed by a fake meter that answers as a
// go test binary would: the whole run lists every benchmark, a run for one
// benchmark (benchformat.CommandFor's filter) reports that one. Real
// harnesses in the real jail are covered by the end-to-end test in
// cmd/hone.

// harnessAnswer is what one benchmark run reports and costs: its
// iteration count (0: the count asked for; negative: the benchmark is
// left out of the output), its cpu time per iteration in ns, and a custom
// metric. A run costs harnessStartup plus its iterations' cost; a flat
// benchmark's loop costs the same whatever the count (a memo across
// iterations).
type harnessAnswer struct {
	iterations int
	nsPerOp    float64
	checksum   float64
	leftover   int
	flat       bool
}

// harnessStartup is the fake harness process's start-up and set-up CPU
// time, in ns: twenty times the loop at the command's count of 100
// iterations of 1 µs.
const harnessStartup = 2e6

type harnessMeter struct {
	names  []string
	answer func(cand bool, name string, n int) harnessAnswer
	runs   map[string]int
	order  []string // benchmark and side of each measured run
	// speed, when set, scales each measured run's CPU time: the speed of
	// the core it happened to run on.
	speed func() float64
	// burn, when set, is CPU time in seconds a run spends beyond its
	// start-up and loop, by side and asked count: a harness that can tell
	// which runs size it.
	burn func(cand bool, count int) float64
	// unpinned counts the runs not started on one CPU.
	unpinned int
}

var (
	oneBenchRE = regexp.MustCompile(`-test\.bench='\^(Benchmark[A-Za-z]+)`)
	countRE    = regexp.MustCompile(`-test\.benchtime=([0-9]+)x`)
)

// output is a run's stdout for the benchmarks names at count iterations,
// and what the last of them costs.
func (f *harnessMeter) output(cand bool, names []string, n, count int) (string, float64) {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: example.com/x\n")
	cost := 0.0
	for _, name := range names {
		a := f.answer(cand, name, n)
		if a.iterations < 0 {
			continue
		}
		ran := count
		if a.iterations > 0 {
			ran = a.iterations
		}
		cost = float64(ran) * a.nsPerOp
		if a.flat {
			cost = 100 * a.nsPerOp
		}
		fmt.Fprintf(&b, "%s-2 \t%d\t%.1f ns/op\t%g checksum\n", name, ran, a.nsPerOp, a.checksum)
	}
	b.WriteString("PASS\n")
	return b.String(), cost
}

func askedCount(command string) int {
	n, _ := strconv.Atoi(countRE.FindStringSubmatch(command)[1])
	return n
}

func (f *harnessMeter) exec(_ context.Context, spec jail.Spec) (*jail.Result, error) {
	if !spec.OneCPU {
		f.unpinned++
	}
	out, _ := f.output(spec.Dir == "cand", f.names, 0, askedCount(spec.Command))
	return result(run{out: out, value: 0.01}), nil
}

func (f *harnessMeter) measure(_ context.Context, spec jail.Spec, _ string) (map[string]float64, *jail.Result, error) {
	if !spec.OneCPU {
		f.unpinned++
	}
	cand := spec.Dir == "cand"
	name := oneBenchRE.FindStringSubmatch(spec.Command)[1]
	if f.runs == nil {
		f.runs = map[string]int{}
	}
	f.runs[spec.Dir+" "+name]++
	f.order = append(f.order, spec.Dir+" "+name)
	count := askedCount(spec.Command)
	out, cost := f.output(cand, []string{name}, f.runs[spec.Dir+" "+name], count)
	a := f.answer(cand, name, f.runs[spec.Dir+" "+name])
	cpu := (harnessStartup + cost) / 1e9
	if f.burn != nil {
		cpu += f.burn(cand, count)
	}
	if f.speed != nil {
		cpu *= f.speed()
	}
	res := result(run{out: out, value: cpu, leftover: a.leftover})
	return map[string]float64{workspace.MetricCPUTime: cpu, workspace.MetricWall: cpu}, res, nil
}

func (f *harnessMeter) counters(context.Context, jail.Spec) (map[string]float64, time.Duration) {
	return nil, 0
}

// costs is a harness whose benchmarks cost base ns/op on the baseline and
// base*ratio[name] on the candidate, with a little noise.
func costs(ratio map[string]float64) func(cand bool, name string, n int) harnessAnswer {
	return func(cand bool, name string, n int) harnessAnswer {
		v := 1000 * (1 + 0.01*float64(n%3))
		if cand {
			v *= ratio[name]
		}
		return harnessAnswer{nsPerOp: v, checksum: 7}
	}
}

func harnessOf(m *harnessMeter, deciding ...string) *harnessRun {
	p := proto()
	br := &benchRun{baseline: jail.Spec{Command: "./b.test -test.bench=. -test.benchtime=100x", Dir: "base"},
		candidate: jail.Spec{Command: "./b.test -test.bench=. -test.benchtime=100x", Dir: "cand"}, protocol: p, meter: m}
	return &harnessRun{benchRun: br, format: "go", deciding: deciding, outputs: []string{"checksum"}}
}

func judged(t *testing.T, hr *harnessRun) *Entry {
	t.Helper()
	b, fail, err := hr.run(context.Background())
	if err != nil || fail != nil {
		t.Fatalf("%v %+v", err, fail)
	}
	e := &Entry{Bench: b}
	judgeBench(e)
	return e
}

func TestHarnessFasterOnEveryBenchmarkIsAcceptedOnTheGeomean(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: costs(map[string]float64{"BenchmarkA": 0.5, "BenchmarkB": 0.8})}
	e := judged(t, harnessOf(m))
	b := e.Bench
	if e.Verdict != ledger.VerdictAccepted || b.Format != "go" || len(b.Benchmarks) != 2 || !strings.Contains(e.Summary, "geomean of 2 benchmarks") {
		t.Fatalf("%s: %s %+v", e.Verdict, e.Summary, b)
	}
	// The geometric mean of 2x and 1.25x is about 1.58x.
	if g := b.Stat(workspace.MetricCPUTime); g.Speedup < 1.5 || g.Speedup > 1.67 || !(g.DetectableChange > 0) {
		t.Errorf("geomean %+v", g)
	}
	if a := b.Benchmarks[0]; a.Name != "BenchmarkA" || a.CommandIterations != 100 || a.CPUStats.Speedup < 1.9 || a.CPU.Unit != "ns/op" || len(a.CPU.Baseline) != b.Pairs {
		t.Errorf("benchmark A %+v", a)
	}
	// Each pair runs every benchmark at two counts on both sides; the
	// benchmarks' order changes from pair to pair. Each side's first runs
	// size the counts: twice at 2 iterations (the fixed cost), then twice
	// at each count until the loop dominates; the candidate starts from
	// the baseline's count, so it needs no more runs than the baseline.
	if a := b.Benchmarks[0]; a.Counts[0] < 10000 || a.Counts[1] != 2*a.Counts[0] || a.BaselineScaling < 1.85 || a.CandidateScaling < 1.8 {
		t.Errorf("counts %v, scalings %.3f and %.3f", a.Counts, a.BaselineScaling, a.CandidateScaling)
	}
	if m.runs["cand BenchmarkA"] <= 2*b.Pairs || m.runs["cand BenchmarkB"] > m.runs["base BenchmarkB"] {
		t.Errorf("runs %v for %d pairs", m.runs, b.Pairs)
	}
	if m.unpinned != 0 || !b.OneCPU {
		t.Errorf("%d harness runs were not started on one CPU (recorded: %v)", m.unpinned, b.OneCPU)
	}
	firsts := map[string]bool{}
	for i := len(m.order) - 8*b.Pairs; i < len(m.order); i += 8 {
		firsts[strings.Fields(m.order[i])[1]] = true
	}
	if len(firsts) != 2 {
		t.Errorf("the same benchmark ran first in every pair: %q", m.order)
	}
	var text strings.Builder
	if err := WriteText(&text, e); err != nil || !strings.Contains(text.String(), "BenchmarkA *") || !strings.Contains(text.String(), "µs") || !strings.Contains(text.String(), "each run on one CPU") {
		t.Errorf("%v\n%s", err, text.String())
	}
}

// A candidate much faster on one benchmark and slower on another that
// decides is rejected, however good the geometric mean.
func TestHarnessRegressionInADecidingBenchmarkIsRejected(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: costs(map[string]float64{"BenchmarkA": 0.2, "BenchmarkB": 1.3})}
	e := judged(t, harnessOf(m))
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != ReasonRegressed || !strings.Contains(e.Summary, "slower: BenchmarkB") {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
	// The same candidate, judged on A alone, is accepted; B is still
	// measured and shown.
	m = &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: costs(map[string]float64{"BenchmarkA": 0.2, "BenchmarkB": 1.3})}
	e = judged(t, harnessOf(m, "BenchmarkA"))
	if e.Verdict != ledger.VerdictAccepted || len(e.Bench.Benchmarks) != 2 || e.Bench.Benchmarks[1].Decides || e.Bench.Benchmarks[1].CPUStats.Speedup > 0.8 {
		t.Fatalf("%s: %s %+v", e.Verdict, e.Summary, e.Bench.Benchmarks)
	}
	if g := e.Bench.Stat(workspace.MetricCPUTime).Speedup; g < 4.5 {
		t.Errorf("the geomean over A alone is %v", g)
	}
}

// A candidate that shortens its loop (fewer iterations), computes another
// answer (an output metric), or drops a benchmark is rejected-gate, never
// a speedup.
func TestCandidateCannotShortenOrSkipABenchmark(t *testing.T) {
	for name, cheat := range map[string]func(a *harnessAnswer, name string, n int) bool{
		"fewer iterations in a measured run": func(a *harnessAnswer, _ string, n int) bool {
			if n == 3 {
				a.iterations = 10
			}
			return true
		},
		"another answer": func(a *harnessAnswer, _ string, n int) bool {
			if n >= 2 {
				a.checksum = 0
			}
			return true
		},
		"skipped benchmark": func(_ *harnessAnswer, name string, _ int) bool { return name != "BenchmarkB" },
	} {
		t.Run(name, func(t *testing.T) {
			m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}}
			m.answer = func(cand bool, bm string, n int) harnessAnswer {
				a := costs(map[string]float64{"BenchmarkA": 0.5, "BenchmarkB": 0.5})(cand, bm, n)
				if cand && !cheat(&a, bm, n) {
					a.iterations = -1 // not run at all
				}
				return a
			}
			_, fail, err := harnessOf(m).run(context.Background())
			if err != nil || fail == nil || fail.side != "candidate" {
				t.Fatalf("%v %+v", err, fail)
			}
			e := &Entry{}
			e.benchFailed(fail)
			if e.Verdict != ledger.VerdictRejectedGate {
				t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
			}
		})
	}
}

// A benchmark hone.toml names that the harness does not run is the pin's
// fault: an error, not a verdict on the patch.
func TestHarnessUnknownDecidingBenchmarkIsError(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": 0.5})}
	_, fail, _ := harnessOf(m, "BenchmarkTypo").run(context.Background())
	if fail == nil || fail.side != "baseline" || !strings.Contains(fail.msg, `names "BenchmarkTypo"`) {
		t.Fatalf("%+v", fail)
	}
	e := &Entry{}
	e.benchFailed(fail)
	if e.Verdict != ledger.VerdictError || e.Reason != ReasonBaseline {
		t.Errorf("%s (%s)", e.Verdict, e.Reason)
	}
}

// A stored harness verdict is reproduced from its own samples, per
// benchmark and on the geometric mean.
func TestHarnessVerdictRecomputes(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: costs(map[string]float64{"BenchmarkA": 0.2, "BenchmarkB": 1.3})}
	e := judged(t, harnessOf(m))
	re := recompute(e)
	if !sameVerdict(e, re) || re.Verdict != ledger.VerdictRejectedBench || !re.Bench.Benchmarks[1].Regressed {
		t.Fatalf("recomputed %s (%s), stored %s", re.Verdict, re.Reason, e.Verdict)
	}
	// Samples edited to hide the regression no longer match the stored
	// statistics.
	forged := *e
	fb := *e.Bench
	fb.Benchmarks = append([]BenchmarkResult{}, e.Bench.Benchmarks...)
	fb.Benchmarks[1].CPU.Candidate = fb.Benchmarks[1].CPU.Baseline
	forged.Bench = &fb
	if sameVerdict(&forged, recompute(&forged)) {
		t.Error("forged samples recompute to the stored verdict")
	}
}

// noisy draws n pairs of a benchmark whose candidate is truly speedup
// times faster, with load shared by a pair and noise of each run.
func noisy(seed uint64, n int, base, speedup float64) (b, c []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for range n {
		load := 1 + 0.3*rng.Float64()
		b = append(b, base*load*(1+0.05*rng.NormFloat64()))
		c = append(c, base/speedup*load*(1+0.05*rng.NormFloat64()))
	}
	return b, c
}

// The geometric mean's statistics, computed as the verdict computes any
// metric's, cover the true geometric mean of the speedups, and one freak
// fast run of one benchmark does not make it a speedup.
func TestGeomeanCoversTheTrueSpeedupAndResistsOneOutlier(t *testing.T) {
	b1, c1 := noisy(3, 30, 1000, 2)
	b2, c2 := noisy(4, 30, 10, 1.125)
	gb, gc := benchformat.Geomeans([]benchformat.Samples{{Name: "A", Baseline: b1, Candidate: c1}, {Name: "B", Baseline: b2, Candidate: c2}})
	st := computeStats(Samples{Metric: "cpu-time", Baseline: gb, Candidate: gc}, 0.95, 1, DefaultResamples, MethodPaired)
	// The geometric mean of 2 and 1.125 is 1.5.
	if !(st.CILow <= 1.5 && 1.5 <= st.CIHigh) || math.Abs(st.Speedup-1.5) > 0.05 {
		t.Errorf("geomean %.3f [%.3f, %.3f], want about 1.5", st.Speedup, st.CILow, st.CIHigh)
	}
	var same []benchformat.Samples
	for i := range 4 {
		b, c := noisy(uint64(10+i), 20, 100, 1)
		same = append(same, benchformat.Samples{Name: string(rune('A' + i)), Baseline: b, Candidate: c})
	}
	same[0].Candidate[0] /= 100
	gb, gc = benchformat.Geomeans(same)
	one := &Bench{Method: MethodSequential, Threshold: 0.02, Confidence: 0.95, Looks: planLooks(0, 20, 20, 0.95)}
	if d, st := one.decideLook(Samples{Metric: "cpu-time", Baseline: gb, Candidate: gc}, 0); d == decFaster {
		t.Errorf("one outlier made the geomean a speedup: %+v", st)
	}
}

// A rejudge pools its pairs with the earlier verdict's, benchmark by
// benchmark, and holds its runs to the fingerprints stored then.
func TestHarnessRejudgePoolsEachBenchmark(t *testing.T) {
	ratios := map[string]float64{"BenchmarkA": 0.95, "BenchmarkB": 0.95}
	first, fail, err := harnessOf(&harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: costs(ratios)}).run(context.Background())
	if err != nil || fail != nil {
		t.Fatalf("%v %+v", err, fail)
	}
	hr := harnessOf(&harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: costs(ratios)})
	hr.prior = first
	b, fail, err := hr.run(context.Background())
	if err != nil || fail != nil {
		t.Fatalf("%v %+v", err, fail)
	}
	if b.PooledPairs != first.Pairs || b.Pairs <= first.Pairs || len(b.Benchmarks[0].CPU.Baseline) != b.Pairs || len(b.Samples[0].Baseline) != b.Pairs {
		t.Fatalf("pooled %d of %d pairs; benchmark A has %d, the geomean %d", b.PooledPairs, b.Pairs, len(b.Benchmarks[0].CPU.Baseline), len(b.Samples[0].Baseline))
	}
	// A rejudge whose harness now runs other iterations than the
	// verdict it pools with is the baseline's fault.
	hr = harnessOf(&harnessMeter{names: []string{"BenchmarkA", "BenchmarkB"}, answer: func(cand bool, name string, n int) harnessAnswer {
		a := costs(ratios)(cand, name, n)
		a.iterations = 50
		return a
	}})
	hr.prior = first
	if _, fail, _ := hr.run(context.Background()); fail == nil || fail.side != "baseline" {
		t.Fatalf("%+v", fail)
	}
}
