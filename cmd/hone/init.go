package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

func init() { register("init", newInitCmd) }

// worktreeIgnore is the line init adds to .gitignore: managed worktrees live
// there and must never be committed.
const worktreeIgnore = ".sema-worktrees/"

type initResult struct {
	Root             string `json:"root"`
	Config           string `json:"config"`
	CreatedConfig    bool   `json:"created_config"`
	UpdatedGitignore bool   `json:"updated_gitignore"`
	CreatedLedger    bool   `json:"created_ledger"`
	LedgerBranch     string `json:"ledger_branch"`
	Target           string `json:"target,omitempty"`
	TargetPath       string `json:"target_path,omitempty"`
	Pin              string `json:"pin,omitempty"`
	TargetPathExists bool   `json:"target_path_exists,omitempty"`
}

func newInitCmd(app *App) *cobra.Command {
	var target, path string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "init [--target NAME] [--path DIR]",
		Short: "Make this git repository a hone workspace",
		Long: `Make the git repository around the current directory a hone workspace:
write a commented hone.toml at its top level, add .sema-worktrees/ to
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
			res, err := initWorkspace(ctx, app.Dir, target, path)
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

func initWorkspace(ctx context.Context, dir, target, path string) (*initResult, error) {
	repo, err := workspace.OpenRepo(dir)
	if err != nil {
		return nil, err
	}
	res := &initResult{Root: repo.Root, Config: filepath.Join(repo.Root, workspace.FileName)}
	ws, err := repo.Workspace()
	switch {
	case err == nil:
		res.Config = ws.ConfigPath
		if err := checkExistingTarget(ws, target, path); err != nil {
			return nil, err
		}
	case errs.Is(err, errs.NotFound):
		if err := writeConfig(ctx, repo, res.Config, target, path); err != nil {
			return nil, err
		}
		res.CreatedConfig = true
		if ws, err = repo.Workspace(); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	if target != "" {
		t := ws.Config.Targets[target]
		res.Target, res.TargetPath, res.Pin = t.Name, t.Path, t.Pin
		_, statErr := os.Stat(filepath.Join(repo.Root, filepath.FromSlash(t.Path)))
		res.TargetPathExists = statErr == nil
	}
	if res.UpdatedGitignore, err = ensureIgnored(filepath.Join(repo.Root, ".gitignore")); err != nil {
		return nil, err
	}
	res.LedgerBranch = ws.Config.Ledger.Branch
	if res.CreatedLedger, err = ledger.Open(ws).Init(ctx); err != nil {
		return nil, err
	}
	return res, nil
}

// checkExistingTarget refuses flags that would need hone.toml rewritten.
func checkExistingTarget(ws *workspace.Workspace, target, path string) error {
	if target == "" {
		return nil
	}
	t, ok := ws.Config.Targets[target]
	if !ok {
		return errs.Policyf("%s already exists and defines no target %q; hone init never rewrites it: add a [targets.%s] table by hand", ws.ConfigPath, target, target)
	}
	if path != "" && filepath.ToSlash(filepath.Clean(path)) != t.Path {
		return errs.Policyf("%s already defines target %q with path %q, not %q; edit hone.toml by hand to change it", ws.ConfigPath, target, t.Path, path)
	}
	return nil
}

func writeConfig(ctx context.Context, repo *workspace.Repo, file, target, path string) error {
	pin := ""
	if target != "" {
		if err := workspace.CheckTargetName(target); err != nil {
			return err
		}
		if path != "" {
			path = filepath.ToSlash(path)
			if err := workspace.CheckTargetPath(path); err != nil {
				return err
			}
		}
		// Pin to the branch checked out now (it need not have commits yet);
		// a detached HEAD pins "HEAD".
		if b, err := git.Output(ctx, repo.Root, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && b != "" {
			pin = b
		}
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return errs.Policyf("%s appeared while hone init was running; not overwriting it", file)
	}
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", file)
	}
	if _, err := f.Write(workspace.InitialConfig(target, path, pin)); err != nil {
		f.Close()
		return errs.Wrap(errs.Failure, err, "cannot write %s", file)
	}
	if err := f.Close(); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write %s", file)
	}
	return nil
}

// ensureIgnored adds the managed-worktree directory to .gitignore unless a
// line already ignores it, and reports whether it changed the file.
func ensureIgnored(file string) (bool, error) {
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, errs.Wrap(errs.Failure, err, "cannot read %s", file)
	}
	for _, l := range strings.Split(string(b), "\n") {
		switch strings.TrimSpace(l) {
		case ".sema-worktrees", ".sema-worktrees/", "/.sema-worktrees", "/.sema-worktrees/":
			return false, nil
		}
	}
	var add bytes.Buffer
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		add.WriteByte('\n')
	}
	add.WriteString("# hone: managed worktrees (hone worktree enter)\n" + worktreeIgnore + "\n")
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return false, errs.Wrap(errs.Failure, err, "cannot open %s", file)
	}
	if _, err := f.Write(add.Bytes()); err != nil {
		f.Close()
		return false, errs.Wrap(errs.Failure, err, "cannot write %s", file)
	}
	if err := f.Close(); err != nil {
		return false, errs.Wrap(errs.Failure, err, "cannot write %s", file)
	}
	return true, nil
}

func printInit(app *App, r *initResult) {
	if !r.CreatedConfig && !r.UpdatedGitignore && !r.CreatedLedger {
		fmt.Fprintf(app.Out, "already initialized: %s, the %s line in .gitignore and the ledger branch %s are in place\n", r.Config, worktreeIgnore, r.LedgerBranch)
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
		fmt.Fprintf(app.Out, "added %s to .gitignore\n", worktreeIgnore)
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
