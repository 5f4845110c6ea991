package verdict

import (
	"math"
	"math/rand/v2"
	"slices"

	"golang.org/x/perf/benchmath"
)

// DefaultResamples is the number of bootstrap resamples per CI.
const DefaultResamples = 4000

// computeStats derives the statistics of one metric from its samples with
// the given method (MethodPaired, or "" for entries written before it: the
// ratio of the two sides' medians, a bootstrap of it over whole pairs, and
// a Mann-Whitney U p-value). The same samples, seed and resample count
// always give the same numbers.
func computeStats(s Samples, confidence float64, seed int64, resamples int, method string) (st MetricStats) {
	n := min(len(s.Baseline), len(s.Candidate))
	b, c := s.Baseline[:n], s.Candidate[:n]
	st = MetricStats{Metric: s.Metric, Unit: s.Unit, Pairs: n, P: 1}
	if n == 0 {
		return st
	}
	st.BaselineMedian, st.CandidateMedian = median(b), median(c)
	st.BaselineOutliers, st.CandidateOutliers = tukeyOutliers(b), tukeyOutliers(c)
	st.BaselineCV, st.CandidateCV = robustCV(b), robustCV(c)
	defer func() {
		if st.Speedup > 0 {
			st.DetectableChange = (st.CIHigh - st.CILow) / 2 / st.Speedup
		}
	}()
	if method == MethodPaired {
		pairedStats(&st, b, c, confidence)
		return st
	}
	st.Speedup = ratio(st.BaselineMedian, st.CandidateMedian)
	st.CILow, st.CIHigh = bootstrapCI(b, c, confidence, seed, resamples)
	if n >= 2 {
		st.P = uTest(b, c, confidence)
	}
	return st
}

// uTest is the Mann-Whitney U test's p for two samples, which it leaves
// as they are.
func uTest(b, c []float64, confidence float64) float64 {
	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = 1 - confidence
	// NewSample sorts its argument in place; the pairs must survive.
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(b), &thr), benchmath.NewSample(slices.Clone(c), &thr)).P
}

func ratio(base, cand float64) float64 {
	if cand == 0 {
		if base == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return base / cand
}

func bootstrapCI(b, c []float64, confidence float64, seed int64, resamples int) (lo, hi float64) {
	n := len(b)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x686f6e65))
	rs := make([]float64, resamples)
	bb, cc := make([]float64, n), make([]float64, n)
	for r := range rs {
		for i := range n {
			j := rng.IntN(n)
			bb[i], cc[i] = b[j], c[j]
		}
		// bb and cc are scratch: sorting them in place saves two
		// allocations per resample.
		slices.Sort(bb)
		slices.Sort(cc)
		rs[r] = ratio(quantileSorted(bb, 0.5), quantileSorted(cc, 0.5))
	}
	slices.Sort(rs)
	alpha := (1 - confidence) / 2
	return quantileSorted(rs, alpha), quantileSorted(rs, 1-alpha)
}

// median does not modify xs.
func median(xs []float64) float64 {
	return quantileSorted(slices.Sorted(slices.Values(xs)), 0.5)
}

// quantileSorted interpolates linearly between order statistics.
func quantileSorted(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}

func tukeyOutliers(xs []float64) int {
	s := slices.Sorted(slices.Values(xs))
	q1, q3 := quantileSorted(s, 0.25), quantileSorted(s, 0.75)
	lo, hi := q1-1.5*(q3-q1), q3+1.5*(q3-q1)
	n := 0
	for _, x := range s {
		if x < lo || x > hi {
			n++
		}
	}
	return n
}

func robustCV(xs []float64) float64 {
	m := median(xs)
	if m == 0 {
		return 0
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return 1.4826 * median(dev) / m
}

// Sequential decisions after a batch.
const (
	decFaster      = "faster"       // CI lower bound >= 1+threshold and p < alpha
	decSlower      = "slower"       // CI upper bound < 1 and p < alpha
	decSame        = "same"         // the whole CI inside (1/(1+threshold), 1+threshold)
	decMeasureMore = "measure-more" // none of the above yet
	decUndecided   = "undecided"    // none of the above at max_pairs
)

// decide is the three-way sequential rule applied after every batch: stop
// when the candidate is clearly faster by the threshold, clearly slower, or
// clearly within the threshold of the baseline; otherwise measure more.
// Requiring the test's p below alpha besides the CI bound guards the
// repeated looks against a bootstrap CI that is too narrow on few pairs.
func decide(st MetricStats, threshold, confidence float64) string {
	alpha := 1 - confidence
	switch {
	case st.Pairs == 0:
		return decMeasureMore
	case st.CILow >= 1+threshold && st.P < alpha:
		return decFaster
	case st.CIHigh < 1 && st.P < alpha:
		return decSlower
	case st.CILow > 1/(1+threshold) && st.CIHigh < 1+threshold:
		return decSame
	}
	return decMeasureMore
}
