package workspace

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace/layout"
)

// probeSeeds are the two seeds init runs a workload on: a result must be
// the same for a seed twice and change with it.
var probeSeeds = [2]string{"7", "8"}

// seededInput prints words made from HONE_SEED: text with a skewed letter
// mix, so that a filter (a compressor, a parser, a counter) has structure
// to work on. awk is in every jail; its generator is the same for
// baseline and candidate, which run in the same jail.
const seededInput = `awk -v seed="$HONE_SEED" -v words=200000 'BEGIN {
  srand(seed)
  for (i = 0; i < words; i++) {
    n = 1 + int(rand() * 8); w = ""
    for (j = 0; j < n; j++) w = w sprintf("%c", 97 + int(rand() * rand() * 26))
    printf "%s%s", w, (rand() < 0.1 ? "\n" : " ")
  }
}'`

// workload is one way of running a program on a seeded input.
type workload struct {
	run  string
	name string // how messages name it

	why []string // the comment of the gate and the bench, after the review mark
}

// workloads are the ways init tries to run program: the seed as its
// argument, then a seeded input on stdin with the output's checksum.
func (p *makeProbe) workloads(program string) []workload {
	cmd := p.command(program)
	return []workload{
		{run: cmd + " {seed}", name: "`" + cmd + " {seed}`", why: argWhy(cmd + " {seed}")},
		{run: seededInput + " |\n  " + cmd + " | cksum\n", name: "`" + cmd + "` as a filter on words made from the seed", why: []string{
			"hone init ran " + cmd + " as a filter in the jail: words made from HONE_SEED by awk on its stdin, the checksum of its stdout printed; the result is the same for a seed twice and changes with it.",
			"This compares output bytes: a change that writes other, equally valid output (another compression of the same input) fails it; compare what must not change instead (a round trip, a decoded result).",
			"awk runs in every measured run, the same for both sides, and dilutes the speedup: raise words until the program's work outweighs it, or make the input with the project's own generator.",
		}},
	}
}

// reviewMark heads the comment of what init wrote from running the project
// and a person must check: the walkthrough's one hand edit is deleting it.
const reviewMark = "REVIEW (then delete this line):"

// argWhy is the comment of a workload that passes the seed as an argument.
func argWhy(run string) []string {
	return []string{
		"hone init ran `" + run + "` in the jail: it exits 0 and prints a result that is the same for a seed twice and changes with the seed.",
		"Check that the program makes a representative input from the seed it is given.",
	}
}

// chooseWorkload makes the equivalence gate and the bench the first
// workload that runs as a verdict needs it to, on the first program that
// has one; the reading of the Makefile's guess is tried first. Each is
// marked REVIEW: init ran it, but only a person knows whether the input
// is representative and the printed result the one that must not change.
func (p *makeProbe) chooseWorkload(ctx context.Context, programs []string) {
	var tried []workload
	if b := p.l.Bench; b != nil && b.Format == "" {
		tried = append(tried, workload{run: b.Run, name: "`" + b.Run + "`", why: argWhy(b.Run)})
	}
	for _, prog := range programs[:min(len(programs), 3)] {
		for _, w := range p.workloads(prog) {
			if i := slices.IndexFunc(tried, func(t workload) bool { return t.run == w.run }); i >= 0 {
				tried[i].why = w.why
				continue
			}
			tried = append(tried, w)
		}
	}
	var failed []string
	for _, w := range tried {
		why := p.seeded(ctx, w.run)
		if why != "" {
			failed = append(failed, w.name+" "+why)
			continue
		}
		p.use(w)
		return
	}
	// Nothing ran as a verdict needs: no guess stays in hone.toml.
	p.l.Bench = nil
	p.l.Gates = slices.DeleteFunc(p.l.Gates, func(g *layout.Gate) bool { return g.Equivalence })
	p.l.Todo = slices.DeleteFunc(p.l.Todo, func(s string) bool { return strings.HasPrefix(s, "check the arguments of ") })
	what := "the build made no program to run"
	if len(programs) > 0 {
		what = "the build made " + strings.Join(programs[:min(len(programs), 3)], ", ")
	}
	if len(failed) > 0 {
		what += ", and none of " + strings.Join(failed, "; ")
	}
	p.l.Todo = append(p.l.Todo, "write the equivalence gate and the bench marked FILL IN in hone.toml: "+what)
}

// seeded runs command on both probe seeds, the first twice, and says why
// it cannot be a seeded workload, or "".
func (p *makeProbe) seeded(ctx context.Context, command string) string {
	var outs []string
	for _, seed := range []string{probeSeeds[0], probeSeeds[0], probeSeeds[1]} {
		res, err := p.run(ctx, command, seed, jail.Copy, jail.ReadOnly, 5*time.Minute)
		if err != nil {
			return "could not run: " + errs.ClipTo(err.Error(), 200)
		}
		if !res.Success() {
			return res.Describe() + ": " + lastLine(res.Stderr.Tail(2000))
		}
		outs = append(outs, string(res.Stdout.Bytes()))
	}
	switch {
	case strings.TrimSpace(outs[0]) == "":
		return "printed nothing"
	case outs[0] != outs[1]:
		return "printed another result for the same seed"
	case outs[0] == outs[2]:
		return "printed the same for two seeds"
	}
	return ""
}

// use makes w the equivalence gate and the bench, in place of what the
// reading of the Makefile wrote and its to-do.
func (p *makeProbe) use(w workload) {
	mark := append([]string{reviewMark}, wrap(w.why)...)
	i := slices.IndexFunc(p.l.Gates, func(g *layout.Gate) bool { return g.Equivalence })
	if i < 0 {
		p.l.Gates = append(p.l.Gates, &layout.Gate{Name: "golden", Equivalence: true})
		i = len(p.l.Gates) - 1
	}
	g := p.l.Gates[i]
	g.Run = w.run
	g.Why = append(slices.Clone(mark), "An equivalence gate: baseline and candidate must print the same, byte for byte.")
	p.l.Bench = &layout.Bench{Run: w.run, Why: append(slices.Clone(mark), "The measured workload; every run's output must equal the baseline's too.")}
	p.l.Todo = slices.DeleteFunc(p.l.Todo, func(s string) bool {
		return strings.HasPrefix(s, "check the arguments of ") || strings.HasPrefix(s, "write the equivalence gate marked FILL IN") || strings.HasPrefix(s, "write the bench marked FILL IN")
	})
	p.l.Todo = append(p.l.Todo, "review the equivalence gate "+g.Name+" and the bench that hone init wrote and ran, marked REVIEW in hone.toml: a representative input made from the seed, and a printed result that must not change; then delete the REVIEW lines")
}
