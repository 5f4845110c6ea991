package verdict

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/hone-perf/hone/verdict/stats"
	"github.com/hone-perf/hone/workspace"
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
	// maxIterations bounds a count, whatever the loop costs.
	maxIterations = 1 << 30
	// sizingRounds is how many times the calibration measures and grows
	// the count, unless it measured a loop that does not yet dominate:
	// then it goes on, up to maxSizingRounds, so that sixteenfold rounds
	// from a count of 100 reach past a set-up of tens of milliseconds
	// beside iterations of nanoseconds (three stopped at 409,600, the
	// set-up still three quarters of a run).
	sizingRounds    = 3
	maxSizingRounds = 8
	// startupCount is the count whose runs measure a run's fixed cost:
	// next to no loop, and two rather than one because Go's testing runs
	// a benchmark once at N = 1 before it runs the count it was given
	// (except for a count of 1), so the set-up runs twice at every count
	// hone measures.
	startupCount = 2
	// minLoopSeconds is the least CPU time the loop must take at the
	// smaller count. Below it a run is start-up and the machine's noise:
	// a busy machine once measured a 0.1 ms loop at twice a 3 ms run's
	// cost, which looked like a loop that dominates. [bench] max_loop
	// may be no shorter.
	minLoopSeconds = float64(workspace.MinMaxLoop) / float64(time.Second)
	// countFactor is the larger count over the smaller: N and 2N.
	countFactor = 2
	// scalingTolerance is how far the CPU time at 2N over that at N may
	// be from 2: clearly outside [1.7, 2.3] (see linearity) the work does
	// not scale with the iterations.
	scalingTolerance = 0.15
)

// ReasonNonlinear is rejected-gate: a deciding benchmark's CPU time does
// not scale with its iteration count on the candidate.
const ReasonNonlinear = "nonlinear"

// size chooses a benchmark's two counts, N and 2N, so that the loop is
// wantLoopShare of every run at N on both sides: starting from the count
// the bench command fixes, each side's fixed cost is measured at
// startupCount and its runs at N, and N grown until the loop dominates.
// Both sides are sized because a faster candidate's loop is a smaller
// share of its run: sized for the baseline alone, a candidate four times
// faster would no longer scale as its loop does. The candidate starts from
// the baseline's N, and the larger N is used on both sides. A run's own
// CPU time bounds the growth (a run at N costs at least its loop, so
// N*max_loop/t keeps the loop within [bench] max_loop, however wrong the
// estimate), and the baseline's bound holds for the candidate too, so a
// candidate whose loop costs nothing can make the runs no longer than
// that. N is never below the command's count.
func (hr *harnessRun) size(ctx context.Context, b *Bench, hb *harnessBenchmark) (*runFailure, error) {
	limit, n := maxIterations, hb.res.CommandIterations
	for _, cand := range []bool{false, true} {
		got, bound, fail, err := hr.calibrate(ctx, b, hb, cand, n, limit)
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

// calibrate sizes one side (see size) from the count from and returns its
// N and the largest count its runs show to be safe. The fixed cost is the
// least CPU time of two runs at startupCount; then, in at most
// sizingRounds rounds, the least of two runs at N gives the loop (start-up
// noise only ever adds). Each round's bound holds alone, and the round at
// the largest N, where the fixed cost weighs least, allows the most.
//
// The fixed cost is measured, not fitted from runs at N and 2N: on a
// machine whose core speed moves a run's CPU time by 15-25%, twice the run
// at N less the run at 2N is mostly that noise, tens of milliseconds of
// "start-up" for a Go test binary that starts in five, and N grew to
// whatever max_loop allowed: runs three to four times longer, for
// intervals no narrower (a go-humanize benchmark at 1.09M iterations was
// as noisy as at the command's 300,000).
func (hr *harnessRun) calibrate(ctx context.Context, b *Bench, hb *harnessBenchmark, cand bool, from, limit int) (n, bound int, fail *runFailure, err error) {
	// least is the least CPU time of two runs at count, and the least of
	// their lengths: each one's CPU or wall time, whichever is longer.
	least := func(count int) (cpu, length float64, fail *runFailure, err error) {
		tried := SizingRun{Side: sideName(cand), Count: count}
		defer func() {
			if len(tried.CPU) > 0 {
				hb.res.Sizing = append(hb.res.Sizing, tried)
			}
		}()
		length = math.Inf(1)
		for range 2 {
			s, fail, err := hr.runAt(ctx, b, hb, hr.pick(cand), cand, count)
			if err != nil || fail != nil {
				return 0, 0, fail, err
			}
			if fail := hb.countFailure(cand, s, count); fail != nil {
				return 0, 0, fail, nil
			}
			tried.CPU = append(tried.CPU, s.cpu)
			length = min(length, max(s.cpu, s.res.Wall.Seconds()))
		}
		return slices.Min(tried.CPU), length, nil, nil
	}
	fixed, _, fail, err := least(startupCount)
	if err != nil || fail != nil {
		return 0, 0, fail, err
	}
	n = from
	bound = n
	for round := range maxSizingRounds {
		t, length, fail, err := least(n)
		if err != nil || fail != nil {
			return 0, 0, fail, err
		}
		// The bound reads the run's wall time too: a loop the meter
		// cannot see (work gone, a sleep, or a meter that counts only
		// declared work) would otherwise grow to maxIterations of real
		// running.
		if length > 0 {
			bound = max(bound, min(int(float64(n)*hr.protocol.MaxLoop.Seconds()/length), maxIterations))
		}
		next := min(nextCount(n, fixed, t), bound, limit)
		if next <= n {
			break
		}
		// Past sizingRounds, a loop already as large as the set-up
		// predicts the next count well enough to take it unmeasured. One
		// that is a small share of its run does not: noise there inflates
		// or buries it (a loop of a millisecond or two beside tens of
		// milliseconds of set-up measured as nothing a third of the
		// time, and xxhash's 4-byte benchmarks stopped growing at half a
		// million iterations, a tenth of a run that could not scale), so
		// it grows on, within the bound, until the rounds run out.
		loop := t - fixed
		n = next
		if round+1 >= sizingRounds && loop >= fixed {
			break
		}
	}
	return n, bound, nil, nil
}

// nextCount returns the count that a fixed cost of fixed CPU time and a
// run of atN at n iterations call for. Where the iterations cost nothing
// measurable, the count grows sixteenfold to find the loop; otherwise to
// what the fixed cost and the cost per iteration ask for, with a loop of
// at least minLoopSeconds, and at most sixteenfold in one round.
func nextCount(n int, fixed, atN float64) int {
	loop := atN - fixed
	if loop <= 0 || atN <= 0 {
		return min(n*16, maxIterations)
	}
	if loop/atN >= wantLoopShare && loop >= minLoopSeconds {
		return n
	}
	perOp := loop / float64(n)
	// A tenth more than the model asks for, against the estimate's noise.
	want := 1.1 * max(wantLoopShare/(1-wantLoopShare)*(atN-loop), minLoopSeconds) / perOp
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
