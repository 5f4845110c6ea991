package verdict

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/verdict/stats"
	"github.com/hone-perf/hone/workspace"
)

// Progress reports what a verdict or calibration is doing, for display.
type Progress struct {
	Phase    string  // "checkout", "build", "gate", "bench", "check", "record", "estimate"
	Gate     string  // the gate running, in phase "gate"
	Pairs    int     // pairs measured so far, in phase "bench"
	MaxPairs int     // in phase "bench"
	Metric   string  // the deciding metric, in phase "bench"
	Speedup  float64 // current speedup and CI, once a batch is done
	CILow    float64
	CIHigh   float64
	// Confidence is the level of [CILow, CIHigh] at this look (CILabel).
	Confidence float64
	Session    int // calibration: current session (1-based)
	Sessions   int // calibration: sessions in total
	// Holder is who holds the machine's turn and Ahead how many verdicts
	// wait for it before this one, in phase "wait for the machine".
	Holder string
	Ahead  int
	// Expected is when the turn is likely to come, from the median of
	// the machine's recent turns (Turn); zero when none is known.
	Expected time.Time
	Turn     time.Duration
	// EstimateLow and EstimateHigh bound how long a calibration will take
	// (every session stopping at its first look, or running to
	// max_pairs), in phase "estimate".
	EstimateLow, EstimateHigh time.Duration
}

// benchRun is one benchmark: the two commands and the protocol.
type benchRun struct {
	// baseline and candidate are each side's bench command before a
	// pair's setup is applied (see side).
	baseline, candidate jail.Spec
	protocol            workspace.BenchConfig // Metric is the deciding metric
	meter               measurer
	progress            func(Progress)
	// env, when set, collects what the jails reported.
	env *Environment
	// prior, when set, is the bench of the verdict a rejudge pools with:
	// its pairs come first.
	prior *Bench
	// seed is the verdict's input seed, which a harness bench's runs get
	// (pick) while it draws no setup per pair.
	seed int64
	// draw makes a pair's setup; nil is NewPairSetup with one layout.
	draw func() (PairSetup, error)
	// replay, when set, are the setups of the error verdict this one runs
	// again, used before any is drawn.
	replay *setupReplay
	// baseWalls are the wall times of the baseline's runs so far, sorted,
	// which bound a candidate run's (slowLimit).
	baseWalls []float64
	// layouts, when set, are the sides' builds by layout index, which a
	// pair's setup names (sampleLayouts).
	layouts *layoutSet
}

// runFailure is a bench run that disqualifies its side: it failed, printed
// something else than the baseline, or left processes running.
type runFailure struct {
	side   string // "baseline" or "candidate"
	res    *jail.Result
	reason string // for the candidate: ReasonGateFailed, ReasonOutput, ReasonLeftover or ReasonSlow
	msg    string // what happened, in words
	// setup is the failing pair's, recorded with the failure so that
	// running an error verdict again starts from it; nil for a harness.
	setup *PairSetup
}

// at sets the failing pair's setup and returns f.
func (f *runFailure) at(s PairSetup) *runFailure {
	f.setup = &s
	return f
}

// run measures warm-up pairs (discarded, used for perf counters), then
// batches of pairs in seeded random order until the sequential decision is
// clear or max_pairs is reached. Every pair has a setup of its own (a
// fresh input seed and environment padding, shared by its two runs), and
// its candidate run's stdout and exit status must be its baseline run's;
// a candidate run may leave no process behind when the baseline's do not
// (a check after each pair), nor take more than slow_factor times the
// baseline's median. err is set only when the harness failed or ctx was
// cancelled; a run that disqualifies its side is a runFailure. The bench
// so far comes with either, for the record of the verdict it ends: what
// was measured before a failure is what a person diagnoses it with.
func (br *benchRun) run(ctx context.Context) (*Bench, *runFailure, error) {
	p := br.protocol
	b := newBench(br.candidate.Command, p)
	br.baseline.Timeout, br.candidate.Timeout = p.Timeout.Duration, p.Timeout.Duration
	// Enough of stdout to show where it differs; its hash covers the rest.
	br.baseline.OutputCap, br.candidate.OutputCap = 64<<10, 64<<10
	samples := map[string]*Samples{}
	var names []string
	chk := &pairCheck{}
	if pr := br.prior; pr != nil {
		for _, s := range pr.Samples {
			c := Samples{Metric: s.Metric, Unit: s.Unit, Baseline: append([]float64{}, s.Baseline...), Candidate: append([]float64{}, s.Candidate...)}
			samples[s.Metric] = &c
			names = append(names, s.Metric)
		}
		b.Pairs, b.PooledPairs, b.Order = pr.Pairs, pr.Pairs, pr.Order
		b.Setups, b.Outputs = slices.Clone(pr.Setups), slices.Clone(pr.Outputs)
		b.MaxPairs = pr.Pairs + p.MaxPairs
		chk.baseLeft = pr.BaselineLeftover
	}
	b.plan()
	// A rejudge draws another order than the verdict it pools with.
	rng := rand.New(rand.NewPCG(uint64(p.OrderSeed), 0x6f72646572+uint64(b.PooledPairs)))
	start := time.Now()
	finish := func() *Bench {
		b.Samples = nil
		for _, m := range names {
			b.Samples = append(b.Samples, *samples[m])
		}
		b.Metrics = statsOf(b)
		b.Seconds = time.Since(start).Seconds()
		return b
	}
	measure := func(s PairSetup, cand bool) (map[string]float64, *jail.Result, *runFailure, error) {
		spec := br.side(s, cand)
		limit, cut := br.slowLimit(spec.Timeout)
		if cand && cut {
			spec.Timeout = limit
		}
		v, res, err := br.meter.measure(ctx, spec, p.Metric)
		if err != nil {
			return nil, nil, nil, err
		}
		br.note(b, cand, res)
		b.CommandSeconds += res.Wall.Seconds()
		switch {
		case cand && cut && res.TimedOut:
			return nil, res, &runFailure{side: "candidate", res: res, reason: ReasonSlow, msg: fmt.Sprintf(
				"a candidate bench run took over %s, %g times the baseline's median wall time of %s, and was stopped ([bench] slow_factor)",
				limit.Round(time.Millisecond), p.SlowFactor, time.Duration(stats.QuantileSorted(br.baseWalls, 0.5)*float64(time.Second)).Round(time.Millisecond))}, nil
		case !res.Success():
			return nil, res, &runFailure{side: sideName(cand), res: res, reason: ReasonGateFailed, msg: "the bench command " + describe(res, math.MaxInt)}, nil
		}
		if !cand {
			w := res.Wall.Seconds()
			i, _ := slices.BinarySearch(br.baseWalls, w)
			br.baseWalls = slices.Insert(br.baseWalls, i, w)
		}
		return v, res, nil, nil
	}

	for w := 0; w < p.Warmup; w++ {
		s, err := br.newSetup(true)
		if err != nil {
			return finish(), nil, err
		}
		b.Warmups = append(b.Warmups, s)
		var runs [2]*jail.Result
		for i, cand := range []bool{false, true} {
			if w == 0 && p.Metric != workspace.MetricInstructions {
				spec := br.side(s, cand)
				if limit, cut := br.slowLimit(spec.Timeout); cand && cut {
					// A crawling candidate is stopped by the run after.
					spec.Timeout = limit
				}
				counts, wall := br.meter.counters(ctx, spec)
				b.CommandSeconds += wall.Seconds()
				if cand {
					b.CandidateCounters = counts
				} else {
					b.BaselineCounters = counts
				}
			}
			_, res, fail, err := measure(s, cand)
			if err != nil {
				return finish(), nil, err
			}
			if fail != nil {
				return finish(), fail.at(s), nil
			}
			runs[i] = res
		}
		if _, fail := chk.pair(runs[0], runs[1]); fail != nil {
			return finish(), fail.at(s), nil
		}
	}

	br.layouts.newRound()
	for b.Pairs < b.MaxPairs {
		for range b.toNextLook() {
			s, err := br.newSetup(false)
			if err != nil {
				return finish(), nil, err
			}
			candFirst := rng.IntN(2) == 1
			var vals [2]map[string]float64
			var runs [2]*jail.Result
			for k, cand := range []bool{candFirst, !candFirst} {
				v, res, fail, err := measure(s, cand)
				if err != nil {
					return finish(), nil, err
				}
				if fail != nil {
					return finish(), fail.at(s), nil
				}
				vals[k], runs[k] = v, res
			}
			base, cand := vals[0], vals[1]
			bres, cres := runs[0], runs[1]
			if candFirst {
				base, cand, bres, cres = cand, base, cres, bres
				b.Order += "c"
			} else {
				b.Order += "b"
			}
			out, fail := chk.pair(bres, cres)
			if fail != nil {
				return finish(), fail.at(s), nil
			}
			for _, m := range metricOrder(base) {
				s, ok := samples[m]
				if !ok {
					s = &Samples{Metric: m, Unit: unitOf(m)}
					samples[m] = s
					names = append(names, m)
				}
				s.Baseline = append(s.Baseline, base[m])
				s.Candidate = append(s.Candidate, cand[m])
			}
			b.Setups = append(b.Setups, s)
			b.Outputs = append(b.Outputs, out)
			b.Pairs++
		}
		if br.decided(b, *samples[p.Metric]) {
			break
		}
	}
	return finish(), nil, nil
}

// benchStopped records a bench that a failed run stopped (benchFailed),
// keeping what it measured until then: an error's samples, counts and
// scalings are what a person diagnoses it with, and recomputing it gives
// the same figures and the same word (benchDecided).
func (e *Entry) benchStopped(b *Bench, f *runFailure) {
	if b.measured() {
		e.Bench = b
	}
	e.benchFailed(f)
}

// measured reports a bench that ran anything past its first runs: a
// measured pair, or a harness benchmark's sizing. A verdict keeps such a
// bench whatever ended it, so an error can be diagnosed from its entry.
func (b *Bench) measured() bool {
	if b == nil {
		return false
	}
	if b.Pairs > 0 {
		return true
	}
	for _, r := range b.Benchmarks {
		if len(r.Sizing) > 0 {
			return true
		}
	}
	return false
}

// newBench is the bench of protocol p before its first pair, decided by
// MethodEquivalence; its looks are planned (plan) once the pairs it pools
// with are known.
func newBench(command string, p workspace.BenchConfig) *Bench {
	return &Bench{
		Command: command, Metric: p.Metric, BatchSize: p.Pairs, MaxPairs: p.MaxPairs,
		Warmup: p.Warmup, Threshold: p.Threshold, Confidence: p.Confidence, Seed: p.OrderSeed, Resamples: DefaultResamples,
		Method: MethodEquivalence,
	}
}

// plan sets the looks of the bench's design from its first pair after the
// pooled ones to max_pairs.
func (b *Bench) plan() { b.Looks = planLooks(b.PooledPairs, b.BatchSize, b.MaxPairs, b.Confidence) }

// side is the jail spec of one side's run in a pair with setup s. Every
// bench run's spec is made here, from the pair's setup and the side alone.
func (br *benchRun) side(s PairSetup, cand bool) jail.Spec {
	spec := br.baseline
	if cand {
		spec = br.candidate
	}
	return withSetup(br.layouts.place(spec, cand, s.Layout), s)
}

// pick is the spec of a side's run with the verdict's input seed, for a
// bench that draws no setup per pair (a harness).
func (br *benchRun) pick(cand bool) jail.Spec {
	if cand {
		return build.WithSeed(br.candidate, br.seed)
	}
	return build.WithSeed(br.baseline, br.seed)
}

// newSetup is the setup of the next warm-up pair (warm) or measured pair:
// the replayed one while there is one, its layout kept when the sides
// still have it, else a fresh draw.
func (br *benchRun) newSetup(warm bool) (PairSetup, error) {
	if s, ok := br.replay.bench(warm); ok {
		switch {
		case br.layouts == nil:
			s.Layout = 0
		case s.Layout < 0 || s.Layout >= len(br.layouts.specs[0]):
			s.Layout = br.layouts.next()
		}
		return s, nil
	}
	if br.draw != nil {
		return br.draw()
	}
	return NewPairSetup(1)
}

// slowLimit is how long a candidate run may take: slow_factor times the
// median wall time of the baseline's runs so far, never under a second
// (start-up jitter), and cut reports that it is below timeout (0: none).
// Before any baseline run there is no limit, nor under a meter that reads
// no clock (the work meter of hone's test builds): its verdicts decide by
// evidence alone, and a run stalled past the limit on a busy machine
// would otherwise be cut as the candidate's fault.
func (br *benchRun) slowLimit(timeout time.Duration) (limit time.Duration, cut bool) {
	f := br.protocol.SlowFactor
	if f <= 0 || len(br.baseWalls) == 0 || readsNoClock(br.meter) {
		return timeout, false
	}
	limit = max(time.Duration(f*stats.QuantileSorted(br.baseWalls, 0.5)*float64(time.Second)), time.Second)
	return limit, timeout == 0 || limit < timeout
}

// decided applies the sequential decision to the deciding samples at a
// look, records it, reports progress, and says whether the bench stops.
func (br *benchRun) decided(b *Bench, s Samples) bool {
	d, st := b.decide(s)
	if br.progress != nil {
		br.progress(Progress{Phase: "bench", Pairs: b.Pairs, MaxPairs: b.MaxPairs, Metric: b.Metric, Speedup: st.Speedup, CILow: st.CILow, CIHigh: st.CIHigh, Confidence: st.Confidence})
	}
	return d != decMeasureMore
}

// pairCheck holds what the bench runs are checked against across pairs:
// whether any baseline run left processes.
type pairCheck struct {
	baseLeft int
}

// pair checks one pair's runs, both of which exited 0: the candidate must
// print what the baseline printed for the pair's input. It returns the
// hash of that output.
func (c *pairCheck) pair(base, cand *jail.Result) (string, *runFailure) {
	c.baseLeft += base.Leftover
	bh, ch := base.Stdout.SHA256(), cand.Stdout.SHA256()
	switch {
	case ch != bh:
		return bh, &runFailure{side: "candidate", res: cand, reason: ReasonOutput, msg: fmt.Sprintf(
			"bench output differs from the baseline's for the same input seed (%d bytes, hash %.12s vs %.12s)%s", cand.Stdout.Len(), ch, bh, firstDifference(cand.Stdout.Bytes(), base.Stdout.Bytes()))}
	case cand.Leftover > 0 && c.baseLeft == 0 && !helpersOnly(cand):
		return bh, &runFailure{side: "candidate", res: cand, reason: ReasonLeftover, msg: benchLeftover(cand)}
	}
	return bh, nil
}

// benchLeftover says which processes a candidate's bench run left running.
// Helpers of hone's or the toolchain's alone (helpersOnly) are no failure:
// their CPU time is charged to the run all the same.
func benchLeftover(cand *jail.Result) string {
	return fmt.Sprintf("a bench run left %d processes running after it exited (killed, and their CPU time charged)%s; the baseline's runs leave none", cand.Leftover, named(cand.Lingering))
}

// note adds what a run's jail reported to the bench and the environment:
// processes left running when the command exited (killed, and charged),
// CPU time of processes the kernel reaped itself, and how many threads and
// processes the run started.
func (br *benchRun) note(b *Bench, cand bool, res *jail.Result) {
	if br.env != nil {
		br.env.noteJail(res)
	}
	if cand {
		b.CandidateLeftover += res.Leftover
		b.CandidateUnreapedSeconds += res.Unreaped.Seconds()
		b.CandidateTasks = b.CandidateTasks.add(res.Tasks)
	} else {
		b.BaselineLeftover += res.Leftover
		b.BaselineUnreapedSeconds += res.Unreaped.Seconds()
		b.BaselineTasks = b.BaselineTasks.add(res.Tasks)
	}
}

func sideName(cand bool) string {
	if cand {
		return "candidate"
	}
	return "baseline"
}

// metricOrder lists a run's metrics in a stable order.
func metricOrder(v map[string]float64) []string {
	var out []string
	for _, m := range []string{workspace.MetricInstructions, workspace.MetricCPUTime, workspace.MetricWall} {
		if _, ok := v[m]; ok {
			out = append(out, m)
		}
	}
	return out
}

// statsOf computes every metric's statistics from the stored samples with the
// bench's seed, at the level the final look read, exactly as the sequential
// decision computed the deciding one, so Recompute reproduces both from the
// entry alone.
func statsOf(b *Bench) []MetricStats {
	out := make([]MetricStats, 0, len(b.Samples))
	for _, s := range b.Samples {
		out = append(out, computeStats(s, b.finalConfidence(), b.Seed, b.Resamples, b.Method))
	}
	return out
}
