package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/guard"
	"github.com/hone-perf/hone/internal/errs"
)

func init() { register("hooks", newHooksCmd) }

func newHooksCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install or remove the git hooks that call hone guard",
		Long: `hone's client hooks hold every local way in to the target's allowlist:
reference-transaction runs ` + "`hone guard ref-update`" + ` for every update of a guarded ref
(commit, merge, cherry-pick, rebase, reset, --no-verify alike), pre-commit runs
` + "`hone guard pre-commit`" + ` (staged changes in a managed worktree or with HONE_TARGET
set) and pre-push runs ` + "`hone guard pre-push`" + ` (commits pushed to refs matching
[guard] refs). The rules come from hone.toml at the protected base. Hooks go
where git runs them, core.hooksPath included, and call hone by the absolute
path it has when installed.

Local hooks are a convenience and an early warning, not a guarantee: an agent
with a shell can pass -c core.hooksPath=/dev/null or write ref files itself.
The server's pre-receive hook is the guarantee; see ` + "`hone guard pre-receive --help`" + `.`,
		Example: `  hone hooks install
  hone hooks uninstall`,
	}
	cmd.AddCommand(newHooksInstallCmd(f, nil), newHooksUninstallCmd(f, nil))
	return cmd
}

type hooksInstallOptions struct {
	*factory
	out output

	Force  bool
	Server bool
}

func newHooksInstallCmd(f *factory, runF func(*hooksInstallOptions) error) *cobra.Command {
	opts := &hooksInstallOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "install [--force] [--server] [--json]",
		Short: "Write the pre-commit and pre-push hooks",
		Long: `Write the pre-commit, pre-push and reference-transaction hooks, which call this
hone binary by its absolute path, and say what they guard and what they do
not. The guarded refs are written into the reference-transaction hook from
hone.toml at the protected base: git updates every other ref without hone, so
git keeps working when hone is missing, and a guarded update then fails.
Install again after changing [guard] or [ledger] in hone.toml, or moving hone.
A hook already there that is not hone's is kept as <hook>.hone-chained and
runs first; installing again updates hone's hooks in place. If both a foreign
hook and a chained one exist, install refuses; --force then saves the foreign
hook as <hook>.hone-backup and replaces it.

--server, run in a server's repository (bare or not) once its default
branch holds hone.toml, writes its pre-receive hook instead (never over one
that is not hone's) and prints every ref namespace the hook guards, who may
write it and what it checks there.

JSON: an array of {hook, path, action, hone, guards} with action installed,
updated, chained or replaced; with --server, {hook, namespaces: [{refs,
writer, checks}]}.`,
		Example: `  hone hooks install
  hone hooks install --force --json`,
		Annotations: exits(errs.Policy, errs.NotFound),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, hooksInstallRun),
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace a foreign hook even when a chained one exists (it is backed up)")
	cmd.Flags().BoolVar(&opts.Server, "server", false, "install the server's pre-receive hook and say what it guards")
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func hooksInstallRun(ctx context.Context, opts *hooksInstallOptions) error {
	self, err := os.Executable()
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot tell where this hone binary is")
	}
	if opts.Server {
		return installServerHook(ctx, opts, self)
	}
	p, err := opts.policy(ctx)
	if err != nil {
		return err
	}
	acts, err := guard.InstallHooks(ctx, opts.dir, p, self, opts.Force)
	if err != nil {
		return err
	}
	return opts.out.print(acts, func(w io.Writer) error {
		writeHookActions(w, acts)
		fmt.Fprintf(w, "\nguarded (rules from %s at %s):\n", "hone.toml", p.Base().Ref)
		for _, a := range acts {
			for _, g := range a.Guards {
				fmt.Fprintf(w, "  %s: %s\n", a.Hook, g)
			}
		}
		fmt.Fprintf(w, "not guarded: every other ref (%s and the other branches people commit to), and everything when git runs with -c core.hooksPath=... or a ref file is written by hand: these hooks are an early warning; a server's pre-receive hook (hone guard pre-receive) is the guarantee\n", strings.Join(p.Base().Refs, ", "))
		_, err := fmt.Fprintf(w, "the hooks call %s; while it is missing, guarded updates fail and all else works\n", self)
		return err
	})
}

type hooksUninstallOptions struct {
	*factory
	out output
}

func newHooksUninstallCmd(f *factory, runF func(*hooksUninstallOptions) error) *cobra.Command {
	opts := &hooksUninstallOptions{factory: f, out: f.output()}
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
		RunE:        runCommand(opts, runF, nil, hooksUninstallRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func hooksUninstallRun(ctx context.Context, opts *hooksUninstallOptions) error {
	acts, err := guard.UninstallHooks(ctx, opts.dir)
	if err != nil {
		return err
	}
	return opts.out.print(acts, func(w io.Writer) error {
		writeHookActions(w, acts)
		return nil
	})
}

func writeHookActions(w io.Writer, acts []guard.HookAction) {
	for _, a := range acts {
		fmt.Fprintf(w, "%s: %s (%s)\n", a.Hook, a.Action, a.Path)
	}
}

// installServerHook writes a server's pre-receive hook and prints what it
// guards.
func installServerHook(ctx context.Context, opts *hooksInstallOptions, self string) error {
	r, err := openServerRepo(opts.dir)
	if err != nil {
		return err
	}
	p, err := guard.Load(ctx, r)
	if err != nil {
		return err
	}
	act, err := guard.InstallServerHook(ctx, p, self)
	if err != nil {
		return err
	}
	ns := p.Namespaces()
	return opts.out.print(map[string]any{"hook": act, "namespaces": ns}, func(w io.Writer) error {
		fmt.Fprintf(w, "%s: %s (%s)\n\nguarded by the server (rules from %s at %s, as it is before each push):\n", act.Hook, act.Action, act.Path, "hone.toml", p.Base().Ref)
		for _, n := range ns {
			fmt.Fprintf(w, "  %s\n    written by: %s\n    checked: %s\n", n.Refs, n.Writer, n.Checks)
		}
		_, err := fmt.Fprintln(w, "every other ref: not checked")
		return err
	})
}
