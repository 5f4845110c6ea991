package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/guard"
	"github.com/hone-perf/hone/internal/errs"
)

func init() { register("hooks", newHooksCmd) }

func newHooksCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install or remove the git hooks that call hone guard",
		Long: `hone's client hooks hold commits and pushes to the target's allowlist:
pre-commit runs ` + "`hone guard pre-commit`" + ` (staged changes, inside a worktree entered for
a target or with HONE_TARGET set) and pre-push runs ` + "`hone guard pre-push`" + ` (commits
pushed to refs matching [guard] refs in hone.toml). Hooks go where git runs
them, core.hooksPath included. For a server, see ` + "`hone guard pre-receive --help`" + `.`,
		Example: `  hone hooks install
  hone hooks uninstall`,
	}
	cmd.AddCommand(newHooksInstallCmd(app), newHooksUninstallCmd(app))
	return cmd
}

func newHooksInstallCmd(app *App) *cobra.Command {
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "install [--force] [--json]",
		Short: "Write the pre-commit and pre-push hooks",
		Long: `Write pre-commit and pre-push hooks that call hone. A hook already there that is
not hone's is kept as <hook>.hone-chained and runs first; installing again
updates hone's hooks in place. If both a foreign hook and a chained one exist,
install refuses; --force then saves the foreign hook as <hook>.hone-backup and
replaces it.

JSON: an array of {hook, path, action} with action installed, updated,
chained or replaced.`,
		Example: `  hone hooks install
  hone hooks install --force --json`,
		Annotations: exits(errs.Policy, errs.NotFound),
		Args:        exactArgs(0),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			acts, err := guard.InstallHooks(ctx, app.Dir, force)
			if err != nil {
				return err
			}
			return app.printHookActions(acts, asJSON)
		}),
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace a foreign hook even when a chained one exists (it is backed up)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newHooksUninstallCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "uninstall [--json]",
		Short: "Remove hone's hooks and restore the hooks they chained",
		Long: `Remove the hooks ` + "`hone hooks install`" + ` wrote and put back any hook they chained.
A hook that is not hone's is left alone.

JSON: an array of {hook, path, action} with action removed, restored,
absent or foreign.`,
		Example:     `  hone hooks uninstall`,
		Annotations: exits(errs.NotFound),
		Args:        exactArgs(0),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			acts, err := guard.UninstallHooks(ctx, app.Dir)
			if err != nil {
				return err
			}
			return app.printHookActions(acts, asJSON)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func (app *App) printHookActions(acts []guard.HookAction, asJSON bool) error {
	if asJSON {
		return app.printJSON(acts)
	}
	for _, a := range acts {
		fmt.Fprintf(app.Out, "%s: %s (%s)\n", a.Hook, a.Action, a.Path)
	}
	return nil
}
