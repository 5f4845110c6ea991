package verdict

import (
	"fmt"
	"strings"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict/stats"
)

// ReasonImplausible is needs-human-review: faster, but a deciding
// benchmark sped up more than [bench] max_speedup.
const ReasonImplausible = "implausible"

// workUnverifiedPrefix heads the summary of a harness verdict whose bench
// names no outputs: nothing the benchmarks computed was compared.
const workUnverifiedPrefix = "work unverified: "

// benchmarkStats computes each benchmark's statistics from its stored
// samples, as the deciding metric's are computed, replays each deciding
// benchmark's own sequential decision over the bench's batches, and marks
// the deciding ones that regressed: decided slower by that rule (the look's
// CI lies below 1) with an estimate below 1 - threshold. Requiring the
// whole CI below 1 - threshold let a measured 30% regression (0.824
// [0.752, 0.913] at a 10% threshold) ride on a big gain's geometric mean;
// requiring only "slower" rejected honest patches whose untouched
// benchmark moved a few percent with the binary around it (0.955 [0.925,
// 0.987] against 1.054 bare). Recompute calls it on a stored entry.
func benchmarkStats(b *Bench) {
	for i := range b.Benchmarks {
		r := &b.Benchmarks[i]
		r.CPUStats = computeStats(r.CPU, b.finalConfidence(), b.Seed, b.Resamples, b.Method)
		r.WallStats = computeStats(r.Wall, b.finalConfidence(), b.Seed, b.Resamples, b.Method)
		if len(r.Counts) == 0 {
			// An entry from before the loop was measured alone, by the
			// rule it was judged with.
			r.Regressed = r.Decides && r.CPUStats.Pairs > 0 && r.CPUStats.CIHigh < 1
			continue
		}
		r.BaselineScaling = scaling(r.ShortCPU.Baseline, r.LongCPU.Baseline)
		r.CandidateScaling = scaling(r.ShortCPU.Candidate, r.LongCPU.Candidate)
		r.Unmeasurable = unmeasurable(r.CPU)
		r.Decision = ""
		if ds := replay(b, &r.CPU); r.Decides && len(ds) > 0 {
			r.Decision = ds[len(ds)-1]
		}
		r.Regressed = r.Decides && !r.Unmeasurable && r.Decision == decSlower && r.CPUStats.Speedup < 1-b.Threshold
		r.FamilyDecision = ""
		if r.Decides && !r.Unmeasurable {
			r.FamilyDecision = familyDecision(b, &r.CPU, b.deciding())
		}
	}
}

// unmeasurable reports marginal costs that the noise of the runs buries:
// in more than a quarter of the pairs, one side's run at the larger count
// cost no more CPU time than its run at the smaller.
func unmeasurable(s Samples) bool {
	n := min(len(s.Baseline), len(s.Candidate))
	bad := 0
	for i := range n {
		if s.Baseline[i] <= 0 || s.Candidate[i] <= 0 {
			bad++
		}
	}
	return n == 0 || 4*bad > n
}

// FamilyBonferroni is Bench.Family: besides the geometric mean, each
// deciding benchmark is decided alone with the design's "faster" and
// "slower" rates at each look divided by the number of benchmarks that
// decide. The chance that any of m unchanged benchmarks reads as faster is
// then at most the design's own rate (the union bound), so a patch that
// makes one benchmark of many clearly faster, which the geometric mean
// dilutes to nothing (xxhash's inlining: 1.40x on one of sixteen), can be
// accepted on that benchmark without making a false accept likelier.
const FamilyBonferroni = "bonferroni"

// familyDecision is a deciding benchmark's decision at its share of the
// rates (FamilyBonferroni), m benchmarks deciding, over the looks made so
// far: the first look
// whose interval at that level clears the threshold or lies below 1
// decides, as a sequential test stops there; "" when none did.
// With one benchmark deciding, the geometric mean is that benchmark and
// decides alone.
func familyDecision(b *Bench, s *Samples, m int) string {
	if b.Family != FamilyBonferroni || m < 2 || b.Method != MethodEquivalence {
		return ""
	}
	return firstDecision(b, s, m)
}

// firstDecision is the first "faster" or "slower" over the looks made so
// far, each look's rates divided by share; "" when none.
func firstDecision(b *Bench, s *Samples, share int) string {
	for k := range b.Decisions {
		n := min(b.look(k).Pairs, len(s.Baseline), len(s.Candidate))
		if k >= len(b.Looks) || n == 0 {
			break
		}
		lk := b.look(k)
		if lk.Confidence >= 1 {
			continue
		}
		lk.Confidence = 1 - (1-lk.Confidence)/float64(share)
		prefix := Samples{Metric: s.Metric, Unit: s.Unit, Baseline: s.Baseline[:n], Candidate: s.Candidate[:n]}
		if d, _ := b.decideAt(prefix, lk); d == decFaster || d == decSlower {
			return d
		}
	}
	return ""
}

// regressionDoubt is the chance, shared among the benchmarks that decide,
// that mayHaveRegressed blocks an accept over benchmarks a patch left as
// they were; noisierFactor is how much noisier than the baseline's a
// candidate's runs of a benchmark must be to count as hiding something.
// Both read xxhash: an accept of the inlining change was blocked by two
// of its thirteen untouched benchmarks whose estimates fell below 0.98 by
// noise (0.971x [0.908, 1.047]), while the candidates' robust CVs ranged
// from 0.55 to 2.1 times the baselines'.
// clearRegression is how far below 1 an estimate blocks an accept
// whatever its interval: a loss that large is not waved through as noise
// (a real 30% regression under two hogs measured 0.825x [0.619, 1.007]).
const (
	regressionDoubt = 0.05
	noisierFactor   = 3
	clearRegression = 0.1
)

// mayHaveRegressed reports an undecided deciding benchmark whose figures
// do not rule out a regression past the threshold: its estimate (speedup)
// lies below 1 - threshold. For an entry of the geometric mean alone
// that is enough, as it is for an estimate below 1 - clearRegression.
// Otherwise, under FamilyBonferroni, where one of m benchmarks below
// 1 - threshold by chance would block nearly every honest patch of a
// harness with many, the estimate must also be below 1 beyond chance
// (its interval at the one-sided level regressionDoubt/m lies below 1).
// A patch that widens the interval with noise to pass that is held by
// noisier.
func (b *Bench) mayHaveRegressed(s Samples, speedup float64, m int) bool {
	if speedup >= 1-b.Threshold {
		return false
	}
	if b.Family != FamilyBonferroni || speedup < 1-clearRegression {
		return true
	}
	n := min(len(s.Baseline), len(s.Candidate))
	if n == 0 {
		return true
	}
	iv := stats.PairedOf(s.Baseline[:n], s.Candidate[:n]).Interval(1 - 2*regressionDoubt/float64(max(m, 1)))
	return iv.Bounded && iv.High < 1
}

// noisier reports, under FamilyBonferroni, a benchmark whose candidate
// runs are noisierFactor times as spread as the baseline's, in the same
// pairs on the same machine, and spread by at least NoisierFloor of their
// median (none when 0): the median absolute deviation of each side's cost per
// iteration, in absolute terms, since the machine's noise (the start-up's
// and set-up's) is the same number of nanoseconds however fast the loop.
// A patch can make a benchmark noisy to keep a regression from being
// decided, or to stretch an interval over a gain it does not have; the
// figures of such runs are not read either way. On xxhash under load the
// ratio ran from 0.55 to 2.1 over sixteen benchmarks, a 1.66x faster one
// among them at 1.00. The floor is for a baseline whose runs happen to
// agree closely: on one CPU an untouched benchmark's baseline spread 0.47
// ns of 200 and its candidate 1.6 ns, 3.4 times as much by chance in an
// honest verdict, and a spread that small hides no regression past the
// threshold.
func (b *Bench) noisier(s Samples) bool {
	n := min(len(s.Baseline), len(s.Candidate))
	if b.Family != FamilyBonferroni || n == 0 {
		return false
	}
	base, cand := stats.MAD(s.Baseline[:n]), stats.MAD(s.Candidate[:n])
	return base > 0 && cand > noisierFactor*base && cand >= b.NoisierFloor*stats.Median(s.Candidate[:n])
}

// noisierFloorHolds reports whether b's NoisierFloor is the one hone
// sets, half its threshold, or absent as in entries before the floor: an
// entry cannot choose a floor of its own that waves its noise through.
func noisierFloorHolds(b *Bench) bool {
	return b.NoisierFloor == 0 || b.NoisierFloor == b.Threshold/2
}

// settled reports whether the harness bench has measured enough at the
// look just made. A deciding benchmark decided slower past the threshold
// settles it at once: the patch is rejected whatever the rest show. So
// does the geometric mean decided with every deciding benchmark decided
// too; and, under FamilyBonferroni, a benchmark decided faster at its
// share of the rates while none is decided slower or estimated slower
// than the threshold (what judgeHarness holds an accept to), however
// many are still undecided: more pairs would only narrow what is already
// enough to judge.
func settled(b *Bench, benches []*harnessBenchmark, geomean bool) bool {
	k, m := len(b.Decisions)-1, 0
	for _, hb := range benches {
		if hb.res.Decides {
			m++
		}
	}
	all, familyFaster, doubt := true, false, false
	for _, hb := range benches {
		r := hb.res
		if !r.Decides {
			continue
		}
		d, st := b.decideLook(r.CPU, k)
		if d == decSlower && st.Speedup < 1-b.Threshold && !unmeasurable(r.CPU) {
			return true
		}
		all = all && d != decMeasureMore
		doubt = doubt || d == decSlower || b.mayHaveRegressed(r.CPU, st.Speedup, m) || b.noisier(r.CPU)
		familyFaster = familyFaster || familyDecision(b, &r.CPU, m) == decFaster
	}
	return geomean && all || familyFaster && !doubt
}

// excluded names the benchmarks left out of the decision (Excluded).
func (b *Bench) excluded() []string {
	var out []string
	for _, r := range b.Benchmarks {
		if r.Excluded != "" {
			out = append(out, r.Name)
		}
	}
	return out
}

// decidedBy names the benchmarks that decide.
func (b *Bench) decidedBy() []string {
	var out []string
	for _, r := range b.Benchmarks {
		if r.Decides {
			out = append(out, r.Name)
		}
	}
	return out
}

// deciding counts the benchmarks that decide.
func (b *Bench) deciding() int { return len(b.decidedBy()) }

// regressions names the deciding benchmarks that regressed.
func (b *Bench) regressions() []string {
	return b.benchmarksWhere(func(r *BenchmarkResult) bool { return r.Regressed })
}

// benchmarksWhere names the deciding benchmarks that match, each with its
// speedup and CI.
func (b *Bench) benchmarksWhere(match func(*BenchmarkResult) bool) []string {
	var out []string
	for i := range b.Benchmarks {
		if r := &b.Benchmarks[i]; r.Decides && match(r) {
			out = append(out, fmt.Sprintf("%s %.3fx [%.3f, %.3f]", r.Name, r.CPUStats.Speedup, r.CPUStats.CILow, r.CPUStats.CIHigh))
		}
	}
	return out
}

// judgeHarness holds a harness verdict that judgeBench found faster to
// what the geometric mean can hide: a deciding benchmark whose cost per
// iteration could not be measured gives no figure to accept on, nor does
// one still undecided at max_pairs whose estimate is a regression past the
// threshold (named in an inconclusive verdict's summary too); one that
// sped up more than max_speedup needs a person; the others still undecided
// are named. A harness bench without outputs is flagged work
// unverified, at the head of the summary, whatever its verdict.
func judgeHarness(e *Entry) {
	b := e.Bench
	if b == nil || len(b.Benchmarks) == 0 || len(b.Benchmarks[0].Counts) == 0 {
		return
	}
	defer func() {
		if ex := b.excluded(); len(ex) > 0 {
			e.Detail += "\nLeft out of the decision, their baseline's own runs not scaling with their iterations (measured and reported): " + strings.Join(ex, ", ") + "; decided by: " + strings.Join(b.decidedBy(), ", ") + "."
			e.Summary = oneLine(e.Summary + "; left out: " + strings.Join(ex, ", "))
		}
		if len(b.HarnessOutputs) == 0 {
			e.AddFlag(ledger.FlagWorkUnverified)
			e.Summary = oneLine(workUnverifiedPrefix + e.Summary)
		}
	}()
	// Regressed needs a decision, which noise can keep away for as long as
	// max_pairs: a deciding benchmark left undecided whose estimate is
	// slower by more than the threshold is a regression its interval does
	// not rule out, and a patch could make one noisy to hide it.
	slow := b.benchmarksWhere(func(r *BenchmarkResult) bool {
		return (r.Decision == decUndecided || r.Decision == decMeasureMore) && b.mayHaveRegressed(r.CPU, r.CPUStats.Speedup, b.deciding())
	})
	if (e.Reason == ReasonInconclusive || e.Reason == ReasonNoChange) && len(slow) > 0 {
		// Not accepted either way; the summary says what else it hides.
		e.Summary = oneLine(e.Summary + "; may have regressed: " + strings.Join(slow, ", "))
		return
	}
	if e.Reason != ReasonImproved {
		return
	}
	figures := benchFigures(b, b.Stat(b.Metric))
	if un := b.benchmarksWhere(func(r *BenchmarkResult) bool { return r.Unmeasurable }); len(un) > 0 {
		e.setVerdict(ledger.VerdictRejectedBench, ReasonInconclusive, fmt.Sprintf(
			"the cost per iteration of %s is too small to measure against the noise of its runs, so no speedup can be read from it, whatever the geometric mean", strings.Join(un, ", ")))
		e.Summary = e.Reason + ": " + figures + "; too small to measure: " + strings.Join(un, ", ")
		return
	}
	if loud := b.benchmarksWhere(func(r *BenchmarkResult) bool { return b.noisier(r.CPU) }); len(loud) > 0 {
		e.setVerdict(ledger.VerdictRejectedBench, ReasonInconclusive, fmt.Sprintf(
			"the candidate's runs of %s are more than %d times as spread as the baseline's in the same pairs, which the machine's noise does not do: no figure is read from them, whatever the geometric mean", strings.Join(loud, ", "), noisierFactor))
		e.Summary = e.Reason + ": " + figures + "; noisier: " + strings.Join(loud, ", ")
		return
	}
	if len(slow) > 0 {
		e.setVerdict(ledger.VerdictRejectedBench, ReasonInconclusive, fmt.Sprintf(
			"%s may be slower by more than the %g%% threshold: still undecided after %d pairs, its interval does not rule that out, whatever the geometric mean", strings.Join(slow, ", "), b.Threshold*100, b.Pairs))
		e.Summary = e.Reason + ": " + figures + "; may have regressed: " + strings.Join(slow, ", ")
		return
	}
	if fast := b.benchmarksWhere(func(r *BenchmarkResult) bool { return r.CPUStats.Speedup > b.MaxSpeedup }); b.MaxSpeedup > 0 && len(fast) > 0 && e.Verdict == ledger.VerdictAccepted {
		e.setVerdict(ledger.VerdictNeedsHumanReview, ReasonImplausible, fmt.Sprintf(
			"faster, but %s sped up more than [bench] max_speedup = %gx: a loop that much cheaper has more likely stopped doing its work than been optimised; a person must review it", strings.Join(fast, ", "), b.MaxSpeedup))
		e.Summary = figures + "; over max_speedup: " + strings.Join(fast, ", ")
	}
	if un := b.benchmarksWhere(func(r *BenchmarkResult) bool {
		return (r.Decision == decUndecided || r.Decision == decMeasureMore) && r.FamilyDecision == ""
	}); len(un) > 0 {
		e.Detail += fmt.Sprintf("; not resolved after %d pairs: %s", b.Pairs, strings.Join(un, ", "))
		e.Summary = oneLine(e.Summary + "; unresolved: " + strings.Join(un, ", "))
	}
}
