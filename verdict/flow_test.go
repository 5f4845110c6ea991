package verdict

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// The verdict's decision flow, fed by a fake meter: the jail's results and
// the samples come from the test, so each rule is checked on exactly the
// runs that should trigger it. The real meter and jail are covered by the
// fixture tests.

// run is one fed result: what the command printed, its exit status, how
// many processes it left, and its cpu-time value.
type run struct {
	out      string
	exit     int
	leftover int
	value    float64
}

// fakeMeter answers bench runs by side ("base" or "cand" commands) and
// run number, and gates by a function of the spec.
type fakeMeter struct {
	bench func(cand bool, n int) run
	// output, when set, is what a bench run prints given its HONE_SEED,
	// as a seeded workload would.
	output  func(cand bool, n int, seed string) string
	gate    func(spec jail.Spec) run
	runs    [2]int
	specs   []jail.Spec
	failAt  int // the bench run (counting both sides) at which the harness fails
	counted int
}

var errHarness = errors.New("the harness failed")

// untimedMeter is a fakeMeter that reads no clock, as the work meter.
type untimedMeter struct{ *fakeMeter }

func (untimedMeter) untimed() {}

func result(r run) *jail.Result {
	return &jail.Result{ExitCode: r.exit, Stdout: jail.OutputOf([]byte(r.out)), Stderr: jail.OutputOf(nil),
		Leftover: r.leftover, Wall: time.Duration(r.value * float64(time.Second)), UserTime: time.Duration(r.value * float64(time.Second))}
}

func (f *fakeMeter) exec(_ context.Context, spec jail.Spec) (*jail.Result, error) {
	f.specs = append(f.specs, spec)
	return result(f.gate(spec)), nil
}

func (f *fakeMeter) measure(_ context.Context, spec jail.Spec, metric string) (map[string]float64, *jail.Result, error) {
	f.counted++
	if f.failAt > 0 && f.counted >= f.failAt {
		return nil, nil, errHarness
	}
	cand := spec.Command == "cand"
	i := 0
	if cand {
		i = 1
	}
	f.runs[i]++
	r := f.bench(cand, f.runs[i])
	if f.output != nil {
		r.out = f.output(cand, f.runs[i], seedOf(spec))
	}
	res := result(r)
	if spec.Timeout > 0 && time.Duration(r.value*float64(time.Second)) > spec.Timeout {
		res.TimedOut, res.Signaled, res.ExitCode = true, true, -1
	}
	if metric == workspace.MetricInstructions {
		return map[string]float64{metric: r.value * 1e9}, res, nil
	}
	return map[string]float64{workspace.MetricCPUTime: r.value, workspace.MetricWall: r.value}, res, nil
}

// seedOf is the HONE_SEED a spec gives its run.
func seedOf(spec jail.Spec) string {
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, build.SeedVar+"="); ok {
			return v
		}
	}
	return ""
}

func (f *fakeMeter) counters(context.Context, jail.Spec) (map[string]float64, time.Duration) {
	return nil, 0
}

// steady is a bench where every run prints "42" and the candidate costs
// ratio times the baseline, with a little alternating noise.
func steady(ratio float64) func(cand bool, n int) run {
	return func(cand bool, n int) run {
		v := 0.010 * (1 + 0.01*float64(n%3))
		if cand {
			v *= ratio
		}
		return run{out: "42\n", value: v}
	}
}

func proto() workspace.BenchConfig {
	p := workspace.DefaultBench
	p.Pairs, p.MaxPairs = 5, 15
	return p
}

func benchOf(m *fakeMeter, p workspace.BenchConfig) *benchRun {
	return &benchRun{baseline: jail.Spec{Command: "base"}, candidate: jail.Spec{Command: "cand"}, protocol: p, meter: m}
}

// A clearly faster candidate is accepted at the second look: the first
// look's level (about 99.98%, O'Brien-Fleming type) is out of reach with 5
// pairs, so no first look can accept.
func TestFlowClearlyFasterIsDecidedAtTheSecondBatch(t *testing.T) {
	m := &fakeMeter{bench: steady(0.5)}
	b, fail, err := benchOf(m, proto()).run(context.Background())
	if err != nil || fail != nil {
		t.Fatalf("%v %+v", err, fail)
	}
	// Looks at 5, 8 (for "same" alone), 10, 13 (the same) and 15 pairs.
	if b.Pairs != 10 || len(b.Decisions) != 3 || b.Decisions[2] != decFaster || b.Method != MethodEquivalence || len(b.Looks) != 5 ||
		len(b.Setups) != 10 || len(b.Outputs) != 10 || len(b.Warmups) != 1 {
		t.Fatalf("bench %+v", b)
	}
	if c := b.Looks[0].Confidence; c < 0.999 || b.Looks[1].Pairs != 8 || b.Looks[1].Confidence != 1 || b.Looks[3].Confidence != 1 ||
		b.Looks[4].Confidence > 0.97 || b.Looks[4].Confidence < 0.95 || b.Looks[0].SameConfidence > 0.96 {
		t.Errorf("looks %+v", b.Looks)
	}
	e := &Entry{Bench: b}
	judgeBench(e)
	if e.Verdict != ledger.VerdictAccepted || e.Speedup < 1.9 {
		t.Errorf("%s %v: %s", e.Verdict, e.Speedup, e.Detail)
	}
	// Warm-up pair first, then pairs in both orders.
	if m.runs != [2]int{11, 11} || !strings.ContainsAny(b.Order, "b") {
		t.Errorf("runs %v order %q", m.runs, b.Order)
	}
}

// A faster bench with a risk signal needs a person; the same bench without
// one is accepted, and a risk signal makes nothing of a bench that is not
// faster.
func TestFlowFasterWithARiskSignalNeedsAPerson(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ratio   float64
		risk    []string
		verdict string
	}{
		{"faster with a signal", 0.5, []string{"threads in targets/c/prog.c"}, ledger.VerdictNeedsHumanReview},
		{"faster without", 0.5, nil, ledger.VerdictAccepted},
		{"no change with a signal", 1, []string{"threads in targets/c/prog.c"}, ledger.VerdictRejectedBench},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, fail, err := benchOf(&fakeMeter{bench: steady(tc.ratio)}, proto()).run(context.Background())
			if err != nil || fail != nil {
				t.Fatalf("%v %+v", err, fail)
			}
			e := &Entry{Bench: b, RiskSignals: tc.risk}
			judgeBench(e)
			if e.Verdict != tc.verdict || len(tc.risk) > 0 && e.Verdict == ledger.VerdictNeedsHumanReview && !strings.HasSuffix(e.Summary, "; risk: "+tc.risk[0]) {
				t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
			}
		})
	}
}

func TestFlowSameIsNoChange(t *testing.T) {
	b, _, _ := benchOf(&fakeMeter{bench: steady(1)}, proto()).run(context.Background())
	e := &Entry{Bench: b}
	judgeBench(e)
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != ReasonNoChange {
		t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
}

// A candidate that prints anything else than the baseline in any bench run
// (here: it skipped the work on its fourth run) is rejected-gate, however
// fast it was.
func TestFlowBenchOutputDiffersIsRejectedGate(t *testing.T) {
	m := &fakeMeter{bench: func(cand bool, n int) run {
		r := steady(0.5)(cand, n)
		if cand && n == 4 {
			r.out, r.value = "0\n", 0.0001
		}
		return r
	}}
	_, fail, err := benchOf(m, proto()).run(context.Background())
	if err != nil || fail == nil || fail.side != "candidate" || fail.reason != ReasonOutput || !strings.HasPrefix(fail.msg, "bench output differs from the baseline's") {
		t.Fatalf("%v %+v", err, fail)
	}
	e := &Entry{}
	e.benchFailed(fail)
	if e.Verdict != ledger.VerdictRejectedGate || e.Reason != ReasonOutput || !strings.Contains(e.Summary, "bench output differs") {
		t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
}

// Every pair gets an input seed of its own, the same for its two runs, and
// the candidate's output is held to its own pair's baseline output: a
// workload that prints its seed passes; a candidate that prints what it
// printed for the first input it saw (an answer it remembered) fails at
// the next pair.
func TestFlowCandidateCannotReplayAnEarlierAnswer(t *testing.T) {
	honest := &fakeMeter{bench: steady(0.5), output: func(_ bool, _ int, seed string) string { return seed + "\n" }}
	b, fail, err := benchOf(honest, proto()).run(context.Background())
	if err != nil || fail != nil {
		t.Fatalf("%v %+v", err, fail)
	}
	seen := map[int64]bool{}
	for _, s := range append(b.Warmups, b.Setups...) {
		if seen[s.Seed] || s.EnvPad < 0 || s.EnvPad >= MaxEnvPad {
			t.Errorf("setups %+v", b.Setups)
		}
		seen[s.Seed] = true
	}
	var first string
	replay := &fakeMeter{bench: steady(0.5), output: func(cand bool, _ int, seed string) string {
		if cand && first == "" {
			first = seed
		}
		if cand {
			return first + "\n"
		}
		return seed + "\n"
	}}
	_, fail, err = benchOf(replay, proto()).run(context.Background())
	if err != nil || fail == nil || fail.side != "candidate" || fail.reason != ReasonOutput {
		t.Fatalf("%v %+v", err, fail)
	}
}

// A candidate whose runs crawl is stopped at slow_factor times the
// baseline's median wall time and rejected for it, instead of running
// each pair to the bench timeout.
func TestFlowSlowCandidateIsStoppedAtSlowFactor(t *testing.T) {
	p := proto()
	p.SlowFactor = 10
	m := &fakeMeter{bench: func(cand bool, n int) run {
		if cand {
			return run{out: "42\n", value: 30}
		}
		return run{out: "42\n", value: 0.2}
	}}
	_, fail, err := benchOf(m, p).run(context.Background())
	if err != nil || fail == nil || fail.reason != ReasonSlow || m.runs != [2]int{1, 1} || !strings.Contains(fail.msg, "slow_factor") {
		t.Fatalf("%v %+v runs %v", err, fail, m.runs)
	}
	e := &Entry{}
	e.benchFailed(fail)
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != ReasonSlow {
		t.Errorf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
	// A candidate within the factor is only measured.
	m = &fakeMeter{bench: steady(3)}
	if _, fail, err := benchOf(m, p).run(context.Background()); err != nil || fail != nil {
		t.Errorf("%v %+v", err, fail)
	}
	// Under a meter that reads no clock (the work meter of hone's test
	// builds) nothing is cut by the clock: a run that stalls on a busy
	// machine is not the candidate's fault there.
	m = &fakeMeter{bench: func(cand bool, n int) run {
		if cand {
			return run{out: "42\n", value: 30}
		}
		return run{out: "42\n", value: 0.2}
	}}
	br := benchOf(m, p)
	br.meter = untimedMeter{m}
	if _, fail, err := br.run(context.Background()); err != nil || fail != nil {
		t.Errorf("under an untimed meter: %v %+v", err, fail)
	}
}

// A candidate run that leaves processes behind fails when the baseline's
// runs leave none; when both do, it is only recorded.
func TestFlowLeftoversCountAgainstTheCandidateAlone(t *testing.T) {
	left := func(baseToo bool) func(cand bool, n int) run {
		return func(cand bool, n int) run {
			r := steady(0.5)(cand, n)
			if cand || baseToo {
				r.leftover = 1
			}
			return r
		}
	}
	_, fail, _ := benchOf(&fakeMeter{bench: left(false)}, proto()).run(context.Background())
	if fail == nil || fail.reason != ReasonLeftover || !strings.Contains(fail.msg, "the baseline's runs leave none") {
		t.Fatalf("%+v", fail)
	}
	b, fail, _ := benchOf(&fakeMeter{bench: left(true)}, proto()).run(context.Background())
	if fail != nil || b.CandidateLeftover != 11 || b.BaselineLeftover != 11 {
		t.Fatalf("%+v %+v", fail, b)
	}
}

func TestFlowFailingCommandIsItsSidesFault(t *testing.T) {
	for _, cand := range []bool{false, true} {
		m := &fakeMeter{bench: func(c bool, n int) run {
			r := steady(0.5)(c, n)
			if c == cand && n == 2 {
				r.exit = 3
			}
			return r
		}}
		_, fail, _ := benchOf(m, proto()).run(context.Background())
		if fail == nil || fail.side != sideName(cand) || fail.msg != "the bench command 42 (exit status 3)" {
			t.Fatalf("%+v", fail)
		}
		e := &Entry{}
		e.benchFailed(fail)
		want := map[bool]string{false: ledger.VerdictError, true: ledger.VerdictRejectedGate}[cand]
		if e.Verdict != want {
			t.Errorf("%s side failing: %s", sideName(cand), e.Verdict)
		}
	}
}

// An interrupted bench returns what it measured, for the cancelled
// verdict's record.
func TestFlowInterruptedBenchKeepsItsPairs(t *testing.T) {
	b, fail, err := benchOf(&fakeMeter{bench: steady(0.9), failAt: 9}, proto()).run(context.Background())
	if !errors.Is(err, errHarness) || fail != nil || b == nil || b.Pairs != 3 || len(b.Samples) == 0 {
		t.Fatalf("%v %+v %+v", err, fail, b)
	}
	e := &Entry{Bench: b}
	e.cancelled()
	if e.Verdict != ledger.VerdictCancelled || !strings.HasPrefix(e.Summary, "interrupted after speedup") || e.Speedup == 0 {
		t.Errorf("%s: %s", e.Verdict, e.Summary)
	}
}

// A rejudge pools: the earlier pairs (and their setups) come first, the
// new ones are measured on top up to max_pairs more, and the stored entry
// recomputes to itself.
func TestFlowRejudgePoolsWithTheEarlierSamples(t *testing.T) {
	p := proto()
	first, _, _ := benchOf(&fakeMeter{bench: steady(0.99)}, p).run(context.Background())
	br := benchOf(&fakeMeter{bench: steady(0.99)}, p)
	br.prior = first
	pooled, fail, err := br.run(context.Background())
	if err != nil || fail != nil {
		t.Fatal(err, fail)
	}
	if pooled.PooledPairs != first.Pairs || pooled.Pairs <= first.Pairs || pooled.MaxPairs != first.Pairs+p.MaxPairs ||
		len(pooled.Samples[0].Baseline) != pooled.Pairs || !strings.HasPrefix(pooled.Order, first.Order) {
		t.Fatalf("pooled %+v after %+v", pooled, first)
	}
	e := &Entry{Bench: pooled}
	judgeBench(e)
	if re := recompute(e); !sameVerdict(e, re) {
		t.Errorf("the pooled verdict does not recompute: %v vs %v", e.Bench.Decisions, re.Bench.Decisions)
	}
	if len(pooled.Setups) != pooled.Pairs || pooled.Setups[0] != first.Setups[0] || len(pooled.Outputs) != pooled.Pairs {
		t.Errorf("pooled setups %+v after %+v", pooled.Setups, first.Setups)
	}
}

// An instructions-tier "faster" runs a cpu-time check on the same specs; a
// candidate that is cheaper only when counted is slower there.
func TestFlowInstructionsCheckCatchesACountedOnlySpeedup(t *testing.T) {
	p := proto()
	p.Metric = workspace.MetricInstructions
	m := &fakeMeter{bench: steady(0.5)}
	br := benchOf(m, p)
	b, _, _ := br.run(context.Background())
	j := &judging{e: &Entry{Bench: b}, m: m, proto: p, progress: func(Progress) {}}
	m.bench = steady(1.5)
	if fail, err := j.check(context.Background(), br); err != nil || fail != nil {
		t.Fatal(err, fail)
	}
	judgeBench(j.e)
	if j.e.Verdict != ledger.VerdictRejectedBench || j.e.Reason != ReasonRegressed || b.Check == nil || b.Check.Pairs != p.Pairs {
		t.Errorf("%s (%s): %s; check %+v", j.e.Verdict, j.e.Reason, j.e.Detail, b.Check)
	}
}

func gateResults(t *testing.T, gates []workspace.Gate, f func(spec jail.Spec) run) ([]GateResult, gateOutcome, *fakeMeter) {
	t.Helper()
	m := &fakeMeter{gate: f}
	r := &gateRunner{t: &workspace.Target{Gates: gates}, m: m, env: &Environment{}, logs: newGateLogs(1 << 20),
		base: &build.Side{Role: build.Baseline}, cand: &build.Side{Role: build.Candidate},
		spec: func(s *build.Side, g workspace.Gate, _ PairSetup) jail.Spec {
			return jail.Spec{Command: g.Run + " " + string(s.Role)}
		}}
	out, outcome, err := r.runGates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out, outcome, m
}

func TestFlowGates(t *testing.T) {
	unit := workspace.Gate{Name: "unit", Run: "unit"}
	golden := workspace.Gate{Name: "golden", Run: "golden", Equivalence: true}
	for _, tc := range []struct {
		name    string
		gates   []workspace.Gate
		f       func(spec jail.Spec) run
		outcome gateOutcome
		message string
		execs   int
	}{
		{"all pass", []workspace.Gate{unit, golden}, func(jail.Spec) run { return run{out: "ok"} }, gatesPassed, "", 3},
		{"output differs", []workspace.Gate{golden}, func(s jail.Spec) run { return run{out: s.Command} }, gateFailed, "stdout differs from the baseline's", 2},
		{"exit differs", []workspace.Gate{golden}, func(s jail.Spec) run {
			return run{exit: map[bool]int{true: 1}[strings.HasSuffix(s.Command, "candidate")]}
		}, gateFailed, "exit status 1 differs from the baseline's 0", 2},
		{"candidate fails a gate the baseline passes", []workspace.Gate{unit}, func(s jail.Spec) run {
			return run{exit: map[bool]int{true: 2}[strings.HasSuffix(s.Command, "candidate")]}
		}, gateFailed, "exit status 2", 2},
		{"a gate broken at the pin", []workspace.Gate{unit, golden}, func(jail.Spec) run { return run{exit: 1} }, baselineFailed, "fails on the baseline too", 2},
		{"leftovers on the candidate alone", []workspace.Gate{unit}, func(s jail.Spec) run {
			return run{leftover: map[bool]int{true: 2}[strings.HasSuffix(s.Command, "candidate")]}
		}, gateFailed, "left 2 processes running", 2},
		{"leftovers on both", []workspace.Gate{unit, golden}, func(jail.Spec) run { return run{leftover: 1} }, gatesPassed, "", 4},
		{"leftovers in an equivalence gate", []workspace.Gate{golden}, func(s jail.Spec) run {
			return run{leftover: map[bool]int{true: 1}[strings.HasSuffix(s.Command, "candidate")]}
		}, gateFailed, "left 1 processes running", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, outcome, m := gateResults(t, tc.gates, tc.f)
			last := out[len(out)-1]
			if outcome != tc.outcome || !strings.Contains(last.Message, tc.message) || len(m.specs) != tc.execs {
				t.Errorf("outcome %v, message %q, %d runs", outcome, last.Message, len(m.specs))
			}
		})
	}
}

// An entry recomputes with its own method: one written before the design
// (every look at the full confidence) replays the old rule, which here
// accepts at the first look, while the same samples under the design's
// levels cannot accept there (5 pairs are too few for its first level).
func TestRecomputeReplaysEachEntrysOwnMethod(t *testing.T) {
	b, _, _ := benchOf(&fakeMeter{bench: steady(0.5)}, proto()).run(context.Background())
	old := *b
	old.Method, old.Looks = MethodPaired, nil
	for i := range old.Samples {
		s := &old.Samples[i]
		s.Baseline, s.Candidate = s.Baseline[:5], s.Candidate[:5]
	}
	old.Pairs = 5
	old.Decisions = []string{decFaster}
	old.Metrics = statsOf(&old)
	e := &Entry{Bench: &old}
	judgeBench(e)
	if re := recompute(e); !sameVerdict(e, re) || e.Verdict != ledger.VerdictAccepted {
		t.Errorf("old entry: %s %v, recomputed %v", e.Verdict, e.Bench.Decisions, re.Bench.Decisions)
	}
	seq := old
	seq.Method, seq.Looks = MethodSequential, b.Looks
	if d := replayDecisions(&seq); len(d) != 1 || d[0] != decMeasureMore {
		t.Errorf("the design's first look decided %v", d)
	}
}

// Running an error verdict again measures what it measured: the bench
// pair on which the baseline failed comes first, and a kept bench's
// warm-up and measured pairs follow in their order.
func TestErrorRerunReplaysItsSetups(t *testing.T) {
	fails := func(cand bool, n int) run {
		r := steady(1)(cand, n)
		if !cand && n == 4 {
			r.exit = 1
		}
		return r
	}
	_, fail, err := benchOf(&fakeMeter{bench: fails}, proto()).run(context.Background())
	if err != nil || fail == nil || fail.side != "baseline" || fail.setup == nil {
		t.Fatalf("%v %+v", err, fail)
	}
	e := &Entry{}
	e.benchFailed(fail)
	if e.Verdict != ledger.VerdictError || len(e.Gates) != 1 || e.Gates[0].Setup == nil || *e.Gates[0].Setup != *fail.setup {
		t.Fatalf("error entry %+v, gates %+v", e.Common, e.Gates)
	}
	br := benchOf(&fakeMeter{bench: steady(1)}, proto())
	br.replay = replayOf(e)
	b, fail2, err := br.run(context.Background())
	if err != nil || fail2 != nil || b.Warmups[0] != *fail.setup {
		t.Fatalf("%v %+v: warm-ups %+v, want the failed pair's %+v first", err, fail2, b.Warmups, *fail.setup)
	}
	kept := &Entry{Bench: b, Gates: []GateResult{{Name: "unit", Setup: &PairSetup{Seed: 7, EnvPad: 9}}}}
	gr := replayOf(kept)
	if s, ok := gr.gate("unit"); !ok || s.Seed != 7 || s.EnvPad != 9 {
		t.Errorf("gate setup %+v %v", s, ok)
	}
	again := benchOf(&fakeMeter{bench: steady(1)}, proto())
	again.replay = gr
	b2, _, _ := again.run(context.Background())
	if !slices.Equal(b2.Warmups, b.Warmups) || !slices.Equal(b2.Setups[:b.Pairs], b.Setups) {
		t.Errorf("replayed setups %+v %+v, want %+v %+v", b2.Warmups, b2.Setups, b.Warmups, b.Setups)
	}
}
