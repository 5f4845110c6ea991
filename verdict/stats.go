package verdict

import (
	"slices"

	"github.com/hone-perf/hone/verdict/stats"
)

// DefaultResamples is the number of bootstrap resamples per CI.
const DefaultResamples = 4000

// Methods of a bench's statistics (Bench.Method).
const (
	// MethodEquivalence is the paired statistics (MethodPaired) decided by
	// a group-sequential design with two budgets: "faster" and "slower"
	// look after every batch and read the interval at the level
	// Lan-DeMets spending of O'Brien-Fleming type adds there, over the
	// one-sided rate (1-confidence)/2 of each direction; "same" is a
	// hypothesis of its own (two one-sided tests against the band's
	// edges), looks after every half batch too, and spends 1-confidence at
	// each edge by Pocock type (see planLooks). Every new bench uses it.
	MethodEquivalence = "paired-log-ratio+lan-demets+tost"
	// MethodSequential is MethodEquivalence as entries before it have it:
	// looks after every batch only, "same" spending (1-confidence)/2.
	MethodSequential = "paired-log-ratio+lan-demets"
	// MethodPaired is the paired statistics with every look at the full
	// confidence, in entries written before MethodSequential: the
	// pair's log ratio ln(baseline/candidate) cancels whatever slowed the
	// machine for both runs of the pair (see stats.Paired).
	MethodPaired = "paired-log-ratio"
)

// paired reports whether method computes the paired statistics.
func paired(method string) bool { return method == MethodPaired || sequential(method) }

// sequential reports whether method decides by a group-sequential design
// whose levels the bench records (Bench.Looks).
func sequential(method string) bool {
	return method == MethodSequential || method == MethodEquivalence
}

// computeStats derives the statistics of one metric from its samples with
// the given method (paired, or "" for entries written before it: the
// ratio of the two sides' medians, a bootstrap of it over whole pairs, and
// a Mann-Whitney U p-value). The same samples, seed and resample count
// always give the same numbers.
func computeStats(s Samples, confidence float64, seed int64, resamples int, method string) (st MetricStats) {
	st, _ = statsAndInterval(s, confidence, seed, resamples, method)
	return st
}

// statsAndInterval is computeStats with the interval as the decision rule
// reads it, which knows whether the confidence was within reach.
func statsAndInterval(s Samples, confidence float64, seed int64, resamples int, method string) (st MetricStats, ci stats.Interval) {
	n := min(len(s.Baseline), len(s.Candidate))
	b, c := s.Baseline[:n], s.Candidate[:n]
	st = MetricStats{Metric: s.Metric, Unit: s.Unit, Pairs: n, P: 1, Confidence: confidence}
	if n == 0 {
		return st, ci
	}
	st.BaselineMedian, st.CandidateMedian = stats.Median(b), stats.Median(c)
	st.BaselineOutliers, st.CandidateOutliers = stats.TukeyOutliers(b), stats.TukeyOutliers(c)
	st.BaselineCV, st.CandidateCV = stats.RobustCV(b), stats.RobustCV(c)
	if paired(method) {
		p := stats.PairedOf(b, c)
		ci = p.Interval(confidence)
		st.Speedup, st.P = p.Speedup(), p.P()
	} else {
		st.Speedup = stats.Ratio(st.BaselineMedian, st.CandidateMedian)
		ci.Low, ci.High = stats.BootstrapCI(b, c, confidence, seed, resamples)
		ci.Bounded = true
		st.P = stats.MannWhitneyP(b, c, confidence)
	}
	st.CILow, st.CIHigh = ci.Low, ci.High
	if st.Speedup > 0 {
		st.DetectableChange = (st.CIHigh - st.CILow) / 2 / st.Speedup
	}
	return st, ci
}

// Sequential decisions after a batch.
const (
	decFaster      = stats.Faster
	decSlower      = stats.Slower
	decSame        = stats.Same
	decMeasureMore = stats.MeasureMore
	decUndecided   = stats.Undecided
)

// Look is one planned look of a bench's sequential design: after Pairs
// pairs, "faster" and "slower" read the speedup interval at Confidence,
// "same" the one at SameConfidence. A Confidence of 1 is a look for
// "same" alone.
type Look struct {
	Pairs          int     `toml:"pairs" json:"pairs"`
	Confidence     float64 `toml:"confidence" json:"confidence"`
	SameConfidence float64 `toml:"same_confidence" json:"same_confidence"`
}

// planLooks are the looks of a MethodEquivalence bench that starts after
// pooled pairs and measures batch pairs per batch up to maxPairs.
//
// "faster" and "slower" look after each batch and spend the one-sided
// rate (1-confidence)/2 of each direction by O'Brien-Fleming type: an
// early look needs an overwhelming difference, the last keeps most of
// the rate. Stopping on "same" can only turn an accept or a "slower" into
// a rejection for no change, so it spends nothing of those rates, and
// "same" is tested as the hypothesis it is: two one-sided tests that the
// speedup lies inside the band, each at the conventional equivalence
// level 1-confidence (a 90% interval at 95%, were there one look), spread
// by Pocock type over looks after every batch and halfway through every
// batch after the first, so that a candidate that changes nothing stops
// as soon as its pairs show it. The first batch has no look halfway: at
// half of a first batch of 10 no signed-rank interval reaches any level
// the budget could give it. The levels are the union bound's (see
// stats.Levels), and the simulation in verdict's tests holds both rates.
func planLooks(pooled, batch, maxPairs int, confidence float64) []Look {
	var ends, all []int
	for n := pooled; n < maxPairs && batch > 0; {
		end := min(n+batch, maxPairs)
		if mid := n + (batch+1)/2; n > pooled && mid < end {
			all = append(all, mid)
		}
		all, ends = append(all, end), append(ends, end)
		n = end
	}
	diff := stats.Levels(stats.OBrienFleming, (1-confidence)/2, ends, maxPairs)
	same := stats.Levels(stats.Pocock, 1-confidence, all, maxPairs)
	looks := make([]Look, len(all))
	for i, n := range all {
		looks[i] = Look{Pairs: n, Confidence: 1, SameConfidence: 1 - 2*same[i]}
		if k := slices.Index(ends, n); k >= 0 {
			looks[i].Confidence = 1 - 2*diff[k]
		}
	}
	return looks
}

// look is the plan of the k-th look (0-based); past the plan, the last.
func (b *Bench) look(k int) Look {
	if len(b.Looks) == 0 {
		return Look{Confidence: b.Confidence, SameConfidence: b.Confidence}
	}
	return b.Looks[min(k, len(b.Looks)-1)]
}

// decideLook is the sequential decision at the k-th look on the deciding
// samples measured by then, with the statistics at the look's level,
// under the bench's own method: the design's levels, or for older entries
// every look at the full confidence.
func (b *Bench) decideLook(s Samples, k int) (string, MetricStats) { return b.decideAt(s, b.look(k)) }

// decideAt is decideLook at the levels of lk.
func (b *Bench) decideAt(s Samples, lk Look) (string, MetricStats) {
	if !paired(b.Method) {
		st, ci := statsAndInterval(s, lk.Confidence, b.Seed, b.Resamples, b.Method)
		return stats.DecideFixed(st.Pairs, ci, st.P, b.Threshold, b.Confidence), st
	}
	// Only what the rule and the progress line read: each look of every
	// verdict, and of the simulation that proves the rule, pays for it.
	n := min(len(s.Baseline), len(s.Candidate))
	b.paired = b.paired.Extend(s.Baseline[:n], s.Candidate[:n])
	p := b.paired
	ci := p.Interval(lk.Confidence)
	st := MetricStats{Metric: s.Metric, Unit: s.Unit, Pairs: n, Speedup: p.Speedup(), CILow: ci.Low, CIHigh: ci.High, Confidence: lk.Confidence}
	if b.Method == MethodPaired {
		return stats.DecideFixed(n, ci, p.P(), b.Threshold, b.Confidence), st
	}
	same := p.Interval(lk.SameConfidence)
	if lk.Confidence >= 1 {
		// A look for "same" alone: its interval is the one to show.
		st.CILow, st.CIHigh, st.Confidence = same.Low, same.High, lk.SameConfidence
	}
	return stats.Decide(n, ci, same, b.Threshold), st
}

// finalConfidence is the level of the interval the final decision read,
// at which the stored statistics are computed: under MethodEquivalence
// the "same" interval for a "same" or a look for "same" alone, else the
// "faster"/"slower" one, as entries before it always had.
// FinalConfidence is the level of the bench's reported intervals: the
// deciding look's.
func (b *Bench) FinalConfidence() float64 { return b.finalConfidence() }

func (b *Bench) finalConfidence() float64 {
	k := max(len(b.Decisions)-1, 0)
	lk := b.look(k)
	if b.Method == MethodEquivalence && (lk.Confidence >= 1 || k < len(b.Decisions) && b.Decisions[k] == decSame) {
		return lk.SameConfidence
	}
	return lk.Confidence
}

// toNextLook is how many pairs to measure before the next look: up to the
// planned look's pairs, or for benches without a design (and past it) a
// batch, never past max_pairs.
func (b *Bench) toNextLook() int {
	if b.Method == MethodEquivalence && len(b.Decisions) < len(b.Looks) {
		return min(b.Looks[len(b.Decisions)].Pairs, b.MaxPairs) - b.Pairs
	}
	return min(b.BatchSize, b.MaxPairs-b.Pairs)
}

// decide makes the sequential decision at the next look on the deciding
// samples s, "undecided" in place of "measure-more" at max_pairs, and
// records it.
func (b *Bench) decide(s Samples) (string, MetricStats) {
	d, st := b.decideLook(s, len(b.Decisions))
	if d == decMeasureMore && b.Pairs >= b.MaxPairs {
		d = decUndecided
	}
	b.Decisions = append(b.Decisions, d)
	return d, st
}
