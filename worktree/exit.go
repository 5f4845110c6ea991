package worktree

import (
	"context"
	"fmt"
	"os"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// ExitOptions says how to end the session.
type ExitOptions struct {
	Action         string // "keep" (default) leaves the worktree; "remove" deletes it and its branch
	DiscardChanges bool   // with "remove": delete even uncommitted files and commits not on the base
	Session        string // "" means SessionName()
}

// ExitResult says what Exit did. Session is nil when no session was active.
type ExitResult struct {
	*Session
	Active           bool   `json:"active"` // a session was active and has ended
	Action           string `json:"action"`
	Dir              string `json:"dir"`                  // where to go now: original_cwd, or the repository root when that is gone
	OriginalCwdGone  bool   `json:"original_cwd_missing"` // original_cwd no longer exists; Dir is the repository root
	Removed          bool   `json:"removed"`
	DiscardedFiles   int    `json:"discarded_files"`
	DiscardedCommits int    `json:"discarded_commits"`
	Message          string `json:"message"`
}

// NoSessionMessage is what Exit says when there is nothing to end.
const NoSessionMessage = "no active worktree session; nothing was changed"

// Exit ends the active session. Without one it is an honest no-op. "remove"
// never loses work silently: it is refused while the worktree holds
// uncommitted files or commits not on its base unless DiscardChanges is set,
// and it is always refused for a worktree entered by path. When the removal
// fails the session stays active, so the state never claims a worktree is
// gone that is still there.
func Exit(ctx context.Context, repo *repo.Repo, opts ExitOptions) (*ExitResult, error) {
	if opts.Action == "" {
		opts.Action = "keep"
	}
	if opts.Action != "keep" && opts.Action != "remove" {
		return nil, errs.Usagef("--action must be keep or remove, not %q", opts.Action)
	}
	if opts.DiscardChanges && opts.Action != "remove" {
		return nil, errs.Usagef("--discard-changes applies only to --action remove")
	}
	if opts.Session == "" {
		var err error
		if opts.Session, err = SessionName(); err != nil {
			return nil, err
		}
	}
	held, err := lockSession(repo, opts.Session)
	if err != nil {
		return nil, err
	}
	defer held.Release()
	s, err := loadSession(repo, opts.Session)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return &ExitResult{Action: opts.Action, Message: NoSessionMessage}, nil
	}
	res := &ExitResult{Session: s, Active: true, Action: opts.Action}
	if opts.Action == "remove" {
		if err := remove(ctx, repo, s, opts.DiscardChanges, res); err != nil {
			return nil, err
		}
		res.Message = fmt.Sprintf("Removed worktree %s and branch %s%s", s.WorktreePath, BranchPrefix, s.WorktreeName)
		if res.DiscardedFiles+res.DiscardedCommits > 0 {
			res.Message += fmt.Sprintf(", discarding %s and %s", plural(res.DiscardedFiles, "uncommitted file", "uncommitted files"), plural(res.DiscardedCommits, "commit", "commits"))
		}
	} else {
		if err := endSession(repo, s.Session); err != nil {
			return nil, err
		}
		res.Message = fmt.Sprintf("Left worktree %s in place (branch %s)", s.WorktreePath, branchOrDetached(s.WorktreeBranch))
	}
	res.Dir = s.OriginalCwd
	if _, err := os.Stat(s.OriginalCwd); err != nil {
		res.Dir, res.OriginalCwdGone = s.RepoRoot, true
		res.Message += fmt.Sprintf("; the original directory %s no longer exists, returning to the repository root %s", s.OriginalCwd, s.RepoRoot)
	} else {
		res.Message += "; returning to " + s.OriginalCwd
	}
	return res, nil
}

// remove deletes the session's worktree and branch, then ends the session.
func remove(ctx context.Context, repo *repo.Repo, s *Session, discard bool, res *ExitResult) error {
	if s.Kind == ByPath || s.WorktreeName == "" {
		return errs.Policyf("worktree %s was entered with --path, and hone never removes a worktree its session did not make; run `hone worktree exit` to leave it in place", s.WorktreePath)
	}
	// The branch hone made is worktree-<name>, whatever HEAD has been switched to
	// since; another branch checked out there is never deleted.
	branch := BranchPrefix + s.WorktreeName
	files, commits, err := changes(ctx, s.WorktreePath, branch, s.BaseCommit)
	if err != nil {
		return fmt.Errorf("%w; the session is still active (`hone worktree exit` leaves it in place)", err)
	}
	if (files > 0 || commits > 0) && !discard {
		base := "its base"
		if s.BaseCommit != "" {
			base = fmt.Sprintf("its base %s (%s)", s.BaseRef, git.Short(s.BaseCommit))
		}
		return errs.Policyf("refusing to remove worktree %s: it has %s and %s not on %s; commit and merge them, run `hone worktree exit` to keep the worktree, or add --discard-changes to delete them", s.WorktreePath, plural(files, "uncommitted file", "uncommitted files"), plural(commits, "commit", "commits"), base)
	}
	// Only a discard passes --force, so a file written after the count above
	// still makes git refuse. A single --force respects `git worktree lock`,
	// the user's explicit "keep this".
	args := []string{"worktree", "remove", "--", s.WorktreePath}
	if discard {
		args = []string{"worktree", "remove", "--force", "--", s.WorktreePath}
	}
	if _, err := git.Run(ctx, git.Cmd{Dir: s.RepoRoot, Args: args}); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot remove worktree %s; the session is still active", s.WorktreePath)
	}
	// The worktree is gone, so the session must end whatever happens to the
	// branch: state that points at a deleted directory would be a lie.
	endErr := endSession(repo, s.Session)
	os.Remove(recordFile(repo, s.WorktreeName))
	if err := removeBinding(ctx, repo, s.WorktreeName); err != nil && endErr == nil {
		endErr = err
	}
	if branchExists(repo, branch) {
		if _, err := git.Run(ctx, git.Cmd{Dir: s.RepoRoot, Args: []string{"branch", "-D", "--", branch}}); err != nil {
			return errs.Wrap(errs.Failure, err, "removed worktree %s and ended the session, but could not delete branch %s; delete it with `git branch -D %s`", s.WorktreePath, branch, branch)
		}
	}
	if endErr != nil {
		return endErr
	}
	res.Removed, res.DiscardedFiles, res.DiscardedCommits = true, files, commits
	return nil
}
