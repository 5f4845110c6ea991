package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
	"github.com/hone-perf/hone/workspace/layout"
)

func init() { register("init", command(newInitCmd)) }

type initOptions struct {
	*factory
	out output

	Target  string
	Path    string
	NoBuild bool
}

func newInitCmd(f *factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "init [--target NAME] [--path DIR]",
		Short: "Make this git repository a hone workspace",
		Long: `Make the git repository around the current directory a hone workspace:
write a commented hone.toml at its top level, add /.sema-worktrees/ to
.gitignore, and create the ledger branch (hone/ledger) with a first commit
holding a README that explains it.

init looks for the project's build system: Cargo.toml, go.mod, meson.build,
CMakeLists.txt or a Makefile, in --path DIR or above it up to the top level,
or, without --path, at the top level or in the one subdirectory (two levels
down at most) that has one. It then defines a target for it (named --target
NAME, else after the project) with a build, gates and a bench that work in
hone's jail, protect patterns that keep tests, test data and benchmark
harnesses out of the allowlist, and [sandbox] read_only for a toolchain
outside /usr. For a project at the top level the target's path is its
source directory (src, lib or source; for Go the one directory holding every
package); when the sources sit at the top level themselves, the target is
the top level (path = ".") and files lists those sources by name (not the
files that define main, nor tests, benchmarks or examples): hone.toml,
.hone/ and .git* are never patchable. What init could not decide (a
program's arguments, a bench when there is nothing to run, dependencies the
offline jail cannot fetch) it lists under "to do" and marks FILL IN in
hone.toml.

For a Makefile project init also builds the default goal in the jail, on a
copy of the working tree (the files git tracks or would track, but no
untracked object or program an earlier build left), since only
running make shows what it builds (recursive makes, included variables):
the executables that appear are the programs. The same built copy is
dry-run (make -n) for each test target (check, test, test-fast, unit, ...),
and the first one by name that does not look heavy (more than 150
commands, fuzzers, gigabyte sizes) becomes the unit gate, the comment
saying what each printed. Then it runs the program on two seeds as a
verdict would: with the seed as its argument, else as a filter on words
made from HONE_SEED (awk) with the checksum of its output, and keeps the
first that exits 0 and prints a result that is the same for a seed twice
and changes with it as the equivalence gate and the bench, marked REVIEW in
hone.toml: only a person knows whether the input is representative and the
printed result the one that must not change; delete the REVIEW lines once
checked. When nothing runs so, they are FILL IN, and "to do" says what
was run. --no-build writes hone.toml from the build files alone.

For a Go module whose benchmarks' package has a test that reads HONE_SEED
and prints, init makes it the equivalence gate, and the metrics the
benchmarks report with b.ReportMetric (not rates) the bench's outputs,
both marked REVIEW; it reads the code, never running it.

Finding nothing, with --target NAME hone.toml defines that target at --path
DIR (default targets/NAME) for you to fill in; without --target the target
table is a commented example.

init never overwrites hone.toml. Run again, it only completes what is missing
(the .gitignore line, the ledger branch) and otherwise changes nothing; when
hone.toml exists, --target must name a target it already defines.`,
		Example: `  hone init
  hone init --path src/wordfreq
  hone init --target wordfreq --path src/wordfreq --json
  hone init --no-build`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid, errs.Busy),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, initRun),
	}
	cmd.Flags().StringVar(&opts.Target, "target", "", "define the target `NAME` in the new hone.toml (default: the project's name)")
	cmd.Flags().BoolVar(&opts.NoBuild, "no-build", false, "write hone.toml from the build files alone: do not build a Makefile project in the jail")
	cmd.Flags().StringVar(&opts.Path, "path", "", "the target's directory `DIR`, relative to the repository top level (default: found, else targets/NAME)")
	addJSONFlag(cmd, &opts.out, "print what was done as JSON")
	return cmd
}

func initRun(ctx context.Context, opts *initOptions) error {
	res, err := workspace.Init(ctx, opts.dir, workspace.InitOptions{
		Target: opts.Target, Path: opts.Path, NoBuild: opts.NoBuild,
		Progress:    func(line string) { opts.io.progress("init: %s", line) },
		StartLedger: func(ctx context.Context, ws *workspace.Workspace) (bool, error) { return ledger.Open(ws).Init(ctx) },
	})
	opts.io.endProgress()
	if err != nil {
		return err
	}
	return opts.out.print(res, func(w io.Writer) error {
		writeInit(w, res)
		return nil
	})
}

func writeInit(w io.Writer, r *workspace.InitResult) {
	if !r.CreatedConfig && !r.UpdatedGitignore && !r.CreatedLedger {
		fmt.Fprintf(w, "already initialized: %s, the %s line in .gitignore and the ledger branch %s are in place\n", r.Config, repo.IgnoreLine, r.LedgerBranch)
		return
	}
	if r.CreatedConfig {
		fmt.Fprintf(w, "created %s", r.Config)
		if r.Target != "" {
			fmt.Fprintf(w, " with target %q (path %s, pin %s)", r.Target, r.TargetPath, r.Pin)
		}
		fmt.Fprintln(w)
		writeDetected(w, r.Detected)
	}
	if r.UpdatedGitignore {
		fmt.Fprintf(w, "added %s to .gitignore\n", repo.IgnoreLine)
	}
	if r.CreatedLedger {
		fmt.Fprintf(w, "created the ledger branch %s\n", r.LedgerBranch)
	}
	if r.Target != "" && !r.TargetPathExists {
		fmt.Fprintf(w, "note: %s does not exist yet; create it and commit it before profiling\n", r.TargetPath)
	}
	if len(r.Todo) > 0 {
		fmt.Fprintln(w, "to do before the first verdict:")
		for _, t := range r.Todo {
			fmt.Fprintf(w, "  - %s\n", t)
		}
	}
	switch {
	case r.CreatedConfig && r.Detected != nil:
		fmt.Fprintln(w, "next: review hone.toml, commit it and .gitignore, then run `hone targets`")
	case r.CreatedConfig:
		fmt.Fprintln(w, "next: fill in build, gates and bench in hone.toml, commit hone.toml and .gitignore, then run `hone targets`")
	}
}

// writeDetected says what init found and wrote for it.
func writeDetected(w io.Writer, l *layout.Layout) {
	if l == nil {
		fmt.Fprintln(w, "found no build system (Cargo.toml, go.mod, meson.build, CMakeLists.txt or a Makefile) at the top level or in a subdirectory; hone.toml has a template to fill in")
		return
	}
	parts := []string{"a build"}
	var gates []string
	for _, g := range l.Gates {
		gates = append(gates, g.Name)
	}
	switch len(gates) {
	case 0:
	case 1:
		parts = append(parts, "a gate ("+gates[0]+")")
	default:
		parts = append(parts, fmt.Sprintf("%d gates (%s)", len(gates), strings.Join(gates, ", ")))
	}
	if l.Bench != nil {
		parts = append(parts, "a bench")
	}
	what := strings.Join(parts, ", ")
	if i := strings.LastIndex(what, ", "); i >= 0 {
		what = what[:i] + " and " + what[i+2:]
	}
	fmt.Fprintf(w, "found %s (%s): wrote %s\n", l.BuildFile, l.System, what)
	if len(l.ReadOnly) > 0 {
		fmt.Fprintf(w, "the jail will read the toolchain in %s ([sandbox] read_only)\n", strings.Join(l.ReadOnly, ", "))
	}
}
