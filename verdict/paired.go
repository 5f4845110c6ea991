package verdict

import (
	"math"
	"math/rand/v2"
	"slices"
)

// MethodPaired names the statistics every new bench uses. The two runs of
// a pair ran back to back, so whatever slowed the machine down for a while
// (another job, a frequency change) hit both: the pair's log ratio
// ln(baseline/candidate) cancels it, where a comparison of the two sides'
// medians or ranks keeps it as noise. The speedup is exp of the
// Hodges-Lehmann estimate of the log ratios (the median of their pairwise
// means), its CI a seeded percentile bootstrap of that estimate over whole
// pairs, and p the two-sided Wilcoxon signed-rank test of the log ratios
// against 0. Calibration (README) shows what it buys under load.
const MethodPaired = "paired-log-ratio"

// pairedStats fills st's speedup, CI and p from the pairs b, c with the
// paired method.
func pairedStats(st *MetricStats, b, c []float64, confidence float64, seed int64, resamples int) {
	d := logRatios(b, c)
	if len(d) == 0 {
		st.Speedup, st.CILow, st.CIHigh = 1, 1, 1
		return
	}
	w := newWalsh(len(d))
	st.Speedup = math.Exp(w.hodgesLehmann(d))
	rng := rand.New(rand.NewPCG(uint64(seed), 0x686f6e65))
	rs := make([]float64, resamples)
	x := make([]float64, len(d))
	for r := range rs {
		for i := range x {
			x[i] = d[rng.IntN(len(d))]
		}
		rs[r] = w.hodgesLehmann(x)
	}
	slices.Sort(rs)
	alpha := (1 - confidence) / 2
	st.CILow, st.CIHigh = math.Exp(quantileSorted(rs, alpha)), math.Exp(quantileSorted(rs, 1-alpha))
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

// walsh is scratch space for the n(n+1)/2 pairwise means of n values.
type walsh struct{ avg []float64 }

func newWalsh(n int) *walsh { return &walsh{avg: make([]float64, n*(n+1)/2)} }

// hodgesLehmann is the median of the pairwise means (x_i + x_j)/2, i <= j.
func (w *walsh) hodgesLehmann(x []float64) float64 {
	a := w.avg[:0]
	for i := range x {
		for j := i; j < len(x); j++ {
			a = append(a, (x[i]+x[j])/2)
		}
	}
	m := len(a)
	k := m / 2
	hi := selectKth(a, k)
	if m%2 == 1 {
		return hi
	}
	// After selection a[:k] holds the k smallest: the other middle value
	// is their largest.
	return (hi + slices.Max(a[:k])) / 2
}

// selectKth reorders a so that a[k] is the value it would have sorted, with
// no larger value before it and no smaller one after, and returns it
// (Hoare's selection with middle pivots: the inputs are not adversarial).
func selectKth(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := a[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
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
	count := make([]float64, top+1)
	count[0] = 1
	for r := 1; r <= n; r++ {
		for s := top; s >= r; s-- {
			count[s] += count[s-r]
		}
	}
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
