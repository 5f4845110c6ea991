package verdict

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/sanitize"
	"github.com/hone-perf/hone/workspace"
)

// tailBytes is how much output a failed command keeps in the entry.
const tailBytes = 2048

func runInfo(res *jail.Result, withTail bool) *RunInfo {
	ri := &RunInfo{
		ExitCode: res.ExitCode, Signaled: res.Signaled, TimedOut: res.TimedOut,
		WallSeconds: res.Wall.Seconds(), CPUSeconds: res.CPU().Seconds(),
		StdoutSHA256: res.Stdout.SHA256(), StdoutBytes: res.Stdout.Len(),
		Leftover: res.Leftover, UnreapedSeconds: res.Unreaped.Seconds(),
	}
	if res.MeterFailed {
		ri.OutputTail = "not measured: " + res.MeterError
	}
	if withTail {
		ri.OutputTail = outputTail(res)
	}
	return ri
}

// outputTail is the end of stdout then stderr, trimmed, for messages.
func outputTail(res *jail.Result) string {
	var parts []string
	for _, b := range [][]byte{res.Stdout.Tail(tailBytes / 2), res.Stderr.Tail(tailBytes / 2)} {
		if s := strings.TrimSpace(strings.ToValidUTF8(string(b), "?")); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

type gateOutcome int

const (
	gatesPassed    gateOutcome = iota
	gateFailed                 // the candidate failed a gate the baseline passes
	baselineFailed             // the baseline itself fails the gate: not the patch's fault
	helpersLeft                // the candidate's run left only hone's or the toolchain's helpers: not the patch's fault
)

// gateRunner runs one verdict's gates. Every gate runs on the candidate;
// the baseline runs a gate when its outputs are compared (equivalence and
// differential gates) and when the candidate fails, so that a gate already
// broken at the pin yields an error verdict, not a rejected patch. A gate
// with sanitizers runs on both sides' sanitizer builds, made when first
// needed and shared by the gates that ask for the same sanitizers.
type gateRunner struct {
	t   *workspace.Target
	run *build.Run
	m   measurer
	// spec is the jail spec of a gate on a side with a setup: gateSpec.
	spec       func(*build.Side, workspace.Gate, PairSetup) jail.Spec
	base, cand *build.Side
	env        *Environment
	logs       *gateLogs
	// setup is the running gate's, drawn for it alone: its baseline and
	// candidate runs share it, and a differential gate derives its
	// inputs' seeds from its seed.
	setup PairSetup
	// replay, when set, are the setups of the error verdict this one runs
	// again: a gate that ran there runs on its setup.
	replay    *setupReplay
	progress  func(Progress)
	sanitized map[string]*sanitizedSides
	driver    string // host path of the differential driver, once made
}

// gateSpec is the jail spec of gate g on side s: the same as a bench run's
// but for the command and the timeout (see benchSpec), so that a command
// cannot tell a gate from a bench run by anything else.
func gateSpec(s *build.Side, g workspace.Gate, setup PairSetup) jail.Spec {
	return withSetup(s.Spec(g.Run, g.Timeout.Duration), setup)
}

// benchSpec is the jail spec of t's bench command on side s, before a
// pair's setup; the bench sets the timeout.
func benchSpec(s *build.Side, t *workspace.Target) jail.Spec {
	return s.Spec(t.Bench.Run, 0)
}

// sanitizedSides are one set of sanitizers' builds; nil until built.
type sanitizedSides struct{ base, cand *build.Side }

// runGates runs t's gates in order, stopping at the first that fails.
func (r *gateRunner) runGates(ctx context.Context) ([]GateResult, gateOutcome, error) {
	var out []GateResult
	for _, g := range r.t.Gates {
		if r.progress != nil {
			r.progress(Progress{Phase: "gate", Gate: g.Name})
		}
		setup, ok := r.replay.gate(g.Name)
		if !ok {
			var err error
			if setup, err = NewPairSetup(1); err != nil {
				return out, gatesPassed, err
			}
		}
		r.setup = setup
		gr := GateResult{Name: g.Name, Equivalence: g.Equivalence, Sanitize: g.Sanitize, Setup: &setup}
		outcome, err := r.gate(ctx, g, &gr)
		if err != nil {
			return out, gatesPassed, err
		}
		gr.Passed = outcome == gatesPassed
		out = append(out, gr)
		if outcome != gatesPassed {
			return out, outcome, nil
		}
	}
	return out, gatesPassed, nil
}

func (r *gateRunner) gate(ctx context.Context, g workspace.Gate, gr *GateResult) (gateOutcome, error) {
	cand, outcome, err := r.side(ctx, g, gr, build.Candidate)
	if cand == nil || err != nil {
		return outcome, err
	}
	switch {
	case g.Differential():
		return r.differential(ctx, g, gr, cand)
	case g.Equivalence:
		return r.equivalence(ctx, g, gr, cand)
	}
	return r.plain(ctx, g, gr, cand)
}

// side returns the build a gate runs on for role: the plain one, or the
// sanitizer build, made now if it is the first gate to need it. When a
// sanitizer build fails, side returns nil and the outcome: the baseline's
// failing is the pin's fault, the candidate's is the patch's unless the
// baseline fails too.
func (r *gateRunner) side(ctx context.Context, g workspace.Gate, gr *GateResult, role build.Role) (*build.Side, gateOutcome, error) {
	if len(g.Sanitize) == 0 {
		if role == build.Baseline {
			return r.base, gatesPassed, nil
		}
		return r.cand, gatesPassed, nil
	}
	key := sanitize.Key(g.Sanitize)
	if r.sanitized == nil {
		r.sanitized = map[string]*sanitizedSides{}
	}
	ss := r.sanitized[key]
	if ss == nil {
		ss = &sanitizedSides{}
		r.sanitized[key] = ss
	}
	slot, commit := &ss.cand, r.cand.Commit
	if role == build.Baseline {
		slot, commit = &ss.base, r.base.Commit
	}
	if *slot == nil {
		if r.progress != nil {
			r.progress(Progress{Phase: "build", Gate: g.Name})
		}
		s, err := r.run.BuildSanitized(ctx, role, commit, g.Sanitize)
		if err != nil {
			return nil, gatesPassed, err
		}
		if s.Result != nil {
			r.env.noteJail(s.Result)
			r.logs.add(g.Name, string(role)+".build", s.Result)
		}
		*slot = s
	}
	s := *slot
	if s.OK() {
		return s, gatesPassed, nil
	}
	info := builtInfo(s)
	what := fmt.Sprintf("the build with sanitizers %s failed: %s", strings.Join(g.Sanitize, ", "), buildFailure(s, r.logs.cap))
	if role == build.Baseline {
		gr.Baseline, gr.Message = info, "the baseline: "+what
		return nil, baselineFailed, nil
	}
	gr.Candidate, gr.Message = info, what
	base, outcome, err := r.side(ctx, g, gr, build.Baseline)
	if base == nil || err != nil {
		return nil, outcome, err
	}
	return nil, gateFailed, nil
}

// exec runs a gate's command on one side, keeping its output for the logs.
func (r *gateRunner) exec(ctx context.Context, g workspace.Gate, s *build.Side) (*jail.Result, error) {
	spec := r.spec(s, g, r.setup)
	spec.OutputCap = r.logs.cap
	res, err := r.m.exec(ctx, spec)
	r.env.noteJail(res)
	if err == nil {
		r.logs.add(g.Name, string(s.Role), res)
	}
	return res, err
}

// failure says why a run of gate g failed, or "" when it passed: on a
// sanitizer build, a sanitizer report fails the run whatever its exit
// status, and so does stderr cut to the cap, where a report could hide.
func (r *gateRunner) failure(g workspace.Gate, res *jail.Result) (string, *sanitize.Finding) {
	if len(g.Sanitize) > 0 {
		stderr, cut := kept(&res.Stderr, r.logs.cap)
		if f := sanitize.Report(stderr); f != nil {
			msg := f.String()
			if res.Success() {
				msg += " (the run exited 0 all the same)"
			}
			return msg, f
		}
		if cut && res.Success() {
			return fmt.Sprintf("stderr was cut at [ledger] gate_log_size (%d bytes of %d), so a sanitizer report could hide in what was cut; raise gate_log_size", r.logs.cap, res.Stderr.Len()), nil
		}
	}
	if res.Success() {
		return "", nil
	}
	return describe(res, r.logs.cap), nil
}

// describe is how a failed run ended, with the line that says what failed.
func describe(res *jail.Result, limit int) string {
	stdout, _ := kept(&res.Stdout, limit)
	stderr, _ := kept(&res.Stderr, limit)
	if l := failureLine(stdout, stderr); l != "" && !res.MeterFailed {
		return l + " (" + res.Describe() + ")"
	}
	return res.Describe()
}

// buildFailure says why a build is unusable, with the line that says what
// failed when its command did.
func buildFailure(s *build.Side, limit int) string {
	if s.Failure == "" && s.Result != nil {
		return describe(s.Result, limit)
	}
	return s.Describe()
}

// info is a run's record: with its failure line and sanitizer report when
// it failed.
func (r *gateRunner) info(res *jail.Result, failed bool, f *sanitize.Finding) *RunInfo {
	ri := runInfo(res, failed)
	if failed {
		stdout, _ := kept(&res.Stdout, r.logs.cap)
		stderr, _ := kept(&res.Stderr, r.logs.cap)
		ri.FailureLine, ri.Sanitizer = failureLine(stdout, stderr), f
		if f != nil {
			ri.OutputTail = reportExcerpt(stderr, f)
		}
	}
	return ri
}

// reportExcerpt is the start of a sanitizer report, its header and first
// stack, for the verdict's detail: its end is a shadow-memory map nobody
// reads first.
func reportExcerpt(stderr []byte, f *sanitize.Finding) string {
	lines := strings.Split(strings.ToValidUTF8(string(stderr), "?"), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == f.Header {
			start = i
			break
		}
	}
	if start < 0 {
		return f.Header
	}
	end, frames := start+1, false
	for ; end < len(lines) && end-start < 40; end++ {
		l := strings.TrimSpace(lines[end])
		if l == "" && frames {
			break
		}
		frames = frames || strings.HasPrefix(l, "#")
	}
	return errs.ClipTo(strings.Join(lines[start:end], "\n"), tailBytes)
}

// plain runs an ordinary gate: it must succeed on the candidate.
func (r *gateRunner) plain(ctx context.Context, g workspace.Gate, gr *GateResult, cand *build.Side) (gateOutcome, error) {
	cres, err := r.exec(ctx, g, cand)
	if err != nil {
		return gatesPassed, err
	}
	msg, f := r.failure(g, cres)
	gr.Candidate = r.info(cres, msg != "", f)
	if msg == "" && cres.Leftover == 0 {
		return gatesPassed, nil
	}
	gr.Message = msg
	bres, outcome, err := r.onBaseline(ctx, g, gr)
	if bres == nil || err != nil {
		return outcome, err
	}
	if msg == "" {
		// Leftovers count against the candidate only when the baseline
		// leaves none.
		if bres.Leftover > 0 {
			return gatesPassed, nil
		}
		gr.Baseline, gr.Message = r.info(bres, false, nil), leftoverMessage(cres)
		if helpersOnly(cres) {
			return helpersLeft, nil
		}
		return gateFailed, nil
	}
	bmsg, bf := r.failure(g, bres)
	gr.Baseline = r.info(bres, bmsg != "", bf)
	switch {
	case bmsg == "":
		return gateFailed, nil
	case sameReport(f, bf):
		gr.Message = "the baseline reports it too (" + bf.String() + ")"
	default:
		gr.Message = "fails on the baseline too (" + bmsg + ")"
	}
	return baselineFailed, nil
}

// onBaseline runs g on the baseline, on its sanitizer build for a
// sanitizer gate; the result is nil, with the outcome, when that build
// failed.
func (r *gateRunner) onBaseline(ctx context.Context, g workspace.Gate, gr *GateResult) (*jail.Result, gateOutcome, error) {
	base, outcome, err := r.side(ctx, g, gr, build.Baseline)
	if base == nil || err != nil {
		return nil, outcome, err
	}
	res, err := r.exec(ctx, g, base)
	return res, gatesPassed, err
}

// sameReport: the baseline's report is the candidate's (kind and
// function), so the bug was there before the patch.
func sameReport(c, b *sanitize.Finding) bool {
	return c != nil && b != nil && c.Kind == b.Kind && c.Function == b.Function
}

// equivalence runs the gate on both sides: the candidate's stdout and exit
// status must equal the baseline's, and on sanitizer builds neither may
// report.
func (r *gateRunner) equivalence(ctx context.Context, g workspace.Gate, gr *GateResult, cand *build.Side) (gateOutcome, error) {
	cres, err := r.exec(ctx, g, cand)
	if err != nil {
		return gatesPassed, err
	}
	bres, outcome, err := r.onBaseline(ctx, g, gr)
	if bres == nil || err != nil {
		return outcome, err
	}
	_, cf := r.failure(g, cres)
	_, bf := r.failure(g, bres)
	gr.Baseline = r.info(bres, abnormal(bres) || bf != nil, bf)
	outcome = gatesPassed
	switch {
	case abnormal(bres):
		outcome, gr.Message = baselineFailed, "the baseline "+bres.Describe()
	case bf != nil && sameReport(cf, bf):
		outcome, gr.Message = baselineFailed, "the baseline reports it too ("+bf.String()+")"
	case bf != nil:
		outcome, gr.Message = baselineFailed, "the baseline "+bf.String()
	case abnormal(cres):
		outcome, gr.Message = gateFailed, "the candidate "+cres.Describe()
	case cf != nil:
		outcome, gr.Message = gateFailed, cf.String()
	case cres.ExitCode != bres.ExitCode:
		outcome, gr.Message = gateFailed, fmt.Sprintf("exit status %d differs from the baseline's %d", cres.ExitCode, bres.ExitCode)
	case cres.Stdout.SHA256() != bres.Stdout.SHA256():
		outcome, gr.Message = gateFailed, fmt.Sprintf("stdout differs from the baseline's (%d bytes vs %d)%s", cres.Stdout.Len(), bres.Stdout.Len(), firstDifference(cres.Stdout.Bytes(), bres.Stdout.Bytes()))
	case cres.Leftover > 0 && bres.Leftover == 0 && helpersOnly(cres):
		outcome, gr.Message = helpersLeft, leftoverMessage(cres)
	case cres.Leftover > 0 && bres.Leftover == 0:
		outcome, gr.Message = gateFailed, leftoverMessage(cres)
	}
	gr.Candidate = r.info(cres, outcome == gateFailed, cf)
	return outcome, nil
}

func leftoverMessage(r *jail.Result) string {
	return fmt.Sprintf("left %d processes running after it exited (killed, and their CPU time charged)%s; the baseline leaves none", r.Leftover, named(r.Lingering))
}

// named lists lingering processes for a message: ": pid 7 `sleep 100`
// (running 0.3 s), ...".
func named(ls []jail.Lingering) string {
	if len(ls) == 0 {
		return ""
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		what := "`" + clip(l.Command) + "`"
		if l.Command == "" {
			what = "(exiting: no command line left to read)"
		}
		parts[i] = fmt.Sprintf("pid %d %s (running %.1f s)", l.PID, what, l.Seconds)
	}
	return ": " + strings.Join(parts, ", ")
}

// toolHelpers are the programs a build toolchain or hone itself may leave
// for a moment after the command that started them exited: Go's build
// cache program (hone's own, through GOCACHEPROG) and the go command's
// tools and test binaries, the C and Rust compilers' passes.
var toolHelpers = map[string]bool{
	"hone-gocacheprog": true,
	"go":               true, "compile": true, "link": true, "asm": true, "cgo": true, "vet": true, "cover": true, "buildid": true, "pack": true,
	"cc1": true, "cc1plus": true, "as": true, "ld": true, "collect2": true, "lto-wrapper": true, "lto1": true,
	"cargo": true, "rustc": true,
}

// helpersOnly reports whether every process r left running is one of
// toolHelpers (or a test binary the go command ran), by the name each
// shows, or was exiting when the jail named it: a process whose command
// line is gone has released its memory on its way out, as Go's build
// cache program does when the go command that ran it closes its input.
// A program can take such a name, or blank its command line, which only
// turns its verdict into an error that may be run again, never into a
// pass, and its CPU time is charged all the same.
func helpersOnly(r *jail.Result) bool {
	if r.Leftover == 0 || len(r.Lingering) != r.Leftover {
		return false
	}
	for _, l := range r.Lingering {
		if l.Command == "" {
			continue
		}
		argv0, _, _ := strings.Cut(l.Command, " ")
		name := path.Base(argv0)
		if !toolHelpers[name] && !strings.HasSuffix(name, ".test") {
			return false
		}
	}
	return true
}

// abnormal reports a run that did not end by itself with a status: killed,
// timed out, or not measured.
func abnormal(r *jail.Result) bool { return r.TimedOut || r.Signaled || r.MeterFailed }

// firstDifference names the first line where two kept stdouts differ.
func firstDifference(cand, base []byte) string {
	c := strings.Split(string(cand), "\n")
	b := strings.Split(string(base), "\n")
	for i := 0; i < min(len(c), len(b)); i++ {
		if c[i] != b[i] {
			return fmt.Sprintf("; first difference at line %d: %q vs %q", i+1, clip(c[i]), clip(b[i]))
		}
	}
	return ""
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
