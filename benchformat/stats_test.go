package benchformat

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

// noisy draws n pairs of a workload whose candidate is truly `speedup`
// times faster, with pair-shared load drift and per-run noise.
func noisy(seed uint64, n int, base, speedup float64) (b, c []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for range n {
		load := 1 + 0.3*rng.Float64()
		b = append(b, base*load*(1+0.05*rng.NormFloat64()))
		c = append(c, base/speedup*load*(1+0.05*rng.NormFloat64()))
	}
	return b, c
}

func TestSummarizeIsReproducible(t *testing.T) {
	b1, c1 := noisy(1, 20, 1000, 1.5)
	b2, c2 := noisy(2, 20, 50, 1.1)
	samples := []Samples{{"BenchmarkA", b1, c1}, {"BenchmarkB", b2, c2}}
	s1, err := Summarize(samples, 0.95, 7, 2000)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := Summarize(samples, 0.95, 7, 2000)
	if !reflect.DeepEqual(s1, s2) {
		t.Errorf("same samples and seed, different summaries:\n%+v\n%+v", s1, s2)
	}
	if len(s1.Benchmarks) != 2 || s1.Geomean.Name != "geomean" || s1.Geomean.Pairs != 20 {
		t.Errorf("summary = %+v", s1)
	}
}

func TestSummarizeCoversTheTrueSpeedups(t *testing.T) {
	b1, c1 := noisy(3, 30, 1000, 2)
	b2, c2 := noisy(4, 30, 10, 1.125)
	s, err := Summarize([]Samples{{"A", b1, c1}, {"B", b2, c2}}, 0.95, 1, 4000)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{2, 1.125} {
		f := s.Benchmarks[i]
		if !(f.CILow <= want && want <= f.CIHigh) || !(f.CILow <= f.Speedup && f.Speedup <= f.CIHigh) {
			t.Errorf("%s: speedup %.3f [%.3f, %.3f] does not cover %.3f", f.Name, f.Speedup, f.CILow, f.CIHigh, want)
		}
	}
	// The geometric mean of 2 and 1.125 is 1.5.
	if g := s.Geomean; !(g.CILow <= 1.5 && 1.5 <= g.CIHigh) || math.Abs(g.Speedup-1.5) > 0.05 {
		t.Errorf("geomean %.3f [%.3f, %.3f], want about 1.5", g.Speedup, g.CILow, g.CIHigh)
	}
}

func TestGeomeansArePerPair(t *testing.T) {
	gb, gc := Geomeans([]Samples{{"A", []float64{4, 1}, []float64{1, 1}}, {"B", []float64{1, 9}, []float64{4, 4}}})
	want := [][]float64{{2, 3}, {2, 2}}
	for i, got := range [][]float64{gb, gc} {
		for j := range got {
			if math.Abs(got[j]-want[i][j]) > 1e-12 {
				t.Errorf("geomeans = %v, %v; want %v", gb, gc, want)
			}
		}
	}
}

// One freak fast run of one benchmark, the others unchanged, does not make
// the geometric mean a speedup.
func TestOneBenchmarkCannotCarryTheGeomean(t *testing.T) {
	var samples []Samples
	for i := range 4 {
		b, c := noisy(uint64(10+i), 20, 100, 1)
		samples = append(samples, Samples{Name: string(rune('A' + i)), Baseline: b, Candidate: c})
	}
	samples[0].Candidate[0] /= 100
	s, err := Summarize(samples, 0.95, 1, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if s.Geomean.CILow > 1.02 {
		t.Errorf("one outlier made the geomean a speedup: %+v", s.Geomean)
	}
}

func TestSummarizeRefusesUnusableSamples(t *testing.T) {
	ok := []float64{1, 2}
	for name, c := range map[string]struct {
		samples    []Samples
		confidence float64
		resamples  int
	}{
		"nothing":             {nil, 0.95, 100},
		"no pairs":            {[]Samples{{"A", nil, nil}}, 0.95, 100},
		"uneven pairs":        {[]Samples{{"A", ok, []float64{1}}}, 0.95, 100},
		"benchmarks disagree": {[]Samples{{"A", ok, ok}, {"B", []float64{1}, []float64{1}}}, 0.95, 100},
		"zero":                {[]Samples{{"A", []float64{0, 1}, ok}}, 0.95, 100},
		"not a number":        {[]Samples{{"A", ok, []float64{math.NaN(), 1}}}, 0.95, 100},
		"infinite":            {[]Samples{{"A", ok, []float64{math.Inf(1), 1}}}, 0.95, 100},
		"confidence":          {[]Samples{{"A", ok, ok}}, 1, 100},
		"resamples":           {[]Samples{{"A", ok, ok}}, 0.95, 0},
	} {
		if _, err := Summarize(c.samples, c.confidence, 1, c.resamples); !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: %v, want an invalid-input error", name, err)
		}
	}
}
