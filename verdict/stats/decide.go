package stats

// Decisions of the sequential rule at a look.
const (
	Faster      = "faster"       // the interval's lower bound is at least 1+threshold
	Slower      = "slower"       // its upper bound is below 1
	Same        = "same"         // the equivalence interval lies inside (1/(1+threshold), 1+threshold)
	MeasureMore = "measure-more" // none of these yet
	Undecided   = "undecided"    // none of these at the last look
)

// Interval is a speedup interval. Bounded is false when its confidence
// is out of reach with the pairs there are (see WalshCI): Low and High
// are then the extremes, shown for a reader, and no decision rests on it.
type Interval struct {
	Low, High float64
	Bounded   bool
}

// Decide is the three-way rule at one look of a group-sequential design.
// diff is the interval at the look's level for "faster" and "slower",
// whose levels the design spreads over the looks so that a true speedup
// of exactly 1+threshold is accepted, over all looks together, at most at
// the one-sided rate (1-confidence)/2; same is the interval at the look's
// equivalence level. Stopping on "same" can only turn an accept or a
// "slower" into a rejection for no change, so it spends nothing of the
// accept rate; its own levels bound how often a real change of the
// threshold is called "same".
func Decide(pairs int, diff, same Interval, threshold float64) string {
	switch {
	case pairs == 0:
		return MeasureMore
	case diff.Bounded && diff.Low >= 1+threshold:
		return Faster
	case diff.Bounded && diff.High < 1:
		return Slower
	case same.Bounded && same.Low > 1/(1+threshold) && same.High < 1+threshold:
		return Same
	}
	return MeasureMore
}

// DecideFixed is the rule of entries written before the design: every
// look at the full confidence, which lets a false accept try again at
// each look. It also asks p < alpha: under the paired method the interval
// and p come from the same signed-rank distribution, so that term rejects
// nothing the interval does not; entries of the unpaired method had it
// against a bootstrap interval too narrow on few pairs. Recompute replays
// old entries with it.
func DecideFixed(pairs int, ci Interval, p, threshold, confidence float64) string {
	alpha := 1 - confidence
	switch {
	case pairs == 0:
		return MeasureMore
	case ci.Low >= 1+threshold && p < alpha:
		return Faster
	case ci.High < 1 && p < alpha:
		return Slower
	case ci.Low > 1/(1+threshold) && ci.High < 1+threshold:
		return Same
	}
	return MeasureMore
}
