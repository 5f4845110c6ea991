package verdict

import (
	"github.com/hone-perf/hone/verdict/stats"
)

// DefaultResamples is the number of bootstrap resamples per CI.
const DefaultResamples = 4000

// Methods of a bench's statistics (Bench.Method).
const (
	// MethodSequential is the paired statistics (MethodPaired) decided by
	// a group-sequential design: each look's "faster" and "slower" use
	// the interval at a level from Lan-DeMets spending with O'Brien-Fleming
	// type boundaries, its "same" one from Pocock-type spending, over the
	// looks planned at the start (Bench.Looks). Every new bench uses it.
	MethodSequential = "paired-log-ratio+lan-demets"
	// MethodPaired is the paired statistics with every look at the full
	// confidence, in entries written before MethodSequential: the
	// pair's log ratio ln(baseline/candidate) cancels whatever slowed the
	// machine for both runs of the pair (see stats.Paired).
	MethodPaired = "paired-log-ratio"
)

// paired reports whether method computes the paired statistics.
func paired(method string) bool { return method == MethodPaired || method == MethodSequential }

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
	st = MetricStats{Metric: s.Metric, Unit: s.Unit, Pairs: n, P: 1}
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
// "same" the one at SameConfidence.
type Look struct {
	Pairs          int     `toml:"pairs" json:"pairs"`
	Confidence     float64 `toml:"confidence" json:"confidence"`
	SameConfidence float64 `toml:"same_confidence" json:"same_confidence"`
}

// planLooks are the looks of a bench that starts after pooled pairs, adds
// batch pairs per look up to maxPairs, and spends the one-sided error rate
// (1-confidence)/2 of each direction over them.
func planLooks(pooled, batch, maxPairs int, confidence float64) []Look {
	var ns []int
	for n := pooled; n < maxPairs && batch > 0; {
		n = min(n+batch, maxPairs)
		ns = append(ns, n)
	}
	alpha := (1 - confidence) / 2
	diff := stats.Levels(stats.OBrienFleming, alpha, ns, maxPairs)
	same := stats.Levels(stats.Pocock, alpha, ns, maxPairs)
	looks := make([]Look, len(ns))
	for i, n := range ns {
		looks[i] = Look{Pairs: n, Confidence: 1 - 2*diff[i], SameConfidence: 1 - 2*same[i]}
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
func (b *Bench) decideLook(s Samples, k int) (string, MetricStats) {
	lk := b.look(k)
	st, ci := statsAndInterval(s, lk.Confidence, b.Seed, b.Resamples, b.Method)
	if b.Method != MethodSequential {
		return stats.DecideFixed(st.Pairs, ci, st.P, b.Threshold, b.Confidence), st
	}
	same := stats.PairedOf(s.Baseline[:st.Pairs], s.Candidate[:st.Pairs]).Interval(lk.SameConfidence)
	return stats.Decide(st.Pairs, ci, same, b.Threshold), st
}

// finalConfidence is the level of the interval the final decision read,
// at which the stored statistics are computed.
func (b *Bench) finalConfidence() float64 {
	return b.look(max(len(b.Decisions)-1, 0)).Confidence
}
