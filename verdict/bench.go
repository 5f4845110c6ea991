package verdict

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace"
)

// Progress reports what a verdict or calibration is doing, for display.
type Progress struct {
	Phase    string  // "checkout", "build", "gate", "bench", "record"
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
	meter               *meter
	progress            func(Progress)
	// env, when set, collects what the jails reported.
	env *Environment
}

// runFailure is a bench command that did not exit 0.
type runFailure struct {
	side string // "baseline" or "candidate"
	res  *jail.Result
}

// run measures warm-up pairs (discarded, used for perf counters), then
// batches of pairs in seeded random order until the sequential decision is
// clear or max_pairs is reached. err is set only when the harness failed or
// ctx was cancelled; a failing command is reported as a runFailure.
func (br *benchRun) run(ctx context.Context) (*Bench, *runFailure, error) {
	p := br.protocol
	b := &Bench{
		Command: br.candidate.Command, Metric: p.Metric, BatchSize: p.Pairs, MaxPairs: p.MaxPairs,
		Warmup: p.Warmup, Threshold: p.Threshold, Confidence: p.Confidence, Seed: p.Seed, Resamples: DefaultResamples,
	}
	br.baseline.Timeout, br.candidate.Timeout = p.Timeout.Duration, p.Timeout.Duration
	// Bench output is not compared; keep only enough to explain a failure.
	br.baseline.OutputCap, br.candidate.OutputCap = 64<<10, 64<<10
	rng := rand.New(rand.NewPCG(uint64(p.Seed), 0x6f72646572))
	start := time.Now()

	for w := 0; w < p.Warmup; w++ {
		for _, cand := range []bool{false, true} {
			spec := br.pick(cand)
			if w == 0 && br.meter.metric != workspace.MetricInstructions {
				counts, wall := br.meter.counters(ctx, spec)
				b.CommandSeconds += wall.Seconds()
				if cand {
					b.CandidateCounters = counts
				} else {
					b.BaselineCounters = counts
				}
			}
			_, res, err := br.meter.measure(ctx, spec)
			if err != nil {
				return nil, nil, err
			}
			br.note(b, cand, res)
			if !res.Success() {
				return nil, &runFailure{side: sideName(cand), res: res}, nil
			}
			b.CommandSeconds += res.Wall.Seconds()
		}
	}

	samples := map[string]*Samples{}
	var names []string
	for b.Pairs < p.MaxPairs {
		batch := min(p.Pairs, p.MaxPairs-b.Pairs)
		for range batch {
			candFirst := rng.IntN(2) == 1
			vals := [2]map[string]float64{}
			for k, cand := range []bool{candFirst, !candFirst} {
				v, res, err := br.meter.measure(ctx, br.pick(cand))
				if err != nil {
					return nil, nil, err
				}
				br.note(b, cand, res)
				if !res.Success() {
					return nil, &runFailure{side: sideName(cand), res: res}, nil
				}
				b.CommandSeconds += res.Wall.Seconds()
				vals[k] = v
			}
			base, cand := vals[0], vals[1]
			if candFirst {
				base, cand = cand, base
				b.Order += "c"
			} else {
				b.Order += "b"
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
		}
		st := computeStats(*samples[p.Metric], p.Confidence, p.Seed, b.Resamples)
		d := decide(st, p.Threshold, p.Confidence)
		if d == decMeasureMore && b.Pairs >= p.MaxPairs {
			d = decUndecided
		}
		b.Decisions = append(b.Decisions, d)
		if br.progress != nil {
			br.progress(Progress{Phase: "bench", Pairs: b.Pairs, MaxPairs: p.MaxPairs, Metric: p.Metric, Speedup: st.Speedup, CILow: st.CILow, CIHigh: st.CIHigh})
		}
		if d != decMeasureMore {
			break
		}
	}
	for _, m := range names {
		b.Samples = append(b.Samples, *samples[m])
	}
	b.Metrics = statsOf(b)
	b.Seconds = time.Since(start).Seconds()
	return b, nil, nil
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
		return br.candidate
	}
	return br.baseline
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
		out = append(out, computeStats(s, b.Confidence, b.Seed, b.Resamples))
	}
	return out
}
