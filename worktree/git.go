package worktree

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// ManagedDir is the directory, under the main worktree, that holds the
// worktrees hone creates.
const ManagedDir = repo.WorktreesDir

// BranchPrefix starts the branch of every managed worktree.
const BranchPrefix = "worktree-"

// gitWorktree is one entry of `git worktree list --porcelain`.
type gitWorktree struct {
	Path     string
	Head     string
	Branch   string // short name; "" when detached or bare
	Bare     bool
	Locked   bool
	Prunable bool
}

// listGitWorktrees asks git for every worktree of the repository; the main
// worktree comes first.
func listGitWorktrees(ctx context.Context, repo *repo.Repo) ([]gitWorktree, error) {
	out, err := git.Run(ctx, git.Cmd{Dir: repo.Root, Args: []string{"worktree", "list", "--porcelain", "-z"}})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the worktrees of %s", repo.Root)
	}
	var list []gitWorktree
	var cur *gitWorktree
	for _, field := range bytes.Split(out, []byte{0}) {
		key, val, _ := strings.Cut(string(field), " ")
		switch key {
		case "worktree":
			list = append(list, gitWorktree{Path: val})
			cur = &list[len(list)-1]
		case "HEAD":
			if cur != nil {
				cur.Head = val
			}
		case "branch":
			if cur != nil {
				cur.Branch = strings.TrimPrefix(val, "refs/heads/")
			}
		case "bare":
			if cur != nil {
				cur.Bare = true
			}
		case "locked":
			if cur != nil {
				cur.Locked = true
			}
		case "prunable":
			if cur != nil {
				cur.Prunable = true
			}
		}
	}
	return list, nil
}

// mainRoot is the main worktree's top level, the parent of ManagedDir, so
// managed worktrees never nest inside each other whichever worktree hone runs
// from.
func mainRoot(ctx context.Context, repo *repo.Repo) (string, error) {
	if repo.GitDir == repo.CommonDir {
		return repo.Root, nil
	}
	if filepath.Base(repo.CommonDir) == ".git" {
		return filepath.Dir(repo.CommonDir), nil
	}
	// A git directory kept apart from its checkout (a submodule's, or
	// --separate-git-dir). git lists the git directory itself as the main
	// worktree, so managed worktrees would land inside it; only core.worktree,
	// which submodules set, names the checkout.
	config := filepath.Join(repo.CommonDir, "config")
	if bare, _ := git.Output(ctx, repo.Root, "config", "--file", config, "--bool", "core.bare"); strings.TrimSpace(bare) == "true" {
		return "", errs.Policyf("the repository of %s is bare and has no main worktree to hold %s/", repo.Root, ManagedDir)
	}
	wt, err := git.Output(ctx, repo.Root, "config", "--file", config, "core.worktree")
	if err != nil || strings.TrimSpace(wt) == "" {
		return "", errs.Policyf("cannot tell where the main worktree of this repository is: its git directory %s is kept apart from it and sets no core.worktree; run hone worktree from the main worktree", repo.CommonDir)
	}
	wt = strings.TrimSpace(wt)
	if !filepath.IsAbs(wt) {
		wt = filepath.Join(repo.CommonDir, wt)
	}
	return filepath.Clean(wt), nil
}

// changes counts what removing a worktree would lose: uncommitted files (lines
// of `git status --porcelain`) and commits not on its base. Commits are
// counted from HEAD and from the worktree's branch together, so work left on
// the branch after switching HEAD away is counted too. With no recorded base
// (a worktree made by hand), every commit that no other branch, tag or remote
// holds is counted.
func changes(ctx context.Context, path, branch, baseCommit string) (files, commits int, err error) {
	if _, err := os.Stat(path); err != nil {
		return 0, 0, errs.Wrap(errs.Failure, err, "worktree %s is not there", path)
	}
	out, err := git.Run(ctx, git.Cmd{Dir: path, Args: []string{"status", "--porcelain"}})
	if err != nil {
		return 0, 0, errs.Wrap(errs.Failure, err, "cannot read the status of worktree %s", path)
	}
	files = bytes.Count(out, []byte{'\n'})
	args := []string{"rev-list", "--count", "--ignore-missing", "HEAD"}
	if branch != "" {
		args = append(args, "refs/heads/"+branch)
	}
	if baseCommit != "" {
		args = append(args, "^"+baseCommit)
	} else {
		args = append(args, "--not", "--exclude=refs/heads/"+branch, "--branches", "--tags", "--remotes")
	}
	n, err := git.Output(ctx, path, args...)
	if err != nil {
		return 0, 0, errs.Wrap(errs.Failure, err, "cannot count the commits of worktree %s", path)
	}
	commits, err = strconv.Atoi(strings.TrimSpace(n))
	if err != nil {
		return 0, 0, errs.Failuref("git rev-list --count printed %q in %s", n, path)
	}
	return files, commits, nil
}
