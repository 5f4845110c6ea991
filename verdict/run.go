package verdict

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/hostinfo"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Options adjust one verdict.
type Options struct {
	Metric   string // overrides the target's bench metric
	MaxPairs int    // overrides max_pairs when > 0
	Keep     bool   // keep the run folder (both checkouts); its path is in Entry.KeptCheckouts
	Progress func(Progress)
}

// Run reaches and records the verdict of a patch. An unknown patch id is a
// NotFound error. Whatever the verdict, it is appended to the ledger (with
// the note on the patch commit) and returned with its id.
//
// Cancelling ctx kills the running command, removes the run folder and
// records nothing: a verdict cut short measured nothing worth keeping, and
// the patch may be judged again. Run then returns an error wrapping
// ctx.Err().
func Run(ctx context.Context, ws *workspace.Workspace, patchID string, opts Options) (*Entry, error) {
	prop, err := lookupPatch(ctx, ws, patchID)
	if err != nil {
		return nil, err
	}
	t, err := ws.Target(prop.Target)
	if err != nil {
		return nil, err
	}
	e, err := evaluate(ctx, ws, t, prop, opts)
	if err != nil {
		return nil, err
	}
	e.CalibrationWarning = calibrationWarning(ctx, ws, t.Name, e.Environment.Host)
	if opts.Progress != nil {
		opts.Progress(Progress{Phase: "record"})
	}
	logs, err := e.logs.attachments()
	if err != nil {
		return nil, err
	}
	if len(logs) > 0 {
		e.Logs = LogsAttachment
	}
	st, err := ledger.Open(ws).Append(ctx, e, logs...)
	if err != nil {
		return nil, err
	}
	e.Schema, e.ID, e.Created = st.Schema, st.ID, st.Created
	return e, nil
}

// lookupPatch returns the proposal of patchID (or of the patch it is a
// unique prefix of), its commit checked against refs/hone/patches/<id>.
func lookupPatch(ctx context.Context, ws *workspace.Workspace, patchID string) (ledger.Common, error) {
	l := ledger.Open(ws)
	patchID, err := l.ResolvePatch(ctx, patchID)
	if err != nil {
		return ledger.Common{}, err
	}
	entries, err := l.ByPatch(ctx, patchID)
	if err != nil {
		return ledger.Common{}, err
	}
	var prop *ledger.Common
	for _, s := range entries {
		if s.Kind == ledger.KindProposal {
			prop = &s.Common
			break
		}
	}
	if prop == nil {
		return ledger.Common{}, errs.NotFoundf("unknown patch %q: the ledger has no proposal with that id; propose it with `hone patch propose`", patchID)
	}
	ref, err := ws.Git.Reference(plumbing.ReferenceName(ledger.PatchRef(patchID)), true)
	if err != nil {
		return ledger.Common{}, errs.NotFoundf("patch %q has a proposal but no commit at %s; fetch it with `hone ledger pull`", patchID, ledger.PatchRef(patchID))
	}
	commit := ref.Hash().String()
	if prop.Commit != "" && prop.Commit != commit {
		return ledger.Common{}, errs.Invalidf("patch %q: %s points at %s but its proposal recorded %s; run `hone ledger verify`", patchID, ledger.PatchRef(patchID), commit, prop.Commit)
	}
	prop.Commit = commit
	return *prop, nil
}

// evaluate builds, gates and benchmarks one patch and returns the unrecorded
// entry. err is set only for failures that make recording pointless:
// cancellation, or git itself failing.
func evaluate(ctx context.Context, ws *workspace.Workspace, t *workspace.Target, prop ledger.Common, opts Options) (*Entry, error) {
	e := &Entry{Common: ledger.Common{
		Kind: ledger.KindVerdict, Target: t.Name, PatchID: prop.PatchID, Commit: prop.Commit, Pin: prop.Pin,
		AttemptKey: prop.AttemptKey, Hotspot: prop.Hotspot, Class: prop.Class, Hypothesis: prop.Hypothesis,
	}}
	if t.Bench.Run == "" {
		return nil, errs.Invalidf("target %q has no bench command; add [targets.%s.bench] run = \"...\" to %s", t.Name, t.Name, workspace.FileName)
	}
	proto, err := protocol(t, opts.Metric, opts.MaxPairs)
	if err != nil {
		return nil, err
	}
	env := &e.Environment
	env.PinCommit, env.PatchCommit = prop.Pin, prop.Commit
	hostFacts(ctx, env)
	sb := ws.Config.Sandbox
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
	defer run.Close()
	if opts.Keep {
		e.KeptCheckouts = []string{run.Dir()}
	}
	m, err := newMeter(ctx, proto.Metric, run, sb)
	if err != nil {
		e.harnessError(ReasonTooling, err.Error())
		return e, nil
	}
	env.Perf, env.InstructionsVia = m.perf, m.instrVia

	err = judge(ctx, ws, t, e, run, &benchRun{protocol: proto, meter: m, progress: opts.Progress}, progress)
	env.JailUserCreated = run.UserCreated
	if err != nil {
		return nil, err
	}
	e.markWeak()
	return e, nil
}

// judge runs builds, gates and the bench in order and sets e's verdict at the
// first step that decides it.
func judge(ctx context.Context, ws *workspace.Workspace, t *workspace.Target, e *Entry, run *build.Run, br *benchRun, progress func(Progress)) error {
	progress(Progress{Phase: "build"})
	e.logs = newGateLogs(ws.Config.Ledger.GateLogBytes)
	base, err := run.Build(ctx, build.Baseline, e.Pin)
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
	cand, err := run.Build(ctx, build.Candidate, e.Commit)
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

	gr := &gateRunner{t: t, run: run, base: base, cand: cand, env: &e.Environment, logs: e.logs, seed: NewInputSeed(), progress: progress}
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
	}

	progress(Progress{Phase: "bench", MaxPairs: br.protocol.MaxPairs, Metric: br.protocol.Metric})
	e.Environment.LoadAvg = hostinfo.LoadAvg()
	br.baseline = base.Spec(t.Bench.Run, 0)
	br.candidate = cand.Spec(t.Bench.Run, 0)
	br.env = &e.Environment
	bench, fail, err := br.run(ctx)
	if err != nil {
		return err
	}
	if fail != nil {
		e.logs.add("bench", fail.side, fail.res)
		g := GateResult{Name: "bench", Message: "the bench command " + describe(fail.res, e.logs.cap)}
		if fail.side == "baseline" {
			g.Baseline = runInfo(fail.res, true)
			e.Gates = append(e.Gates, g)
			e.harnessError(ReasonBaseline, "the baseline's bench command "+fail.res.Describe()+"\n"+g.Baseline.OutputTail)
			return nil
		}
		g.Candidate = runInfo(fail.res, true)
		e.Gates = append(e.Gates, g)
		e.gateRejected(g)
		return nil
	}
	e.Bench = bench
	if e.RiskSignals, err = riskSignals(ctx, ws.Root, e.Pin, e.Commit); err != nil {
		return err
	}
	judgeBench(e)
	return nil
}

func builtInfo(b *build.Side) *RunInfo {
	if b.Result == nil {
		ri := &RunInfo{Cached: b.Cached}
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

// protocol is t's bench protocol with a caller's overrides: another metric
// (an unknown one is a usage error: it comes from a flag) and a smaller
// pair budget.
func protocol(t *workspace.Target, metric string, maxPairs int) (workspace.BenchConfig, error) {
	proto := t.Bench
	if metric != "" {
		if err := workspace.CheckMetric(metric); err != nil {
			return proto, errs.Usagef("--metric: %v", err)
		}
		proto.Metric = metric
	}
	if maxPairs > 0 {
		proto.MaxPairs, proto.Pairs = maxPairs, min(proto.Pairs, maxPairs)
	}
	return proto, nil
}
