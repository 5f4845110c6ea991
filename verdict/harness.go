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
// samples and their statistics. Every pair runs the benchmark at two
// iteration counts (Counts), each in a harness process of its own, on both
// sides; CPU decides: the meter's CPU time of the longer run less that of
// the shorter, over the iterations between them. The harness process's
// start-up, the benchmark's set-up and its teardown are in both runs and
// cancel out, so what is left is the cost of one iteration of the loop.
// Wall is the same difference of the runs' wall times, reported only.
type BenchmarkResult struct {
	Name string `toml:"name" json:"name"`
	// Decides: the benchmark is one of [bench] benchmarks (or there are
	// none, and all decide). Only those enter the geometric mean, and a
	// regression in any of them rejects the patch.
	Decides bool `toml:"decides" json:"decides"`
	// Excluded says why a benchmark that would have decided was left out
	// of the decision: the baseline's own runs did not scale with their
	// iterations at the counts hone may run (a set-up that outweighs the
	// loop, in a benchmark the user may not own), which no patch caused.
	// It is still measured and reported, and the verdict names it.
	Excluded string `toml:"excluded,omitempty" json:"excluded,omitempty"`
	// ExcludedAfter is how many pairs had run when it was left out: the
	// exclusion read the first ExcludedAfter of ShortCPU and LongCPU's
	// baseline runs at Counts, which the entry keeps, so it can be
	// checked again from the entry alone. Zero in entries from before it.
	ExcludedAfter int `toml:"excluded_after,omitempty" json:"excluded_after,omitempty"`
	// Iterations is the smaller of Counts (in entries from before Counts,
	// the count every run had).
	Iterations int `toml:"iterations" json:"iterations"`
	// CommandIterations is the count the bench command fixes, which the
	// first run of each side had; Counts are what hone chose from it
	// (sizeBenchmark) so that the loop dominates each run.
	CommandIterations int   `toml:"command_iterations,omitempty" json:"command_iterations,omitempty"`
	Counts            []int `toml:"counts,omitempty" json:"counts,omitempty"`
	// Fingerprint is what the first pair's baseline run at the smaller
	// count reported besides its timings (benchformat.Fingerprint): the
	// benchmark, its iteration count and status, and its output metrics;
	// LongFingerprint the same at the larger count. Every candidate run
	// must report what its own pair's baseline run at its count did.
	Fingerprint     string `toml:"fingerprint" json:"fingerprint"`
	LongFingerprint string `toml:"long_fingerprint,omitempty" json:"long_fingerprint,omitempty"`
	// ShortCPU and LongCPU are each run's whole CPU time in seconds at the
	// two counts, from which CPU and the scalings are computed.
	ShortCPU  Samples     `toml:"short_cpu" json:"short_cpu"`
	LongCPU   Samples     `toml:"long_cpu" json:"long_cpu"`
	CPU       Samples     `toml:"cpu" json:"cpu"`
	Wall      Samples     `toml:"wall" json:"wall"`
	CPUStats  MetricStats `toml:"cpu_stats" json:"cpu_stats"`
	WallStats MetricStats `toml:"wall_stats" json:"wall_stats"`
	// BaselineScaling and CandidateScaling are each side's median CPU
	// time at the larger count over its median at the smaller: the
	// linearity that proves the loop does the work (see linearity). At N
	// and 2N, a scaling of 1.9 says the loop took 90% of a run at N.
	BaselineScaling  float64 `toml:"baseline_scaling,omitempty" json:"baseline_scaling,omitempty"`
	CandidateScaling float64 `toml:"candidate_scaling,omitempty" json:"candidate_scaling,omitempty"`
	// CandidateProof is the candidate's scaling at counts of its own
	// (ProofCounts), measured when it failed linearity at the shared
	// counts: a loop much faster than the baseline's is a small share of
	// a run sized for the baseline, so it scales as its fixed cost does
	// there, and proves its work at counts where it dominates. Zero when
	// no proof was needed.
	CandidateProof float64 `toml:"candidate_proof,omitempty" json:"candidate_proof,omitempty"`
	ProofCounts    []int   `toml:"proof_counts,omitempty" json:"proof_counts,omitempty"`
	// Sizing are the runs that chose Counts (calibrate), in the order they
	// ran, and a candidate's sizing for its proof: each count a side
	// tried and its runs' CPU time there. A benchmark whose set-up
	// outweighed its loop at every count tried shows it here.
	Sizing []SizingRun `toml:"sizing,omitempty" json:"sizing,omitempty"`
	// Unmeasurable: the extra iterations cost too little against the
	// noise of the runs to give a per-iteration cost (see unmeasurable);
	// the benchmark's speedup is not a figure to read.
	Unmeasurable bool `toml:"unmeasurable,omitempty" json:"unmeasurable,omitempty"`
	// Decision is a deciding benchmark's own sequential decision, made
	// as the geometric mean's is.
	Decision string `toml:"decision,omitempty" json:"decision,omitempty"`
	// Regressed: it decides and is clearly slower (see benchmarkStats).
	Regressed bool `toml:"regressed,omitempty" json:"regressed,omitempty"`
	// FamilyDecision is a deciding benchmark's decision at its share of
	// the rates (Bench.Family): "faster" or "slower" from the first look
	// that decided so, else empty.
	FamilyDecision string `toml:"family_decision,omitempty" json:"family_decision,omitempty"`
}

// SizingRun is one count that sizing tried on one side, with each of its
// runs' CPU time in seconds.
type SizingRun struct {
	Side  string    `toml:"side" json:"side"`
	Count int       `toml:"count" json:"count"`
	CPU   []float64 `toml:"cpu" json:"cpu"`
}

// harnessRun is a bench whose command is a benchmark harness (go test
// -bench, Google Benchmark): one sample per benchmark per pair, each
// benchmark in harness processes of its own.
type harnessRun struct {
	*benchRun
	format   string
	deciding []string // [bench] benchmarks; empty: all
	outputs  []string // [bench] outputs
}

// harnessBenchmark is one benchmark of a harness bench: its result so
// far and its counts.
type harnessBenchmark struct {
	res    *BenchmarkResult
	counts [2]int
	last   [2]*jail.Result // each side's latest run, for a failure to show
}

// run is benchRun.run for a harness. The whole command runs once on each
// side first (the warm-up): it names the benchmarks, and the two sides
// must report the same ones with the same counts. Both sides then size
// each benchmark's counts (size). Each pair has a setup of its own (a
// fresh input seed and environment padding, Bench.Setups) and runs every
// benchmark at both counts on both sides with it: benchmarks in seeded
// order, sides in seeded order per pair, counts in seeded order per
// benchmark. The deciding samples are each pair's geometric mean over the
// deciding benchmarks (the log of a geometric mean's ratio is the mean of
// the benchmarks' log ratios); the sequential decision applies to them
// unchanged, and to each deciding benchmark alone, and the bench goes on
// until all are decided or max_pairs is reached. After each batch, each
// deciding benchmark must scale with its iteration count on both sides
// (linearity). As benchRun.run does, it returns what it measured with a
// failure once sizing began: each benchmark's sizing runs, counts and
// samples so far.
func (hr *harnessRun) run(ctx context.Context) (*Bench, *runFailure, error) {
	p := hr.protocol
	b := newBench(hr.candidate.Command, p)
	b.Format, b.Warmup = hr.format, 1
	b.MaxSpeedup, b.HarnessOutputs, b.MaxLoopSeconds = p.MaxSpeedup, hr.outputs, p.MaxLoop.Seconds()
	b.Family, b.OneCPU, b.NoisierFloor = FamilyBonferroni, true, b.Threshold/2
	for _, s := range []*jail.Spec{&hr.baseline, &hr.candidate} {
		// One CPU: xxhash's test binary spent 20 to 100 ms of CPU time
		// before its first iteration when it had a second core, its
		// garbage collector marking on the idle one, and 7 ms with a
		// spread of 0.3 ms on one core; that noise, which no patch
		// caused, set how long every run had to be.
		s.Timeout, s.OutputCap, s.OneCPU = p.Timeout.Duration, harnessOutputCap, true
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
	} else {
		for _, hb := range benches {
			if fail, err := hr.size(ctx, b, hb); err != nil || fail != nil {
				return finish(), fail, err
			}
		}
	}
	b.plan()
	rng := rand.New(rand.NewPCG(uint64(p.OrderSeed), 0x6f72646572+uint64(b.PooledPairs)))
	for b.Pairs < b.MaxPairs {
		for range b.toNextLook() {
			setup, err := hr.newSetup(false)
			if err != nil {
				return finish(), nil, err
			}
			candFirst := rng.IntN(2) == 1
			for _, i := range rng.Perm(len(benches)) {
				hb := benches[i]
				longFirst := rng.IntN(2) == 1
				var got [2][2]runSample // by side, then count
				for _, cand := range []bool{candFirst, !candFirst} {
					for _, long := range []bool{longFirst, !longFirst} {
						s, fail, err := hr.runAt(ctx, b, hb, hr.side(setup, cand), cand, hb.counts[sideIndex(long)])
						if err != nil {
							return finish(), nil, err
						}
						if fail != nil {
							return finish(), fail, nil
						}
						got[sideIndex(cand)][sideIndex(long)] = s
					}
				}
				if fail := hb.check(got, &baseLeft); fail != nil {
					return finish(), fail, nil
				}
				hb.add(got)
			}
			if candFirst {
				b.Order += "c"
			} else {
				b.Order += "b"
			}
			setGeomean(&cpu, &wall, benches)
			b.Setups = append(b.Setups, setup)
			b.Pairs++
		}
		fail := linearity(benches)
		if fail != nil && fail.side == "baseline" {
			// What the baseline cannot scale leaves the decision to the
			// others, at whichever look it shows (see excludeNonlinear).
			// The deciding series is then the geometric mean over the
			// benchmarks left, from the first pair on, and the looks
			// already made are made again on it: the decision never
			// mixes pairs of one set of benchmarks with pairs of another,
			// and it is the one recompute replays from the stored series.
			if fail = excludeNonlinear(benches, b.Pairs); fail == nil {
				setGeomean(&cpu, &wall, benches)
				b.Decisions = replay(b, &cpu)[:len(b.Decisions)]
				fail = linearity(benches)
			}
		}
		if fail != nil {
			if fail, err := hr.proveLinear(ctx, b, benches, fail); err != nil || fail != nil {
				return finish(), fail, err
			}
		}
		geomean := hr.decided(b, cpu)
		if settled(b, benches, geomean) {
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
		if _, err := benchformat.CommandAt(hr.format, hr.baseline.Command, name, 1); err != nil {
			return nil, &runFailure{side: "baseline", res: ress[0], msg: fmt.Sprintf("benchmark %.100q cannot be run alone: %v", name, err)}, nil
		}
		n := runs[0].Find(name).Iterations
		out = append(out, &harnessBenchmark{res: &BenchmarkResult{
			Name: name, Decides: len(hr.deciding) == 0 || slices.Contains(hr.deciding, name), Iterations: n, CommandIterations: n,
			ShortCPU: Samples{Metric: workspace.MetricCPUTime, Unit: "s"}, LongCPU: Samples{Metric: workspace.MetricCPUTime, Unit: "s"},
			CPU: Samples{Metric: workspace.MetricCPUTime, Unit: "ns/op"}, Wall: Samples{Metric: workspace.MetricWall, Unit: "ns/op"},
		}})
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
		if old.Excluded != "" {
			hb.res.Decides, hb.res.Excluded = false, old.Excluded
		}
		if old.Name != hb.res.Name || old.Decides != hb.res.Decides {
			return &runFailure{side: "baseline", msg: fmt.Sprintf("the harness now runs benchmark %.100q where the verdict pooled with ran %.100q", hb.res.Name, old.Name)}
		}
		if len(old.Counts) != 2 {
			return &runFailure{side: "baseline", msg: fmt.Sprintf("the verdict pooled with measured benchmark %.100q at one iteration count, before hone measured the cost of the loop alone; judge it afresh", old.Name)}
		}
		r := hb.res
		for _, s := range [][2]*Samples{{&r.CPU, &old.CPU}, {&r.Wall, &old.Wall}, {&r.ShortCPU, &old.ShortCPU}, {&r.LongCPU, &old.LongCPU}} {
			s[0].Baseline, s[0].Candidate = slices.Clone(s[1].Baseline), slices.Clone(s[1].Candidate)
		}
		hb.setCounts(old.Counts[0], old.Counts[1])
		r.Fingerprint, r.LongFingerprint = old.Fingerprint, old.LongFingerprint
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
	b.Setups = slices.Clone(pr.Setups)
	b.MaxPairs = pr.Pairs + hr.protocol.MaxPairs
	return nil
}

// runSample is one benchmark run's figures and what it must agree on.
type runSample struct {
	cpu, wall   float64 // the whole run's, in seconds
	iterations  int     // as the harness reported them
	fingerprint string
	res         *jail.Result
}

// runAt runs one benchmark once on one side, spec being that side's bench
// command and setup, at the given iteration count.
func (hr *harnessRun) runAt(ctx context.Context, b *Bench, hb *harnessBenchmark, spec jail.Spec, cand bool, count int) (runSample, *runFailure, error) {
	cmd, err := benchformat.CommandAt(hr.format, spec.Command, hb.res.Name, count)
	if err != nil {
		return runSample{}, nil, err
	}
	spec.Command = cmd
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
	if _, err := benchformat.CPUPerOp(run, hb.res.Name, time.Second); err != nil {
		return runSample{}, hr.failed(res, cand, err.Error()), nil
	}
	return runSample{cpu: v[workspace.MetricCPUTime], wall: v[workspace.MetricWall], iterations: run.Benchmarks[0].Iterations,
		fingerprint: benchformat.Fingerprint(run, hr.outputs), res: res}, nil, nil
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

// check holds one pair's runs of a benchmark to the counts hone asked
// for, and each candidate run to the baseline's run at its count in the
// same pair (the pair's setup gave both the same input seed): the
// baseline is checked first, since a baseline that does not run its count
// is not the candidate's fault.
func (hb *harnessBenchmark) check(got [2][2]runSample, baseLeft *int) *runFailure {
	for k, count := range hb.counts {
		if fail := hb.countFailure(false, got[0][k], count); fail != nil {
			return fail
		}
		*baseLeft += got[0][k].res.Leftover
	}
	if hb.res.Fingerprint == "" {
		hb.res.Fingerprint, hb.res.LongFingerprint = got[0][0].fingerprint, got[0][1].fingerprint
	}
	for k, count := range hb.counts {
		cand := got[1][k]
		if fail := hb.countFailure(true, cand, count); fail != nil {
			return fail
		}
		switch {
		case cand.fingerprint != got[0][k].fingerprint:
			return &runFailure{side: "candidate", res: cand.res, reason: ReasonOutput, msg: fmt.Sprintf(
				"bench output differs from the baseline's: benchmark %.100q reports another status or output metric than the baseline did on the same input", hb.res.Name)}
		case cand.res.Leftover > 0 && *baseLeft == 0 && !helpersOnly(cand.res):
			return &runFailure{side: "candidate", res: cand.res, reason: ReasonLeftover, msg: benchLeftover(cand.res)}
		}
	}
	return nil
}

// countFailure holds a run to the iteration count hone asked for. The
// count hone asks for is not the one the command fixes, so a benchmark
// that sets its own (from its code, its init, or the arguments) is seen.
func (hb *harnessBenchmark) countFailure(cand bool, s runSample, count int) *runFailure {
	if s.iterations == count {
		return nil
	}
	if !cand {
		return &runFailure{side: "baseline", res: s.res, msg: fmt.Sprintf(
			"the baseline's benchmark %.100q ran %d iterations where hone asked for %d: the benchmark must run the count it is given", hb.res.Name, s.iterations, count)}
	}
	return &runFailure{side: "candidate", res: s.res, reason: ReasonOutput, msg: fmt.Sprintf(
		"benchmark %.100q ran %d iterations where hone asked for %d, as the baseline ran: the candidate changed its own iteration count", hb.res.Name, s.iterations, count)}
}

// add records one pair's runs: each run's CPU time, and each side's
// marginal cost per iteration.
func (hb *harnessBenchmark) add(got [2][2]runSample) {
	r := hb.res
	hb.last = [2]*jail.Result{got[0][1].res, got[1][1].res}
	extra := float64(hb.counts[1]-hb.counts[0]) / 1e9
	marginal := func(side int, of func(runSample) float64) float64 {
		return (of(got[side][1]) - of(got[side][0])) / extra
	}
	cpuOf := func(s runSample) float64 { return s.cpu }
	wallOf := func(s runSample) float64 { return s.wall }
	r.ShortCPU.Baseline, r.ShortCPU.Candidate = append(r.ShortCPU.Baseline, got[0][0].cpu), append(r.ShortCPU.Candidate, got[1][0].cpu)
	r.LongCPU.Baseline, r.LongCPU.Candidate = append(r.LongCPU.Baseline, got[0][1].cpu), append(r.LongCPU.Candidate, got[1][1].cpu)
	r.CPU.Baseline, r.CPU.Candidate = append(r.CPU.Baseline, marginal(0, cpuOf)), append(r.CPU.Candidate, marginal(1, cpuOf))
	r.Wall.Baseline, r.Wall.Candidate = append(r.Wall.Baseline, marginal(0, wallOf)), append(r.Wall.Candidate, marginal(1, wallOf))
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
// setGeomean sets the geometric-mean series of the deciding benchmarks,
// pair by pair, from their samples so far.
func setGeomean(cpu, wall *Samples, benches []*harnessBenchmark) {
	var cs, ws []benchformat.Samples
	for _, hb := range benches {
		if r := hb.res; r.Decides {
			cs = append(cs, benchformat.Samples{Name: r.Name, Baseline: r.CPU.Baseline, Candidate: r.CPU.Candidate})
			ws = append(ws, benchformat.Samples{Name: r.Name, Baseline: r.Wall.Baseline, Candidate: r.Wall.Candidate})
		}
	}
	cpu.Baseline, cpu.Candidate = benchformat.Geomeans(cs)
	wall.Baseline, wall.Candidate = benchformat.Geomeans(ws)
}

func sideIndex(cand bool) int {
	if cand {
		return 1
	}
	return 0
}
