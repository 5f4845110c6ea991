package verdict

import (
	"context"
	"fmt"
	"github.com/hone-perf/hone/benchformat"
	"math"
	"strings"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict/stats"
	"github.com/hone-perf/hone/workspace"
)

// CalibrationMaxAge is how old a calibration may be before hone verdict warns.
const CalibrationMaxAge = 7 * 24 * time.Hour

// CalibrationOptions adjust hone calibrate.
type CalibrationOptions struct {
	Sessions int       // A/A sessions, and sessions per injected slowdown (default 20)
	Inject   []float64 // injected slowdowns as fractions (default 0.05)
	Metric   string    // overrides the target's bench metric
	MaxPairs int       // overrides max_pairs when > 0
	Progress func(Progress)
	// Warnings, when set, is told what the caller should show.
	Warnings func(errs.Warning)
}

// CalibrationEntry is a calibration ledger entry (Kind = calibration): how
// the verdict protocol behaved on this host against known truths.
type CalibrationEntry struct {
	ledger.Common
	Host       string  `toml:"host" json:"host"`
	Metric     string  `toml:"metric" json:"metric"`
	BatchSize  int     `toml:"batch_size" json:"batch_size"`
	MaxPairs   int     `toml:"max_pairs" json:"max_pairs"`
	Threshold  float64 `toml:"threshold" json:"threshold"`
	Confidence float64 `toml:"confidence" json:"confidence"`
	// BaselineMedian is the workload's median in the metric's unit.
	BaselineMedian float64 `toml:"baseline_median" json:"baseline_median"`
	Unit           string  `toml:"unit" json:"unit"`
	// InputSeed is the seed the workload got, as a verdict's bench does.
	InputSeed int64 `toml:"input_seed,omitempty" json:"input_seed,omitempty"`
	// AA are sessions of the pin against itself, built twice in two
	// checkouts as a verdict builds baseline and candidate: any accept is a
	// false accept.
	AA SessionStats `toml:"aa" json:"aa"`
	// Injected are sessions whose candidate side runs a busy loop costing the
	// given fraction of the baseline; a "slower" decision is a detection.
	Injected    []SessionStats `toml:"injected" json:"injected"`
	Seconds     float64        `toml:"seconds" json:"seconds"`
	Environment Environment    `toml:"environment" json:"environment"`
}

// SessionStats summarises sessions of one kind.
type SessionStats struct {
	Inject   float64 `toml:"inject" json:"inject"` // 0 for A/A
	Sessions int     `toml:"sessions" json:"sessions"`
	Accepts  int     `toml:"accepts" json:"accepts"`   // final decision "faster"
	Detected int     `toml:"detected" json:"detected"` // final decision "slower"
	// Significant counts sessions whose final CI excludes 1 or whose p is
	// below alpha, in either direction.
	Significant int     `toml:"significant" json:"significant"`
	MeanPairs   float64 `toml:"mean_pairs" json:"mean_pairs"`
	MeanSeconds float64 `toml:"mean_seconds" json:"mean_seconds"`
	// MeanSpeedup is the mean measured speedup: about 1/(1+inject).
	MeanSpeedup float64 `toml:"mean_speedup" json:"mean_speedup"`
}

// Rate returns part/Sessions.
func (s SessionStats) Rate(part int) float64 {
	if s.Sessions == 0 {
		return 0
	}
	return float64(part) / float64(s.Sessions)
}

// Calibrate runs A/A and injected-slowdown sessions of target at its pin and
// records a calibration entry. Like a verdict it reads the target from
// hone.toml at the pin, and builds the pin twice, in two checkouts: the A/A
// sessions compare those two builds, so a bias between two builds of the
// same tree would show as one between baseline and candidate does.
func Calibrate(ctx context.Context, ws *workspace.Workspace, target string, opts CalibrationOptions) (*CalibrationEntry, error) {
	wt, err := ws.Target(target)
	if err != nil {
		return nil, err
	}
	pin, err := ws.ResolvePin(ctx, wt)
	if err != nil {
		return nil, err
	}
	gp, err := ws.GoalpostsAt(ctx, target, pin)
	if err != nil {
		return nil, err
	}
	t := gp.Target
	if t.Bench.Run == "" {
		return nil, errs.Invalidf("target %q has no bench command; add [targets.%s.bench] run = \"...\" to %s", t.Name, t.Name, workspace.FileName)
	}
	if f := t.Bench.Format; f != "" && f != benchformat.Process {
		return nil, errs.Invalidf("target %q's bench is a %s harness, and calibration injects work into a whole process's run; calibrate a target whose bench runs one benchmark as a process (format = \"process\")", t.Name, f)
	}
	if opts.Sessions <= 0 {
		opts.Sessions = 20
	}
	if len(opts.Inject) == 0 {
		opts.Inject = []float64{0.05}
	}
	for _, f := range opts.Inject {
		if f <= 0 || f >= 1 {
			return nil, errs.Usagef("--inject %g: must be a fraction in (0, 1), e.g. 0.05", f)
		}
	}
	proto := t.Bench
	if opts.Metric != "" {
		if err := workspace.CheckMetric(opts.Metric); err != nil {
			return nil, errs.Usagef("--metric: %v", err)
		}
		proto.Metric = opts.Metric
	}
	if opts.MaxPairs > 0 {
		proto.MaxPairs, proto.Pairs = opts.MaxPairs, min(proto.Pairs, opts.MaxPairs)
	}
	seed, err := build.NewSeed()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	c := &CalibrationEntry{
		Common: ledger.Common{Kind: ledger.KindCalibration, Target: t.Name, Pin: pin},
		Metric: proto.Metric, BatchSize: proto.Pairs, MaxPairs: proto.MaxPairs, Threshold: proto.Threshold, Confidence: proto.Confidence,
		Unit: unitOf(proto.Metric), InputSeed: seed,
	}
	c.Environment.PinCommit = pin
	hostFacts(ctx, &c.Environment)
	c.Host = c.Environment.Host

	sb := gp.Config.Sandbox
	run, err := build.Start(ctx, ws.Repo, t, sb, "calibrate", false)
	if err != nil {
		return nil, err
	}
	defer run.CloseWarning(opts.Warnings)
	m, err := newMeter(ctx, proto.Metric, run, sb)
	if err != nil {
		return nil, err
	}
	c.Environment.Perf, c.Environment.InstructionsVia = m.perf, m.instrVia
	c.Environment.Isolation, c.Environment.NetworkDenied = sb.Isolation, sb.Network == "deny"
	var built [2]*build.Side
	for i, role := range []build.Role{build.Baseline, build.Candidate} {
		s, err := run.Build(ctx, role, pin)
		if err != nil {
			return nil, err
		}
		if !s.OK() {
			return nil, errs.Failuref("the pin of %q fails to build (%s); fix the build before calibrating", t.Name, s.Describe())
		}
		c.Environment.noteJail(s.Result)
		built[i] = s
	}
	c.Environment.BaselineBinary, c.Environment.CandidateBinary = nilIfEmpty(built[0].Outputs), nilIfEmpty(built[1].Outputs)

	spin := func(s *build.Side, n int) jail.Spec {
		return build.WithSeed(s.Spec(t.Bench.Run+"\n"+spinLoop(n), 0), seed)
	}
	base, twin := spin(built[0], 0), spin(built[1], 0)
	perIter, workload, err := measureSpin(ctx, m, base, proto.Metric)
	if err != nil {
		return nil, err
	}
	c.BaselineMedian = workload

	c.AA = SessionStats{}
	c.Injected = make([]SessionStats, len(opts.Inject))
	total := opts.Sessions * (1 + len(opts.Inject))
	done := 0
	for i := range opts.Sessions {
		for k := -1; k < len(opts.Inject); k++ {
			cand, stats := twin, &c.AA
			if k >= 0 {
				stats = &c.Injected[k]
				stats.Inject = opts.Inject[k]
				cand = spin(built[1], int(math.Round(opts.Inject[k]*workload/perIter)))
			}
			done++
			p := proto
			p.OrderSeed = proto.OrderSeed + int64(i)*7919
			br := &benchRun{baseline: base, candidate: cand, protocol: p, meter: m, env: &c.Environment}
			if opts.Progress != nil {
				br.progress = func(pr Progress) { pr.Session, pr.Sessions = done, total; opts.Progress(pr) }
			}
			b, fail, err := br.run(ctx)
			if err != nil {
				return nil, err
			}
			if fail != nil {
				return nil, errs.Failuref("calibration: the %s bench command %s:\n%s", fail.side, fail.res.Describe(), outputTail(fail.res))
			}
			stats.add(b)
		}
	}
	c.AA.finish()
	for i := range c.Injected {
		c.Injected[i].finish()
	}
	c.Seconds = time.Since(start).Seconds()
	c.Summary = c.Environment.weak(c.summary())
	c.Environment.JailUserCreated = c.Environment.JailUserCreated || run.UserCreated
	if opts.Progress != nil {
		opts.Progress(Progress{Phase: "record"})
	}
	st, err := ledger.Open(ws).Append(ctx, c)
	if err != nil {
		return nil, err
	}
	c.Schema, c.ID, c.Created = st.Schema, st.ID, st.Created
	return c, nil
}

// spinLoop is a shell busy loop of n iterations: pure CPU in the measured
// process, counted by rusage and by cachegrind alike. Both sides run the
// same shape of command (n = 0 on the baseline), so the shell's own cost is
// equal on both.
func spinLoop(n int) string {
	return fmt.Sprintf("i=0; while [ $i -lt %d ]; do i=$((i+1)); done", n)
}

// measureSpin measures the workload's median and the metric cost of one
// spin iteration, to size the injected slowdown.
func measureSpin(ctx context.Context, m measurer, base jail.Spec, metric string) (perIter, workload float64, err error) {
	const iters = 20000
	measure := func(command string, runs int) (float64, error) {
		spec := base
		spec.Command = command
		vals := make([]float64, 0, runs)
		for range runs {
			v, res, err := m.measure(ctx, spec, metric)
			if err != nil {
				return 0, err
			}
			if !res.Success() {
				return 0, errs.Failuref("calibration: %q %s:\n%s", command, res.Describe(), outputTail(res))
			}
			vals = append(vals, v[metric])
		}
		return stats.Median(vals), nil
	}
	if workload, err = measure(base.Command, 7); err != nil {
		return 0, 0, err
	}
	spun, err := measure(spinLoop(iters), 5)
	if err != nil {
		return 0, 0, err
	}
	empty, err := measure(spinLoop(0), 5)
	if err != nil {
		return 0, 0, err
	}
	if perIter = (spun - empty) / iters; perIter <= 0 || workload <= 0 {
		return 0, 0, errs.Failuref("calibration: cannot size the injected slowdown (workload median %g, loop cost %g per iteration)", workload, perIter)
	}
	return perIter, workload, nil
}

func (s *SessionStats) add(b *Bench) {
	st := b.Stat(b.Metric)
	s.Sessions++
	s.MeanPairs += float64(b.Pairs)
	s.MeanSeconds += b.Seconds
	s.MeanSpeedup += st.Speedup
	switch b.Decisions[len(b.Decisions)-1] {
	case decFaster:
		s.Accepts++
	case decSlower:
		s.Detected++
	}
	if st.CILow > 1 || st.CIHigh < 1 || st.P < 1-b.Confidence {
		s.Significant++
	}
}

func (s *SessionStats) finish() {
	if s.Sessions > 0 {
		n := float64(s.Sessions)
		s.MeanPairs, s.MeanSeconds, s.MeanSpeedup = s.MeanPairs/n, s.MeanSeconds/n, s.MeanSpeedup/n
	}
}

func (c *CalibrationEntry) summary() string {
	parts := []string{fmt.Sprintf("%s A/A: %d/%d false accepts, %d/%d significant", c.Metric, c.AA.Accepts, c.AA.Sessions, c.AA.Significant, c.AA.Sessions)}
	for _, in := range c.Injected {
		parts = append(parts, fmt.Sprintf("%.3g%% slowdown: %d/%d detected", in.Inject*100, in.Detected, in.Sessions))
	}
	return strings.Join(parts, "; ")
}
