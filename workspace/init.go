package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/workspace/layout"
)

// InitOptions is what `hone init` is asked to do.
type InitOptions struct {
	Target string // define this target in a new hone.toml, or check that the existing one does
	// Path is the target's path. Without it init looks for the project
	// (see layout.Find); finding none, a Target gets targets/<Target>.
	Path string
	// StartLedger creates the ledger branch of ws unless it exists and
	// reports whether it did: ledger.Open(ws).Init. It is passed in because
	// package ledger reads the workspace, so workspace cannot import it.
	StartLedger func(ctx context.Context, ws *Workspace) (created bool, err error)
	// NoBuild writes hone.toml from the project's build files alone. By
	// default init builds a Makefile project in the jail, on a copy of
	// the working tree, to find its programs and how to run them (see
	// probeMake).
	NoBuild bool
	// Progress, when set, is told in a line what init is doing while it
	// builds and runs the project.
	Progress func(string)
}

// InitResult says what Init did.
type InitResult struct {
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
	// BuildSystem is what init found when it wrote hone.toml ("none" when
	// it found nothing); empty when hone.toml existed.
	BuildSystem string `json:"build_system,omitempty"`
	// Detected holds what init found and wrote, when it found a build system.
	Detected *layout.Layout `json:"detected,omitempty"`
	// Todo says what the user must still do before a verdict can run.
	Todo []string `json:"todo,omitempty"`
}

// Init makes the git repository around dir a hone workspace: a commented
// hone.toml at its top level (never overwritten), the managed-worktree
// folder in .gitignore, and the ledger branch. Run again, it completes what
// is missing and changes nothing else; with an existing hone.toml, a Target
// or Path it does not already define is refused (Policy), since Init never
// rewrites the file.
func Init(ctx context.Context, dir string, opts InitOptions) (*InitResult, error) {
	r, err := repo.Open(dir)
	if err != nil {
		return nil, err
	}
	res := &InitResult{Root: r.Root, Config: filepath.Join(r.Root, FileName)}
	ws, err := Load(r)
	switch {
	case err == nil:
		res.Config = ws.ConfigPath
		if err := checkExistingTarget(ws, opts.Target, opts.Path); err != nil {
			return nil, err
		}
	case errs.Is(err, errs.NotFound):
		var l *layout.Layout
		if opts.Target, l, err = writeConfig(ctx, r, res.Config, opts); err != nil {
			return nil, err
		}
		res.CreatedConfig, res.BuildSystem, res.Detected = true, "none", l
		if l != nil {
			res.BuildSystem, res.Todo = l.System, l.Todo
		}
		if ws, err = Load(r); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	if opts.Target != "" {
		t := ws.Config.Targets[opts.Target]
		res.Target, res.TargetPath, res.Pin = t.Name, t.Path, t.Pin
		_, statErr := os.Stat(filepath.Join(r.Root, filepath.FromSlash(t.Path)))
		res.TargetPathExists = statErr == nil
	}
	if res.UpdatedGitignore, err = repo.IgnoreWorktrees(r.Root); err != nil {
		return nil, err
	}
	res.LedgerBranch = ws.Config.Ledger.Branch
	if res.CreatedLedger, err = opts.StartLedger(ctx, ws); err != nil {
		return nil, err
	}
	return res, nil
}

// checkExistingTarget refuses options that would need hone.toml rewritten.
func checkExistingTarget(ws *Workspace, target, path string) error {
	if target == "" && path != "" {
		for _, t := range ws.Config.Targets {
			if t.Path == filepath.ToSlash(filepath.Clean(path)) {
				return nil
			}
		}
		return errs.Policyf("%s already exists and defines no target at path %q; hone init never rewrites it: add a target table by hand", ws.ConfigPath, path)
	}
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

// writeConfig writes a new hone.toml and returns the target it defines
// ("" for none) and the layout it found there, or nil.
func writeConfig(ctx context.Context, r *repo.Repo, file string, opts InitOptions) (string, *layout.Layout, error) {
	target, path := opts.Target, opts.Path
	if target != "" {
		if err := CheckTargetName(target); err != nil {
			return "", nil, err
		}
	}
	if path != "" {
		path = filepath.ToSlash(filepath.Clean(path))
		if err := CheckTargetPath(path); err != nil {
			return "", nil, err
		}
	} else if target != "" && isDir(filepath.Join(r.Root, "targets", target)) {
		path = "targets/" + target
	}
	l, err := layout.Find(r.Root, path)
	if err != nil {
		return "", nil, err
	}
	if l != nil && l.System == layout.Make && !opts.NoBuild {
		if opts.Progress != nil {
			opts.Progress("building " + l.BuildFile + "'s default goal in the jail, to find its programs, test targets and a seeded workload")
		}
		probeMake(ctx, r, l)
		if err := ctx.Err(); err != nil {
			return "", nil, errs.Wrap(errs.Failure, err, "hone init was interrupted while it built the project; nothing was written")
		}
	}
	if path == "." && l == nil {
		return "", nil, errs.Usagef("--path .: a target at the top level must list the files it may change, and hone init found no build system to list them from; pass --path DIR naming the sources' directory, or write the target's files = [...] in hone.toml by hand")
	}
	switch {
	case target != "":
	case l != nil:
		target = l.Name
	case path != "":
		target = layout.TargetName(filepath.Base(path))
	}
	pin := ""
	if target != "" {
		// Pin to the branch checked out now (it need not have commits yet);
		// a detached HEAD pins "HEAD".
		if b, err := git.Output(ctx, r.Root, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil && b != "" {
			pin = b
		}
	}
	var outputs *reviewedOutputs
	if l != nil {
		outputs = seededGo(r.Root, l)
	}
	text := initialConfig(target, path, pin, l, outputs)
	if _, err := Parse(file, text); err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "hone init made a hone.toml it cannot read (a bug in hone); nothing was written")
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return "", nil, errs.Policyf("%s appeared while hone init was running; not overwriting it", file)
	}
	if err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "cannot create %s", file)
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		return "", nil, errs.Wrap(errs.Failure, err, "cannot write %s", file)
	}
	if err := f.Close(); err != nil {
		return "", nil, errs.Wrap(errs.Failure, err, "cannot write %s", file)
	}
	return target, l, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
