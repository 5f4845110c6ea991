package verdict

import (
	"context"
	"fmt"
	"strings"

	"github.com/hone-perf/hone/benchformat"
	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
)

// ReasonUnseeded: needs-human-review, faster on a target whose outputs do
// not depend on the input seed, where a table of precomputed answers
// passes every check.
const ReasonUnseeded = "unseeded"

// unseededPrefix heads the summary of an unseeded verdict, for views that
// show the summary alone; programs read ledger.FlagUnseeded.
const unseededPrefix = "unseeded: "

// seedProbe is what one command printed for one input seed.
type seedProbe struct {
	name string
	out  string // exit status and stdout hash
}

// checkSeeded runs the baseline's equivalence gates and its bench (when
// its output is the work's, not a harness's timings) on two different
// input seeds before the bench is judged. A target none of these commands
// of which mentions {seed} or HONE_SEED, or whose outputs are the same for
// both seeds, is unseeded: its inputs can be known in advance, so fresh seeds
// prove nothing and a patch may carry its answers.
func (j *judging) checkSeeded(ctx context.Context, base *build.Side) error {
	var seeds [2]int64
	for i := range seeds {
		var err error
		if seeds[i], err = build.NewSeed(); err != nil {
			return err
		}
	}
	var mentioned bool
	var specs []func(int64) (string, jail.Spec)
	for _, g := range j.t.Gates {
		if !g.Equivalence || len(g.Sanitize) > 0 || g.Differential() {
			continue
		}
		mentioned = mentioned || mentionsSeed(g.Run)
		specs = append(specs, func(seed int64) (string, jail.Spec) {
			return "gate " + g.Name, gateSpec(base, g, PairSetup{Seed: seed})
		})
	}
	if f := j.proto.Format; f == "" || f == benchformat.Process {
		mentioned = mentioned || mentionsSeed(j.t.Bench.Run)
		specs = append(specs, func(seed int64) (string, jail.Spec) {
			s := withSetup(benchSpec(base, j.t), PairSetup{Seed: seed})
			s.Timeout = j.proto.Timeout.Duration
			return "the bench", s
		})
	}
	if len(specs) == 0 {
		// A harness bench prints timings, not the work: with no
		// equivalence gate there is no output to hold to the seed.
		return nil
	}
	if !mentioned {
		j.markUnseeded("no equivalence gate or bench command mentions {seed} or HONE_SEED")
		return nil
	}
	j.progress(Progress{Phase: "seed check"})
	var probes [2][]seedProbe
	for i, seed := range seeds {
		for _, mk := range specs {
			name, spec := mk(seed)
			res, err := j.m.exec(ctx, spec)
			if err != nil {
				return err
			}
			j.e.Environment.noteJail(res)
			probes[i] = append(probes[i], seedProbe{name: name, out: fmt.Sprintf("%d %s", res.ExitCode, res.Stdout.SHA256())})
		}
	}
	for k := range probes[0] {
		if probes[0][k].out != probes[1][k].out {
			return nil
		}
	}
	names := make([]string, len(probes[0]))
	for k, p := range probes[0] {
		names[k] = p.name
	}
	j.markUnseeded(fmt.Sprintf("the baseline printed the same for input seeds %d and %d (%s)", seeds[0], seeds[1], strings.Join(names, ", ")))
	return nil
}

func mentionsSeed(cmd string) bool {
	return strings.Contains(cmd, "{seed}") || strings.Contains(cmd, "HONE_SEED")
}

func (j *judging) markUnseeded(why string) {
	j.e.AddFlag(ledger.FlagUnseeded)
	j.e.Unseeded = why
}

// reviewUnseeded turns an unseeded target's acceptance into a person's
// call and says so in the detail and the summary of every verdict on it.
func (e *Entry) reviewUnseeded() {
	if !e.HasFlag(ledger.FlagUnseeded) {
		return
	}
	if e.Verdict == ledger.VerdictAccepted {
		e.Verdict, e.Reason = ledger.VerdictNeedsHumanReview, ReasonUnseeded
	}
	e.Detail = fmt.Sprintf("The target's outputs do not depend on the input seed (%s): a patch that prints precomputed answers passes every check; make the gates' and the bench's inputs from {seed} or HONE_SEED.\n%s", e.Unseeded, e.Detail)
	e.Summary = oneLine(unseededPrefix + e.Summary)
}
