package benchformat

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hone-perf/hone/internal/errs"
)

// Samples are one benchmark's per-op figures (CPUPerOp) over a bench:
// Baseline[i] and Candidate[i] were measured in the same pair.
type Samples struct {
	Name      string
	Baseline  []float64
	Candidate []float64
}

// Figures summarise one benchmark, or the geometric mean of all of them.
// Speedup is baseline/candidate (above 1: the candidate is faster), with
// its bootstrap confidence interval [CILow, CIHigh].
type Figures struct {
	Name            string  `json:"name"`
	Pairs           int     `json:"pairs"`
	BaselineMedian  float64 `json:"baseline_median"`
	CandidateMedian float64 `json:"candidate_median"`
	Speedup         float64 `json:"speedup"`
	CILow           float64 `json:"ci_low"`
	CIHigh          float64 `json:"ci_high"`
}

// Summary is what a verdict reports about a harness bench.
type Summary struct {
	Benchmarks []Figures `json:"benchmarks"`
	// Geomean is the speedup of the geometric mean over the benchmarks:
	// each pair's geometric mean of the baseline's figures against that of
	// the candidate's, summarised as one benchmark would be. Its medians
	// are of the pairs' geometric means. Name is "geomean".
	Geomean Figures `json:"geomean"`
}

// Summarize computes each benchmark's figures and their geometric mean.
// Every benchmark must have the same number of pairs (at least one) and
// positive, finite figures. The confidence intervals are percentile
// bootstraps that resample whole pairs, the same resampled pairs for every
// benchmark, from a generator seeded with seed: the same samples, seed and
// resample count always give the same Summary.
func Summarize(samples []Samples, confidence float64, seed int64, resamples int) (*Summary, error) {
	if err := checkSamples(samples, confidence, resamples); err != nil {
		return nil, err
	}
	s := &Summary{}
	for _, b := range samples {
		s.Benchmarks = append(s.Benchmarks, figures(b.Name, b.Baseline, b.Candidate, confidence, seed, resamples))
	}
	gb, gc := Geomeans(samples)
	s.Geomean = figures("geomean", gb, gc, confidence, seed, resamples)
	return s, nil
}

func checkSamples(samples []Samples, confidence float64, resamples int) error {
	if len(samples) == 0 {
		return errs.Invalidf("no benchmark samples to summarise")
	}
	if !(confidence > 0 && confidence < 1) {
		return errs.Invalidf("confidence %g is not between 0 and 1", confidence)
	}
	if resamples < 1 {
		return errs.Invalidf("resamples %d is not positive", resamples)
	}
	n := len(samples[0].Baseline)
	for _, b := range samples {
		if len(b.Baseline) != n || len(b.Candidate) != n || n == 0 {
			return errs.Invalidf("benchmark %.100q has %d baseline and %d candidate figures; every benchmark needs the same number of pairs, at least one",
				b.Name, len(b.Baseline), len(b.Candidate))
		}
		for _, x := range append(slices.Clone(b.Baseline), b.Candidate...) {
			if !(x > 0) || math.IsInf(x, 0) {
				return errs.Invalidf("benchmark %.100q has a figure %g; per-op figures must be positive and finite", b.Name, x)
			}
		}
	}
	return nil
}

func figures(name string, b, c []float64, confidence float64, seed int64, resamples int) Figures {
	f := Figures{Name: name, Pairs: len(b), BaselineMedian: median(b), CandidateMedian: median(c)}
	f.Speedup = f.BaselineMedian / f.CandidateMedian
	f.CILow, f.CIHigh = SpeedupCI(b, c, confidence, seed, resamples)
	return f
}

// Geomeans returns, for each pair, the geometric mean of the baseline's
// figures over the benchmarks and that of the candidate's. The samples
// must be as Summarize requires.
func Geomeans(samples []Samples) (baseline, candidate []float64) {
	n := len(samples[0].Baseline)
	baseline, candidate = make([]float64, n), make([]float64, n)
	for i := range n {
		var lb, lc float64
		for _, s := range samples {
			lb += math.Log(s.Baseline[i])
			lc += math.Log(s.Candidate[i])
		}
		k := float64(len(samples))
		baseline[i], candidate[i] = math.Exp(lb/k), math.Exp(lc/k)
	}
	return baseline, candidate
}

// SpeedupCI is the percentile bootstrap confidence interval of the ratio of
// medians baseline/candidate, resampling whole pairs: both runs of a pair
// ran back to back, so load that hits both stays paired in every
// resample, as it was when measured. The generator and the order of draws
// are those of the verdict's cpu-time statistics, so the two agree on the
// same samples and seed.
func SpeedupCI(b, c []float64, confidence float64, seed int64, resamples int) (lo, hi float64) {
	n := min(len(b), len(c))
	if n == 0 || resamples < 1 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x686f6e65))
	rs := make([]float64, resamples)
	bb, cc := make([]float64, n), make([]float64, n)
	for r := range rs {
		for i := range n {
			j := rng.IntN(n)
			bb[i], cc[i] = b[j], c[j]
		}
		slices.Sort(bb)
		slices.Sort(cc)
		rs[r] = quantileSorted(bb, 0.5) / quantileSorted(cc, 0.5)
	}
	slices.Sort(rs)
	alpha := (1 - confidence) / 2
	return quantileSorted(rs, alpha), quantileSorted(rs, 1-alpha)
}

func median(xs []float64) float64 {
	return quantileSorted(slices.Sorted(slices.Values(xs)), 0.5)
}

// quantileSorted interpolates linearly between order statistics.
func quantileSorted(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}
