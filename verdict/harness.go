package verdict

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hone-perf/hone/benchformat"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace"
)

// harnessOutputCap bounds a harness run's stdout, which is parsed whole: a
// run that prints more fails rather than being read in part.
const harnessOutputCap = 16 << 20

// BenchmarkResult is one benchmark of a harness bench: its per-iteration
// samples and their statistics. CPU decides (the meter's CPU time of the
// benchmark's own harness process over its iteration count); Wall is that
// process's wall time over the count, reported only.
type BenchmarkResult struct {
	Name string `toml:"name" json:"name"`
	// Decides: the benchmark is one of [bench] benchmarks (or there are
	// none, and all decide). Only those enter the geometric mean, and a
	// regression in any of them rejects the patch.
	Decides    bool `toml:"decides" json:"decides"`
	Iterations int  `toml:"iterations" json:"iterations"`
	// Fingerprint is what every run of the benchmark must report besides
	// its timings (benchformat.Fingerprint): the benchmark, its iteration
	// count and status, and its output metrics.
	Fingerprint string      `toml:"fingerprint" json:"fingerprint"`
	CPU         Samples     `toml:"cpu" json:"cpu"`
	Wall        Samples     `toml:"wall" json:"wall"`
	CPUStats    MetricStats `toml:"cpu_stats" json:"cpu_stats"`
	WallStats   MetricStats `toml:"wall_stats" json:"wall_stats"`
	// Regressed: it decides and its cpu speedup CI lies entirely below 1.
	Regressed bool `toml:"regressed,omitempty" json:"regressed,omitempty"`
}

// harnessRun is a bench whose command is a benchmark harness (go test
// -bench, Google Benchmark): one sample per benchmark per run, each
// benchmark in a harness process of its own.
type harnessRun struct {
	*benchRun
	format   string
	deciding []string // [bench] benchmarks; empty: all
	outputs  []string // [bench] outputs
}

// harnessBenchmark is one benchmark's two commands and what its runs must
// agree with.
type harnessBenchmark struct {
	res                 *BenchmarkResult
	baseline, candidate jail.Spec
	ref                 string // the fingerprint of the baseline's first run
}

// run is benchRun.run for a harness. The whole command runs once on each
// side first (the warm-up): it names the benchmarks, and the two sides
// must report the same ones with the same counts. Then each pair runs
// every benchmark on both sides, benchmarks in seeded order, sides in
// seeded order per pair. The deciding samples are each pair's geometric
// mean over the deciding benchmarks (the log of a geometric mean's ratio
// is the mean of the benchmarks' log ratios); the sequential decision
// applies to them unchanged.
func (hr *harnessRun) run(ctx context.Context) (*Bench, *runFailure, error) {
	p := hr.protocol
	b := newBench(hr.candidate.Command, p)
	b.Format, b.Warmup = hr.format, 1
	for _, s := range []*jail.Spec{&hr.baseline, &hr.candidate} {
		s.Timeout, s.OutputCap = p.Timeout.Duration, harnessOutputCap
	}
	start := time.Now()
	var benches []*harnessBenchmark
	cpu := Samples{Metric: workspace.MetricCPUTime, Unit: "ns/op"}
	wall := Samples{Metric: workspace.MetricWall, Unit: "ns/op"}
	baseLeft := 0
	finish := func() *Bench {
		b.Samples = []Samples{cpu, wall}
		b.Metrics = statsOf(b)
		b.Benchmarks = nil
		for _, hb := range benches {
			b.Benchmarks = append(b.Benchmarks, *hb.res)
		}
		benchmarkStats(b)
		b.Seconds = time.Since(start).Seconds()
		return b
	}

	benches, fail, err := hr.discover(ctx, b)
	if err != nil || fail != nil {
		return nil, fail, err
	}
	if pr := hr.prior; pr != nil {
		if fail := hr.pool(b, pr, benches, &cpu, &wall); fail != nil {
			return nil, fail, nil
		}
		baseLeft = pr.BaselineLeftover
	}
	b.plan()
	rng := rand.New(rand.NewPCG(uint64(p.OrderSeed), 0x6f72646572+uint64(b.PooledPairs)))
	for b.Pairs < b.MaxPairs {
		for range b.toNextLook() {
			candFirst := rng.IntN(2) == 1
			for _, i := range rng.Perm(len(benches)) {
				hb := benches[i]
				var got [2]runSample
				for _, cand := range []bool{candFirst, !candFirst} {
					s, fail, err := hr.measureOne(ctx, b, hb, cand)
					if err != nil {
						return finish(), nil, err
					}
					if fail != nil {
						return nil, fail, nil
					}
					got[sideIndex(cand)] = s
				}
				if fail := hb.check(got, &baseLeft); fail != nil {
					return nil, fail, nil
				}
				r := hb.res
				r.CPU.Baseline, r.CPU.Candidate = append(r.CPU.Baseline, got[0].cpu), append(r.CPU.Candidate, got[1].cpu)
				r.Wall.Baseline, r.Wall.Candidate = append(r.Wall.Baseline, got[0].wall), append(r.Wall.Candidate, got[1].wall)
			}
			if candFirst {
				b.Order += "c"
			} else {
				b.Order += "b"
			}
			addGeomean(&cpu, &wall, benches)
			b.Pairs++
		}
		if hr.decided(b, cpu) {
			break
		}
	}
	return finish(), nil, nil
}

// discover runs the whole harness once on each side and returns the
// benchmarks to measure: those the baseline ran and passed, each with its
// own command. The sides must agree on what ran (Fingerprint), and every
// benchmark [bench] benchmarks names must be among them.
func (hr *harnessRun) discover(ctx context.Context, b *Bench) ([]*harnessBenchmark, *runFailure, error) {
	var (
		runs [2]*benchformat.Run
		ress [2]*jail.Result
	)
	for _, cand := range []bool{false, true} {
		res, err := hr.meter.exec(ctx, hr.pick(cand))
		if err != nil {
			return nil, nil, err
		}
		hr.note(b, cand, res)
		b.CommandSeconds += res.Wall.Seconds()
		run, fail := hr.parse(res, cand, "")
		if fail != nil {
			return nil, fail, nil
		}
		runs[sideIndex(cand)], ress[sideIndex(cand)] = run, res
	}
	if fb, fc := benchformat.Fingerprint(runs[0], hr.outputs), benchformat.Fingerprint(runs[1], hr.outputs); fb != fc {
		return nil, &runFailure{side: "candidate", res: ress[1], reason: ReasonOutput, msg: "bench output differs from the baseline's: " + runDifference(runs[0], runs[1], hr.outputs)}, nil
	}
	var names []string
	for _, bm := range runs[0].Benchmarks {
		if bm.Status == benchformat.Pass {
			names = append(names, bm.Name)
		}
	}
	for _, want := range hr.deciding {
		if !slices.Contains(names, want) {
			return nil, &runFailure{side: "baseline", res: ress[0], msg: fmt.Sprintf(
				"[bench] benchmarks names %.100q, which the baseline's harness did not run and pass (it ran %s); fix the name in hone.toml", want, errs.ClipTo(strings.Join(names, ", "), 300))}, nil
		}
	}
	var out []*harnessBenchmark
	for _, name := range names {
		hb := &harnessBenchmark{res: &BenchmarkResult{
			Name: name, Decides: len(hr.deciding) == 0 || slices.Contains(hr.deciding, name), Iterations: runs[0].Find(name).Iterations,
			CPU: Samples{Metric: workspace.MetricCPUTime, Unit: "ns/op"}, Wall: Samples{Metric: workspace.MetricWall, Unit: "ns/op"},
		}}
		for _, cand := range []bool{false, true} {
			spec := hr.pick(cand)
			cmd, err := benchformat.CommandFor(hr.format, spec.Command, name)
			if err != nil {
				return nil, &runFailure{side: "baseline", res: ress[0], msg: fmt.Sprintf("benchmark %.100q cannot be run alone: %v", name, err)}, nil
			}
			spec.Command = cmd
			if cand {
				hb.candidate = spec
			} else {
				hb.baseline = spec
			}
		}
		out = append(out, hb)
	}
	return out, nil, nil
}

// pool takes over the pairs of the verdict a rejudge pools with: the same
// benchmarks, which must report what they reported then.
func (hr *harnessRun) pool(b *Bench, pr *Bench, benches []*harnessBenchmark, cpu, wall *Samples) *runFailure {
	if len(pr.Benchmarks) != len(benches) {
		return &runFailure{side: "baseline", msg: fmt.Sprintf("the harness now runs %d benchmarks, the verdict pooled with ran %d", len(benches), len(pr.Benchmarks))}
	}
	for i, hb := range benches {
		old := pr.Benchmarks[i]
		if old.Name != hb.res.Name || old.Decides != hb.res.Decides {
			return &runFailure{side: "baseline", msg: fmt.Sprintf("the harness now runs benchmark %.100q where the verdict pooled with ran %.100q", hb.res.Name, old.Name)}
		}
		r := hb.res
		r.CPU.Baseline, r.CPU.Candidate = slices.Clone(old.CPU.Baseline), slices.Clone(old.CPU.Candidate)
		r.Wall.Baseline, r.Wall.Candidate = slices.Clone(old.Wall.Baseline), slices.Clone(old.Wall.Candidate)
		hb.ref = old.Fingerprint
	}
	for _, s := range pr.Samples {
		switch s.Metric {
		case workspace.MetricCPUTime:
			cpu.Baseline, cpu.Candidate = slices.Clone(s.Baseline), slices.Clone(s.Candidate)
		case workspace.MetricWall:
			wall.Baseline, wall.Candidate = slices.Clone(s.Baseline), slices.Clone(s.Candidate)
		}
	}
	b.Pairs, b.PooledPairs, b.Order = pr.Pairs, pr.Pairs, pr.Order
	b.MaxPairs = pr.Pairs + hr.protocol.MaxPairs
	return nil
}

// runSample is one benchmark run's figures and what it must agree on.
type runSample struct {
	cpu, wall   float64 // per iteration, ns
	fingerprint string
	res         *jail.Result
}

// measureOne runs one benchmark once on one side.
func (hr *harnessRun) measureOne(ctx context.Context, b *Bench, hb *harnessBenchmark, cand bool) (runSample, *runFailure, error) {
	spec := hb.baseline
	if cand {
		spec = hb.candidate
	}
	v, res, err := hr.meter.measure(ctx, spec, hr.protocol.Metric)
	if err != nil {
		return runSample{}, nil, err
	}
	hr.note(b, cand, res)
	b.CommandSeconds += res.Wall.Seconds()
	run, fail := hr.parse(res, cand, hb.res.Name)
	if fail != nil {
		return runSample{}, fail, nil
	}
	cpu, err := benchformat.CPUPerOp(run, hb.res.Name, time.Duration(v[workspace.MetricCPUTime]*float64(time.Second)))
	if err != nil {
		return runSample{}, hr.failed(res, cand, err.Error()), nil
	}
	n := float64(run.Benchmarks[0].Iterations)
	return runSample{cpu: cpu, wall: v[workspace.MetricWall] * 1e9 / n, fingerprint: benchformat.Fingerprint(run, hr.outputs), res: res}, nil, nil
}

// parse reads a harness run's stdout; a run that failed, printed more
// than is kept, or printed what the format does not read, disqualifies its
// side.
func (hr *harnessRun) parse(res *jail.Result, cand bool, benchmark string) (*benchformat.Run, *runFailure) {
	what := "the bench command"
	if benchmark != "" {
		what = fmt.Sprintf("the bench command for benchmark %.100q", benchmark)
	}
	switch {
	case !res.Success():
		return nil, hr.failed(res, cand, what+" "+describe(res, math.MaxInt))
	case res.Stdout.Truncated():
		return nil, hr.failed(res, cand, fmt.Sprintf("%s printed %d bytes, more than the %d hone reads of a harness", what, res.Stdout.Len(), harnessOutputCap))
	}
	run, err := benchformat.Parse(hr.format, res.Stdout.Bytes())
	if err != nil {
		return nil, hr.failed(res, cand, fmt.Sprintf("%s: %v", what, err))
	}
	return run, nil
}

func (hr *harnessRun) failed(res *jail.Result, cand bool, msg string) *runFailure {
	return &runFailure{side: sideName(cand), res: res, reason: ReasonGateFailed, msg: msg}
}

// check holds one pair's runs of a benchmark to the baseline's first: the
// baseline is checked first, since a baseline that disagrees with itself
// is not the candidate's fault.
func (hb *harnessBenchmark) check(got [2]runSample, baseLeft *int) *runFailure {
	base, cand := got[0], got[1]
	if hb.ref == "" {
		hb.ref = base.fingerprint
		hb.res.Fingerprint = hb.ref
	}
	*baseLeft += base.res.Leftover
	switch {
	case base.fingerprint != hb.ref:
		return &runFailure{side: "baseline", res: base.res, msg: fmt.Sprintf(
			"the baseline's benchmark %.100q does not report the same from run to run (its iteration count, status or output metrics changed): the harness must run a fixed count on inputs made from HONE_SEED", hb.res.Name)}
	case cand.fingerprint != hb.ref:
		return &runFailure{side: "candidate", res: cand.res, reason: ReasonOutput, msg: fmt.Sprintf(
			"bench output differs from the baseline's: benchmark %.100q reports another iteration count, status or output metric", hb.res.Name)}
	case cand.res.Leftover > 0 && *baseLeft == 0:
		return &runFailure{side: "candidate", res: cand.res, reason: ReasonLeftover, msg: fmt.Sprintf(
			"a bench run left %d processes running after it exited (killed, and their CPU time charged); the baseline's runs leave none", cand.res.Leftover)}
	}
	return nil
}

// runDifference says how two whole-harness runs differ, briefly.
func runDifference(base, cand *benchformat.Run, outputs []string) string {
	for _, bb := range base.Benchmarks {
		cb := cand.Find(bb.Name)
		switch {
		case cb == nil:
			return fmt.Sprintf("the candidate did not run benchmark %.100q", bb.Name)
		case cb.Iterations != bb.Iterations || cb.Status != bb.Status:
			return fmt.Sprintf("benchmark %.100q ran %d iterations (%s), the baseline's %d (%s)", bb.Name, cb.Iterations, cb.Status, bb.Iterations, bb.Status)
		}
		for _, u := range outputs {
			if bv, cv := bb.Metrics[u], cb.Metrics[u]; bv != cv {
				return fmt.Sprintf("benchmark %.100q reports %s %g, the baseline %g", bb.Name, u, cv, bv)
			}
		}
	}
	for _, cb := range cand.Benchmarks {
		if base.Find(cb.Name) == nil {
			return fmt.Sprintf("the candidate ran benchmark %.100q, which the baseline does not have", cb.Name)
		}
	}
	return "the harness's overall status differs"
}

// addGeomean appends the latest pair's geometric means over the deciding
// benchmarks to the deciding series.
func addGeomean(cpu, wall *Samples, benches []*harnessBenchmark) {
	var cs, ws []benchformat.Samples
	for _, hb := range benches {
		if !hb.res.Decides {
			continue
		}
		n := len(hb.res.CPU.Baseline) - 1
		r := hb.res
		cs = append(cs, benchformat.Samples{Name: r.Name, Baseline: r.CPU.Baseline[n:], Candidate: r.CPU.Candidate[n:]})
		ws = append(ws, benchformat.Samples{Name: r.Name, Baseline: r.Wall.Baseline[n:], Candidate: r.Wall.Candidate[n:]})
	}
	gb, gc := benchformat.Geomeans(cs)
	cpu.Baseline, cpu.Candidate = append(cpu.Baseline, gb...), append(cpu.Candidate, gc...)
	gb, gc = benchformat.Geomeans(ws)
	wall.Baseline, wall.Candidate = append(wall.Baseline, gb...), append(wall.Candidate, gc...)
}

// benchmarkStats computes each benchmark's statistics from its stored
// samples, as the deciding metric's are computed, and marks the deciding
// ones that regressed.
func benchmarkStats(b *Bench) {
	for i := range b.Benchmarks {
		r := &b.Benchmarks[i]
		r.CPUStats = computeStats(r.CPU, b.Confidence, b.Seed, b.Resamples, b.Method)
		r.WallStats = computeStats(r.Wall, b.Confidence, b.Seed, b.Resamples, b.Method)
		r.Regressed = r.Decides && r.CPUStats.Pairs > 0 && r.CPUStats.CIHigh < 1
	}
}

// deciding counts the benchmarks that decide.
func (b *Bench) deciding() int {
	n := 0
	for _, r := range b.Benchmarks {
		if r.Decides {
			n++
		}
	}
	return n
}

// regressions names the deciding benchmarks whose CI lies below 1.
func (b *Bench) regressions() []string {
	var out []string
	for _, r := range b.Benchmarks {
		if r.Regressed {
			out = append(out, fmt.Sprintf("%s %.3fx [%.3f, %.3f]", r.Name, r.CPUStats.Speedup, r.CPUStats.CILow, r.CPUStats.CIHigh))
		}
	}
	return out
}

func sideIndex(cand bool) int {
	if cand {
		return 1
	}
	return 0
}
