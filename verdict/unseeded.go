package verdict

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/benchformat"
	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
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

// checkSeeded runs the baseline's equivalence gates and its process bench
// on two different input seeds before the bench is judged (a harness
// bench: checkHarnessSeeded). A target none of these commands
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
	if f := j.proto.Format; f != "" && f != benchformat.Process {
		return j.checkHarnessSeeded(ctx, base, seeds)
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
	mentioned = mentioned || mentionsSeed(j.t.Bench.Run)
	specs = append(specs, func(seed int64) (string, jail.Spec) {
		s := withSetup(benchSpec(base, j.t), PairSetup{Seed: seed})
		s.Timeout = j.proto.Timeout.Duration
		return "the bench", s
	})
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

// checkHarnessSeeded proves a harness bench's deciding benchmarks draw
// their inputs from the seed: the harness prints timings, and only its
// outputs ([bench] outputs, results such as a checksum the benchmarks
// report) can show the work. The baseline's harness runs once for each of
// two seeds; a deciding benchmark whose outputs do not change with the
// seed, or that reports none, makes the target unseeded, so a memo or a
// table of the one answer inside a benchmark is never accepted without a
// person. Equivalence gates prove nothing here: they are not what is
// measured.
func (j *judging) checkHarnessSeeded(ctx context.Context, base *build.Side, seeds [2]int64) error {
	if len(j.proto.Outputs) == 0 {
		j.markUnseeded("the harness reports no outputs ([bench] outputs), so nothing shows that its benchmarks' inputs come from HONE_SEED")
		return nil
	}
	j.progress(Progress{Phase: "seed check"})
	var outs [2]map[string]string
	for i, seed := range seeds {
		spec := build.WithSeed(benchSpec(base, j.t), seed)
		spec.Timeout, spec.OutputCap = j.proto.Timeout.Duration, harnessOutputCap
		res, err := j.m.exec(ctx, spec)
		if err != nil {
			return err
		}
		j.e.Environment.noteJail(res)
		if !res.Success() || res.Stdout.Truncated() {
			// The bench itself will fail on it, and say how.
			return nil
		}
		run, err := benchformat.Parse(j.proto.Format, res.Stdout.Bytes())
		if err != nil {
			return nil
		}
		outs[i] = outputsOf(run, j.proto.Outputs, j.proto.Benchmarks)
	}
	var same []string
	for name, out := range outs[0] {
		if out == "" || outs[1][name] == out {
			same = append(same, name)
		}
	}
	if len(same) > 0 || len(outs[0]) == 0 {
		slices.Sort(same)
		j.markUnseeded(fmt.Sprintf("deciding benchmarks of the baseline reported the same outputs (%s) for input seeds %d and %d: %s", strings.Join(j.proto.Outputs, ", "), seeds[0], seeds[1], errs.ClipTo(strings.Join(same, ", "), 300)))
	}
	return nil
}

// outputsOf maps each deciding benchmark (deciding, or every one when
// empty) that passed in run to what it reports in the output units, its
// iteration count left out: hone may size runs differently.
func outputsOf(run *benchformat.Run, units, deciding []string) map[string]string {
	out := map[string]string{}
	for _, bm := range run.Benchmarks {
		if bm.Status != benchformat.Pass || len(deciding) > 0 && !slices.Contains(deciding, bm.Name) {
			continue
		}
		var b strings.Builder
		for _, u := range units {
			if v, ok := bm.Metrics[u]; ok {
				fmt.Fprintf(&b, "%q=%s ", u, strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		out[bm.Name] = b.String()
	}
	return out
}
