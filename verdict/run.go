package verdict

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hone-perf/hone/benchformat"
	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/hostinfo"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/safetext"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict/risk"
	"github.com/hone-perf/hone/workspace"
)

// Options adjust one verdict. The protocol comes from hone.toml at the
// protected tip; a person may only tighten it (MaxPairs, Threshold), never choose another
// metric, and MCP passes none of these.
type Options struct {
	Metric    string  // must be the pin's [bench] metric when set
	MaxPairs  int     // at least the pin's max_pairs when > 0
	Threshold float64 // at least the pin's threshold when > 0
	// Rejudge, a person's reason, lets a patch that already has a verdict
	// be judged again; the samples of both are pooled.
	Rejudge string
	Keep    bool // keep the run folder (both checkouts); its path is in Entry.KeptCheckouts
	// RunnerClass is recorded in the entry: the class of the runner
	// (`hone runner --class`) judging it.
	RunnerClass string
	Progress    func(Progress)
	// Warnings, when set, is told what the caller should show: the working
	// tree's hone.toml differs from the protected tip's, which is the one
	// used.
	Warnings func(errs.Warning)
}

// Run reaches and records the verdict of a patch. An unknown patch id is a
// NotFound error. A patch that already has a trusted verdict is refused
// (Policy) unless opts.Rejudge gives a reason; one being judged right now
// is Busy. Whatever the verdict, it is appended to the ledger (with the
// note on the patch commit) and returned with its id.
//
// Before its first run a verdict appends a started entry: a verdict that
// never finishes (killed, crashed) leaves it, and the attempt counts as
// cancelled. Cancelling ctx kills the running command, records a cancelled
// verdict (with the samples measured so far) and returns an error wrapping
// ctx.Err().
func Run(ctx context.Context, ws *workspace.Workspace, patchID string, opts Options) (*Entry, error) {
	prop, err := proposalOf(ctx, ws, patchID, opts)
	if err != nil {
		return nil, err
	}
	l := ledger.Open(ws)
	held, err := holdPatch(ctx, l, prop.PatchID)
	if err != nil {
		return nil, err
	}
	defer held.Release()
	pr, err := priorOf(ctx, l, prop.PatchID, opts.Rejudge)
	if err != nil {
		return nil, err
	}
	pl, err := planOf(ctx, ws, prop, opts)
	if err != nil {
		return nil, err
	}
	if pl.gp != nil && opts.Warnings != nil {
		for _, w := range pl.gp.Warnings {
			opts.Warnings(w)
		}
	}
	if r := pl.refusal; r != nil {
		return refuse(ctx, l, prop, r.reason, r.flag, r.detail, r.configBlob)
	}
	gp, proto, over := pl.gp, pl.proto, pl.over
	seed, err := pr.seed()
	if err != nil {
		return nil, err
	}
	st, err := l.Append(ctx, newStarted(prop.Common, seed, pr.rejudges()))
	if err != nil {
		return nil, err
	}
	e, err := evaluate(ctx, ws, gp, prop, proto, seed, pr, opts)
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	if err != nil {
		// Interrupted: the attempt still ends, as cancelled, with what was
		// measured, so cancelling a verdict that went badly erases nothing.
		if e == nil {
			e = newEntry(prop.Common, gp.Target.Name)
		}
		e.cancelled()
	}
	e.InputSeed, e.ConfigBlob, e.Started, e.Overrides = seed, gp.Blob, st.ID, over
	e.Rejudges, e.Retries, e.RunnerClass = pr.rejudges(), prop.Retries, opts.RunnerClass
	if e.Rejudges != "" {
		e.RejudgeReason = opts.Rejudge
	}
	e.markWeak()
	if e.Environment.Weak {
		e.AddFlag(ledger.FlagWeak)
	}
	if err != nil {
		if _, aerr := e.record(context.WithoutCancel(ctx), l); aerr != nil {
			return nil, fmt.Errorf("%w (and the cancelled verdict could not be recorded: %v)", err, aerr)
		}
		return nil, err
	}
	e.CalibrationWarning = calibrationWarning(ctx, ws, gp.Target.Name, e.Environment.Host)
	if opts.Progress != nil {
		opts.Progress(Progress{Phase: "record"})
	}
	rec, err := e.record(ctx, l)
	if err != nil {
		return nil, err
	}
	e.Schema, e.ID, e.Created = rec.Schema, rec.ID, rec.Created
	return e, nil
}

// record appends e to the ledger, with the gates' whole output beside it.
// Every string of e is escaped first (see safetext): a gate's output must
// not be able to redraw the terminal that shows the verdict.
func (e *Entry) record(ctx context.Context, l *ledger.Ledger) (*ledger.Stored, error) {
	safetext.Strings(e)
	name := e.Started
	if name == "" {
		name = e.PatchID
	}
	logs, note, err := e.logs.attachments(name)
	if err != nil {
		return nil, err
	}
	if len(logs) > 0 {
		e.Logs = LogsAttachment
	}
	if note != "" {
		e.Detail = strings.TrimSpace(e.Detail + " " + note)
	}
	return l.Append(ctx, e, logs...)
}

// lookupPatch returns the proposal of patchID (or of the patch it is a
// unique prefix of), its commit read from refs/hone/patches/<id>. A
// proposal is only what its patch ref holds: mismatch says which of the
// entry's fields disagree with what the commit derives (see derive).
func lookupPatch(ctx context.Context, ws *workspace.Workspace, patchID string) (proposal, error) {
	l := ledger.Open(ws)
	patchID, err := l.ResolvePatch(ctx, patchID)
	if err != nil {
		return proposal{}, err
	}
	entries, err := l.ByPatch(ctx, patchID)
	if err != nil {
		return proposal{}, err
	}
	var prop *proposal
	for _, s := range entries {
		if s.Kind == ledger.KindProposal {
			var p proposal
			if err := s.Decode(&p); err != nil {
				return proposal{}, err
			}
			prop = &p
			break
		}
	}
	if prop == nil {
		return proposal{}, errs.NotFoundf("unknown patch %q: the ledger has no proposal with that id; propose it with `hone patch propose`", patchID)
	}
	ref, ok, err := ws.Store("").Read(ledger.PatchRef(patchID))
	if err != nil {
		return proposal{}, err
	}
	if !ok {
		return proposal{}, errs.NotFoundf("patch %q has a proposal but no commit at %s; fetch it with `hone ledger pull`", patchID, ledger.PatchRef(patchID))
	}
	commit := ref.String()
	if prop.Commit != "" && prop.Commit != commit {
		return proposal{}, errs.Invalidf("patch %q: %s points at %s but its proposal recorded %s; run `hone ledger verify`", patchID, ledger.PatchRef(patchID), commit, prop.Commit)
	}
	prop.Commit = commit
	if prop.mismatch, err = prop.derive(ctx, ws); err != nil {
		return proposal{}, err
	}
	return *prop, nil
}

// proposal is what a verdict reads of a proposal entry: its common fields,
// the config blob it names, and the earlier attempt at another pin it
// retries, if any.
type proposal struct {
	ledger.Common
	ConfigBlob string `toml:"config_blob,omitempty"`
	Retries    string `toml:"retries,omitempty"`
	mismatch   string
}

// evaluate builds, gates and benchmarks one patch and returns the unrecorded
// entry. err is set only for failures that make recording pointless (git
// itself failing) and for cancellation, when the entry holds what was
// measured until then.
func evaluate(ctx context.Context, ws *workspace.Workspace, gp *workspace.Goalposts, prop proposal, proto workspace.BenchConfig, seed int64, pr *prior, opts Options) (*Entry, error) {
	t := gp.Target
	c := prop.Common
	e := newEntry(c, t.Name)
	if t.Bench.Run == "" {
		return nil, errs.Invalidf("target %q has no bench command at its pin; add [targets.%s.bench] run = \"...\" to %s and commit it", t.Name, t.Name, workspace.FileName)
	}
	env := &e.Environment
	env.PinCommit, env.PatchCommit = c.Pin, c.Commit
	hostFacts(ctx, env)
	sb := gp.Config.Sandbox
	env.Isolation, env.NetworkDenied = sb.Isolation, sb.Network == "deny"

	progress := func(p Progress) {
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	progress(Progress{Phase: "checkout"})
	run, err := build.Start(ctx, ws.Repo, t, sb, "verdict", opts.Keep)
	var noJail *build.NoJailError
	if errors.As(err, &noJail) {
		e.harnessError(ReasonTooling, noJail.Error())
		return e, nil
	}
	if err != nil {
		return nil, err
	}
	defer run.CloseWarning(opts.Warnings)
	if opts.Keep {
		e.KeptCheckouts = []string{run.Dir()}
	}
	m, err := newMeter(ctx, proto.Metric, run, sb)
	if err != nil {
		e.harnessError(ReasonTooling, err.Error())
		return e, nil
	}
	env.Perf, env.InstructionsVia = m.perf, m.instrVia
	var mm measurer = m
	if w := testMeter(m); w != nil {
		mm = w
		e.AddFlag(ledger.FlagTestMeter)
	}

	// The tip's hone.toml bounds the logs too: a working tree cannot cut
	// them short.
	e.logs = newGateLogs(gp.Config.Ledger.GateLogBytes).storedWithin(gp.Config.Ledger.VerdictLogBytes, ws.StatePath(WholeLogsDir))
	j := &judging{ws: ws, t: t, e: e, run: run, m: mm, seed: seed, proto: proto, prior: pr.bench(), replay: pr.replay(), progress: progress, onBench: opts.Progress}
	err = j.judge(ctx)
	env.JailUserCreated = run.UserCreated
	if err != nil {
		if ctx.Err() != nil {
			return e, err
		}
		return nil, err
	}
	return e, nil
}

// newEntry is an empty verdict of the patch a proposal names.
func newEntry(c ledger.Common, target string) *Entry {
	return &Entry{Common: ledger.Common{
		Kind: ledger.KindVerdict, Target: target, PatchID: c.PatchID, Commit: c.Commit, Pin: c.Pin,
		AttemptKey: c.AttemptKey, Hotspot: c.Hotspot, Class: c.Class, Hypothesis: c.Hypothesis,
	}}
}

// judging is one verdict's flow once its run folder and meter exist.
type judging struct {
	ws       *workspace.Workspace
	t        *workspace.Target
	e        *Entry
	run      *build.Run
	m        measurer
	seed     int64
	proto    workspace.BenchConfig
	prior    *Bench
	replay   *setupReplay
	progress func(Progress)
	onBench  func(Progress)
}

// judge runs builds, gates and the bench in order and sets the verdict at
// the first step that decides it.
func (j *judging) judge(ctx context.Context) error {
	e := j.e
	j.progress(Progress{Phase: "build"})
	base, err := j.run.Build(ctx, build.Baseline, e.Pin)
	if err != nil {
		return err
	}
	e.logs.add("build", "baseline", base.Result)
	e.Environment.noteJail(base.Result)
	e.Environment.BaselineCacheDiscarded = base.Discarded
	bg := GateResult{Name: "build", Baseline: builtInfo(base)}
	if !base.OK() {
		bg.Message = "the baseline (pin) failed to build: " + buildFailure(base, e.logs.cap)
		e.Gates = append(e.Gates, bg)
		e.harnessError(ReasonBaseline, bg.Message+"\n"+bg.Baseline.OutputTail)
		return nil
	}
	cand, err := j.run.Build(ctx, build.Candidate, e.Commit)
	if err != nil {
		return err
	}
	e.logs.add("build", "candidate", cand.Result)
	e.Environment.noteJail(cand.Result)
	bg.Candidate = builtInfo(cand)
	bg.Passed = cand.OK()
	if !bg.Passed {
		bg.Message = buildFailure(cand, e.logs.cap)
		e.Gates = append(e.Gates, bg)
		e.gateRejected(bg)
		return nil
	}
	e.Gates = append(e.Gates, bg)
	e.Environment.BaselineBinary, e.Environment.CandidateBinary = nilIfEmpty(base.Outputs), nilIfEmpty(cand.Outputs)
	return j.gatesAndBench(ctx, base, cand)
}

// gatesAndBench runs the gates, then the bench, on two built sides.
func (j *judging) gatesAndBench(ctx context.Context, base, cand *build.Side) error {
	e := j.e
	gr := &gateRunner{t: j.t, run: j.run, m: j.m, spec: gateSpec, base: base, cand: cand, env: &e.Environment, logs: e.logs, replay: j.replay, progress: j.progress}
	gates, outcome, err := gr.runGates(ctx)
	e.Gates = append(e.Gates, gates...)
	if err != nil {
		return err
	}
	switch outcome {
	case baselineFailed:
		g := gates[len(gates)-1]
		e.harnessError(ReasonBaseline, fmt.Sprintf("gate %q: %s; the pin itself is broken, not the patch", g.Name, g.Message))
		return nil
	case gateFailed:
		e.gateRejected(gates[len(gates)-1])
		return nil
	case helpersLeft:
		g := gates[len(gates)-1]
		e.harnessError(ReasonTooling, fmt.Sprintf("gate %q %s; each is a helper of hone's or the toolchain's, not the patch's doing: run the verdict again", g.Name, g.Message))
		return nil
	}

	if why, err := j.sameBuild(ctx, base, cand); err != nil || why != "" {
		if why != "" {
			e.sameAsBaseline(why)
		}
		return err
	}
	if err := j.checkSeeded(ctx, base); err != nil {
		return err
	}
	defer e.reviewUnseeded()
	layout, layouts, failed, err := j.buildLayouts(ctx, base, cand)
	if err != nil || failed != nil {
		if failed != nil {
			e.Gates = append(e.Gates, *failed)
			e.gateRejected(*failed)
		}
		return err
	}
	turn, err := j.benchTurn(ctx)
	if err != nil {
		return err
	}
	defer turn.Release()
	j.progress(Progress{Phase: "bench", MaxPairs: j.proto.MaxPairs, Metric: j.proto.Metric})
	e.Environment.LoadAvg = hostinfo.LoadAvg()
	br := &benchRun{baseline: benchSpec(base, j.t), candidate: benchSpec(cand, j.t), seed: j.seed,
		protocol: j.proto, meter: j.m, progress: j.onBench, env: &e.Environment, prior: j.prior, replay: j.replay}
	br.sampleLayouts(layouts)
	runBench := br.run
	if f := j.proto.Format; f != "" && f != benchformat.Process {
		runBench = (&harnessRun{benchRun: br, format: f, deciding: j.proto.Benchmarks, outputs: j.proto.Outputs}).run
	}
	bench, fail, err := runBench(ctx)
	if bench != nil {
		bench.Layout = layout
	}
	if err != nil {
		if bench.measured() {
			e.Bench = bench
		}
		return err
	}
	if fail != nil {
		e.benchStopped(bench, fail)
		return nil
	}
	e.Bench = bench
	if fail, err := j.check(ctx, br); err != nil || fail != nil {
		if fail != nil {
			e.benchFailed(fail)
		}
		return err
	}
	turn.Release()
	if e.RiskSignals, err = j.risks(ctx, base, cand); err != nil {
		return err
	}
	judgeBench(e)
	judgeLayouts(e)
	return nil
}

// risks gathers the risk signals of the patch from its diff, its
// preprocessed sources and its built binaries, each once, sorted.
func (j *judging) risks(ctx context.Context, base, cand *build.Side) ([]string, error) {
	diff, err := risk.Diff(ctx, j.ws.Root, j.e.Pin, j.e.Commit)
	if err != nil {
		return nil, err
	}
	pre, err := risk.Preprocessed(ctx, j.m.exec, j.ws.Root, j.e.Pin, j.e.Commit, base, cand, j.t.Path)
	if err != nil {
		return nil, err
	}
	all := append(append(diff, pre...), risk.Built(base, cand)...)
	if b := j.e.Bench; b != nil {
		if b.BaselineTasks != nil && b.CandidateTasks != nil {
			all = append(all, risk.Runs(b.BaselineTasks.Max, b.CandidateTasks.Min, b.CandidateTasks.Max)...)
		}
		if st := b.Stat(b.Metric); st != nil {
			all = append(all, risk.BuildWork(base.BuildCPU, cand.BuildCPU, st.Speedup)...)
		}
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// check runs the short cpu-time batch that an instructions-tier "faster"
// needs to be accepted (Bench.Check): the same pairs, measured by time.
func (j *judging) check(ctx context.Context, br *benchRun) (*runFailure, error) {
	b := j.e.Bench
	if b.Metric != workspace.MetricInstructions || len(b.Decisions) == 0 || b.Decisions[len(b.Decisions)-1] != decFaster {
		return nil, nil
	}
	j.progress(Progress{Phase: "check", Metric: workspace.MetricCPUTime})
	p := j.proto
	p.Metric, p.MaxPairs, p.Warmup = workspace.MetricCPUTime, p.Pairs, 0
	cr := &benchRun{baseline: br.baseline, candidate: br.candidate, protocol: p, meter: j.m, env: br.env, draw: br.draw}
	check, fail, err := cr.run(ctx)
	if err != nil || fail != nil {
		return fail, err
	}
	b.Check = &Check{Pairs: check.Pairs, Order: check.Order, Seconds: check.Seconds, Metrics: check.Metrics, Samples: check.Samples}
	return nil, nil
}

// benchGate names the gate result that records a failed bench run (a
// name no gate may have).
const benchGate = "bench"

// benchFailed records a bench run that disqualified its side.
func (e *Entry) benchFailed(f *runFailure) {
	e.logs.add(benchGate, f.side, f.res)
	g := GateResult{Name: benchGate, Message: f.msg, Setup: f.setup}
	if f.side == "baseline" {
		g.Baseline = runInfo(f.res, true)
		e.Gates = append(e.Gates, g)
		e.harnessError(ReasonBaseline, f.msg+"\n"+g.Baseline.OutputTail)
		return
	}
	g.Candidate = runInfo(f.res, true)
	e.Gates = append(e.Gates, g)
	if f.reason == ReasonSlow {
		// The candidate ran, only too slowly: a bench outcome.
		e.setVerdict(ledger.VerdictRejectedBench, ReasonSlow, f.msg)
		e.Summary = oneLine(ReasonSlow + ": " + f.msg)
		return
	}
	e.gateRejected(g)
	e.Reason = f.reason
}

func builtInfo(b *build.Side) *RunInfo {
	if b.Result == nil {
		ri := &RunInfo{Cached: b.Cached, CPUSeconds: b.BuildCPU.Seconds()}
		if b.Failure != "" {
			ri.ExitCode, ri.OutputTail = -1, b.Failure
		}
		return ri
	}
	ri := runInfo(b.Result, !b.OK())
	ri.Cached = b.Cached
	if b.Failure != "" {
		ri.OutputTail = strings.TrimSpace(b.Failure + "\n" + ri.OutputTail)
	}
	return ri
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// protocol is t's bench protocol (from hone.toml at the protected tip) with
// what a person may change: a verdict may be made harder to pass, never
// easier and never on another metric. The tightenings are returned for the
// entry.
func protocol(t *workspace.Target, opts Options) (workspace.BenchConfig, *Overrides, error) {
	proto := t.Bench
	var over Overrides
	if opts.Metric != "" {
		if err := workspace.CheckMetric(opts.Metric); err != nil {
			return proto, nil, errs.Usagef("--metric: %v", err)
		}
		if opts.Metric != proto.Metric {
			return proto, nil, errs.Policyf("refused: --metric %s: the metric is %s, from hone.toml at the protected tip; a verdict cannot choose another (change [bench] metric and commit it)", opts.Metric, proto.Metric)
		}
	}
	if opts.MaxPairs > 0 {
		if opts.MaxPairs < proto.MaxPairs {
			return proto, nil, errs.Policyf("refused: --max-pairs %d is below the protected tip's max_pairs %d: a verdict may measure more pairs, never fewer", opts.MaxPairs, proto.MaxPairs)
		}
		if opts.MaxPairs > proto.MaxPairs {
			proto.MaxPairs, over.MaxPairs = opts.MaxPairs, opts.MaxPairs
		}
	}
	if opts.Threshold > 0 {
		switch {
		case opts.Threshold >= 1:
			return proto, nil, errs.Usagef("--threshold %g: must be a fraction below 1, e.g. 0.05 for 5%%", opts.Threshold)
		case opts.Threshold < proto.Threshold:
			return proto, nil, errs.Policyf("refused: --threshold %g is below the protected tip's threshold %g: a verdict may ask for more, never less", opts.Threshold, proto.Threshold)
		case opts.Threshold > proto.Threshold:
			proto.Threshold, over.Threshold = opts.Threshold, opts.Threshold
		}
	}
	if over == (Overrides{}) {
		return proto, nil, nil
	}
	return proto, &over, nil
}

// benchTurn waits for the machine's turn to measure, which a meter that
// reads no clock (the work meter of hone's test builds) does not need.
func (j *judging) benchTurn(ctx context.Context) (*lock.Lock, error) {
	if readsNoClock(j.m) {
		return nil, nil
	}
	return benchTurn(ctx, j.progress)
}
