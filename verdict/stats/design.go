package stats

import (
	"fmt"
	"math"
	"sync"
)

// Alpha-spending functions of a group-sequential design (Lan and DeMets):
// how much of a one-sided error rate alpha may have been spent by the
// information fraction t (pairs so far over pairs planned).
const (
	// OBrienFleming spends almost nothing early: 2 - 2 Phi(z(1-alpha/2) /
	// sqrt(t)). Early looks stop only on an overwhelming difference, and
	// the last look keeps nearly the whole rate, so a verdict that runs
	// to max_pairs loses little to the looks before it.
	OBrienFleming = "obrien-fleming"
	// Pocock spends evenly: alpha ln(1 + (e-1) t). Early looks stop as
	// readily as late ones.
	Pocock = "pocock"
)

// Spend is the part of alpha the spending function has spent by t.
func Spend(spending string, alpha, t float64) float64 {
	t = min(max(t, 0), 1)
	switch spending {
	case OBrienFleming:
		if t == 0 {
			return 0
		}
		return 2 - 2*normalCDF(normalQuantile(1-alpha/2)/math.Sqrt(t))
	case Pocock:
		return alpha * math.Log(1+(math.E-1)*t)
	}
	panic("stats: unknown spending function " + spending)
}

// Levels are the one-sided nominal levels of looks after looks[k] pairs of
// planned: a test at look k rejects at level Levels[k], and the chance that
// any look rejects a true null is at most alpha (exactly alpha for a
// statistic with independent normal increments, which a rank statistic
// approaches). Each look's boundary is solved so that the chance of
// crossing it first equals what the spending function adds at that look,
// by numerical integration of the statistic's path over the earlier looks
// (Armitage, McPherson and Rowe's recursion). Looks past planned count as
// the last. The levels are cached: every verdict's plan is one of few.
func Levels(spending string, alpha float64, looks []int, planned int) []float64 {
	key := fmt.Sprint(spending, alpha, looks, planned)
	if v, ok := levelCache.Load(key); ok {
		return v.([]float64)
	}
	fr := make([]float64, len(looks))
	for i, n := range looks {
		fr[i] = min(float64(n)/float64(max(planned, 1)), 1)
	}
	c := boundaries(func(t float64) float64 { return Spend(spending, alpha, t) }, fr)
	out := make([]float64, len(c))
	for i, z := range c {
		out[i] = 1 - normalCDF(z)
	}
	levelCache.Store(key, out)
	return out
}

var levelCache sync.Map

// boundaries are the z boundaries c_k of an upper one-sided design with
// cumulative spending spend at the increasing information fractions fr. A
// look whose fraction adds nothing to the spending gets +Inf. The
// sub-density of the path W(t_k) (W a standard Brownian motion, Z_k =
// W(t_k)/sqrt(t_k)) that has not yet crossed is carried on a grid from
// look to look.
func boundaries(spend func(float64) float64, fr []float64) []float64 {
	out := make([]float64, len(fr))
	var grid, dens []float64
	prevT, prevA := 0.0, 0.0
	for k, t := range fr {
		a := spend(t)
		inc := a - prevA
		dt := t - prevT
		if dt <= 0 {
			out[k] = math.Inf(1)
			continue
		}
		sd := math.Sqrt(dt)
		// crossing is the chance of a first crossing at this look of the
		// boundary c (in z units).
		crossing := func(c float64) float64 {
			if k == 0 || grid == nil {
				return 1 - normalCDF(c)
			}
			b := c * math.Sqrt(t)
			s := 0.0
			for i, w := range grid {
				s += dens[i] * (1 - normalCDF((b-w)/sd))
			}
			return s
		}
		c := math.Inf(1)
		if inc > 1e-15 {
			lo, hi := -10.0, 40.0
			for range 80 {
				mid := (lo + hi) / 2
				if crossing(mid) > inc {
					lo = mid
				} else {
					hi = mid
				}
			}
			c = (lo + hi) / 2
			prevA = a
		}
		out[k] = c
		// The new sub-density below the boundary, as grid weights (the
		// density times the cell's width, trapezoid rule).
		top := 10 * math.Sqrt(t)
		if !math.IsInf(c, 1) {
			top = c * math.Sqrt(t)
		}
		bottom := -10 * math.Sqrt(t)
		h := min(0.05, sd/6)
		npts := int(math.Ceil((top-bottom)/h)) + 1
		h = (top - bottom) / float64(npts-1)
		ng, nd := make([]float64, npts), make([]float64, npts)
		for j := range ng {
			v := bottom + float64(j)*h
			ng[j] = v
			var f float64
			if grid == nil {
				f = normalPDF(v/sd) / sd
			} else {
				for i, w := range grid {
					f += dens[i] * normalPDF((v-w)/sd) / sd
				}
			}
			wt := h
			if j == 0 || j == npts-1 {
				wt = h / 2
			}
			nd[j] = f * wt
		}
		grid, dens = ng, nd
		prevT = t
	}
	return out
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normalPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
