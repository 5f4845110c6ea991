package verdict

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/checkout"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/hostinfo"
	"github.com/hone-perf/hone/internal/sandbox"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Options adjust one verdict.
type Options struct {
	Metric   string // overrides the target's bench metric
	MaxPairs int    // overrides max_pairs when > 0
	Keep     bool   // keep both checkouts; their paths are in Entry.KeptCheckouts
	Progress func(Progress)
}

// Run reaches and records the verdict of a patch. An unknown patch id is a
// NotFound error. Whatever the verdict, it is appended to the ledger (with
// the note on the patch commit) and returned with its id.
//
// Cancelling ctx kills the running command, removes the checkouts and
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
	st, err := ledger.Open(ws).Append(ctx, e)
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
	env.Isolation, env.NetworkDenied = sandbox.Probe(ws.Config.Sandbox.Network)

	scratch, err := os.MkdirTemp("", "hone-verdict-")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create a scratch folder")
	}
	defer os.RemoveAll(scratch)
	m, err := newMeter(ctx, proto.Metric, scratch)
	if err != nil {
		e.harnessError(ReasonTooling, err.Error())
		return e, nil
	}
	env.Perf, env.InstructionsVia = m.perf, m.instrVia

	progress := func(p Progress) {
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	progress(Progress{Phase: "checkout"})
	base, cand, cleanup, err := checkouts(ctx, ws, prop.Pin, prop.Commit, opts.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if opts.Keep {
		e.KeptCheckouts = []string{base.co.Dir, cand.co.Dir}
	}

	err = judge(ctx, ws, t, e, base, cand, &benchRun{protocol: proto, meter: m, progress: opts.Progress}, progress)
	if errors.Is(err, sandbox.ErrNoIsolation) {
		e.harnessError(ReasonTooling, err.Error())
		return e, nil
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// checkouts makes the baseline and candidate checkouts; cleanup removes them
// unless keep.
func checkouts(ctx context.Context, ws *workspace.Workspace, pin, commit string, keep bool) (base, cand side, cleanup func(), err error) {
	bco, err := checkout.New(ctx, ws.Repo, pin)
	if err != nil {
		return side{}, side{}, nil, err
	}
	cco, err := checkout.New(ctx, ws.Repo, commit)
	if err != nil {
		bco.Remove(ctx)
		return side{}, side{}, nil, err
	}
	cleanup = func() {
		if !keep {
			bco.Remove(ctx)
			cco.Remove(ctx)
		}
	}
	return side{co: bco}, side{co: cco}, cleanup, nil
}

// judge runs builds, gates and the bench in order and sets e's verdict at the
// first step that decides it.
func judge(ctx context.Context, ws *workspace.Workspace, t *workspace.Target, e *Entry, base, cand side, br *benchRun, progress func(Progress)) error {
	progress(Progress{Phase: "build"})
	bb, err := checkout.Build(ctx, ws, t, base.co, true)
	if err != nil {
		return err
	}
	build := GateResult{Name: "build", Baseline: builtInfo(bb)}
	if !bb.OK() {
		build.Message = "the baseline (pin) failed to build: " + bb.Result.Describe()
		e.Gates = append(e.Gates, build)
		e.harnessError(ReasonBaseline, build.Message+"\n"+build.Baseline.OutputTail)
		return nil
	}
	cb, err := checkout.Build(ctx, ws, t, cand.co, false)
	if err != nil {
		return err
	}
	build.Candidate = builtInfo(cb)
	build.Passed = cb.OK()
	e.Gates = append(e.Gates, build)
	if !build.Passed {
		build.Message = cb.Result.Describe()
		e.Gates[len(e.Gates)-1] = build
		e.gateRejected(build)
		return nil
	}
	base.out, cand.out = bb.Out, cb.Out
	e.Environment.BaselineBinary, e.Environment.CandidateBinary = hashOutputs(bb.Out), hashOutputs(cb.Out)

	gates, outcome, err := runGates(ctx, ws, t, base, cand, progress)
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
	br.baseline = base.spec(ws, t, t.Bench.Run, 0)
	br.candidate = cand.spec(ws, t, t.Bench.Run, 0)
	bench, fail, err := br.run(ctx)
	if err != nil {
		return err
	}
	if fail != nil {
		g := GateResult{Name: "bench", Message: "the bench command " + fail.res.Describe()}
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

func builtInfo(b *checkout.Built) *RunInfo {
	if b.Result == nil {
		return &RunInfo{Cached: b.Cached}
	}
	ri := runInfo(b.Result, !b.Result.Success())
	ri.Cached = b.Cached
	return ri
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
