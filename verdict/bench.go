package verdict

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace"
)

// Progress reports what a verdict or calibration is doing, for display.
type Progress struct {
	Phase    string  // "checkout", "build", "gate", "bench", "check", "record"
	Gate     string  // the gate running, in phase "gate"
	Pairs    int     // pairs measured so far, in phase "bench"
	MaxPairs int     // in phase "bench"
	Metric   string  // the deciding metric, in phase "bench"
	Speedup  float64 // current speedup and CI, once a batch is done
	CILow    float64
	CIHigh   float64
	Session  int // calibration: current session (1-based)
	Sessions int // calibration: sessions in total
}

// benchRun is one benchmark: the two commands and the protocol.
type benchRun struct {
	baseline, candidate jail.Spec
	protocol            workspace.BenchConfig // Metric is the deciding metric
	meter               measurer
	progress            func(Progress)
	// env, when set, collects what the jails reported.
	env *Environment
	// prior, when set, is the bench of the verdict a rejudge pools with:
	// its pairs come first, and every run must print what its runs did.
	prior *Bench
	// layouts, when set, are the sides' other layouts, which the pairs
	// take in turn; layout is the bench's report of them.
	layouts *layoutSet
	layout  *LayoutReport
}

// runFailure is a bench run that disqualifies its side: it failed, printed
// something else than the baseline, or left processes running.
type runFailure struct {
	side   string // "baseline" or "candidate"
	res    *jail.Result
	reason string // for the candidate: ReasonGateFailed, ReasonOutput or ReasonLeftover
	msg    string // what happened, in words
}

// run measures warm-up pairs (discarded, used for perf counters), then
// batches of pairs in seeded random order until the sequential decision is
// clear or max_pairs is reached. Every run's stdout and exit status must be
// the baseline's, and a candidate run may leave no process behind when the
// baseline's do not (a check after each pair). err is set only when the
// harness failed or ctx was cancelled; a run that disqualifies its side is
// a runFailure. When ctx is cancelled the bench so far is returned with
// the error, for the cancelled verdict's record.
func (br *benchRun) run(ctx context.Context) (*Bench, *runFailure, error) {
	p := br.protocol
	b := &Bench{
		Command: br.candidate.Command, Metric: p.Metric, BatchSize: p.Pairs, MaxPairs: p.MaxPairs,
		Warmup: p.Warmup, Threshold: p.Threshold, Confidence: p.Confidence, Seed: p.OrderSeed, Resamples: DefaultResamples,
		Method: MethodPaired, Layout: br.layout,
	}
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
		b.MaxPairs = pr.Pairs + p.MaxPairs
		chk.ref, chk.refSet = pr.OutputSHA256, pr.OutputSHA256 != ""
		chk.baseLeft = pr.BaselineLeftover
	}
	// A rejudge draws another order than the verdict it pools with.
	rng := rand.New(rand.NewPCG(uint64(p.OrderSeed), 0x6f72646572+uint64(b.PooledPairs)))
	start := time.Now()
	finish := func() *Bench {
		b.Samples = nil
		for _, m := range names {
			b.Samples = append(b.Samples, *samples[m])
		}
		b.OutputSHA256 = chk.ref
		b.Metrics = statsOf(b)
		b.Seconds = time.Since(start).Seconds()
		return b
	}
	measure := func(cand bool) (map[string]float64, *jail.Result, *runFailure, error) {
		v, res, err := br.meter.measure(ctx, br.pick(cand), p.Metric)
		if err != nil {
			return nil, nil, nil, err
		}
		br.note(b, cand, res)
		b.CommandSeconds += res.Wall.Seconds()
		if !res.Success() {
			return nil, res, &runFailure{side: sideName(cand), res: res, reason: ReasonGateFailed, msg: "the bench command " + describe(res, math.MaxInt)}, nil
		}
		return v, res, nil, nil
	}

	for w := 0; w < p.Warmup; w++ {
		var runs [2]*jail.Result
		for i, cand := range []bool{false, true} {
			if w == 0 && p.Metric != workspace.MetricInstructions {
				counts, wall := br.meter.counters(ctx, br.pick(cand))
				b.CommandSeconds += wall.Seconds()
				if cand {
					b.CandidateCounters = counts
				} else {
					b.BaselineCounters = counts
				}
			}
			_, res, fail, err := measure(cand)
			if err != nil {
				return finish(), nil, err
			}
			if fail != nil {
				return nil, fail, nil
			}
			runs[i] = res
		}
		if fail := chk.pair(runs[0], runs[1]); fail != nil {
			return nil, fail, nil
		}
	}

	for b.Pairs < b.MaxPairs {
		batch := min(p.Pairs, b.MaxPairs-b.Pairs)
		for range batch {
			br.nextLayout()
			candFirst := rng.IntN(2) == 1
			var vals [2]map[string]float64
			var runs [2]*jail.Result
			for k, cand := range []bool{candFirst, !candFirst} {
				v, res, fail, err := measure(cand)
				if err != nil {
					return finish(), nil, err
				}
				if fail != nil {
					return nil, fail, nil
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
			if fail := chk.pair(bres, cres); fail != nil {
				return nil, fail, nil
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
			b.Pairs++
			br.noteLayout(b)
		}
		if br.decided(b, *samples[p.Metric]) {
			break
		}
	}
	return finish(), nil, nil
}

// decided applies the sequential decision to the deciding samples after a
// batch, records it, reports progress, and says whether the bench stops.
func (br *benchRun) decided(b *Bench, s Samples) bool {
	p := br.protocol
	st := computeStats(s, p.Confidence, p.OrderSeed, b.Resamples, b.Method)
	d := decide(st, p.Threshold, p.Confidence)
	if d == decMeasureMore && b.Pairs >= b.MaxPairs {
		d = decUndecided
	}
	b.Decisions = append(b.Decisions, d)
	if br.progress != nil {
		br.progress(Progress{Phase: "bench", Pairs: b.Pairs, MaxPairs: b.MaxPairs, Metric: p.Metric, Speedup: st.Speedup, CILow: st.CILow, CIHigh: st.CIHigh})
	}
	return d != decMeasureMore
}

// pairCheck holds what every bench run must agree with: the stdout hash of
// the first baseline run, and whether any baseline run left processes.
type pairCheck struct {
	ref      string
	refSet   bool
	baseLeft int
}

// pair checks one pair's runs, both of which exited 0. The baseline is
// checked first: a baseline that disagrees with itself is not the
// candidate's fault.
func (c *pairCheck) pair(base, cand *jail.Result) *runFailure {
	if !c.refSet {
		c.ref, c.refSet = base.Stdout.SHA256(), true
	}
	c.baseLeft += base.Leftover
	switch {
	case base.Stdout.SHA256() != c.ref:
		return &runFailure{side: "baseline", res: base, msg: fmt.Sprintf(
			"the baseline's bench output is not the same from run to run for one input seed (%d bytes, hash %.12s, then hash %.12s): the bench must print the same for the same HONE_SEED; seed every random choice from it, and print no times, addresses or counts of runs",
			base.Stdout.Len(), c.ref, base.Stdout.SHA256())}
	case cand.Stdout.SHA256() != c.ref:
		return &runFailure{side: "candidate", res: cand, reason: ReasonOutput, msg: fmt.Sprintf(
			"bench output differs from the baseline's (%d bytes, hash %.12s vs %.12s)%s", cand.Stdout.Len(), cand.Stdout.SHA256(), c.ref, firstDifference(cand.Stdout.Bytes(), base.Stdout.Bytes()))}
	case cand.Leftover > 0 && c.baseLeft == 0:
		return &runFailure{side: "candidate", res: cand, reason: ReasonLeftover, msg: fmt.Sprintf(
			"a bench run left %d processes running after it exited (killed, and their CPU time charged); the baseline's runs leave none", cand.Leftover)}
	}
	return nil
}

// note adds what a run's jail reported to the bench and the environment:
// processes left running when the command exited (killed, and charged),
// and CPU time of processes the kernel reaped itself.
func (br *benchRun) note(b *Bench, cand bool, res *jail.Result) {
	if br.env != nil {
		br.env.noteJail(res)
	}
	if cand {
		b.CandidateLeftover += res.Leftover
		b.CandidateUnreapedSeconds += res.Unreaped.Seconds()
	} else {
		b.BaselineLeftover += res.Leftover
		b.BaselineUnreapedSeconds += res.Unreaped.Seconds()
	}
}

func (br *benchRun) pick(cand bool) jail.Spec {
	if cand {
		return br.layouts.place(br.candidate, true)
	}
	return br.layouts.place(br.baseline, false)
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
// bench's seed, exactly as the sequential decision computed the deciding one,
// so Recompute reproduces both from the entry alone.
func statsOf(b *Bench) []MetricStats {
	out := make([]MetricStats, 0, len(b.Samples))
	for _, s := range b.Samples {
		out = append(out, computeStats(s, b.Confidence, b.Seed, b.Resamples, b.Method))
	}
	return out
}
