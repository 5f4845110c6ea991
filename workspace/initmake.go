package workspace

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/scratch"
	"github.com/hone-perf/hone/workspace/layout"
)

// A Makefile says what it builds only when make runs it: recursive makes,
// variables from included files and $(shell ...) hide the programs from a
// reading of its text, and `make -n` prints commands in whatever form the
// project writes them (cd && cc, libtool). So for a Makefile project init
// runs the build it wrote, in the jail and on a copy of the working tree,
// and takes the executables that appeared as what the default goal builds.
// The same copy, built, answers what else only running shows: how much
// each test target would run (`make -n`, which runs only the recursive
// makes, in the jail too), and how the program takes a seeded input.

// probeSeeds are the two seeds init runs a workload on: a result must be
// the same for a seed twice and change with it.
var probeSeeds = [2]string{"7", "8"}

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

// makeProbe is one run of a Makefile project's build in the jail, at init.
type makeProbe struct {
	l        *layout.Layout
	src, out string          // the built copy and the build output, host paths
	before   map[string]bool // the files of the copy before the build
}

// probeMake builds the Makefile project l describes (in the repository at
// root) in the jail and rewrites l's unit gate, equivalence gate and bench
// from what the build made and what running it showed. What it cannot
// find out it leaves as the reading of the Makefile wrote it, and says
// why in l.Todo.
func probeMake(ctx context.Context, r *repo.Repo, l *layout.Layout) {
	if l.System != layout.Make || l.Build == nil {
		return
	}
	d, err := scratch.New(ctx, r.StatePath(repo.RunsArea), "init-")
	if err != nil {
		l.Todo = append(l.Todo, "hone init could not make a folder to build the project in ("+errs.ClipTo(err.Error(), 200)+"); check the gates and the bench in hone.toml by hand")
		return
	}
	defer func() { scratch.RemoveAll(d.Path); d.Release() }()
	p := &makeProbe{l: l, src: filepath.Join(d.Path, "src"), out: filepath.Join(d.Path, "out")}
	if err := p.copyTree(ctx, r.Root); err != nil {
		l.Todo = append(l.Todo, "hone init could not copy the project to build it ("+errs.ClipTo(err.Error(), 200)+"); check the gates and the bench in hone.toml by hand")
		return
	}
	res, err := p.run(ctx, l.Build.Run, "", jail.ReadWrite, jail.ReadWrite, 30*time.Minute)
	if err != nil {
		l.Todo = append(l.Todo, "hone init could not build the project in the jail ("+errs.ClipTo(err.Error(), 200)+"); check the build, the gates and the bench in hone.toml by hand")
		return
	}
	if !res.Success() {
		l.Todo = append(l.Todo, fmt.Sprintf("fix the build in hone.toml: run in the jail by hone init, `%s` %s: %s", l.Build.Run, res.Describe(), lastLine(res.Stderr.Tail(2000))))
		return
	}
	p.chooseUnit(ctx)
	p.chooseWorkload(ctx, p.programs())
}

// copyTree copies the working tree's files that git tracks or would track
// (untracked files too, ignored ones never) into p.src.
func (p *makeProbe) copyTree(ctx context.Context, root string) error {
	list, err := git.Output(ctx, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	p.before = map[string]bool{}
	for _, dir := range []string{p.src, p.out} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	for _, name := range strings.Split(list, "\x00") {
		if name == "" || p.before[name] {
			continue
		}
		from, to := filepath.Join(root, filepath.FromSlash(name)), filepath.Join(p.src, filepath.FromSlash(name))
		fi, err := os.Lstat(from)
		if err != nil || fi.IsDir() {
			continue // deleted in the working tree, or a submodule
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(from)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(from)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, b, fi.Mode().Perm()|0o644); err != nil {
				return err
			}
		default:
			continue
		}
		p.before[name] = true
	}
	return nil
}

// run runs command as a verdict runs its target's commands: in the
// target's folder of the checkout at /hone/src, the output at /hone/out,
// with seed (when set) as {seed} and HONE_SEED.
func (p *makeProbe) run(ctx context.Context, command, seed string, src, out jail.Mode, timeout time.Duration) (*jail.Result, error) {
	env := []string{"HONE_ROOT=/hone/src", "HONE_OUT=/hone/out", "HONE_TARGET=" + p.l.Name}
	if seed != "" {
		command = strings.ReplaceAll(command, "{seed}", seed)
		env = append(env, "HONE_SEED="+seed)
	}
	return jail.Run(ctx, jail.Spec{
		Command:  command,
		Dir:      path.Join("/hone/src", p.l.Path),
		Env:      env,
		Mounts:   []jail.Mount{{Host: p.src, Jail: "/hone/src", Mode: src}, {Host: p.out, Jail: "/hone/out", Mode: out}},
		ReadOnly: p.l.ReadOnly,
		Timeout:  timeout,
	})
}

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

// programs are the executables the build made, the likeliest workload
// first: one named like the target, then the shallowest. Test, fuzzing,
// benchmark and example programs are left out: they are not the project's
// program, and their folders are protected.
func (p *makeProbe) programs() []string {
	var found []string
	walk := func(base, prefix string) {
		filepath.WalkDir(base, func(file string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(base, file)
			rel = filepath.ToSlash(rel)
			if prefix == "" && p.before[rel] || notProgram().MatchString(strings.ToLower(rel)) {
				return nil
			}
			if fi, err := d.Info(); err != nil || fi.Mode().Perm()&0o111 == 0 || !isELF(file) {
				return nil
			}
			found = append(found, prefix+rel)
			return nil
		})
	}
	walk(p.src, "")
	walk(p.out, "$HONE_OUT/")
	slices.SortStableFunc(found, func(a, b string) int {
		an, bn := path.Base(a) == p.l.Name, path.Base(b) == p.l.Name
		switch {
		case an != bn && an:
			return -1
		case an != bn:
			return 1
		}
		if c := strings.Count(a, "/") - strings.Count(b, "/"); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return found
}

var notProgram = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|/)[^/]*(test|fuzz|bench|example|demo|sample)[^/]*(/|$)|\.so(\.|$)|\.(o|a|lo|la)$`)
})

func isELF(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 4)
	_, err = f.Read(b)
	return err == nil && bytes.Equal(b, []byte("\x7fELF"))
}

// command is how the target's commands name program (as programs lists it).
func (p *makeProbe) command(program string) string {
	switch {
	case strings.HasPrefix(program, "$HONE_OUT/"):
		return program
	case p.l.Path == ".":
		return "./" + program
	case strings.HasPrefix(program, p.l.Path+"/"):
		return "./" + strings.TrimPrefix(program, p.l.Path+"/")
	}
	return "$HONE_ROOT/" + program
}

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
	guess := ""
	if b := p.l.Bench; b != nil && b.Format == "" {
		guess = b.Run
		tried = append(tried, workload{run: guess, name: "`" + guess + "`", why: argWhy(guess)})
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
		p.use(w, w.run == guess)
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

// use makes w the equivalence gate and the bench. guessed says w is the
// command the reading of the Makefile wrote, whose to-do stays.
func (p *makeProbe) use(w workload, guessed bool) {
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
	if guessed {
		return
	}
	p.l.Todo = slices.DeleteFunc(p.l.Todo, func(s string) bool {
		return strings.HasPrefix(s, "check the arguments of ") || strings.HasPrefix(s, "write the equivalence gate marked FILL IN") || strings.HasPrefix(s, "write the bench marked FILL IN")
	})
	p.l.Todo = append(p.l.Todo, "review the equivalence gate "+g.Name+" and the bench that hone init wrote and ran, marked REVIEW in hone.toml: a representative input made from the seed, and a printed result that must not change; then delete the REVIEW lines")
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return errs.ClipTo(s, 200)
}

// wrap breaks sentences into comment lines of at most 80 characters.
func wrap(text []string) []string {
	var out []string
	for _, t := range text {
		line := ""
		for _, w := range strings.Fields(t) {
			if line != "" && len(line)+1+len(w) > 78 {
				out = append(out, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}
