package verdict

import (
	"context"
	"fmt"
	"math"

	"github.com/hone-perf/hone/verdict/stats"
)

// How hone sizes a harness benchmark's runs. A run's CPU time is the
// harness process's start-up and the benchmark's set-up plus the loop;
// the loop should be most of it, so that the noise of the fixed part does
// not drown the difference between the two counts, but a run must stay
// short enough for dozens of them per verdict.
const (
	// wantLoopShare is the share of a run at the smaller count the loop
	// should take.
	wantLoopShare = 0.9
	// maxLoopSeconds bounds the CPU time of a run at the smaller count.
	maxLoopSeconds = 0.5
	// maxIterations bounds a count, whatever the loop costs.
	maxIterations = 1 << 30
	// sizingRounds is how many times the calibration may measure and
	// grow the count.
	sizingRounds = 3
	// countFactor is the larger count over the smaller: N and 2N.
	countFactor = 2
	// scalingTolerance is how far the CPU time at 2N over that at N may
	// be from 2: outside [1.7, 2.3] the work does not scale with the
	// iterations.
	scalingTolerance = 0.15
)

// ReasonNonlinear is rejected-gate: a deciding benchmark's CPU time does
// not scale with its iteration count on the candidate.
const ReasonNonlinear = "nonlinear"

// size chooses a benchmark's two counts, N and 2N, so that the loop is
// wantLoopShare of every run at N on both sides: starting from the count
// the bench command fixes, each side is measured at N and 2N, the fixed
// cost of a run and the cost of an iteration estimated from the two, and N
// grown until the loop dominates. Both sides are sized because a faster
// candidate's loop is a smaller share of its run: sized for the baseline
// alone, a candidate four times faster would no longer scale as its loop
// does. The larger N is used on both sides. A run's own CPU time bounds
// the growth (a run at N costs at least its loop, so N*maxLoopSeconds/t
// keeps the loop within maxLoopSeconds, however wrong the estimate), and
// the baseline's bound holds for the candidate too, so a candidate whose
// loop costs nothing can make the runs no longer than that. N is never
// below the command's count.
func (hr *harnessRun) size(ctx context.Context, b *Bench, hb *harnessBenchmark) (*runFailure, error) {
	limit, n := maxIterations, 0
	for _, cand := range []bool{false, true} {
		got, bound, fail, err := hr.calibrate(ctx, b, hb, cand, limit)
		if err != nil || fail != nil {
			return fail, err
		}
		if !cand {
			limit = bound
		}
		n = max(n, min(got, limit))
	}
	hb.setCounts(n, countFactor*n)
	return nil, nil
}

// calibrate sizes one side (see size) in at most sizingRounds rounds, each
// the least CPU time of two runs at N and of two at 2N (start-up noise
// only ever adds), and returns its N and the largest count its runs show
// to be safe: each round's bound holds alone, and the round at the
// largest N, where the fixed cost weighs least, allows the most.
func (hr *harnessRun) calibrate(ctx context.Context, b *Bench, hb *harnessBenchmark, cand bool, limit int) (n, bound int, fail *runFailure, err error) {
	n = hb.res.CommandIterations
	bound = n
	for range sizingRounds {
		t := [2]float64{math.Inf(1), math.Inf(1)}
		for range 2 {
			for k, count := range []int{n, countFactor * n} {
				s, fail, err := hr.runAt(ctx, b, hb, hr.pick(cand), cand, count)
				if err != nil || fail != nil {
					return 0, 0, fail, err
				}
				if fail := hb.countFailure(cand, s, count); fail != nil {
					return 0, 0, fail, nil
				}
				t[k] = min(t[k], s.cpu)
			}
		}
		if t[0] > 0 {
			bound = max(bound, min(int(float64(n)*maxLoopSeconds/t[0]), maxIterations))
		}
		next := min(nextCount(n, t[0], t[1]), bound, limit)
		if next <= n {
			break
		}
		n = next
	}
	return n, bound, nil, nil
}

// nextCount returns the count the runs at n (CPU time short) and
// countFactor*n (long) call for. Where the extra iterations cost nothing
// measurable, the count grows sixteenfold to find the loop; otherwise to
// what the fitted fixed cost and cost per iteration ask for, and at most
// sixteenfold in one round.
func nextCount(n int, short, long float64) int {
	loop := (long - short) / float64(countFactor-1)
	if loop <= 0 || short <= 0 {
		return min(n*16, maxIterations)
	}
	if loop/short >= wantLoopShare {
		return n
	}
	perOp := loop / float64(n)
	// A tenth more than the model asks for, against the estimate's noise.
	want := 1.1 * wantLoopShare / (1 - wantLoopShare) * (short - loop) / perOp
	return max(n, int(math.Ceil(min(want, 16*float64(n), maxIterations))))
}

func (hb *harnessBenchmark) setCounts(short, long int) {
	hb.counts = [2]int{short, long}
	hb.res.Counts = []int{short, long}
	hb.res.Iterations = short
}

// scaling is a side's median CPU time at the larger count over its median
// at the smaller.
func scaling(short, long []float64) float64 {
	if len(short) == 0 || stats.Median(short) <= 0 {
		return 0
	}
	return stats.Median(long) / stats.Median(short)
}

// linearity is the proof that a deciding benchmark's loop is the work:
// twice the iterations must cost about twice the CPU time. A loop that
// keeps a result from one iteration for the next, skips its work when
// benchmarked, or runs fewer iterations than it reports, costs about the
// same at both counts. The baseline is held to it first: a baseline that
// does not scale is not the candidate's fault.
func linearity(benches []*harnessBenchmark) *runFailure {
	for _, cand := range []bool{false, true} {
		for _, hb := range benches {
			r := hb.res
			if !r.Decides || cand && r.CandidateProof > 0 {
				continue
			}
			want := float64(hb.counts[1]) / float64(hb.counts[0])
			lo, hi := want*(1-scalingTolerance), want*(1+scalingTolerance)
			base, got := scaling(r.ShortCPU.Baseline, r.LongCPU.Baseline), scaling(r.ShortCPU.Candidate, r.LongCPU.Candidate)
			switch {
			case !cand && (base < lo || base > hi):
				return &runFailure{side: "baseline", res: hb.last[0], msg: fmt.Sprintf(
					"the baseline's benchmark %.100q costs %.2fx the CPU time at %d iterations that it costs at %d, outside [%.2f, %.2f]: what is measured is not its loop (start-up or set-up dominates even at hone's largest count, or the work does not repeat in every iteration); make each iteration do the work",
					r.Name, base, hb.counts[1], hb.counts[0], lo, hi)}
			case cand && (got < lo || got > hi):
				return &runFailure{side: "candidate", res: hb.last[1], reason: ReasonNonlinear, msg: fmt.Sprintf(
					"benchmark %.100q costs %.2fx the CPU time at %d iterations that it costs at %d (the baseline %.2fx), outside [%.2f, %.2f]: its work does not scale with the iterations (a result kept from one iteration for the next, or work skipped when benchmarked), so the loop is not the work being measured",
					r.Name, got, hb.counts[1], hb.counts[0], base, lo, hi)}
			}
		}
	}
	return nil
}

// proofRounds bounds how often proveLinear grows the candidate's counts.
const proofRounds = 3

// proveLinear gives a candidate that failed linearity at the shared counts
// (fail) the chance to prove its loop at counts of its own: an honest loop
// many times faster than the baseline's is a small share of a run sized
// for the baseline, so there it scales as the run's fixed cost does. The
// candidate alone runs at N and 2N for N grown (sixteenfold at most per
// round, proofRounds rounds) until a run at N costs maxLoopSeconds, and
// the least CPU time of two runs at each count must scale as a loop does.
// A loop that keeps its result from one iteration for the next, or skips
// the work, costs the same at every count, and still fails. The baseline's
// failures, and every failure once proven, are final.
func (hr *harnessRun) proveLinear(ctx context.Context, b *Bench, benches []*harnessBenchmark, fail *runFailure) (*runFailure, error) {
	if fail.side != "candidate" {
		return fail, nil
	}
	for _, hb := range benches {
		r := hb.res
		want := float64(hb.counts[1]) / float64(hb.counts[0])
		lo, hi := want*(1-scalingTolerance), want*(1+scalingTolerance)
		if got := scaling(r.ShortCPU.Candidate, r.LongCPU.Candidate); !r.Decides || r.CandidateProof > 0 || got >= lo && got <= hi {
			continue
		}
		n := hb.counts[0]
		proof := 0.0
		for range proofRounds {
			t := [2]float64{math.Inf(1), math.Inf(1)}
			for range 2 {
				for k, count := range []int{n, countFactor * n} {
					s, f, err := hr.runAt(ctx, b, hb, hr.pick(true), true, count)
					if err != nil || f != nil {
						return f, err
					}
					if f := hb.countFailure(true, s, count); f != nil {
						return f, nil
					}
					t[k] = min(t[k], s.cpu)
				}
			}
			if t[0] > 0 {
				proof = t[1] / t[0]
			}
			if proof >= lo && proof <= hi || t[0] <= 0 || t[0] >= maxLoopSeconds || n >= maxIterations/(16*countFactor) {
				break
			}
			n = min(n*16, max(n+1, int(float64(n)*maxLoopSeconds/t[0])))
		}
		if proof < lo || proof > hi {
			return fail, nil
		}
		r.CandidateProof, r.ProofCounts = proof, []int{n, countFactor * n}
	}
	return linearity(benches), nil
}
