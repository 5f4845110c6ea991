package verdict

import (
	"math"
	"math/rand/v2"
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

func TestOutliersAndCV(t *testing.T) {
	xs := []float64{10, 10.1, 9.9, 10, 10.05, 30}
	if n := tukeyOutliers(xs); n != 1 {
		t.Errorf("outliers = %d, want 1", n)
	}
	if cv := robustCV(xs); cv <= 0 || cv > 0.02 {
		t.Errorf("robust CV %v should ignore the outlier", cv)
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   MetricStats
		want string
	}{
		{"clearly faster", MetricStats{Pairs: 10, CILow: 1.1, CIHigh: 1.3, P: 0.001}, decFaster},
		{"CI clears the threshold but p does not", MetricStats{Pairs: 10, CILow: 1.03, CIHigh: 1.3, P: 0.2}, decMeasureMore},
		{"faster but under the threshold", MetricStats{Pairs: 10, CILow: 1.005, CIHigh: 1.015, P: 0.01}, decSame},
		{"clearly slower", MetricStats{Pairs: 10, CILow: 0.9, CIHigh: 0.95, P: 0.001}, decSlower},
		{"same within the threshold", MetricStats{Pairs: 10, CILow: 0.99, CIHigh: 1.01, P: 0.6}, decSame},
		{"straddles the threshold", MetricStats{Pairs: 10, CILow: 0.99, CIHigh: 1.05, P: 0.3}, decMeasureMore},
		{"no pairs", MetricStats{}, decMeasureMore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.st, 0.02, 0.95); got != tc.want {
				t.Errorf("decide = %s, want %s", got, tc.want)
			}
		})
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

// R's wilcox.test(x, y, paired = TRUE) on its own example (Hollander &
// Wolfe's depression scores) gives V = 40, p = 0.03906.
func TestSignedRankMatchesR(t *testing.T) {
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	if p := signedRankP(d); math.Abs(p-0.0390625) > 1e-9 {
		t.Errorf("p = %v, want 0.0390625", p)
	}
	// With ties the normal approximation: a symmetric sample gives 1.
	if p := signedRankP([]float64{1, -1, 2, -2, 0}); p != 1 {
		t.Errorf("symmetric sample p = %v", p)
	}
	if p := signedRankP(nil); p != 1 {
		t.Errorf("empty p = %v", p)
	}
}

func TestHodgesLehmann(t *testing.T) {
	for _, tc := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{1, 2, 3}, 2},
		{[]float64{5}, 5},
		{[]float64{0, 10}, 5},
		{[]float64{1, 2, 3, 100}, 2.75},
	} {
		if got := hodgesLehmann(walshAverages(slices.Clone(tc.x))); got != tc.want {
			t.Errorf("HL(%v) = %v, want %v", tc.x, got, tc.want)
		}
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

// The interval's ranks come from the signed-rank distribution: checked
// here against a count of all 2^n sign patterns, for n from 1 to 12.
func TestWalshCIRanksFromEverySignPattern(t *testing.T) {
	for n := 1; n <= 12; n++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i*i) - 7 // distinct Walsh averages' order is known by sorting
		}
		w := walshAverages(x)
		// P(T <= s) by brute force: T is the sum of the ranks given +.
		top := n * (n + 1) / 2
		count := make([]int, top+1)
		for mask := 0; mask < 1<<n; mask++ {
			s := 0
			for r := 1; r <= n; r++ {
				if mask&(1<<(r-1)) != 0 {
					s += r
				}
			}
			count[s]++
		}
		k, cum := 0, 0
		for s, c := range count {
			cum += c
			if float64(cum)/float64(int(1)<<n) >= 0.025 {
				k = s
				break
			}
		}
		k = max(k, 1)
		lo, hi := walshCI(w, n, 0.95)
		if lo != w[k-1] || hi != w[len(w)-k] {
			t.Errorf("n=%d: CI [%v, %v], want ranks %d and %d: [%v, %v]", n, lo, hi, k, len(w)-k+1, w[k-1], w[len(w)-k])
		}
	}
}

// At 10 pairs, the size of a first batch, the interval covers the true
// shift at least as often as it says, for light- and heavy-tailed noise
// alike; a percentile bootstrap of the estimate fell short here.
func TestWalshCICoversAtTenPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, noise := range []struct {
		name string
		draw func() float64
	}{
		{"normal", rng.NormFloat64},
		{"laplace", func() float64 { return rng.ExpFloat64() * float64(1-2*rng.IntN(2)) }},
		{"uniform", func() float64 { return rng.Float64() - 0.5 }},
	} {
		const trials, n = 4000, 10
		covered := 0
		x := make([]float64, n)
		for range trials {
			for i := range x {
				x[i] = 0.3 + 0.02*noise.draw()
			}
			lo, hi := walshCI(walshAverages(x), n, 0.95)
			if lo <= 0.3 && 0.3 <= hi {
				covered++
			}
		}
		// The exact coverage at n = 10 is 1 - 2*25/1024 = 0.951; 4000
		// trials put 0.94 more than three standard errors below it.
		if got := float64(covered) / trials; got < 0.94 {
			t.Errorf("%s noise: covered %.3f of trials", noise.name, got)
		}
	}
}
