// Package stats holds the pure statistics of a verdict's bench: medians,
// outliers and spread of one side, the paired Hodges-Lehmann speedup with
// its signed-rank interval and Wilcoxon p, the older unpaired method kept
// for entries written with it, the group-sequential design that spreads
// the error rate over the looks, and the decision rule applied at each
// look. Nothing here runs a command or knows an entry: the same numbers in
// always give the same numbers out, so a stored verdict can be recomputed.
package stats

import (
	"math"
	"math/rand/v2"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Ratio is base/cand, with the two degenerate cases spelled out: a zero
// candidate is infinitely faster unless the baseline is zero too.
func Ratio(base, cand float64) float64 {
	if cand == 0 {
		if base == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return base / cand
}

// BootstrapCI is the percentile interval of the ratio of the two sides'
// medians over resamples of whole pairs: the method of entries written
// before the paired one. The seed fixes it.
func BootstrapCI(b, c []float64, confidence float64, seed int64, resamples int) (lo, hi float64) {
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
		rs[r] = Ratio(QuantileSorted(bb, 0.5), QuantileSorted(cc, 0.5))
	}
	slices.Sort(rs)
	alpha := (1 - confidence) / 2
	return QuantileSorted(rs, alpha), QuantileSorted(rs, 1-alpha)
}

// MannWhitneyP is the two-sided Mann-Whitney U p-value of the two sides,
// the p of entries written before the paired method. It does not modify
// b or c.
func MannWhitneyP(b, c []float64, confidence float64) float64 {
	if len(b) < 2 {
		return 1
	}
	thr := benchmath.DefaultThresholds
	thr.CompareAlpha = 1 - confidence
	// NewSample sorts its argument in place; the pairs must survive.
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(b), &thr), benchmath.NewSample(slices.Clone(c), &thr)).P
}

// Median does not modify xs.
func Median(xs []float64) float64 {
	return QuantileSorted(slices.Sorted(slices.Values(xs)), 0.5)
}

// QuantileSorted interpolates linearly between order statistics of the
// sorted s; NaN when s is empty.
func QuantileSorted(s []float64, q float64) float64 {
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

// TukeyOutliers counts values outside the fences 1.5 IQR beyond the
// quartiles.
func TukeyOutliers(xs []float64) int {
	s := slices.Sorted(slices.Values(xs))
	q1, q3 := QuantileSorted(s, 0.25), QuantileSorted(s, 0.75)
	lo, hi := q1-1.5*(q3-q1), q3+1.5*(q3-q1)
	n := 0
	for _, x := range s {
		if x < lo || x > hi {
			n++
		}
	}
	return n
}

// RobustCV is 1.4826 * MAD / median, the coefficient of variation an
// outlier cannot inflate; 0 for a zero median.
func RobustCV(xs []float64) float64 {
	m := Median(xs)
	if m == 0 {
		return 0
	}
	return 1.4826 * MAD(xs) / m
}

// MAD is the median absolute deviation from the median.
func MAD(xs []float64) float64 {
	m := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return Median(dev)
}
