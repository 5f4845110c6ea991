package workspace

import (
	"context"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// Goalposts are what judges a target's patches, read from the commit the
// target is pinned at, never from a working tree: the target (allowlist,
// build, gates, bench) and the jail settings, as hone.toml holds them at
// the pin. An optimizer with a shell may edit the working tree's hone.toml;
// that changes nothing here, and Warnings say so.
type Goalposts struct {
	*Committed
	Target *Target
	// Protected reports that the pin is reachable from a protected base
	// ref (see ProtectedBase). A pin that is not (an agent's own commit
	// named by an edited pin) is still used, and every record of a verdict
	// at it says so.
	Protected bool
	// Base names the protected base refs the pin was checked against.
	Base []string
	// Warnings: the working tree's hone.toml differs from the pin's.
	Warnings []errs.Warning
}

// GoalpostsAt reads target name from hone.toml at pin (a 40-hex commit)
// and checks its jail settings as Load checks the working tree's. A target
// the pin's hone.toml does not define is a NotFound error saying to commit
// it.
func (w *Workspace) GoalpostsAt(ctx context.Context, name, pin string) (*Goalposts, error) {
	c, err := LoadAt(ctx, w.Repo, pin)
	if err != nil {
		return nil, err
	}
	t, err := c.Target(name)
	if errs.Is(err, errs.NotFound) {
		return nil, errs.NotFoundf("target %q is not defined in %s at its pin %s; patches are judged by the committed file: commit the target there", name, FileName, git.Short(pin))
	}
	if err != nil {
		return nil, err
	}
	at := &Workspace{Repo: w.Repo, ConfigPath: git.Short(pin) + ":" + FileName, Config: c.Config}
	if err := at.checkReadOnly(); err != nil {
		return nil, err
	}
	g := &Goalposts{Committed: c, Target: t}
	if g.Protected, g.Base, err = protected(ctx, w.Repo, pin); err != nil {
		return nil, err
	}
	if drift := w.drift(c); drift != "" {
		g.Warnings = append(g.Warnings, errs.Warning{Code: "uncommitted_config", Message: drift})
	}
	return g, nil
}

// drift says how the working tree's hone.toml differs from c's, or "".
func (w *Workspace) drift(c *Committed) string {
	b, err := os.ReadFile(w.ConfigPath)
	if err != nil {
		return ""
	}
	if plumbing.ComputeHash(plumbing.BlobObject, b).String() == c.Blob {
		return ""
	}
	return fmt.Sprintf("%s differs from %s at the pin %s: hone judges patches by the committed file, so the working tree's edits change nothing; commit them to the pin's branch for them to count",
		w.ConfigPath, FileName, git.Short(c.Commit))
}

// protected reports whether commit is reachable from a protected base ref,
// and which refs those are. A repository whose protected base cannot be
// found protects nothing.
func protected(ctx context.Context, r *repo.Repo, commit string) (bool, []string, error) {
	base, err := ProtectedBase(ctx, r)
	if errs.Is(err, errs.NotFound) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	for _, ref := range base.Refs {
		tip, err := r.ResolveCommit(ctx, ref)
		if err != nil {
			continue
		}
		if tip == commit {
			return true, base.Refs, nil
		}
		_, err = git.Run(ctx, git.Cmd{Dir: r.Dir(), Isolated: true, Args: []string{"merge-base", "--is-ancestor", commit, tip}})
		if err == nil {
			return true, base.Refs, nil
		}
		if ctx.Err() != nil {
			return false, nil, errs.Wrap(errs.Failure, ctx.Err(), "checking the pin against the protected base interrupted")
		}
		if git.ExitCode(err) != 1 {
			return false, nil, errs.Wrap(errs.Failure, err, "cannot check whether %s is on %s", git.Short(commit), ref)
		}
	}
	return false, base.Refs, nil
}
