package verdict

import (
	"context"
	"math"
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
	// sizingRounds is how many times the calibration may measure and
	// grow the count.
	sizingRounds = 3
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
// the bench command fixes, each side is measured at N and 2N, the fixed
// cost of a run and the cost of an iteration estimated from the two, and N
// grown until the loop dominates. Both sides are sized because a faster
// candidate's loop is a smaller share of its run: sized for the baseline
// alone, a candidate four times faster would no longer scale as its loop
// does. The larger N is used on both sides. A run's own CPU time bounds
// the growth (a run at N costs at least its loop, so N*max_loop/t keeps
// the loop within [bench] max_loop, however wrong the estimate), and
// the baseline's bound holds for the candidate too, so a candidate whose
// loop costs nothing can make the runs no longer than that. N is never
// below the command's count.
func (hr *harnessRun) size(ctx context.Context, b *Bench, hb *harnessBenchmark) (*runFailure, error) {
	limit, n := maxIterations, 0
	for _, cand := range []bool{false, true} {
		got, bound, fail, err := hr.calibrate(ctx, b, hb, cand, hb.res.CommandIterations, limit)
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

// calibrate sizes one side (see size) from the count from, in at most
// sizingRounds rounds, each the least CPU time of two runs at N and of two
// at 2N (start-up noise only ever adds), and returns its N and the largest count its runs show
// to be safe: each round's bound holds alone, and the round at the
// largest N, where the fixed cost weighs least, allows the most.
func (hr *harnessRun) calibrate(ctx context.Context, b *Bench, hb *harnessBenchmark, cand bool, from, limit int) (n, bound int, fail *runFailure, err error) {
	n = from
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
			bound = max(bound, min(int(float64(n)*hr.protocol.MaxLoop.Seconds()/t[0]), maxIterations))
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
// what the fitted fixed cost and cost per iteration ask for, with a loop
// of at least minLoopSeconds, and at most sixteenfold in one round.
func nextCount(n int, short, long float64) int {
	loop := (long - short) / float64(countFactor-1)
	if loop <= 0 || short <= 0 {
		return min(n*16, maxIterations)
	}
	if loop/short >= wantLoopShare && loop >= minLoopSeconds {
		return n
	}
	perOp := loop / float64(n)
	// A tenth more than the model asks for, against the estimate's noise.
	want := 1.1 * max(wantLoopShare/(1-wantLoopShare)*(short-loop), minLoopSeconds) / perOp
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
