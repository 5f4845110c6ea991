package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/guard"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/worktree"
)

func init() { register("guard", newGuardCmd) }

func newGuardCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "guard",
		Short: "Hold diffs, commits and pushes to a target's allowlist (for git hooks)",
		Long: `The guard applies the rules of ` + "`hone patch propose`" + ` to work that does not go
through hone: a diff, a range of commits, a push received by a server, a push
about to leave, a local ref update, or the staged changes of a commit. The
hooks read the rules from hone.toml at the protected base ([guard] base),
never from a working tree. Every violation is printed on stdout, one per line;
any violation exits 3.

Local hooks are a convenience and an early warning: an agent with a shell can
switch them off (git -c core.hooksPath=/dev/null, or writing ref files). The
server's pre-receive hook is the guarantee.`,
		Example: `  git diff | hone guard diff wordfreq
  hone guard commits wordfreq main..agent/wordfreq/fast`,
	}
	cmd.AddCommand(newGuardDiffCmd(f, nil), newGuardCommitsCmd(f, nil), newGuardPreReceiveCmd(f, nil),
		newGuardPrePushCmd(f, nil), newGuardPreCommitCmd(f, nil), newGuardRefUpdateCmd(f, nil))
	return cmd
}

type guardDiffOptions struct {
	*factory
	out output

	Target string
	File   string // the diff's file; "" or "-" is stdin
}

func newGuardDiffCmd(f *factory, runF func(*guardDiffOptions) error) *cobra.Command {
	opts := &guardDiffOptions{factory: f, out: f.output()}
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
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			return nil
		}, guardDiffRun),
	}
	cmd.Flags().StringVar(&opts.File, "file", "", "read the diff from `FILE` (relative to the current directory) instead of stdin")
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func guardDiffRun(ctx context.Context, opts *guardDiffOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	diff, err := readDiff(opts.io.In, ws, opts.File)
	if err != nil {
		return err
	}
	c, err := patch.Check(ctx, ws, opts.Target, diff)
	if err != nil {
		return err
	}
	return opts.out.print(c, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "ok: %d path(s) inside %s changed (+%d -%d)\n", len(c.Changes), ws.Config.Targets[opts.Target].Path, c.Added, c.Removed)
		return err
	})
}

type guardCommitsOptions struct {
	*factory
	out output

	Target   string
	RevRange string
}

func newGuardCommitsCmd(f *factory, runF func(*guardCommitsOptions) error) *cobra.Command {
	opts := &guardCommitsOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "commits TARGET REV-RANGE [--json]",
		Short: "Check every commit of a range against each of its parents",
		Long: `Check every commit REV-RANGE selects (as ` + "`git rev-list`" + ` reads it, e.g.
main..agent/fast) against each of its parents, merges included, without
rename detection: every path and mode the commit changes must be inside the
target's allowlist, as hone.toml at the protected base defines it.

JSON: {"violations": [{"commit", "parent", "path", "rule"}, ...]}.`,
		Example: `  hone guard commits wordfreq main..agent/wordfreq/fast
  hone guard commits wordfreq origin/main..HEAD --json`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid),
		Args:        exactArgs(2),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			if strings.HasPrefix(args[1], "-") {
				return errs.Usagef("REV-RANGE %q looks like an option; give a range such as main..agent/fast", args[1])
			}
			opts.Target, opts.RevRange = args[0], args[1]
			return nil
		}, guardCommitsRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func guardCommitsRun(ctx context.Context, opts *guardCommitsOptions) error {
	p, err := opts.policy(ctx)
	if err != nil {
		return err
	}
	t, err := p.Target(opts.Target)
	if err != nil {
		return err
	}
	vs, err := guard.Commits(ctx, p.Dir(), t.Rules(), opts.RevRange)
	if err != nil {
		return err
	}
	return reportViolations(&opts.out, vs)
}

func newGuardPreReceiveCmd(f *factory, runF func(*guardHookOptions) error) *cobra.Command {
	return newGuardHook(f, runF, &cobra.Command{
		Use:   "pre-receive",
		Short: "Server hook: refuse pushes that leave an allowlist or rewrite hone's records",
		Long: `Run as a git pre-receive hook (` + "`exec /path/to/hone guard pre-receive`" + `) in the
server's repository, bare or not. Reads "<old> <new> <ref>" lines on stdin.
The rules are read from hone.toml at the protected base ([guard] base, by
default the branch each target's pin names, as hone.toml on the default
branch says), never from anything pushed.

- A ref matching a [guard] refs pattern (by default refs/heads/agent/<target>/*):
  every commit the pushed tip holds and the protected base refs do not is
  checked against each of its parents, merges included, whether or not the
  server has seen it before, against the target the ref names.
- The ledger branch and refs/notes/hone: only appends (a fast-forward whose
  commits change or delete no entry and no note line, merges that only join
  two ledgers, well-formed entries). With [ledger] allowed_signers, every
  verdict the push adds must come in a commit signed by a listed key.
- refs/hone/patches/<id>: created once, never moved or deleted; a commit
  with one parent, the pin of the proposal that names the patch (in the same
  push or already on the ledger), whose diff stays in that proposal's target;
  no commit or tree another patch id holds.
- The protected base and the default branch: never deleted; a commit that
  changes hone.toml, the allowed signers, the [guard] maintainers file or a
  protected path must be signed by a key that file lists at the ref's old
  tip (without the file, every such change is refused: the forge's branch
  protection must cover it).
- New branches and tags: none named like a commit id, a branch named as a
  short pin, or a name another ref already answers to.
- The ledger branch also: merges take the server's tip as first parent (its
  first-parent history is the order of arrival runners queue by); only
  entries, attachments and the README; one proposal per patch id, at its
  target's pin, arriving with its patch ref.
- refs/notes/hone also: every added line is the note line of a verdict entry
  of the ledger as it will be after the push.
- No ledger ref (the branch, any inbox) is given a file another ledger ref
  holds with other bytes; an attachment comes only with its entry.
- refs/hone/inbox/<writer>/{ledger,notes}: the branch's and the notes'
  rules, bound to their writer: a runner's inbox moves only by its key; with
  [guard] pusher, an agent's only by the identity the server authenticated
  (the variable it names) when it was first written. Deleted only with a
  retirement, refs/hone/retired/<writer>, signed by a maintainer.
- With [runner] repository: a claim names this repository, and a verdict
  comes only with the release of a claim its signer held on this server.
- Nothing else under refs/hone/.

The rules, allowed signers and maintainers are those of the protected base
before the push. ` + "`hone hooks install --server`" + ` writes this hook and lists
every namespace, its writers and its checks.

Prints each violation; any violation refuses the whole push (exit 3). The
first push to an empty repository, which only creates its default branch (and
brings the hone.toml later pushes are judged by), is let through.`,
		Example: `  cd /srv/git/f.git && hone hooks install --server
  printf '#!/bin/sh\nexec /usr/local/bin/hone guard pre-receive\n' > hooks/pre-receive`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid),
		Args:        exactArgs(0),
	}, guardPreReceiveRun)
}

func guardPreReceiveRun(ctx context.Context, opts *guardHookOptions) error {
	r, err := openServerRepo(opts.dir)
	if err != nil {
		return err
	}
	updates, err := guard.ReadRefUpdates(opts.io.In)
	if err != nil {
		return err
	}
	p, err := guard.Load(ctx, r)
	if errs.Is(err, errs.NotFound) && guard.Bootstrap(r, updates) {
		return nil
	}
	if err != nil {
		return err
	}
	vs, err := p.CheckReceive(ctx, updates)
	if err != nil {
		return err
	}
	if len(vs) == 0 {
		if err := p.BindWriters(ctx, updates); err != nil {
			return err
		}
	}
	return reportViolations(&opts.out, vs)
}

// openServerRepo opens the repository a server hook runs in: git runs hooks
// in the git directory of a bare repository (and says so in GIT_DIR), at the
// top of a working tree otherwise. A bare repository may sit inside another
// repository's working tree, so GIT_DIR, not the directories above, decides.
func openServerRepo(dir string) (*repo.Repo, error) {
	if gd := os.Getenv("GIT_DIR"); gd != "" {
		if !filepath.IsAbs(gd) {
			gd = filepath.Join(dir, gd)
		}
		if _, err := os.Stat(filepath.Join(gd, "HEAD")); err == nil && filepath.Base(gd) != ".git" {
			return repo.OpenBare(gd)
		}
	}
	r, err := repo.Open(dir)
	if errs.Is(err, errs.NotFound) {
		if dir == "" {
			dir = "."
		}
		return repo.OpenBare(dir)
	}
	return r, err
}

func newGuardPrePushCmd(f *factory, runF func(*guardHookOptions) error) *cobra.Command {
	return newGuardHook(f, runF, &cobra.Command{
		Use:   "pre-push [REMOTE [URL]]",
		Short: "Client hook: refuse pushing commits to guarded refs that leave the allowlist",
		Long: `Run as a git pre-push hook (installed by ` + "`hone hooks install`" + `). Reads
"<local ref> <local sha> <remote ref> <remote sha>" lines on stdin; for each
remote ref matching a [guard] refs pattern (by default
refs/heads/agent/<target>/*), checks every commit being pushed that the
protected base refs do not hold, whether or not the remote has seen it, so a
commit first pushed to an unguarded branch is checked all the same. Rules
come from hone.toml at the protected base, never from a working tree.`,
		Example:     `  hone hooks install   # writes a pre-push hook that runs: /path/to/hone guard pre-push "$@"`,
		Annotations: exits(errs.Policy, errs.Invalid),
		Args:        rangeArgs(0, 2),
	}, guardPrePushRun)
}

func guardPrePushRun(ctx context.Context, opts *guardHookOptions) error {
	p, err := opts.policy(ctx)
	if err != nil {
		return err
	}
	updates, err := guard.ReadPrePush(opts.io.In)
	if err != nil {
		return err
	}
	vs, err := p.CheckPush(ctx, updates)
	if err != nil {
		return err
	}
	return reportViolations(&opts.out, vs)
}

func newGuardRefUpdateCmd(f *factory, runF func(*guardHookOptions) error) *cobra.Command {
	return newGuardHook(f, runF, &cobra.Command{
		Use:   "ref-update [STATE]",
		Short: "Local hook: refuse any ref update that brings a guarded ref outside its allowlist",
		Long: `Run by git's reference-transaction hook (installed by ` + "`hone hooks install`" + `),
which sees every way a ref moves: commit, merge, cherry-pick, rebase, reset,
update-ref, with or without --no-verify. Reads "<old> <new> <ref>" lines on
stdin and acts in the "prepared" state only (other states exit 0):

- refs matching [guard] refs: every new commit the protected base does not
  hold must stay inside the target the ref names;
- refs/heads/worktree-NAME, and every branch updated inside
  .sema-worktrees/NAME: held to the target of the worktree's binding
  (refs/hone/worktrees/NAME); a managed worktree without one is refused;
- the ledger branch, the notes ref, refs/hone/patches/* and
  refs/hone/worktrees/*: refused, since hone moves them itself.

Deleting a ref, or leaving it at its value (git gc packing refs), is let
through. The hook hands hone only guarded refs: git keeps working everywhere
else when hone is missing, and a guarded update then fails.`,
		Example:     `  hone hooks install   # writes a reference-transaction hook that runs: /path/to/hone guard ref-update "$1"`,
		Annotations: exits(errs.Policy, errs.Invalid),
		Args:        rangeArgs(0, 1),
	}, guardRefUpdateRun)
}

func guardRefUpdateRun(ctx context.Context, opts *guardHookOptions) error {
	if len(opts.Args) == 1 && opts.Args[0] != "prepared" {
		return nil
	}
	r, err := repo.Open(opts.dir)
	if err != nil {
		return err
	}
	p, err := guard.Load(ctx, r)
	if err != nil {
		return err
	}
	updates, err := guard.ReadRefUpdates(opts.io.In)
	if err != nil {
		return err
	}
	name, _ := worktree.ManagedName(r)
	vs, err := p.CheckTransaction(ctx, updates, name)
	if err != nil {
		return err
	}
	return reportViolations(&opts.out, vs)
}

func newGuardPreCommitCmd(f *factory, runF func(*guardHookOptions) error) *cobra.Command {
	return newGuardHook(f, runF, &cobra.Command{
		Use:   "pre-commit",
		Short: "Commit hook: refuse staged changes outside the worktree's target",
		Long: `Run as a git pre-commit hook (installed by ` + "`hone hooks install`" + `). In a
managed worktree (.sema-worktrees/NAME) the target is the one its binding
(refs/hone/worktrees/NAME) names, and a managed worktree without a binding is
refused; in a worktree entered with --path for a target, that session's; else
the one HONE_TARGET names. Every staged path and mode must be inside that
target's allowlist, read from hone.toml at the protected base, never from the
working tree. Without a target it does nothing and exits 0. git commit
--no-verify skips this hook, not the reference-transaction one.`,
		Example: `  hone hooks install   # writes a pre-commit hook that runs: /path/to/hone guard pre-commit
  HONE_TARGET=wordfreq hone guard pre-commit`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid),
		Args:        exactArgs(0),
	}, guardPreCommitRun)
}

func guardPreCommitRun(ctx context.Context, opts *guardHookOptions) error {
	r, err := repo.Open(opts.dir)
	if err != nil {
		return err
	}
	name, err := sessionTarget(r)
	if err != nil || name == "" {
		return err
	}
	p, err := guard.Load(ctx, r)
	if err != nil {
		return err
	}
	t, err := p.Target(name)
	if err != nil {
		return err
	}
	vs, err := guard.Staged(ctx, r.Root, t.Rules())
	if err != nil {
		return err
	}
	return reportViolations(&opts.out, vs)
}

// policy is the guard policy of the repository hone runs in.
func (f *factory) policy(ctx context.Context) (*guard.Policy, error) {
	r, err := repo.Open(f.dir)
	if err != nil {
		return nil, err
	}
	return guard.Load(ctx, r)
}

// sessionTarget is the target the current worktree is bound to (see
// worktree.SessionTarget), else HONE_TARGET, else "".
func sessionTarget(r *repo.Repo) (string, error) {
	name, ok, err := worktree.SessionTarget(r)
	if err != nil {
		return "", err
	}
	if ok {
		return name, nil
	}
	return os.Getenv("HONE_TARGET"), nil
}

// reportViolations prints each violation and turns any into a Policy error.
func reportViolations(out *output, vs []guard.Violation) error {
	if vs == nil {
		vs = []guard.Violation{}
	}
	err := out.print(map[string]any{"violations": vs}, func(w io.Writer) error {
		for _, v := range vs {
			fmt.Fprintln(w, "hone guard: "+v.String())
		}
		return nil
	})
	if err != nil {
		return err
	}
	return guard.Violated(vs)
}

// guardHookOptions are the inputs of a git hook: its arguments (git's),
// the lines git writes on stdin, and the repository it runs in. A hook
// prints violations as text only.
type guardHookOptions struct {
	*factory
	out output

	Args []string
}

func newGuardHook(f *factory, runF func(*guardHookOptions) error, cmd *cobra.Command, hookRun func(context.Context, *guardHookOptions) error) *cobra.Command {
	opts := &guardHookOptions{factory: f, out: f.output()}
	cmd.RunE = runCommand(opts, runF, func(_ *cobra.Command, args []string) error {
		opts.Args = args
		return nil
	}, hookRun)
	return cmd
}
