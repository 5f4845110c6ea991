package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/workspace"
)

// Worktree is one managed worktree, with what removing it would lose.
type Worktree struct {
	Name       string `json:"name"`
	Path       string `json:"path"`
	Branch     string `json:"branch"` // what is checked out; "" when detached
	Head       string `json:"head"`
	Base       string `json:"base"`        // "head" or "fresh"; "" when hone has no record of it
	BaseCommit string `json:"base_commit"` // "" when hone has no record of it
	DirtyFiles int    `json:"dirty_files"` // lines of `git status --porcelain`
	Commits    int    `json:"commits"`     // commits not on the base
	Locked     bool   `json:"locked"`
	Prunable   bool   `json:"prunable"` // registered but missing on disk; counts are 0
	Active     bool   `json:"active"`   // the current session is in it
}

// List returns the managed worktrees (those under .sema-worktrees/), in git's
// order, with their dirty-file and commit counts.
func List(ctx context.Context, repo *repo.Repo) ([]Worktree, error) {
	root, err := mainRoot(ctx, repo)
	if err != nil {
		return nil, err
	}
	all, err := listGitWorktrees(ctx, repo)
	if err != nil {
		return nil, err
	}
	session, err := SessionName()
	if err != nil {
		return nil, err
	}
	active, err := loadSession(repo, session)
	if err != nil {
		return nil, err
	}
	prefix := canonical(filepath.Join(root, ManagedDir)) + string(filepath.Separator)
	list := []Worktree{}
	for _, g := range all {
		p := canonical(g.Path)
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		w := Worktree{
			Name: filepath.ToSlash(strings.TrimPrefix(p, prefix)), Path: g.Path, Branch: g.Branch, Head: g.Head,
			Locked: g.Locked, Prunable: g.Prunable, Active: active != nil && canonical(active.WorktreePath) == p,
		}
		rec, err := loadRecord(repo, w.Name)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			w.Base, w.BaseCommit = rec.Base, rec.BaseCommit
		}
		if !g.Prunable {
			if w.DirtyFiles, w.Commits, err = changes(ctx, g.Path, BranchPrefix+w.Name, w.BaseCommit); err != nil {
				return nil, err
			}
		}
		list = append(list, w)
	}
	return list, nil
}

// StatusResult is the active session, if any, with its worktree's counts.
type StatusResult struct {
	*Session
	Active          bool   `json:"active"`
	WorktreeMissing bool   `json:"worktree_missing"` // the session's worktree was deleted behind hone's back
	DirtyFiles      int    `json:"dirty_files"`
	Commits         int    `json:"commits"` // commits not on the base
	Message         string `json:"message"`
}

// Status reports the session named by HONE_SESSION.
func Status(ctx context.Context, repo *repo.Repo) (*StatusResult, error) {
	session, err := SessionName()
	if err != nil {
		return nil, err
	}
	s, err := loadSession(repo, session)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return &StatusResult{Message: "no active worktree session"}, nil
	}
	branch := s.WorktreeBranch
	if s.WorktreeName != "" {
		branch = BranchPrefix + s.WorktreeName
	}
	res := &StatusResult{Session: s, Active: true, Message: "In worktree session " + s.Session + " at " + s.WorktreePath}
	if _, err := os.Stat(s.WorktreePath); err != nil {
		res.WorktreeMissing = true
		res.Message = fmt.Sprintf("worktree session %s points at %s, which no longer exists; `hone worktree exit` ends it", s.Session, s.WorktreePath)
		return res, nil
	}
	if res.DirtyFiles, res.Commits, err = changes(ctx, s.WorktreePath, branch, s.BaseCommit); err != nil {
		return nil, err
	}
	return res, nil
}

// ErrOutsideRepo marks the refusal to work outside a git repository.
var ErrOutsideRepo = errors.New("outside a git repository")

// Open finds the repository around dir and its hone.toml, which is optional:
// config is nil when there is none. Outside a git repository it refuses, with
// the reason: worktrees are made by git, and hone has no hook to make one any
// other way. The error wraps ErrOutsideRepo.
//
// With dir "" and a current directory that was deleted (the shell was in a
// worktree that `exit --action remove` took away), the shell's $PWD is used:
// its parents still lead to the repository.
func Open(dir string) (*repo.Repo, *workspace.Config, error) {
	if dir == "" {
		if _, err := os.Getwd(); err != nil {
			dir = os.Getenv("PWD")
		}
	}
	repo, err := repo.Open(dir)
	if errs.Is(err, errs.NotFound) {
		return nil, nil, &errs.Error{Code: errs.Policy, Err: ErrOutsideRepo,
			Msg: err.Error() + "; hone makes worktrees only with git and has no hook to create one elsewhere"}
	}
	if err != nil {
		return nil, nil, err
	}
	ws, err := workspace.Load(repo)
	switch {
	case err == nil:
		return repo, ws.Config, nil
	case errs.Is(err, errs.NotFound):
		return repo, nil, nil // hone.toml is optional for worktree sessions
	}
	return nil, nil, err
}
