package verdict

import (
	"math"
	"slices"
)

// MethodPaired names the statistics every new bench uses. The two runs of
// a pair ran back to back, so whatever slowed the machine down for a while
// (another job, a frequency change) hit both: the pair's log ratio
// ln(baseline/candidate) cancels it, where a comparison of the two sides'
// medians or ranks keeps it as noise. The speedup is exp of the
// Hodges-Lehmann estimate of the log ratios (the median of their Walsh
// averages, the pairwise means), its CI the distribution-free interval
// that goes with it (Walsh averages at ranks from the signed-rank
// distribution), and p the two-sided Wilcoxon signed-rank test of the log
// ratios against 0. The interval holds its confidence at the 10 pairs a
// first batch has, where a percentile bootstrap of the estimate is too
// narrow (A/A calibration called 3 of 40 sessions slower with it), and it
// needs no seed. Calibration (README) shows what it buys under load.
const MethodPaired = "paired-log-ratio"

// pairedStats fills st's speedup, CI and p from the pairs b, c with the
// paired method.
func pairedStats(st *MetricStats, b, c []float64, confidence float64) {
	d := logRatios(b, c)
	if len(d) == 0 {
		st.Speedup, st.CILow, st.CIHigh = 1, 1, 1
		return
	}
	w := walshAverages(d)
	st.Speedup = math.Exp(hodgesLehmann(w))
	lo, hi := walshCI(w, len(d), confidence)
	st.CILow, st.CIHigh = math.Exp(lo), math.Exp(hi)
	st.P = signedRankP(d)
}

// logRatios are ln(b/c) of each pair; a pair with a value that is not
// positive has no ratio and is left out.
func logRatios(b, c []float64) []float64 {
	d := make([]float64, 0, len(b))
	for i := range b {
		if b[i] > 0 && c[i] > 0 {
			d = append(d, math.Log(b[i]/c[i]))
		}
	}
	return d
}

// walshAverages are the n(n+1)/2 pairwise means (x_i + x_j)/2, i <= j, of
// x, sorted.
func walshAverages(x []float64) []float64 {
	a := make([]float64, 0, len(x)*(len(x)+1)/2)
	for i := range x {
		for j := i; j < len(x); j++ {
			a = append(a, (x[i]+x[j])/2)
		}
	}
	slices.Sort(a)
	return a
}

// hodgesLehmann is the median of the sorted Walsh averages w.
func hodgesLehmann(w []float64) float64 {
	m := len(w)
	if m%2 == 1 {
		return w[m/2]
	}
	return (w[m/2-1] + w[m/2]) / 2
}

// walshCI is the confidence interval of the Hodges-Lehmann estimate of n
// values from their sorted Walsh averages w: w[k-1] and w[M-k], where k is
// the smallest t with P(T <= t) >= (1-confidence)/2 for the signed-rank
// statistic T of n values (exact up to 50 values, the normal
// approximation beyond), as R's wilcox.test(conf.int = TRUE) chooses it.
// Its coverage is exact for values symmetric about their centre; with
// few values it is wider than asked, never narrower.
func walshCI(w []float64, n int, confidence float64) (lo, hi float64) {
	m := len(w)
	alpha := (1 - confidence) / 2
	var k int
	if n <= 50 {
		count := signedRankCounts(n)
		total := math.Ldexp(1, n)
		cum := 0.0
		for t, c := range count {
			cum += c
			if cum/total >= alpha {
				k = t
				break
			}
		}
	} else {
		fn := float64(n)
		z := -math.Sqrt2 * math.Erfinv(2*alpha-1)
		k = int(math.Floor(float64(m)/2 - z*math.Sqrt(fn*(fn+1)*(2*fn+1)/24)))
	}
	k = min(max(k, 1), (m+1)/2)
	return w[k-1], w[m-k]
}

// signedRankCounts[s] is how many of the 2^n sign patterns of n ranks give
// the signed-rank statistic s.
func signedRankCounts(n int) []float64 {
	top := n * (n + 1) / 2
	count := make([]float64, top+1)
	count[0] = 1
	for r := 1; r <= n; r++ {
		for s := top; s >= r; s-- {
			count[s] += count[s-r]
		}
	}
	return count
}

// signedRankP is the two-sided p-value of Wilcoxon's signed-rank test that
// the values d are symmetric about 0. Zeros are dropped; ranks of tied
// magnitudes are averaged. Up to 50 values without ties the exact null
// distribution is used, otherwise the normal approximation with tie and
// continuity corrections, as R's wilcox.test does.
func signedRankP(d []float64) float64 {
	var x []float64
	for _, v := range d {
		if v != 0 {
			x = append(x, v)
		}
	}
	n := len(x)
	if n == 0 {
		return 1
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int {
		a, b := math.Abs(x[i]), math.Abs(x[j])
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	ranks := make([]float64, n)
	ties := false
	var tieSum float64
	for i := 0; i < n; {
		j := i
		for j+1 < n && math.Abs(x[idx[j+1]]) == math.Abs(x[idx[i]]) {
			j++
		}
		if j > i {
			ties = true
			t := float64(j - i + 1)
			tieSum += t*t*t - t
		}
		for k := i; k <= j; k++ {
			ranks[idx[k]] = float64(i+j+2) / 2
		}
		i = j + 1
	}
	var wPlus float64
	for i, v := range x {
		if v > 0 {
			wPlus += ranks[i]
		}
	}
	if !ties && n <= 50 {
		return exactSignedRankP(n, int(wPlus))
	}
	fn := float64(n)
	mean := fn * (fn + 1) / 4
	sd := math.Sqrt(fn*(fn+1)*(2*fn+1)/24 - tieSum/48)
	if sd == 0 {
		return 1
	}
	z := wPlus - mean
	z = (z - math.Copysign(math.Min(0.5, math.Abs(z)), z)) / sd
	return math.Min(1, math.Erfc(math.Abs(z)/math.Sqrt2))
}

// exactSignedRankP counts, over the 2^n equally likely sign patterns, how
// many give a statistic at least as far from its mean as w.
func exactSignedRankP(n, w int) float64 {
	top := n * (n + 1) / 2
	count := signedRankCounts(n)
	total := math.Ldexp(1, n)
	var low, high float64
	for s := 0; s <= top; s++ {
		if s <= w {
			low += count[s]
		}
		if s >= w {
			high += count[s]
		}
	}
	return math.Min(1, 2*math.Min(low, high)/total)
}
