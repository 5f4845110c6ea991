package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

func init() { register("init", newInitCmd) }

func newInitCmd(app *App) *cobra.Command {
	var target, path string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "init [--target NAME] [--path DIR]",
		Short: "Make this git repository a hone workspace",
		Long: `Make the git repository around the current directory a hone workspace:
write a commented hone.toml at its top level, add /.sema-worktrees/ to
.gitignore, and create the ledger branch (hone/ledger) with a first commit
holding a README that explains it.

With --target NAME, hone.toml defines that target, at --path DIR (default
targets/NAME), pinned to the current branch. Without it, the target table is a
commented example to fill in.

init never overwrites hone.toml. Run again, it only completes what is missing
(the .gitignore line, the ledger branch) and otherwise changes nothing; when
hone.toml exists, --target must name a target it already defines.`,
		Example: `  hone init
  hone init --target wordfreq --path src/wordfreq`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid, errs.Busy),
		Args:        exactArgs(0),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if path != "" && target == "" {
				return errs.Usagef("--path needs --target NAME; see `hone init --help`")
			}
			res, err := workspace.Init(ctx, app.Dir, workspace.InitOptions{
				Target: target, Path: path,
				StartLedger: func(ctx context.Context, ws *workspace.Workspace) (bool, error) { return ledger.Open(ws).Init(ctx) },
			})
			if err != nil {
				return err
			}
			if asJSON {
				return app.printJSON(res)
			}
			printInit(app, res)
			return nil
		}),
	}
	cmd.Flags().StringVar(&target, "target", "", "define the target `NAME` in the new hone.toml")
	cmd.Flags().StringVar(&path, "path", "", "the target's directory `DIR`, relative to the repository top level (default targets/NAME)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was done as JSON")
	return cmd
}

func printInit(app *App, r *workspace.InitResult) {
	if !r.CreatedConfig && !r.UpdatedGitignore && !r.CreatedLedger {
		fmt.Fprintf(app.Out, "already initialized: %s, the %s line in .gitignore and the ledger branch %s are in place\n", r.Config, repo.IgnoreLine, r.LedgerBranch)
		return
	}
	if r.CreatedConfig {
		fmt.Fprintf(app.Out, "created %s", r.Config)
		if r.Target != "" {
			fmt.Fprintf(app.Out, " with target %q (path %s, pin %s)", r.Target, r.TargetPath, r.Pin)
		}
		fmt.Fprintln(app.Out)
	}
	if r.UpdatedGitignore {
		fmt.Fprintf(app.Out, "added %s to .gitignore\n", repo.IgnoreLine)
	}
	if r.CreatedLedger {
		fmt.Fprintf(app.Out, "created the ledger branch %s\n", r.LedgerBranch)
	}
	if r.Target != "" && !r.TargetPathExists {
		fmt.Fprintf(app.Out, "note: %s does not exist yet; create it and commit it before profiling\n", r.TargetPath)
	}
	if r.CreatedConfig {
		fmt.Fprintln(app.Out, "next: fill in build, gates and bench in hone.toml, commit hone.toml and .gitignore, then run `hone targets`")
	}
}
