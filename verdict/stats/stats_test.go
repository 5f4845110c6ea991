package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestOutliersAndCV(t *testing.T) {
	xs := []float64{10, 10.1, 9.9, 10, 10.05, 30}
	if n := TukeyOutliers(xs); n != 1 {
		t.Errorf("outliers = %d, want 1", n)
	}
	if cv := RobustCV(xs); cv <= 0 || cv > 0.02 {
		t.Errorf("robust CV %v should ignore the outlier", cv)
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
	if p := SignedRankP(d); math.Abs(p-0.0390625) > 1e-9 {
		t.Errorf("p = %v, want 0.0390625", p)
	}
	// With ties the normal approximation: a symmetric sample gives 1.
	if p := SignedRankP([]float64{1, -1, 2, -2, 0}); p != 1 {
		t.Errorf("symmetric sample p = %v", p)
	}
	if p := SignedRankP(nil); p != 1 {
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
		if got := HodgesLehmann(WalshAverages(slices.Clone(tc.x))); got != tc.want {
			t.Errorf("HL(%v) = %v, want %v", tc.x, got, tc.want)
		}
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
		w := WalshAverages(x)
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
		lo, hi, _ := WalshCI(w, n, 0.95)
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
			lo, hi, _ := WalshCI(WalshAverages(x), n, 0.95)
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

// With 5 pairs every sign pattern has chance 1/32, more than the 2.5% tail
// of a 95% interval: no rank gives that confidence, and the interval says
// so instead of shrinking to the extremes' 94%.
func TestWalshCIOutOfReach(t *testing.T) {
	w := WalshAverages([]float64{0.1, 0.2, 0.3, 0.4, 0.5})
	if _, _, ok := WalshCI(w, 5, 0.95); ok {
		t.Error("a 95% interval of 5 values is bounded")
	}
	if _, _, ok := WalshCI(w, 5, 0.90); !ok {
		t.Error("a 90% interval of 5 values is out of reach")
	}
}

func TestExtendIsPairedOfToTheBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b, c []float64
	var p Paired
	for _, n := range []int{10, 15, 20, 25, 30} {
		for len(b) < n {
			b, c = append(b, 1+0.02*rng.NormFloat64()), append(c, 1+0.02*rng.NormFloat64())
		}
		if n == 20 {
			c[19] = 0 // a pair without a ratio
		}
		p = p.Extend(b, c)
		if want := PairedOf(b, c); !reflect.DeepEqual(p, want) {
			t.Fatalf("at %d pairs Extend gave %+v, PairedOf %+v", n, p, want)
		}
	}
	b[3] *= 1.1 // not the pairs p was made of
	if got, want := p.Extend(b, c), PairedOf(b, c); !reflect.DeepEqual(got, want) {
		t.Errorf("a changed pair: Extend gave %+v, PairedOf %+v", got, want)
	}
}
