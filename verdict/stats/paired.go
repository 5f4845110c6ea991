package stats

import (
	"math"
	"slices"
	"sync"
)

// Paired is the speedup of one metric from its pairs: exp of the
// Hodges-Lehmann estimate of the pairs' log ratios ln(baseline/candidate)
// (the median of their Walsh averages), with signed-rank intervals at any
// confidence (Interval) and the two-sided Wilcoxon signed-rank p of the
// log ratios against 0. The two runs of a pair ran back to back, so
// whatever slowed the machine for a while hit both and cancels in the
// ratio. The interval is distribution-free and holds its confidence at the
// 10 pairs of a first batch, where a bootstrap of the estimate is too
// narrow. A pair with a value that is not positive has no ratio and is
// left out.
type Paired struct {
	n int
	w []float64 // the sorted Walsh averages of the log ratios
	d []float64
}

// PairedOf prepares the paired statistics of the pairs b[i], c[i].
func PairedOf(b, c []float64) Paired {
	d := LogRatios(b, c)
	return Paired{n: len(d), w: WalshAverages(d), d: d}
}

// Extend is PairedOf(b, c) for pairs that begin with the ones p was made
// of, which a sequential bench's every look has: only the Walsh averages
// of the new log ratios are sorted, and merged with p's. The result is
// PairedOf's to the bit; when p's log ratios are not the new ones' first,
// it is PairedOf(b, c) itself. p is not changed.
func (p Paired) Extend(b, c []float64) Paired {
	d := LogRatios(b, c)
	if len(d) < p.n || !slices.Equal(d[:p.n], p.d) {
		return Paired{n: len(d), w: WalshAverages(d), d: d}
	}
	add := make([]float64, 0, len(d)*(len(d)+1)/2-len(p.w))
	for i := p.n; i < len(d); i++ {
		for j := 0; j <= i; j++ {
			add = append(add, (d[j]+d[i])/2)
		}
	}
	slices.Sort(add)
	w := make([]float64, 0, len(p.w)+len(add))
	i, j := 0, 0
	for i < len(p.w) && j < len(add) {
		if add[j] < p.w[i] {
			w, j = append(w, add[j]), j+1
		} else {
			w, i = append(w, p.w[i]), i+1
		}
	}
	w = append(append(w, p.w[i:]...), add[j:]...)
	return Paired{n: len(d), w: w, d: d}
}

// Speedup is exp of the Hodges-Lehmann estimate; 1 without pairs.
func (p Paired) Speedup() float64 {
	if p.n == 0 {
		return 1
	}
	return math.Exp(HodgesLehmann(p.w))
}

// Interval is the speedup's signed-rank interval at confidence; without
// pairs it is [1, 1] and unbounded.
func (p Paired) Interval(confidence float64) Interval {
	if p.n == 0 {
		return Interval{Low: 1, High: 1}
	}
	lo, hi, ok := WalshCI(p.w, p.n, confidence)
	return Interval{Low: math.Exp(lo), High: math.Exp(hi), Bounded: ok}
}

// P is the two-sided Wilcoxon signed-rank p of the log ratios.
func (p Paired) P() float64 { return SignedRankP(p.d) }

// LogRatios are ln(b/c) of each pair whose values are both positive.
func LogRatios(b, c []float64) []float64 {
	d := make([]float64, 0, len(b))
	for i := range b {
		if b[i] > 0 && c[i] > 0 {
			d = append(d, math.Log(b[i]/c[i]))
		}
	}
	return d
}

// WalshAverages are the n(n+1)/2 pairwise means (x_i + x_j)/2, i <= j, of
// x, sorted.
func WalshAverages(x []float64) []float64 {
	a := make([]float64, 0, len(x)*(len(x)+1)/2)
	for i := range x {
		for j := i; j < len(x); j++ {
			a = append(a, (x[i]+x[j])/2)
		}
	}
	slices.Sort(a)
	return a
}

// HodgesLehmann is the median of the sorted Walsh averages w.
func HodgesLehmann(w []float64) float64 {
	m := len(w)
	if m%2 == 1 {
		return w[m/2]
	}
	return (w[m/2-1] + w[m/2]) / 2
}

// WalshCI is the confidence interval of the Hodges-Lehmann estimate of n
// values from their sorted Walsh averages w: w[k-1] and w[M-k], where k is
// the smallest t with P(T <= t) >= (1-confidence)/2 for the signed-rank
// statistic T of n values (exact up to 50 values, the normal
// approximation beyond), as R's wilcox.test(conf.int = TRUE) chooses it.
// Its coverage is exact for values symmetric about their centre; with
// few values it is wider than asked, never narrower, as long as bounded
// is true. When even P(T <= 0) = 2^-n reaches the tail (k = 0), no rank
// gives the confidence: bounded is false and lo, hi are the extremes.
func WalshCI(w []float64, n int, confidence float64) (lo, hi float64, bounded bool) {
	m := len(w)
	alpha := (1 - confidence) / 2
	var k int
	if n <= exactMax {
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
	bounded = k >= 1
	k = min(max(k, 1), (m+1)/2)
	return w[k-1], w[m-k], bounded
}

// exactMax is the most values whose signed-rank distribution is counted
// exactly; beyond it the normal approximation is as good.
const exactMax = 50

// signedRankTable[n][s] is how many of the 2^n sign patterns of n ranks
// give the signed-rank statistic s, for n up to exactMax: built once, as
// each look of each verdict asks for it.
var signedRankTable = sync.OnceValue(func() [][]float64 {
	t := make([][]float64, exactMax+1)
	t[0] = []float64{1}
	for n := 1; n <= exactMax; n++ {
		top := n * (n + 1) / 2
		c := make([]float64, top+1)
		copy(c, t[n-1])
		for s := top; s >= n; s-- {
			c[s] += c[s-n]
		}
		t[n] = c
	}
	return t
})

func signedRankCounts(n int) []float64 { return signedRankTable()[n] }

// SignedRankP is the two-sided p-value of Wilcoxon's signed-rank test that
// the values d are symmetric about 0. Zeros are dropped; ranks of tied
// magnitudes are averaged. Up to 50 values without ties the exact null
// distribution is used, otherwise the normal approximation with tie and
// continuity corrections, as R's wilcox.test does.
func SignedRankP(d []float64) float64 {
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
	if !ties && n <= exactMax {
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
	count := signedRankCounts(n)
	total := math.Ldexp(1, n)
	var low, high float64
	for s, c := range count {
		if s <= w {
			low += c
		}
		if s >= w {
			high += c
		}
	}
	return math.Min(1, 2*math.Min(low, high)/total)
}
