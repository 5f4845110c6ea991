package verdict

import (
	"context"
	"fmt"

	"github.com/hone-perf/hone/verdict/stats"
)

// linearityConfidence is the confidence of the interval of a side's
// scaling that linearity holds to the band around countFactor.
const linearityConfidence = 0.95

// proofPairs is how many runs at each of its own counts a candidate makes
// in proveLinear, after sizing them.
const proofPairs = 8

// scalingInterval is a side's scaling from N to 2N with its interval: each
// pair's run at 2N over its run at N (the two ran back to back), through
// the signed-rank statistics the speedup uses. On this kind of machine
// one run's CPU time for the same loop moves by 20-30% (bare as much as in
// the jail: the core's speed depends on what else runs), so one pair's
// ratio falls outside [1.7, 2.3] often; the interval of several does not.
// With too few pairs for the confidence the interval is their whole range.
func scalingInterval(short, long []float64) stats.Interval {
	return stats.PairedOf(long, short).Interval(linearityConfidence)
}

// clearlyOutside reports an interval wholly outside [lo, hi].
func clearlyOutside(iv stats.Interval, lo, hi float64) bool { return iv.High < lo || iv.Low > hi }

// linearity is the proof that a deciding benchmark's loop is the work:
// twice the iterations must cost about twice the CPU time. A loop that
// keeps a result from one iteration for the next, skips its work when
// benchmarked, or runs fewer iterations than it reports, costs about the
// same at both counts. A side fails when its scaling's interval lies
// wholly outside the band: noise widens the interval and never fails an
// honest loop, while a flat loop's ratios sit together near 1. The
// baseline is held to it first: a baseline that does not scale is not the
// candidate's fault. A candidate proven at counts of its own
// (proveLinear) is not held to the shared ones.
func linearity(benches []*harnessBenchmark) *runFailure {
	for _, cand := range []bool{false, true} {
		for _, hb := range benches {
			r := hb.res
			if !r.Decides || cand && r.CandidateProof > 0 {
				continue
			}
			lo, hi := hb.band()
			base, got := scalingInterval(r.ShortCPU.Baseline, r.LongCPU.Baseline), scalingInterval(r.ShortCPU.Candidate, r.LongCPU.Candidate)
			switch {
			case !cand && clearlyOutside(base, lo, hi):
				return baselineNonlinear(hb, base)
			case cand && clearlyOutside(got, lo, hi):
				return &runFailure{side: "candidate", res: hb.last[1], reason: ReasonNonlinear, msg: fmt.Sprintf(
					"benchmark %.100q costs %.2fx [%.2f, %.2f] the CPU time at %d iterations that it costs at %d (the baseline %.2fx), outside [%.2f, %.2f], also at counts of its own: its work does not scale with the iterations (a result kept from one iteration for the next, or work skipped when benchmarked), so the loop is not the work being measured",
					r.Name, scaling(r.ShortCPU.Candidate, r.LongCPU.Candidate), got.Low, got.High, hb.counts[1], hb.counts[0], scaling(r.ShortCPU.Baseline, r.LongCPU.Baseline), lo, hi)}
			}
		}
	}
	return nil
}

// baselineNonlinear is the failure of a baseline benchmark whose scaling
// interval base lies outside its band.
func baselineNonlinear(hb *harnessBenchmark, base stats.Interval) *runFailure {
	r := hb.res
	lo, hi := hb.band()
	return &runFailure{side: "baseline", res: hb.last[0], msg: fmt.Sprintf(
		"the baseline's benchmark %.100q costs %.2fx [%.2f, %.2f] the CPU time at %d iterations that it costs at %d, outside [%.2f, %.2f]: what is measured is not its loop (start-up or set-up dominates even at hone's largest count, or the work does not repeat in every iteration); make each iteration do the work",
		r.Name, scaling(r.ShortCPU.Baseline, r.LongCPU.Baseline), base.Low, base.High, hb.counts[1], hb.counts[0], lo, hi)}
}

// excludeNonlinear leaves out of the decision every deciding benchmark
// whose baseline does not scale with its iterations, saying why in the
// benchmark's result with the pairs it read, and fails only when none is
// left to decide: an untouched benchmark the user does not own is not a
// reason to judge nothing.
//
// It may come at any look, after decisions were made with the benchmark
// in: the baseline is the pin's code, and its scaling is read from the
// baseline's runs alone, so the candidate cannot make a benchmark leave
// and cannot pick which ones decide. Its own runs are jailed processes of
// their own, and one that leaves processes to load the machine is
// rejected for it (check). What a baseline that does not scale measures
// is not its loop, so a speedup or regression read there was never
// evidence either way. The candidate's own scaling is never a reason to
// leave a benchmark out: linearity holds it to the band on every
// benchmark that still decides, a failure there is rejected-gate
// (nonlinear) unless proveLinear proves the loop at counts of its own,
// and only a benchmark the baseline already left excuses the candidate's
// runs of it, as they no longer decide anything.
func excludeNonlinear(benches []*harnessBenchmark, pairs int) *runFailure {
	var last *runFailure
	left := 0
	for _, hb := range benches {
		r := hb.res
		if !r.Decides {
			continue
		}
		lo, hi := hb.band()
		if base := scalingInterval(r.ShortCPU.Baseline, r.LongCPU.Baseline); clearlyOutside(base, lo, hi) {
			last = baselineNonlinear(hb, base)
			r.Decides, r.Excluded, r.ExcludedAfter = false, last.msg, pairs
			continue
		}
		left++
	}
	if left == 0 {
		return last
	}
	return nil
}

// band is the range a loop's scaling from the smaller count to the larger
// lies in.
func (hb *harnessBenchmark) band() (lo, hi float64) { return scalingBand(hb.counts[0], hb.counts[1]) }

func scalingBand(short, long int) (lo, hi float64) {
	want := float64(long) / float64(short)
	return want * (1 - scalingTolerance), want * (1 + scalingTolerance)
}

// exclusionsHold reports whether every benchmark b leaves out is one the
// baseline runs its exclusion read (the first ExcludedAfter pairs at its
// Counts, stored in the entry) leave out by the rule that left it out:
// an entry cannot drop a benchmark from the decision that its own figures
// keep in. Entries from before ExcludedAfter are taken as stored.
func exclusionsHold(b *Bench) bool {
	for _, r := range b.Benchmarks {
		n := r.ExcludedAfter
		if r.Excluded == "" || n == 0 {
			continue
		}
		if r.Decides || len(r.Counts) != 2 || r.Counts[0] <= 0 || len(r.ShortCPU.Baseline) < n || len(r.LongCPU.Baseline) < n {
			return false
		}
		lo, hi := scalingBand(r.Counts[0], r.Counts[1])
		if !clearlyOutside(scalingInterval(r.ShortCPU.Baseline[:n], r.LongCPU.Baseline[:n]), lo, hi) {
			return false
		}
	}
	return true
}

// proveLinear gives a candidate that failed linearity at the shared counts
// (fail) the chance to prove its loop at counts of its own: an honest loop
// many times faster than the baseline's is a small share of a run sized
// for the baseline, so there it scales as the run's fixed cost does. The
// candidate alone is sized from the shared smaller count as both sides
// were (calibrate, within its own bound of max_loop per run), runs
// proofPairs times at N and 2N, and its scaling's interval must not lie
// outside the band. A loop whose work is gone costs the same at every
// count and still fails; one that keeps a cheap lookup of its result may
// pass here, and is then judged on a speed that max_speedup holds. The
// baseline's failures, and every failure once proven, are final.
func (hr *harnessRun) proveLinear(ctx context.Context, b *Bench, benches []*harnessBenchmark, fail *runFailure) (*runFailure, error) {
	if fail.side != "candidate" {
		return fail, nil
	}
	for _, hb := range benches {
		r := hb.res
		lo, hi := hb.band()
		if !r.Decides || r.CandidateProof > 0 || !clearlyOutside(scalingInterval(r.ShortCPU.Candidate, r.LongCPU.Candidate), lo, hi) {
			continue
		}
		n, _, f, err := hr.calibrate(ctx, b, hb, true, hb.counts[0], maxIterations/countFactor)
		if err != nil || f != nil {
			return f, err
		}
		var short, long []float64
		for range proofPairs {
			for k, count := range []int{n, countFactor * n} {
				s, f, err := hr.runAt(ctx, b, hb, hr.pick(true), true, count)
				if err != nil || f != nil {
					return f, err
				}
				if f := hb.countFailure(true, s, count); f != nil {
					return f, nil
				}
				if k == 0 {
					short = append(short, s.cpu)
				} else {
					long = append(long, s.cpu)
				}
			}
		}
		if clearlyOutside(scalingInterval(short, long), lo, hi) {
			return fail, nil
		}
		r.CandidateProof, r.ProofCounts = scaling(short, long), []int{n, countFactor * n}
	}
	return linearity(benches), nil
}
