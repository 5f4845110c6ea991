package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/guard"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/workspace"
	"github.com/hone-perf/hone/worktree"
)

func init() { register("guard", newGuardCmd) }

func newGuardCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "guard",
		Short: "Hold diffs, commits and pushes to a target's allowlist (for git hooks)",
		Long: `The guard applies the rules of ` + "`hone patch propose`" + ` to work that does not go
through hone: a diff, a range of commits, a push received by a server, a push
about to leave, or the staged changes of a commit. Every violation is printed
on stdout, one per line; any violation exits 3.`,
		Example: `  git diff | hone guard diff wordfreq
  hone guard commits wordfreq main..agent/wordfreq/fast`,
	}
	cmd.AddCommand(newGuardDiffCmd(app), newGuardCommitsCmd(app), newGuardPreReceiveCmd(app),
		newGuardPrePushCmd(app), newGuardPreCommitCmd(app))
	return cmd
}

func newGuardDiffCmd(app *App) *cobra.Command {
	var (
		file   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "diff TARGET [--file F] [--json]",
		Short: "Check a diff as propose would, without storing anything",
		Long: `Run every check of ` + "`hone patch propose`" + ` on a diff (stdin or --file): the front
check of its headers and paths, git's apply into a throwaway index from the
pin, and the check of what git changed. Nothing is stored: no ref, no entry,
no object.

JSON fields: target, pin, tree, files, added, removed, changes (path,
old_mode, new_mode, status).`,
		Example: `  git diff | hone guard diff wordfreq
  hone guard diff wordfreq --file idea.diff --json`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			diff, err := readDiff(app, ws, file)
			if err != nil {
				return err
			}
			c, err := patch.Check(ctx, ws, args[0], diff)
			if err != nil {
				return err
			}
			if asJSON {
				return app.printJSON(c)
			}
			fmt.Fprintf(app.Out, "ok: %d path(s) inside %s changed (+%d -%d)\n", len(c.Changes), ws.Config.Targets[args[0]].Path, c.Added, c.Removed)
			return nil
		}),
	}
	cmd.Flags().StringVar(&file, "file", "", "read the diff from `FILE` (relative to the current directory) instead of stdin")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newGuardCommitsCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "commits TARGET REV-RANGE [--json]",
		Short: "Check every commit of a range against each of its parents",
		Long: `Check every commit REV-RANGE selects (as ` + "`git rev-list`" + ` reads it, e.g.
main..agent/fast) against each of its parents, merges included, without
rename detection: every path and mode the commit changes must be inside the
target's allowlist.

JSON: {"violations": [{"commit", "parent", "path", "rule"}, ...]}.`,
		Example: `  hone guard commits wordfreq main..agent/wordfreq/fast
  hone guard commits wordfreq origin/main..HEAD --json`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid),
		Args:        exactArgs(2),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			t, err := ws.Target(args[0])
			if err != nil {
				return err
			}
			if strings.HasPrefix(args[1], "-") {
				return errs.Usagef("REV-RANGE %q looks like an option; give a range such as main..agent/fast", args[1])
			}
			vs, err := guard.Commits(ctx, ws.Root, t.Rules(), args[1])
			if err != nil {
				return err
			}
			return app.reportViolations(vs, asJSON)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newGuardPreReceiveCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pre-receive",
		Short: "Server hook: refuse pushes to guarded refs that leave the allowlist",
		Long: `Run as a git pre-receive hook (` + "`exec hone guard pre-receive`" + `). Reads
"<old> <new> <ref>" lines on stdin. For each ref matching a [guard] refs
pattern of hone.toml (for example "refs/heads/agent/<target>/*"), the target is
taken from the ref name and every new commit (rev-list <new> --not --all) is
checked against each of its parents. hone.toml is read from the workspace, or
in a bare repository from HEAD:hone.toml. Prints each violation; any
violation refuses the whole push.`,
		Example:     `  printf '#!/bin/sh\nexec hone guard pre-receive\n' > hooks/pre-receive`,
		Annotations: exits(errs.Policy, errs.Invalid),
		Args:        exactArgs(0),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			cfg, err := guard.LoadConfig(ctx, app.Dir)
			if err != nil {
				return err
			}
			updates, err := guard.ReadPreReceive(app.In)
			if err != nil {
				return err
			}
			vs, err := guard.Refs(ctx, app.Dir, cfg, updates, "--all")
			if err != nil {
				return err
			}
			return app.reportViolations(vs, false)
		}),
	}
	return cmd
}

func newGuardPrePushCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pre-push [REMOTE [URL]]",
		Short: "Client hook: refuse pushing commits to guarded refs that leave the allowlist",
		Long: `Run as a git pre-push hook (installed by ` + "`hone hooks install`" + `). Reads
"<local ref> <local sha> <remote ref> <remote sha>" lines on stdin; for each
remote ref matching a [guard] refs pattern, checks every commit being pushed
that the remote's tracking refs and the target's pin do not already hold.`,
		Example:     `  hone hooks install   # writes a pre-push hook that runs: hone guard pre-push "$@"`,
		Annotations: exits(errs.Policy, errs.Invalid),
		Args:        rangeArgs(0, 2),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			cfg, err := guard.LoadConfig(ctx, app.Dir)
			if err != nil {
				return err
			}
			updates, err := guard.ReadPrePush(app.In)
			if err != nil {
				return err
			}
			var exclude []string
			if len(args) > 0 {
				exclude = append(exclude, "--remotes="+args[0])
			}
			vs, err := guard.Refs(ctx, app.Dir, cfg, updates, exclude...)
			if err != nil {
				return err
			}
			return app.reportViolations(vs, false)
		}),
	}
	return cmd
}

func newGuardPreCommitCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pre-commit",
		Short: "Commit hook: refuse staged changes outside the session's target",
		Long: `Run as a git pre-commit hook (installed by ` + "`hone hooks install`" + `). Inside a
worktree entered for a target (` + "`hone worktree enter --target`" + `), or when HONE_TARGET
names a target, every staged path and mode must be inside that target's
allowlist. Elsewhere it does nothing and exits 0.`,
		Example: `  hone hooks install   # writes a pre-commit hook that runs: hone guard pre-commit
  HONE_TARGET=wordfreq hone guard pre-commit`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid),
		Args:        exactArgs(0),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			name, err := sessionTarget(ws)
			if err != nil || name == "" {
				return err
			}
			t, err := ws.Target(name)
			if err != nil {
				return err
			}
			vs, err := guard.Staged(ctx, ws.Root, t.Rules())
			if err != nil {
				return err
			}
			return app.reportViolations(vs, false)
		}),
	}
	return cmd
}

// sessionTarget is the target the current worktree is bound to by a hone
// worktree session, else HONE_TARGET, else "".
func sessionTarget(ws *workspace.Workspace) (string, error) {
	name, ok, err := worktree.SessionTarget(ws.Repo)
	if err != nil {
		return "", err
	}
	if ok {
		return name, nil
	}
	return os.Getenv("HONE_TARGET"), nil
}

// reportViolations prints each violation and turns any into a Policy error.
func (app *App) reportViolations(vs []guard.Violation, asJSON bool) error {
	if asJSON {
		if vs == nil {
			vs = []guard.Violation{}
		}
		if err := app.printJSON(map[string]any{"violations": vs}); err != nil {
			return err
		}
	} else {
		for _, v := range vs {
			fmt.Fprintln(app.Out, "hone guard: "+v.String())
		}
	}
	return guard.Violated(vs)
}
