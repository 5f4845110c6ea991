package workspace

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace/layout"
)

// testTargets are the make targets that may run a project's tests, the
// light ones first: where several exist, the first that does not look
// heavy becomes the unit gate.
var testTargets = []string{
	"test-fast", "fasttest", "check-fast", "quick-test", "test-quick", "quicktest", "quickcheck",
	"smoke", "test-short", "short-test", "unit", "unit-test", "unittest", "test-unit",
	"check", "test", "tests",
}

// heavyDryRun is how many commands a test target's dry run may print
// before init calls it heavy.
const heavyDryRun = 150

// heavyMarks is the grep -E pattern of what, in a dry run, says a test
// target is heavy: fuzzers, and sizes of a gigabyte or more.
const heavyMarks = `fuzz[a-z]*|[0-9]+ ?[GT]i?B\b|-g ?[0-9]+[GT]\b`

// dryRun is what `make -n TARGET` printed for one test target.
type dryRun struct {
	target   string
	commands int
	marks    []string // what makes it look heavy, as printed
}

func (d dryRun) heavy() bool { return d.commands > heavyDryRun || len(d.marks) > 0 }

func (d dryRun) String() string {
	s := fmt.Sprintf("`make %s` prints %d command%s", d.target, d.commands, map[bool]string{true: "", false: "s"}[d.commands == 1])
	if len(d.marks) > 0 {
		s += " and names " + strings.Join(d.marks, ", ")
	}
	return s
}

// chooseUnit makes the unit gate the lightest of the project's test
// targets, by their names and by the size of their dry runs in the built
// copy, and says in the gate's comment what it saw.
func (p *makeProbe) chooseUnit(ctx context.Context) {
	var script strings.Builder
	for _, t := range testTargets {
		// A name make knows only as a file or folder ("test/" and no rule)
		// prints just make's own "is up to date" line: no command.
		fmt.Fprintf(&script, "if %s -n %s >/tmp/dry 2>/dev/null; then printf '%s %%s ' \"$(grep -cvE '^make(\\[[0-9]+\\])?: ' /tmp/dry)\"; grep -oiE '%s' /tmp/dry | sort -u | head -3 | tr '\\n' ' '; echo; fi\n",
			p.l.Build.Run, t, t, heavyMarks)
	}
	res, err := p.run(ctx, script.String(), "", jail.Copy, jail.ReadOnly, 10*time.Minute)
	if err != nil || !res.Success() {
		return
	}
	var runs []dryRun
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout.Bytes())), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n == 0 || !slices.Contains(testTargets, f[0]) {
			continue
		}
		runs = append(runs, dryRun{target: f[0], commands: n, marks: f[2:]})
	}
	if len(runs) == 0 {
		return
	}
	chosen := slices.MinFunc(runs, func(a, b dryRun) int { return a.commands - b.commands })
	if i := slices.IndexFunc(runs, func(d dryRun) bool { return !d.heavy() }); i >= 0 {
		chosen = runs[i]
	}
	why := []string{fmt.Sprintf("The project's own tests. hone init dry-ran the test targets (make -n) in the built copy: %s.", sentence(runs))}
	if chosen.heavy() {
		why = append(why, fmt.Sprintf("It chose `make %s`, the lightest, and it looks heavy (more than %d commands, or fuzzers or gigabyte sizes): every verdict runs it twice. Write a lighter target and name it here.", chosen.target, heavyDryRun))
	} else if len(runs) > 1 {
		why = append(why, fmt.Sprintf("It chose `make %s`: the first by name that does not look heavy (more than %d commands, or fuzzers or gigabyte sizes).", chosen.target, heavyDryRun))
	}
	why = append(why, "It runs in a private copy of the built checkout, so it may build and write there.")
	run := p.l.Build.Run + " " + chosen.target
	for _, g := range p.l.Gates {
		if !g.Equivalence {
			g.Run, g.Why = run, wrap(why)
			return
		}
	}
	p.l.Gates = append([]*layout.Gate{{Name: "unit", Run: run, Why: wrap(why)}}, p.l.Gates...)
	p.l.Todo = slices.DeleteFunc(p.l.Todo, func(s string) bool { return strings.HasPrefix(s, "add a gate that runs the tests: ") })
}

func sentence(runs []dryRun) string {
	parts := make([]string, len(runs))
	for i, d := range runs {
		parts[i] = d.String()
	}
	return strings.Join(parts, "; ")
}
