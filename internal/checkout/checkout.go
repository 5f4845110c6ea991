// Package checkout makes the fresh, hone-managed checkouts that builds, gates,
// benchmarks and profiles run in: detached linked worktrees of one commit
// under <common git dir>/hone/checkouts/, never the optimizer's working copy,
// each with its own build output folder outside the checkout.
package checkout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/sandbox"
	"github.com/hone-perf/hone/workspace"
)

// Checkout is one fresh worktree of Commit.
type Checkout struct {
	Dir    string // the worktree's top level: HONE_ROOT
	Commit string // 40-hex commit checked out (detached)
	Out    string // an empty build output folder outside Dir, for uncached builds
	repo   *repo.Repo
}

// New checks commit out into a new detached linked worktree. The user's hooks
// and global git configuration are ignored, so checking out cannot run code.
func New(ctx context.Context, r *repo.Repo, commit string) (*Checkout, error) {
	name := time.Now().UTC().Format("20060102-150405") + "-" + randomHex(4)
	co := &Checkout{
		Dir:    r.StatePath("checkouts", name),
		Out:    r.StatePath("out", name),
		Commit: commit,
		repo:   r,
	}
	if err := os.MkdirAll(filepath.Dir(co.Dir), 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "checkout: cannot create %s", filepath.Dir(co.Dir))
	}
	held, err := lockWorktrees(ctx, r)
	if err != nil {
		return nil, err
	}
	_, err = git.Run(ctx, git.Cmd{
		Dir:      r.Root,
		Args:     []string{"-c", "core.hooksPath=/dev/null", "worktree", "add", "--quiet", "--detach", co.Dir, commit + "^{commit}"},
		Isolated: true,
	})
	held.Release()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "checkout: cannot check out %s", git.Short(commit))
	}
	if err := os.MkdirAll(co.Out, 0o755); err != nil {
		co.Remove(context.WithoutCancel(ctx))
		return nil, errs.Wrap(errs.Failure, err, "checkout: cannot create %s", co.Out)
	}
	return co, nil
}

// Remove deletes the worktree, its registration and its output folder. It is
// safe to call more than once and works after ctx is cancelled.
func (c *Checkout) Remove(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	held, err := lockWorktrees(ctx, c.repo)
	if err != nil {
		return err
	}
	defer held.Release()
	_, err = git.Run(ctx, git.Cmd{Dir: c.repo.Root, Args: []string{"worktree", "remove", "--force", c.Dir}, Isolated: true})
	if err != nil {
		// A half-created or already deleted worktree: delete what is left and
		// let git forget the registration.
		os.RemoveAll(c.Dir)
		_, err = git.Run(ctx, git.Cmd{Dir: c.repo.Root, Args: []string{"worktree", "prune"}, Isolated: true})
	}
	if rerr := os.RemoveAll(c.Out); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return errs.Wrap(errs.Failure, err, "checkout: cannot remove %s", c.Dir)
	}
	return nil
}

// TargetDir is where t's commands run in this checkout.
func (c *Checkout) TargetDir(t *workspace.Target) string {
	return filepath.Join(c.Dir, filepath.FromSlash(t.Path))
}

// Env is the HONE_* environment of t's commands in this checkout, with out as
// HONE_OUT.
func (c *Checkout) Env(t *workspace.Target, out string) []string {
	return []string{"HONE_ROOT=" + c.Dir, "HONE_OUT=" + out, "HONE_TARGET=" + t.Name}
}

// Spec is a sandbox spec for running command as t's command in this checkout
// (directory, HONE_* environment, and the workspace's [sandbox] policy).
func (c *Checkout) Spec(ws *workspace.Workspace, t *workspace.Target, out, command string, timeout time.Duration) sandbox.Spec {
	return sandbox.Spec{
		Dir:              c.TargetDir(t),
		Command:          command,
		Env:              c.Env(t, out),
		Timeout:          timeout,
		Network:          ws.Config.Sandbox.Network,
		RequireIsolation: ws.Config.Sandbox.RequireIsolation,
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// lockWorktrees serializes hone's own worktree additions and removals in one
// repository: `git worktree add` reads every registered worktree and fails on
// one that a concurrent `git worktree remove` has half deleted.
func lockWorktrees(ctx context.Context, r *repo.Repo) (*lock.Lock, error) {
	return lock.Acquire(ctx, r.StatePath("checkouts.lock"), "add or remove a checkout")
}
