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
	Sessions int // A/A sessions, and sessions per injection (default 20)
	// Inject are the injected changes as fractions of the workload
	// (default 0.05): a positive one slows the candidate down by it, a
	// negative one the baseline, which makes the candidate faster by
	// 1+|f|; at -threshold that is a speedup exactly at the threshold,
	// whose accept rate is the protocol's false-accept rate at its
	// boundary.
	Inject   []float64
	Metric   string // overrides the target's bench metric
	MaxPairs int    // overrides max_pairs when > 0
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
	// Injected are sessions whose candidate side (baseline side, for a
	// negative fraction) runs a busy loop costing the given fraction of
	// the workload; a "slower" decision is a detection, a "faster" one of
	// a speedup at the threshold a false accept at the boundary.
	Injected []SessionStats `toml:"injected" json:"injected"`
	// PairSD is the robust standard deviation (1.4826 MAD) of the A/A
	// sessions' per-pair log ratios, averaged over the sessions: the
	// noise the protocol works against on this host.
	PairSD float64 `toml:"pair_sd,omitempty" json:"pair_sd,omitempty"`
	// Conclusion answers, in one line, what this host can tell apart.
	Conclusion string `toml:"conclusion,omitempty" json:"conclusion,omitempty"`
	// LayoutShift are sessions whose candidate is the pin linked 16 bytes
	// further on in every layout (layoutSessions): any accept or "slower"
	// is layout taken for the patch. Nil for a target of one layout.
	LayoutShift *SessionStats `toml:"layout_shift,omitempty" json:"layout_shift,omitempty"`
	Seconds     float64       `toml:"seconds" json:"seconds"`
	Environment Environment   `toml:"environment" json:"environment"`
}

// SessionStats summarises sessions of one kind.
type SessionStats struct {
	Inject   float64 `toml:"inject" json:"inject"` // 0 for A/A; negative: a speedup of 1+|inject|
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
	// SD is the sessions' mean robust standard deviation of their pairs'
	// log ratios.
	SD float64 `toml:"sd,omitempty" json:"sd,omitempty"`
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
		if f == 0 || f <= -1 || f >= 1 {
			return nil, errs.Usagef("--inject %g: must be a fraction in (-1, 1) other than 0: 0.05 slows the candidate by 5%%, -0.02 makes it 2%% faster", f)
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

	// Each pair's setup (seed, padding) is the bench's to give, as in a
	// verdict; the spin-loop sizing runs get the calibration's seed.
	spin := func(s *build.Side, n int) jail.Spec {
		return s.Spec(t.Bench.Run+"\n"+spinLoop(n), 0)
	}
	base, twin := spin(built[0], 0), spin(built[1], 0)
	// One turn of the machine for the sizing and every session: the
	// slowdown is sized on the same quiet machine it is injected on, and
	// a calibration waits for the machine once, not once a session.
	turn, err := benchTurn(ctx, opts.Progress)
	if err != nil {
		return nil, err
	}
	defer turn.Release()
	sized := time.Now()
	perIter, workload, err := measureSpin(ctx, m, build.WithSeed(base, seed), proto.Metric)
	if err != nil {
		return nil, err
	}
	c.BaselineMedian = workload
	if opts.Progress != nil {
		// measureSpin ran spinRuns commands: a pair costs two of them.
		pair := 2 * time.Since(sized) / spinRuns
		kinds := time.Duration(opts.Sessions * (1 + len(opts.Inject)))
		opts.Progress(Progress{Phase: "estimate", EstimateLow: kinds * time.Duration(proto.Warmup+min(proto.Pairs, proto.MaxPairs)) * pair,
			EstimateHigh: kinds * time.Duration(proto.Warmup+proto.MaxPairs) * pair})
	}

	c.AA = SessionStats{}
	c.Injected = make([]SessionStats, len(opts.Inject))
	total := opts.Sessions * (1 + len(opts.Inject))
	done := 0
	for i := range opts.Sessions {
		for k := -1; k < len(opts.Inject); k++ {
			bs, cand, stats := base, twin, &c.AA
			if k >= 0 {
				f := opts.Inject[k]
				stats = &c.Injected[k]
				stats.Inject = f
				if n := int(math.Round(math.Abs(f) * workload / perIter)); f > 0 {
					cand = spin(built[1], n)
				} else {
					bs = spin(built[0], n)
				}
			}
			done++
			p := proto
			p.OrderSeed = proto.OrderSeed + int64(i)*7919
			br := &benchRun{baseline: bs, candidate: cand, protocol: p, meter: m, env: &c.Environment}
			if opts.Progress != nil {
				br.progress = func(pr Progress) { pr.Session, pr.Sessions = done, total; opts.Progress(pr) }
			}
			b, err := session(ctx, br)
			if err != nil {
				return nil, err
			}
			stats.add(b)
		}
	}
	turn.Release()
	c.AA.finish()
	for i := range c.Injected {
		c.Injected[i].finish()
	}
	shift := func(s *build.Side) jail.Spec { return spin(s, 0) }
	if c.LayoutShift, err = layoutSessions(ctx, run, m, proto, pin, seed, opts.Sessions, built[0], shift, &c.Environment, opts.Progress); err != nil {
		return nil, err
	}
	c.PairSD = c.AA.SD
	c.Conclusion = c.conclusion()
	c.Seconds = time.Since(start).Seconds()
	c.Environment.markWeak(&c.Common, c.summary())
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

// session runs one calibration session's bench, in a turn of the machine
// its caller holds: a run that fails stops the calibration, whose sessions
// all run the pin.
func session(ctx context.Context, br *benchRun) (*Bench, error) {
	b, fail, err := br.run(ctx)
	if err != nil {
		return nil, err
	}
	if fail != nil {
		return nil, errs.Failuref("calibration: the %s bench command %s:\n%s", fail.side, fail.res.Describe(), outputTail(fail.res))
	}
	return b, nil
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
	// The three measures below run spinRuns commands in all.
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
	if workload, err = measure(base.Command, spinRuns-10); err != nil {
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

// spinRuns is how many commands measureSpin runs.
const spinRuns = 17

func (s *SessionStats) add(b *Bench) {
	st := b.Stat(b.Metric)
	for _, smp := range b.Samples {
		if smp.Metric == b.Metric {
			s.SD += robustSD(stats.LogRatios(smp.Baseline, smp.Candidate))
		}
	}
	s.Sessions++
	s.MeanPairs += float64(b.Pairs)
	s.MeanSeconds += b.Seconds
	s.MeanSpeedup += st.Speedup
	switch b.Decisions[len(b.Decisions)-1] {
	case decFaster:
		s.Accepts++
	case decSlower:
		if !b.slowerInOneLayout() {
			s.Detected++
		}
	}
	if st.CILow > 1 || st.CIHigh < 1 || st.P < 1-b.Confidence {
		s.Significant++
	}
}

func (s *SessionStats) finish() {
	if s.Sessions > 0 {
		n := float64(s.Sessions)
		s.MeanPairs, s.MeanSeconds, s.MeanSpeedup, s.SD = s.MeanPairs/n, s.MeanSeconds/n, s.MeanSpeedup/n, s.SD/n
	}
}

func (c *CalibrationEntry) summary() string {
	parts := []string{fmt.Sprintf("%s A/A: %d/%d false accepts, %d/%d significant", c.Metric, c.AA.Accepts, c.AA.Sessions, c.AA.Significant, c.AA.Sessions)}
	for _, in := range c.Injected {
		if in.Inject < 0 {
			parts = append(parts, fmt.Sprintf("%.3g%% speedup: %d/%d accepted", -in.Inject*100, in.Accepts, in.Sessions))
			continue
		}
		parts = append(parts, fmt.Sprintf("%.3g%% slowdown: %d/%d detected", in.Inject*100, in.Detected, in.Sessions))
	}
	if c.LayoutShift != nil {
		parts = append(parts, c.LayoutShift.describeShift())
	}
	return strings.Join(parts, "; ")
}

// robustSD is 1.4826 times the median absolute deviation of xs.
func robustSD(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := stats.Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return 1.4826 * stats.Median(dev)
}

// conclusion is the one line a user asks of a calibration: which
// slowdowns this host catches in at least 19 of 20 sessions at its
// max_pairs, and for one it does not, how many pairs would: the pairs a
// paired test at the last look's level needs to see it with 95% power
// under the A/A sessions' noise (the signed-rank test's efficiency taken
// as 95% of the t test's), or the instructions tier.
func (c *CalibrationEntry) conclusion() string {
	var parts []string
	for _, in := range c.Injected {
		if in.Inject < 0 {
			parts = append(parts, fmt.Sprintf("accepts a speedup of %.3g%% (measured %.3fx) in %d of %d sessions", -in.Inject*100, in.MeanSpeedup, in.Accepts, in.Sessions))
			continue
		}
		if in.Sessions > 0 && in.Detected*20 >= in.Sessions*19 {
			parts = append(parts, fmt.Sprintf("detects %.3g%% in %d of %d sessions at max_pairs %d", in.Inject*100, in.Detected, in.Sessions, c.MaxPairs))
			continue
		}
		more := fmt.Sprintf("%.3g%% (detected in %d of %d sessions) needs ", in.Inject*100, in.Detected, in.Sessions)
		if need := c.pairsFor(in.Inject); need > c.MaxPairs {
			more += fmt.Sprintf("max_pairs %d or the instructions tier", need)
		} else {
			more += "a quieter machine or the instructions tier"
		}
		parts = append(parts, more)
	}
	parts = append(parts, fmt.Sprintf("accepts A/A in %d of %d", c.AA.Accepts, c.AA.Sessions))
	return "this machine " + strings.Join(parts, "; ")
}

// pairsFor estimates the pairs that detect a slowdown f (see conclusion),
// rounded up to whole batches; 0 without A/A noise to go on.
func (c *CalibrationEntry) pairsFor(f float64) int {
	if c.AA.SD <= 0 || c.BatchSize <= 0 {
		return 0
	}
	looks := planLooks(0, c.BatchSize, c.MaxPairs, c.Confidence)
	alpha := (1 - looks[len(looks)-1].Confidence) / 2
	z := func(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
	n := math.Pow((z(1-alpha)+z(0.95))*c.AA.SD/math.Log1p(f), 2) / 0.95
	return int(math.Ceil(n/float64(c.BatchSize))) * c.BatchSize
}
