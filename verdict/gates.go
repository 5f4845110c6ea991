package verdict

import (
	"context"
	"fmt"
	"strings"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/jail"
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
)

// gateSpec is the jail spec of gate g on side s: the same as a bench run's
// but for the command and the timeout (see benchSpec), so that a command
// cannot tell a gate from a bench run by anything else.
func gateSpec(s *build.Side, g workspace.Gate, seed int64) jail.Spec {
	return build.WithSeed(s.Spec(g.Run, g.Timeout.Duration), seed)
}

// benchSpec is the jail spec of t's bench command on side s; the bench
// sets the timeout.
func benchSpec(s *build.Side, t *workspace.Target, seed int64) jail.Spec {
	return build.WithSeed(s.Spec(t.Bench.Run, 0), seed)
}

// runGates runs t's gates in order on the candidate, stopping at the first
// failure. An equivalence gate also runs on the baseline and requires the
// same exit status and byte-identical stdout. When the candidate fails an
// ordinary gate, or leaves processes running after it exited, the gate is
// run on the baseline too: a gate that was already broken at the pin
// yields an error verdict, not a rejected patch, and leftovers count
// against the candidate only when the baseline leaves none.
// spec gives the jail spec of a gate on the candidate (cand) or the
// baseline.
func runGates(ctx context.Context, m measurer, gates []workspace.Gate, spec func(cand bool, g workspace.Gate) jail.Spec, env *Environment, progress func(Progress)) ([]GateResult, gateOutcome, error) {
	var out []GateResult
	const base, cand = false, true
	gate := func(side bool, g workspace.Gate) (*jail.Result, error) {
		res, err := m.exec(ctx, spec(side, g))
		env.noteJail(res)
		return res, err
	}
	for _, g := range gates {
		if progress != nil {
			progress(Progress{Phase: "gate", Gate: g.Name})
		}
		gr := GateResult{Name: g.Name, Equivalence: g.Equivalence}
		cres, err := gate(cand, g)
		if err != nil {
			return out, gatesPassed, err
		}
		outcome := gatesPassed
		if g.Equivalence {
			bres, err := gate(base, g)
			if err != nil {
				return out, gatesPassed, err
			}
			gr.Baseline = runInfo(bres, abnormal(bres))
			switch {
			case abnormal(bres):
				outcome, gr.Message = baselineFailed, "the baseline "+bres.Describe()
			case abnormal(cres):
				outcome, gr.Message = gateFailed, "the candidate "+cres.Describe()
			case cres.ExitCode != bres.ExitCode:
				outcome, gr.Message = gateFailed, fmt.Sprintf("exit status %d differs from the baseline's %d", cres.ExitCode, bres.ExitCode)
			case cres.Stdout.SHA256() != bres.Stdout.SHA256():
				outcome, gr.Message = gateFailed, fmt.Sprintf("stdout differs from the baseline's (%d bytes vs %d)%s", cres.Stdout.Len(), bres.Stdout.Len(), firstDifference(cres, bres))
			}
			if outcome == gatesPassed && cres.Leftover > 0 && bres.Leftover == 0 {
				outcome, gr.Message = gateFailed, leftoverMessage(cres)
			}
		} else if !cres.Success() {
			outcome, gr.Message = gateFailed, cres.Describe()
			bres, err := gate(base, g)
			if err != nil {
				return out, gatesPassed, err
			}
			if !bres.Success() {
				gr.Baseline = runInfo(bres, true)
				outcome, gr.Message = baselineFailed, "fails on the baseline too ("+bres.Describe()+")"
			}
		} else if cres.Leftover > 0 {
			bres, err := gate(base, g)
			if err != nil {
				return out, gatesPassed, err
			}
			if bres.Leftover == 0 {
				gr.Baseline = runInfo(bres, false)
				outcome, gr.Message = gateFailed, leftoverMessage(cres)
			}
		}
		gr.Passed = outcome == gatesPassed
		gr.Candidate = runInfo(cres, !gr.Passed)
		out = append(out, gr)
		if outcome != gatesPassed {
			return out, outcome, nil
		}
	}
	return out, gatesPassed, nil
}

func leftoverMessage(r *jail.Result) string {
	return fmt.Sprintf("left %d processes running after it exited (killed, and their CPU time charged); the baseline leaves none", r.Leftover)
}

// abnormal reports a run that did not end by itself with a status: killed,
// timed out, or not measured.
func abnormal(r *jail.Result) bool { return r.TimedOut || r.Signaled || r.MeterFailed }

// firstDifference names the first line where two kept stdouts differ.
func firstDifference(cand, base *jail.Result) string {
	c := strings.Split(string(cand.Stdout.Bytes()), "\n")
	b := strings.Split(string(base.Stdout.Bytes()), "\n")
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
