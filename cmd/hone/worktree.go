package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/worktree"
)

func init() { register("worktree", newWorktreeCmd) }

func newWorktreeCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "worktree",
		Short: "Work in a git worktree session (a directory switch, not isolation)",
		Long: `A worktree session is a separate checkout under .sema-worktrees/<name> (branch
worktree-<name>) to work in without touching the main checkout's files. It is a
directory switch, not isolation: from inside it, the rest of the repository and
everything else you could reach before stays reachable. hone cannot
change your shell's directory, so enter and exit print the directory to go to:
cd "$(hone worktree enter)", or load ` + "`hone shell-init bash`" + ` once and hone cds for you.

The session is kept in <git common dir>/hone/worktree-sessions/<session>.toml, so
a later process (or another worktree) can exit what an earlier one entered.
HONE_SESSION names the session (default: one per repository).`,
		Example: `  cd "$(hone worktree enter --name hash-idea --target wordfreq)"
  cd "$(hone worktree exit --action remove)"`,
	}
	cmd.AddCommand(newWorktreeEnterCmd(f, nil), newWorktreeExitCmd(f, nil), newWorktreeStatusCmd(f, nil), newWorktreeListCmd(f, nil))
	return cmd
}

type worktreeEnterOptions struct {
	*factory
	out output

	Enter worktree.EnterOptions
}

func newWorktreeEnterCmd(f *factory, runF func(*worktreeEnterOptions) error) *cobra.Command {
	opts := &worktreeEnterOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "enter [--name NAME | --path PATH] [--base head|fresh] [--target T]",
		Short: "Create, resume or switch into a worktree and start a session",
		Long: `Enter a worktree and print its path on stdout (a message goes to stderr).
Entering is a directory switch, not isolation: nothing outside the worktree,
the rest of the repository included, becomes any harder to read or change, and
the message says so every time.

--name NAME creates .sema-worktrees/NAME on branch worktree-NAME, or resumes it when
it exists; without --name a readable random name is made. NAME is segments of
letters, digits, '.', '_' and '-' separated by '/', at most 64 characters.
.sema-worktrees/ is added to .gitignore when missing.

--base head starts from the current HEAD (unpushed commits included); --base fresh
(the default, or [worktree] base in hone.toml) from the default branch as the
remote last showed it: origin/HEAD, else origin/<default branch>, else the
default branch itself (the first local branch of init.defaultBranch, main,
master).

Only one created session at a time: while one is active, a creating enter is
refused. --path PATH switches the session into any worktree ` + "`git worktree list`" + `
shows, leaving the previous one untouched; exit never removes a path-entered
worktree. --target T binds the session to a hone.toml target, whose allowlist
` + "`hone guard pre-commit`" + ` then enforces on commits made in the worktree.

Outside a git repository enter is refused: hone makes worktrees only with git.`,
		Example: `  cd "$(hone worktree enter --name hash-idea --target wordfreq)"
  hone worktree enter --base head --json`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid, errs.Busy),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, worktreeEnterRun),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Enter.Name, "name", "", "name of the managed worktree to create or resume")
	fl.StringVar(&opts.Enter.Path, "path", "", "enter the existing worktree at `PATH` (relative to the current directory) instead; exit never removes it")
	fl.StringVar(&opts.Enter.Base, "base", "", "what a new worktree starts from: head or fresh (default fresh, or [worktree] base)")
	fl.StringVar(&opts.Enter.Target, "target", "", "bind the session to this hone.toml target")
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func worktreeEnterRun(ctx context.Context, opts *worktreeEnterOptions) error {
	repo, cfg, err := worktree.Open(opts.dir)
	if err != nil {
		return err
	}
	eopts := opts.Enter
	eopts.Config, eopts.Cwd = cfg, opts.dir
	res, err := worktree.Enter(ctx, repo, eopts)
	if err != nil {
		return err
	}
	return opts.out.print(res, func(w io.Writer) error {
		fmt.Fprintln(opts.io.ErrOut, res.Message)
		_, err := fmt.Fprintln(w, res.WorktreePath)
		return err
	})
}

type worktreeExitOptions struct {
	*factory
	out output

	Exit worktree.ExitOptions
}

func newWorktreeExitCmd(f *factory, runF func(*worktreeExitOptions) error) *cobra.Command {
	opts := &worktreeExitOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "exit [--action keep|remove] [--discard-changes]",
		Short: "End the worktree session and print the directory to return to",
		Long: `End the active session and print, on stdout, the directory it started from (the
repository root when that directory is gone). Without a session this changes
nothing and exits 0.

--action keep (the default) leaves the worktree and its branch in place.
--action remove deletes the worktree and its branch worktree-NAME. It is refused
while the worktree has uncommitted files or commits not on its base (both counted
in the message) unless --discard-changes is given, and always refused for a
worktree entered with --path. If removal fails the session stays active.`,
		Example: `  cd "$(hone worktree exit)"
  cd "$(hone worktree exit --action remove --discard-changes)"`,
		Annotations: exits(errs.Policy, errs.Invalid, errs.Busy),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, worktreeExitRun),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Exit.Action, "action", "keep", "keep or remove the worktree")
	fl.BoolVar(&opts.Exit.DiscardChanges, "discard-changes", false, "with --action remove: delete uncommitted files and commits not on the base")
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func worktreeExitRun(ctx context.Context, opts *worktreeExitOptions) error {
	repo, _, err := worktree.Open(opts.dir)
	if errors.Is(err, worktree.ErrOutsideRepo) {
		// No repository, so no session can be found: nothing to end.
		return writeExit(&opts.out, &worktree.ExitResult{Action: opts.Exit.Action, Message: "not inside a git repository; " + worktree.NoSessionMessage})
	}
	if err != nil {
		return err
	}
	res, err := worktree.Exit(ctx, repo, opts.Exit)
	if err != nil {
		return err
	}
	return writeExit(&opts.out, res)
}

func writeExit(out *output, res *worktree.ExitResult) error {
	return out.print(res, func(w io.Writer) error {
		fmt.Fprintln(out.io.ErrOut, res.Message)
		if res.Dir != "" {
			fmt.Fprintln(w, res.Dir)
		}
		return nil
	})
}

type worktreeStatusOptions struct {
	*factory
	out output
}

func newWorktreeStatusCmd(f *factory, runF func(*worktreeStatusOptions) error) *cobra.Command {
	opts := &worktreeStatusOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the active worktree session",
		Long:  "Show the active session (HONE_SESSION) and its worktree's uncommitted files and commits not on its base.",
		Example: `  hone worktree status
  hone worktree status --json`,
		Annotations: exits(errs.Policy, errs.Invalid),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, worktreeStatusRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func worktreeStatusRun(ctx context.Context, opts *worktreeStatusOptions) error {
	repo, _, err := worktree.Open(opts.dir)
	if err != nil {
		return err
	}
	st, err := worktree.Status(ctx, repo)
	if err != nil {
		return err
	}
	return opts.out.print(st, func(w io.Writer) error {
		if !st.Active {
			_, err := fmt.Fprintln(w, st.Message)
			return err
		}
		if st.WorktreeMissing {
			fmt.Fprintln(opts.io.ErrOut, st.Message)
		}
		return writeWorktreeStatus(w, st)
	})
}

func writeWorktreeStatus(out io.Writer, st *worktree.StatusResult) error {
	s := st.Session
	return writeColumns(out, [][]string{
		{"session", fmt.Sprintf("%s (%s)", s.Session, s.Kind)},
		{"worktree", s.WorktreePath},
		{"branch", dash(s.WorktreeBranch)},
		{"base", dash(s.BaseRef)},
		{"target", dash(s.Target)},
		{"original dir", s.OriginalCwd},
		{"uncommitted files", strconv.Itoa(st.DirtyFiles)},
		{"commits not on base", strconv.Itoa(st.Commits)},
	})
}

type worktreeListOptions struct {
	*factory
	out output
}

func newWorktreeListCmd(f *factory, runF func(*worktreeListOptions) error) *cobra.Command {
	opts := &worktreeListOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the managed worktrees with their uncommitted files and commits",
		Long:  "List the worktrees under .sema-worktrees/ with their branch, uncommitted files and commits not on their base; * marks the active session's.",
		Example: `  hone worktree list
  hone worktree list --json`,
		Annotations: exits(errs.Policy, errs.Invalid),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, worktreeListRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func worktreeListRun(ctx context.Context, opts *worktreeListOptions) error {
	repo, _, err := worktree.Open(opts.dir)
	if err != nil {
		return err
	}
	list, err := worktree.List(ctx, repo)
	if err != nil {
		return err
	}
	return opts.out.print(list, func(out io.Writer) error {
		rows := [][]string{{"", "NAME", "BRANCH", "FILES", "COMMITS", "PATH"}}
		for _, wt := range list {
			mark := ""
			if wt.Active {
				mark = "*"
			}
			rows = append(rows, []string{mark, wt.Name, dash(wt.Branch), strconv.Itoa(wt.DirtyFiles), strconv.Itoa(wt.Commits), wt.Path})
		}
		return writeColumns(out, rows)
	})
}
