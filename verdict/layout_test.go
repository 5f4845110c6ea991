package verdict

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
)

// A honest 4x patch is judged over four layouts of each side, every
// layout gets pairs, each side's layouts are four binaries, and the
// stored entry recomputes to the same figures.
func TestVerdictPairsInterleaveFourLayouts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", fourLayouts(cToml))
	f.propose(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), "b2b2b2b2b2b2b2b2", "do a quarter of the walks")
	e, err := Run(context.Background(), f.ws, "b2b2b2b2b2b2b2b2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.want(e, ledger.VerdictAccepted, ReasonImproved)
	r := e.Bench.Layout
	if r == nil || r.OneLayout != "" || len(r.Layouts) != 4 || len(e.Bench.Setups) != e.Bench.Pairs {
		t.Fatalf("layouts: %+v", r)
	}
	if !slices.Equal(layoutsOf(r), build.Layouts(r.Seed, 4)) || r.Seed != layoutSeed(e.Pin, e.Bench.Seed) {
		t.Errorf("layouts %v are not the seed's %v", layoutsOf(r), build.Layouts(r.Seed, 4))
	}
	base, cand := map[string]bool{}, map[string]bool{}
	least, most := e.Bench.Pairs, 0
	for _, l := range r.Layouts {
		least, most = min(least, l.Pairs), max(most, l.Pairs)
		base[l.BaselineSHA256], cand[l.CandidateSHA256] = true, true
		// A quarter of the walks, and a run's start besides: about 3x in
		// every layout, as in TestMuchFasterIsAccepted.
		if l.Pairs == 0 || l.Speedup < 2 {
			t.Errorf("layout %d: %d pairs, speedup %.2f", l.Index, l.Pairs, l.Speedup)
		}
	}
	if most-least > 1 {
		t.Errorf("the layouts have %d to %d pairs: a layout weighs more than another", least, most)
	}
	if len(base) != 4 || len(cand) != 4 {
		t.Errorf("%d baseline and %d candidate binaries from 4 layouts", len(base), len(cand))
	}
	if e.HasFlag(ledger.FlagOneLayout) || r.WithoutBest < 2 {
		t.Errorf("flags %v, without the best layout %.2f", e.Flags, r.WithoutBest)
	}
	var text strings.Builder
	if err := WriteText(&text, e); err != nil || !strings.Contains(text.String(), "4 layouts (seed ") || !strings.Contains(text.String(), "layout  pad") {
		t.Errorf("text view %v:\n%s", err, text.String())
	}
	re, match, err := Recompute(context.Background(), f.ws, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !match || re.Bench.Layout.Spread != r.Spread || re.Bench.Layout.WithoutBest != r.WithoutBest {
		t.Errorf("recomputed layouts %+v, stored %+v", re.Bench.Layout, r)
	}
}

func layoutsOf(r *LayoutReport) []build.Layout {
	var out []build.Layout
	for _, l := range r.Layouts {
		out = append(out, l.Layout)
	}
	return out
}

// A target that opts out is judged on its plain builds, and says so.
func TestOptedOutTargetIsOneLayout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", strings.Replace(fourLayouts(cToml), "max_pairs = 10\n", "max_pairs = 10\nlayouts = 1\n", 1))
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), Options{})
	f.want(e, ledger.VerdictAccepted, ReasonImproved)
	var text strings.Builder
	if err := WriteText(&text, e); err != nil || !strings.Contains(text.String(), "one layout: [bench] layouts = 1") {
		t.Errorf("text view %v:\n%s", err, text.String())
	}
	if !e.HasFlag(ledger.FlagOneLayout) || !strings.Contains(e.Summary, "one layout") || slices.ContainsFunc(e.Bench.Setups, func(s PairSetup) bool { return s.Layout != 0 }) {
		t.Errorf("flags %v, summary %q, layouts %+v", e.Flags, e.Summary, e.Bench.Layout)
	}
}

// laidOut is an accepted bench of four layouts whose deciding pairs are
// given as baseline and candidate figures by layout.
func laidOut(byLayout [][2]float64, candidates []string) *Entry {
	b := &Bench{Metric: "cpu-time", Threshold: 0.05, Confidence: 0.95, Method: MethodPaired, Seed: 1}
	s := Samples{Metric: "cpu-time"}
	r := &LayoutReport{}
	for k := range 4 {
		r.Layouts = append(r.Layouts, LayoutResult{Layout: build.Layout{Index: k}, BaselineSHA256: distinct[k], CandidateSHA256: candidates[k]})
	}
	for i := range 24 {
		k := i % 4
		noise := 1 + float64(i%3)*0.001
		s.Baseline, s.Candidate = append(s.Baseline, byLayout[k][0]*noise), append(s.Candidate, byLayout[k][1]*noise)
		b.Setups = append(b.Setups, PairSetup{Layout: k})
	}
	b.Samples, b.Pairs, b.Layout = []Samples{s}, 24, r
	e := &Entry{Bench: b}
	e.Verdict, e.Summary = ledger.VerdictAccepted, "speedup"
	return e
}

var distinct = []string{"a", "b", "c", "d"}

func TestLayoutJudgement(t *testing.T) {
	for _, tc := range []struct {
		name     string
		byLayout [][2]float64
		cands    []string
		verdict  string
		flag     bool
	}{
		{"faster in every layout stays accepted", [][2]float64{{2, 1}, {2, 1}, {2, 1}, {2, 1}}, distinct, ledger.VerdictAccepted, false},
		{"faster in one lucky layout needs a person", [][2]float64{{1, 0.7}, {1, 1}, {1, 1}, {1, 1}}, distinct, ledger.VerdictNeedsHumanReview, false},
		{"a baseline that moves with layout is flagged", [][2]float64{{1.2, 0.6}, {1, 0.5}, {1, 0.5}, {1, 0.5}}, distinct, ledger.VerdictAccepted, true},
		{"a spread within the noise is not", [][2]float64{{1.0, 0.5}, {1.002, 0.501}, {1, 0.5}, {1, 0.5}}, distinct, ledger.VerdictAccepted, false},
		{"a candidate that ignores layouts needs a person", [][2]float64{{2, 1}, {2, 1}, {2, 1}, {2, 1}}, []string{"a", "a", "a", "a"}, ledger.VerdictNeedsHumanReview, false},
		{"a candidate that links one placement into every other layout needs a person", [][2]float64{{2, 1}, {2, 1}, {2, 1}, {2, 1}}, []string{"a", "b", "b", "b"}, ledger.VerdictNeedsHumanReview, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := laidOut(tc.byLayout, tc.cands)
			judgeLayouts(e)
			if e.Verdict != tc.verdict || e.HasFlag(ledger.FlagLayoutSensitive) != tc.flag {
				t.Errorf("verdict %s (%s), flags %v; layouts %+v", e.Verdict, e.Detail, e.Flags, e.Bench.Layout)
			}
		})
	}
}

// A harness runs each benchmark with a command of its own: placed in a
// layout, the run keeps its command, timeout, output cap and CPU (one, as
// every harness run has: a layout run left free to use both cores once
// measured 90 to 165 ms where its plain run measured 80) and takes the
// layout's build; without layouts, or in layout 0, it is the run itself.
func TestPlaceKeepsTheRunAndTakesTheLayoutsBuild(t *testing.T) {
	built := func(tree string) jail.Spec {
		return jail.Spec{Command: "$HONE_OUT/prog {seed}", Mounts: []jail.Mount{{Host: tree, Jail: build.OutDir}}}
	}
	ls := &layoutSet{specs: [2][]jail.Spec{{built("b0"), built("b1")}, {built("c0"), built("c1")}}}
	run := built("c0")
	run.Command, run.Timeout, run.OutputCap, run.OneCPU = "$HONE_OUT/prog -bench=Sum", time.Minute, 1<<20, true
	got := ls.place(run, true, 1)
	if got.Command != run.Command || got.Timeout != run.Timeout || got.OutputCap != run.OutputCap || !got.OneCPU || got.Mounts[0].Host != "c1" {
		t.Errorf("placed in layout 1: %+v", got)
	}
	var none *layoutSet
	if got := none.place(run, true, none.next()); got.Mounts[0].Host != "c0" || got.Command != run.Command {
		t.Errorf("without layouts: %+v", got)
	}
}

// The measured pairs spread evenly over the layouts whatever the warm-up
// took: a warm-up pair draws its layout from a round too, and were the
// measured pairs to finish that round, some layout would weigh a pair
// more than another in the speedup (8 pairs over 4 layouts came out as
// 2, 1, 3 and 2).
func TestLayoutsShareTheMeasuredPairsEvenly(t *testing.T) {
	for seed := range uint64(32) {
		ls := &layoutSet{specs: [2][]jail.Spec{make([]jail.Spec, 4), make([]jail.Spec, 4)}, rng: rand.New(rand.NewPCG(seed, 0x7061697273))}
		ls.next() // the warm-up pair
		ls.newRound()
		counts := make([]int, 4)
		for range 8 {
			counts[ls.next()]++
		}
		if !slices.Equal(counts, []int{2, 2, 2, 2}) {
			t.Fatalf("seed %d: 8 measured pairs over 4 layouts: %v", seed, counts)
		}
	}
}

// A harness benchmark driven toward zero leaves pairs with a side at 0:
// such a pair has no ratio in its layout's figures, as it has none in the
// speedup's, and the entry still encodes (a NaN speedup made every view
// of such a verdict fail: "json: unsupported value: NaN").
func TestLayoutFiguresLeaveOutPairsWithASideAtZero(t *testing.T) {
	b := &Bench{
		Metric: "cpu-time", Confidence: 0.95, Method: MethodEquivalence,
		Samples: []Samples{{Metric: "cpu-time", Unit: "ns/op", Baseline: []float64{4, 4, 4, 4, 4, 4}, Candidate: []float64{0, 2, 0, 2, 0, 2}}},
		Setups:  []PairSetup{{Layout: 0}, {Layout: 1}, {Layout: 0}, {Layout: 1}, {Layout: 0}, {Layout: 1}},
		Layout:  &LayoutReport{Layouts: []LayoutResult{{Layout: build.Layout{Index: 0}}, {Layout: build.Layout{Index: 1, Pad: 16}}}},
	}
	layoutFigures(b)
	if l := b.Layout.Layouts; l[0].Pairs != 3 || l[0].Speedup != 0 || l[1].Pairs != 3 || l[1].Speedup != 2 {
		t.Errorf("layouts %+v", l)
	}
	if _, err := json.Marshal(b); err != nil {
		t.Errorf("the bench does not encode: %v", err)
	}
}

// A bench decided "slower" is a regression only if it is slower without
// its worst layout too: a candidate that only moves code can land slower
// in one of its four layouts, and that placement is not the patch's cost.
func TestSlowerInOneLayoutIsNoChange(t *testing.T) {
	for _, tc := range []struct {
		name     string
		byLayout [][2]float64
		reason   string
	}{
		{"slower in one layout only", [][2]float64{{1, 1.2}, {1, 1}, {1, 1}, {1, 1}}, ReasonNoChange},
		{"slower in every layout stays regressed", [][2]float64{{1, 1.2}, {1, 1.1}, {1, 1.1}, {1, 1.1}}, ReasonRegressed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := laidOut(tc.byLayout, distinct)
			b := e.Bench
			// Each layout's pairs straddle its ratio, as noise would.
			for i := range b.Samples[0].Candidate {
				b.Samples[0].Candidate[i] *= 1 + float64(i%2*2-1)*0.002
			}
			b.Metrics = []MetricStats{computeStats(b.Samples[0], b.Confidence, b.Seed, b.Resamples, b.Method)}
			b.Decisions = []string{decSlower}
			e.Verdict, e.Reason, e.Summary = ledger.VerdictRejectedBench, ReasonRegressed, "slower"
			judgeLayouts(e)
			if e.Verdict != ledger.VerdictRejectedBench || e.Reason != tc.reason {
				t.Errorf("%s (%s): %s; without the worst layout up to %.3f", e.Verdict, e.Reason, e.Detail, b.Layout.WithoutWorst)
			}
			if tc.reason == ReasonNoChange && !strings.Contains(e.Summary, "slower in one layout only") {
				t.Errorf("summary %q", e.Summary)
			}
		})
	}
}

// A bench ended by a failure has layouts but no figures per layout: the
// text says so rather than printing zeros as if they were measured.
func TestLayoutsOfABenchThatEndedEarlySayTheyHaveNoFigures(t *testing.T) {
	b := &Bench{Metric: "cpu-time", Layout: &LayoutReport{Seed: 7, Layouts: make([]LayoutResult, 4)}}
	var out strings.Builder
	if err := writeLayouts(&out, b); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "no figures per layout") || strings.Contains(s, "0.000x") {
		t.Errorf("%s", s)
	}
}
