package verdict

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
)

// A verdict that ends in error after its bench measured something keeps
// what was measured: samples, counts, sizing runs and scalings are what a
// person diagnoses the error with, and recomputing it gives the same
// figures and the same word, never another outcome.

// storedAndRecomputed records a stopped bench as Run does, takes the
// entry through a TOML round trip as the ledger would, and checks that it
// recomputes to itself.
func storedAndRecomputed(t *testing.T, b *Bench, fail *runFailure) *Entry {
	t.Helper()
	e := newEntry(ledger.Common{PatchID: "p"}, "t")
	e.benchStopped(b, fail)
	raw, err := toml.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var stored Entry
	if _, err := toml.Decode(string(raw), &stored); err != nil {
		t.Fatal(err)
	}
	re := recompute(&stored)
	if !sameVerdict(&stored, re) || re.Verdict != stored.Verdict || re.Reason != stored.Reason {
		t.Errorf("stored %s (%s) %v recomputes to %s (%s) %v", stored.Verdict, stored.Reason, stored.Bench.Decisions, re.Verdict, re.Reason, re.Bench.Decisions)
	}
	return &stored
}

// failOn makes the baseline's bench runs fail (exit status 2) from the
// after-th on; the runs before it are the harness meter's own.
type failOn struct {
	*harnessMeter
	after, runs int
}

func (f *failOn) measure(ctx context.Context, spec jail.Spec, metric string) (map[string]float64, *jail.Result, error) {
	v, res, err := f.harnessMeter.measure(ctx, spec, metric)
	if spec.Dir == "base" {
		if f.runs++; f.runs >= f.after {
			res.ExitCode = 2
		}
	}
	return v, res, err
}

// The untouched baseline benchmark that cannot scale, with none left to
// decide: an error whose entry holds the benchmark's counts, its runs at
// both counts, the scaling that failed, and the sizing that led there,
// in the ledger, in show's text and in --json.
func TestNonlinearBaselineErrorKeepsItsSamplesAndScaling(t *testing.T) {
	m := &harnessMeter{names: []string{"BenchmarkA"}, answer: flatOn(false, "BenchmarkA", 0.5)}
	b, fail, err := harnessOf(m).run(context.Background())
	if err != nil || fail == nil || fail.side != "baseline" {
		t.Fatalf("%v %+v", err, fail)
	}
	e := storedAndRecomputed(t, b, fail)
	if e.Verdict != ledger.VerdictError || e.Reason != ReasonBaseline || e.Bench == nil || len(e.Bench.Benchmarks) != 1 {
		t.Fatalf("%s (%s), bench %+v", e.Verdict, e.Reason, e.Bench)
	}
	r := e.Bench.Benchmarks[0]
	if len(r.Counts) != 2 || len(r.ShortCPU.Baseline) != e.Bench.Pairs || e.Bench.Pairs == 0 || len(r.LongCPU.Baseline) != e.Bench.Pairs ||
		r.BaselineScaling <= 0 || r.BaselineScaling > 1.2 || !strings.Contains(r.Excluded, "not its loop") {
		t.Errorf("benchmark kept %+v", r)
	}
	if len(r.Sizing) < 4 || r.Sizing[0].Side != "baseline" || r.Sizing[0].Count != startupCount || len(r.Sizing[0].CPU) != 2 {
		t.Errorf("sizing runs kept %+v", r.Sizing)
	}
	var text strings.Builder
	if err := WriteText(&text, e); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"BenchmarkA left out", "sizing BenchmarkA (side count: cpu-time of each run): baseline 2: ", " 1.00/"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("show's text lacks %q:\n%s", want, text.String())
		}
	}
	js, err := json.Marshal(e)
	if err != nil || !strings.Contains(string(js), `"sizing":[{"side":"baseline","count":2,"cpu":[`) || !strings.Contains(string(js), `"baseline_scaling":`) {
		t.Errorf("--json lacks the sizing runs or the scaling: %v\n%s", err, js)
	}
}

// A baseline run that fails mid-way through the pairs: the pairs before
// it stay, with their samples, and the failed run is named as before. The
// samples say the candidate is twice as fast; the verdict stays an error.
func TestBaselineFailingMidwayKeepsThePairsBefore(t *testing.T) {
	m := &failOn{harnessMeter: &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": 0.5})}, after: 20}
	hr := harnessOf(m.harnessMeter)
	hr.meter = m
	b, fail, err := hr.run(context.Background())
	if err != nil || fail == nil || fail.side != "baseline" || !strings.Contains(fail.msg, "exit status 2") {
		t.Fatalf("%v %+v", err, fail)
	}
	e := storedAndRecomputed(t, b, fail)
	if e.Verdict != ledger.VerdictError || e.Bench == nil || e.Bench.Pairs == 0 || len(e.Bench.Benchmarks[0].CPU.Baseline) != e.Bench.Pairs {
		t.Fatalf("%s (%s), bench %+v", e.Verdict, e.Reason, e.Bench)
	}
	if g := e.Gates[len(e.Gates)-1]; g.Name != benchGate || g.Baseline == nil || g.Baseline.ExitCode != 2 {
		t.Errorf("the failed run %+v", g)
	}
	if st := e.Bench.Stat(e.Bench.Metric); st == nil || st.Speedup < 1.8 {
		t.Errorf("the kept pairs' statistics %+v", st)
	}
}

// Sizing that fails before it reaches the loop keeps the counts it tried
// and their runs' CPU time, and no counts of its own.
func TestSizingThatNeverFinishedKeepsTheCountsItTried(t *testing.T) {
	m := &failOn{harnessMeter: &harnessMeter{names: []string{"BenchmarkA"}, answer: costs(map[string]float64{"BenchmarkA": 0.5})}, after: 5}
	hr := harnessOf(m.harnessMeter)
	hr.meter = m
	b, fail, err := hr.run(context.Background())
	if err != nil || fail == nil || fail.side != "baseline" {
		t.Fatalf("%v %+v", err, fail)
	}
	e := storedAndRecomputed(t, b, fail)
	if e.Verdict != ledger.VerdictError || e.Bench == nil || e.Bench.Pairs != 0 {
		t.Fatalf("%s (%s), bench %+v", e.Verdict, e.Reason, e.Bench)
	}
	r := e.Bench.Benchmarks[0]
	var counts []int
	for _, s := range r.Sizing {
		counts = append(counts, s.Count)
	}
	if len(r.Counts) != 0 || len(counts) != 2 || counts[0] != startupCount || counts[1] != 100 || len(r.Sizing[1].CPU) != 2 {
		t.Errorf("counts %v, sizing tried %v (%+v)", r.Counts, counts, r.Sizing)
	}
	var text strings.Builder
	if err := WriteText(&text, e); err != nil || !strings.Contains(text.String(), "0 pairs (no look decided)") || !strings.Contains(text.String(), "baseline 100: ") {
		t.Errorf("%v\n%s", err, text.String())
	}
}

// A process bench whose baseline fails after some pairs keeps them; a
// candidate that failed its output check keeps them too. Neither
// recomputes into the outcome its samples alone would give, nor does an
// interrupted verdict.
func TestStoppedProcessBenchRecomputesToItsOwnWord(t *testing.T) {
	for _, c := range []struct {
		name, verdict string
		cand          bool
	}{{"baseline fails", ledger.VerdictError, false}, {"candidate fails", ledger.VerdictRejectedGate, true}} {
		m := &fakeMeter{bench: func(cand bool, n int) run {
			r := steady(0.5)(cand, n)
			if cand == c.cand && n == 8 {
				r.exit = 3
			}
			return r
		}}
		b, fail, err := benchOf(m, proto()).run(context.Background())
		if err != nil || fail == nil {
			t.Fatalf("%s: %v %+v", c.name, err, fail)
		}
		e := storedAndRecomputed(t, b, fail)
		if e.Verdict != c.verdict || e.Bench == nil || e.Bench.Pairs < 5 || len(e.Bench.Decisions) == 0 {
			t.Errorf("%s: %s (%s), bench %+v", c.name, e.Verdict, e.Reason, e.Bench)
		}
	}
	b, _, _ := benchOf(&fakeMeter{bench: steady(0.5), failAt: 25}, proto()).run(context.Background())
	e := &Entry{Bench: b}
	e.cancelled()
	if re := recompute(e); re.Verdict != ledger.VerdictCancelled || !sameVerdict(e, re) {
		t.Errorf("an interrupted verdict recomputes to %s (%s)", re.Verdict, re.Reason)
	}
}
