package stats

import "math"

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
// planned: each look's level is what the spending function adds at that
// look, so the levels sum to the whole spend, alpha when the last look is
// at planned. By the union bound no look sequence can then reject a true
// null with a chance above alpha, whatever the dependence between the
// looks' statistics, as long as each look's test holds its own level (the
// signed-rank interval does, exactly or conservatively). The exact
// boundaries of a statistic with independent normal increments would spend
// the same alpha a little more boldly at the last look, but a rank
// statistic of overlapping samples is only near that, and simulation
// (verdict's TestDecisionRuleHoldsItsErrorRatesInSimulation) finds them
// over the rate at the boundary by a few hundredths of a percent. Looks
// past planned count as the last.
func Levels(spending string, alpha float64, looks []int, planned int) []float64 {
	out := make([]float64, len(looks))
	spent := 0.0
	for i, n := range looks {
		a := Spend(spending, alpha, float64(n)/float64(max(planned, 1)))
		out[i] = max(a-spent, 0)
		spent = max(spent, a)
	}
	return out
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
