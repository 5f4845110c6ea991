package verdict

import (
	"math"
	"slices"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

func TestComputeStatsKeepsPairsAndIsReproducible(t *testing.T) {
	s := Samples{Metric: workspace.MetricCPUTime, Baseline: []float64{14, 10, 13, 11, 12}, Candidate: []float64{7, 5, 6.5, 5.5, 6}}
	orig := slices.Clone(s.Baseline)
	a := computeStats(s, 0.95, 7, 2000, "")
	if !slices.Equal(s.Baseline, orig) {
		t.Fatalf("computeStats reordered the samples: %v", s.Baseline)
	}
	if b := computeStats(s, 0.95, 7, 2000, ""); a != b {
		t.Errorf("same seed, different stats:\n%+v\n%+v", a, b)
	}
	// Every pair is exactly 2x: the paired bootstrap sees no spread at all.
	if a.Speedup != 2 || a.CILow != 2 || a.CIHigh != 2 || a.DetectableChange != 0 {
		t.Errorf("stats %+v", a)
	}
	if a.P > 0.05 {
		t.Errorf("p = %v for fully separated samples", a.P)
	}
}

func TestJudgeBenchReasons(t *testing.T) {
	for _, tc := range []struct {
		name    string
		final   string
		st      MetricStats
		risk    []string
		verdict string
		reason  string
	}{
		{"accepted", decFaster, MetricStats{CILow: 1.2, CIHigh: 1.3}, nil, "accepted", ReasonImproved},
		{"risky", decFaster, MetricStats{CILow: 1.2, CIHigh: 1.3}, []string{"locks in a.c"}, "needs-human-review", ReasonImproved},
		{"regressed", decSlower, MetricStats{CILow: 0.8, CIHigh: 0.9}, nil, "rejected-bench", ReasonRegressed},
		{"same", decSame, MetricStats{CILow: 0.99, CIHigh: 1.01}, nil, "rejected-bench", ReasonNoChange},
		{"undecided below threshold", decUndecided, MetricStats{CILow: 0.97, CIHigh: 1.01}, nil, "rejected-bench", ReasonNoChange},
		{"undecided across threshold", decUndecided, MetricStats{CILow: 0.99, CIHigh: 1.06, DetectableChange: 0.035}, nil, "rejected-bench", ReasonInconclusive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.st.Metric, tc.st.Pairs = workspace.MetricCPUTime, 10
			e := &Entry{RiskSignals: tc.risk, Bench: &Bench{Metric: workspace.MetricCPUTime, Threshold: 0.02, Decisions: []string{tc.final}, Metrics: []MetricStats{tc.st}}}
			judgeBench(e)
			if e.Verdict != tc.verdict || e.Reason != tc.reason {
				t.Errorf("got %s (%s): %s", e.Verdict, e.Reason, e.Detail)
			}
		})
	}
}

// The metrics must agree: an instructions-tier "faster" needs the cpu-time
// check to confirm it, and a cpu-time "faster" whose wall time is clearly
// slower needs a person.
func TestMetricsMustAgree(t *testing.T) {
	check := func(lo, hi float64) *Check {
		return &Check{Metrics: []MetricStats{{Metric: workspace.MetricCPUTime, Pairs: 5, CILow: lo, CIHigh: hi, Speedup: (lo + hi) / 2}}}
	}
	faster := MetricStats{Pairs: 10, CILow: 1.2, CIHigh: 1.3, Speedup: 1.25}
	for _, tc := range []struct {
		name    string
		metric  string
		check   *Check
		wall    *MetricStats
		verdict string
		reason  string
	}{
		{"instructions confirmed", workspace.MetricInstructions, check(1.1, 1.3), nil, ledger.VerdictAccepted, ReasonImproved},
		{"instructions, cpu-time unsure", workspace.MetricInstructions, check(0.97, 1.2), nil, ledger.VerdictNeedsHumanReview, ReasonUnconfirmed},
		{"instructions, cpu-time faster by less than the threshold", workspace.MetricInstructions, check(1.004, 1.03), nil, ledger.VerdictNeedsHumanReview, ReasonUnconfirmed},
		{"instructions, cpu-time slower", workspace.MetricInstructions, check(0.7, 0.8), nil, ledger.VerdictRejectedBench, ReasonRegressed},
		{"instructions, no check", workspace.MetricInstructions, nil, nil, ledger.VerdictNeedsHumanReview, ReasonUnconfirmed},
		{"cpu-time, wall unsure", workspace.MetricCPUTime, nil, &MetricStats{Metric: workspace.MetricWall, CILow: 0.9, CIHigh: 1.4}, ledger.VerdictAccepted, ReasonImproved},
		{"cpu-time, wall slower", workspace.MetricCPUTime, nil, &MetricStats{Metric: workspace.MetricWall, CILow: 0.5, CIHigh: 0.8}, ledger.VerdictNeedsHumanReview, ReasonWallSlower},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := faster
			st.Metric = tc.metric
			b := &Bench{Metric: tc.metric, Threshold: 0.02, Decisions: []string{decFaster}, Metrics: []MetricStats{st}, Check: tc.check}
			if tc.wall != nil {
				b.Metrics = append(b.Metrics, *tc.wall)
			}
			e := &Entry{Bench: b}
			judgeBench(e)
			if e.Verdict != tc.verdict || e.Reason != tc.reason {
				t.Errorf("got %s (%s): %s", e.Verdict, e.Reason, e.Detail)
			}
		})
	}
}

// The paired method cancels what hits both runs of a pair: samples whose
// level drifts by 3x over the run, with the candidate 5% faster in every
// pair, give a tight CI around 1.05 and a small p, where the two sides'
// medians and ranks drown in the drift.
func TestPairedStatsCancelDrift(t *testing.T) {
	var s Samples
	s.Metric = workspace.MetricCPUTime
	for i := range 20 {
		level := 1 + 2*float64(i)/19
		s.Baseline = append(s.Baseline, level)
		s.Candidate = append(s.Candidate, level/1.05)
	}
	st := computeStats(s, 0.95, 1, 2000, MethodPaired)
	if math.Abs(st.Speedup-1.05) > 1e-9 || st.CILow < 1.049 || st.CIHigh > 1.051 || st.P > 0.001 {
		t.Errorf("paired: %+v", st)
	}
	old := computeStats(s, 0.95, 1, 2000, "")
	if old.P < 0.05 {
		t.Errorf("the unpaired test found the drift-hidden change: %+v", old)
	}
}
